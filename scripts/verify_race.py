#!/usr/bin/env python3
"""Check a finished spider-race race: the seed against the commitment, and every result.

Usage::

    python scripts/verify_race.py FINISHED.json [--commitment HEX] [--variant ID]

``FINISHED.json`` is the race's record as exported (``spider-race export CODE``, or the
page's "Download the race (JSON)": ``GET /races/<code>.json``), the race's ``finished``
event as JSON, or a ``joined`` reply's ``race`` snapshot of a finished race (which then
needs ``--variant`` only if it lacks one); ``-`` reads it from standard input. ``--commitment`` is the commitment you saw announced
when the race started: it must be the one revealed.

Checks, each printed as ``ok`` or ``FAIL``:

1. the commitment is SHA-256 of the salt's bytes (hex-decoded) followed by the seed's UTF-8
   bytes;
2. every player's actions replay from the seeded deal (the spec's algorithm, through the
   engine): each move legal, each ``undo`` taking back a move, ``resign`` last;
3. each player's result follows from their replay: runs completed, actions counted, classic
   score, won exactly when the final board is won, a resign where the status says so, the
   final board the one published; the action times (``replay_times``, when the race kept
   them) one per action, whole milliseconds, non-decreasing, a winner's last one its time;
4. the ranking (rules.md §7a): winners first, by time, then fewer actions; then the
   players who did not forfeit, then those who resigned, left or were abandoned, each by
   progress (sets completed, cards turned up, suited score; larger first, from the
   replayed final board); equal keys share a rank (1, 2, 2, 4). Among players of equal
   progress the one who reached it first ranks first; the results do not say when that
   was, so their order among themselves is not checked (a shared rank or the next one).

Exit status 0 when every check passes, 1 when one fails, 2 for unreadable input. Needs only
the standard library and the engine (``spider_engine``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

try:
    from spider_engine import Board, Move
except ImportError:  # run from a checkout without installing the engine
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
    from spider_engine import Board, Move


def commitment_of(seed: str, salt: str) -> str:
    """The race commitment: SHA-256(bytes.fromhex(salt) + seed.encode("utf-8")), hex."""
    return hashlib.sha256(bytes.fromhex(salt) + seed.encode("utf-8")).hexdigest()


FORFEIT = frozenset({"resigned", "left", "abandoned", "idle"})
"""Statuses of a game given up: ranked after every player who played on."""


def rank_key(result: dict[str, Any], progress: tuple[int, int, int]) -> tuple[object, ...]:
    """The ranking's key as far as the results show it (smaller first): everything but the
    time a non-winner's progress was last raised."""
    if result["status"] == "won":
        return (0, float(result["time"] or 0.0), result["moves"])
    sets, turned_up, suited = progress
    return (2 if result["status"] in FORFEIT else 1, -sets, -turned_up, -suited)


class Report:
    def __init__(self) -> None:
        self.failures = 0

    def check(self, ok: bool, what: str) -> bool:
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
        if not ok:
            self.failures += 1
        return ok


def runs_completed(board: Board) -> int:
    """Sets completed: runs in the foundation (with the ``keep`` option, complete runs at
    column ends too); each deck's sets for the others."""
    return board.variant.sets_completed(board)


def replay(variant: str, seed: str, actions: list[str]) -> tuple[Board, int, str | None]:
    """The final board, the number of moves/deals/undos, and an error (None when fine)."""
    board = Board.deal(variant, seed)
    counted = 0
    for i, action in enumerate(actions):
        if action == "resign":
            if i != len(actions) - 1:
                return board, counted, f"action {i + 1}: resign is not the last action"
            continue
        if action == "undo":
            try:
                board.pop()
            except IndexError:
                return board, counted, f"action {i + 1}: undo with nothing to undo"
        else:
            try:
                board.push(Move.from_text(action))
            except ValueError as e:
                return board, counted, f"action {i + 1}: {e}"
        counted += 1
    return board, counted, None


def verify(
    data: dict[str, Any], *, announced: str | None = None, variant: str | None = None
) -> int:
    """Run every check on a finished race; the number of failures."""
    report = Report()
    seed, salt, commitment = data["seed"], data["salt"], data["commitment"]
    report.check(commitment_of(seed, salt) == commitment, "the seed and salt give the commitment")
    if announced is not None:
        report.check(
            announced.lower() == commitment, "the commitment is the one announced at the start"
        )
    boards: dict[str, str] = data.get("boards") or {}
    variant = (
        variant
        or data.get("variant")
        or (next(iter(boards.values())).split(" ", 1)[0] if boards else None)
    )
    if variant is None:
        print("FAIL no variant: pass --variant")
        return report.failures + 1
    results: list[dict[str, Any]] = data["results"]
    replays: dict[str, list[str]] = data["replays"]
    times: dict[str, list[int]] = data.get("replay_times") or {}
    report.check(set(times) <= set(replays), "action times only of players with a replay")
    report.check({r["player"] for r in results} == set(replays), "every ranked player has a replay")
    down0 = sum(Board.deal(variant, seed).down)
    progress: dict[str, tuple[int, int, int]] = {}
    for result in results:
        pid, name = result["player"], result.get("name", "")
        who = f"{name} ({pid})"
        board, counted, error = replay(variant, seed, replays.get(pid, []))
        if not report.check(
            error is None,
            f"{who}: the actions replay from the deal" + (f": {error}" if error else ""),
        ):
            continue
        progress[pid] = board.variant.progress(board, down0)
        report.check(
            runs_completed(board) == result["runs"], f"{who}: {result['runs']} runs completed"
        )
        report.check(counted == result["moves"], f"{who}: {result['moves']} moves, deals and undos")
        report.check(
            board.classic_score(counted) == result["score"], f"{who}: score {result['score']}"
        )
        report.check(
            (result["status"] == "won") == board.is_won(), f"{who}: status {result['status']}"
        )
        if result["status"] == "stuck":
            report.check(board.is_stuck(), f"{who}: stuck at the end")
        if result["status"] in FORFEIT:
            report.check(replays[pid][-1:] == ["resign"], f"{who}: resigned")
        if pid in boards:
            report.check(
                board.text() == boards[pid], f"{who}: the final board is the one published"
            )
        stamps = times.get(pid)
        if stamps is not None:
            actions = replays.get(pid, [])
            report.check(
                len(stamps) == len(actions)
                and all(isinstance(t, int) and t >= 0 for t in stamps)
                and all(a <= b for a, b in zip(stamps, stamps[1:], strict=False))
                and (
                    result.get("time") is None
                    or not stamps
                    or stamps[-1] <= result["time"] * 1000 + 1
                ),
                f"{who}: the action times: one per action, non-decreasing",
            )
    ordered = sorted(results, key=lambda r: r["rank"])
    ok = all(r["player"] in progress for r in ordered)
    for i, r in enumerate(ordered):
        if not ok:
            break
        if i == 0:
            ok = r["rank"] == 1
            continue
        prev = ordered[i - 1]
        key, prev_key = rank_key(r, progress[r["player"]]), rank_key(prev, progress[prev["player"]])
        if key == prev_key:
            # a shared rank, or the next one when the other reached it first (or won sooner)
            ok = r["rank"] == prev["rank"] or (r["status"] != "won" and r["rank"] == i + 1)
        else:
            ok = prev_key < key and r["rank"] == i + 1
    report.check(
        ok, "the ranking: winners by time, then fewer actions; then by progress, forfeits last"
    )
    print("all checks passed" if not report.failures else f"{report.failures} check(s) failed")
    return report.failures


def from_record(record: dict[str, Any]) -> dict[str, Any]:
    """An exported record (``"format": 1``) in the shape of a ``finished`` event with its
    variant: results, replays, their times and final boards by player."""
    players: list[dict[str, Any]] = record["players"]
    return {
        "seed": record["seed"],
        "salt": record["salt"],
        "commitment": record["commitment"],
        "variant": record["variant"],
        "results": players,
        "replays": {x["player"]: x["actions"] for x in players},
        "replay_times": {x["player"]: x["times"] for x in players if x.get("times") is not None},
        "boards": {x["player"]: x["board"] for x in players if x.get("board")},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check a finished spider-race race.")
    parser.add_argument(
        "file",
        help="the race's exported record, finished event or finished race snapshot as JSON; "
        "- for stdin",
    )
    parser.add_argument("--commitment", help="the commitment announced at the start")
    parser.add_argument("--variant", help="the variant id, when the file does not say")
    args = parser.parse_args(argv)
    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
        data = json.loads(text)
        if isinstance(data.get("race"), dict):  # a whole joined reply
            data = {**data["race"], "boards": data.get("boards")}
        elif data.get("format") is not None:  # an exported record
            if data["format"] != 1:
                raise ValueError(f"a record of format {data['format']}: this checker reads 1")
            data = from_record(data)
        for key in ("seed", "salt", "commitment", "results", "replays"):
            if data.get(key) is None:
                raise ValueError(f"no {key!r}: is the race finished?")
    except (OSError, ValueError) as e:
        print(f"verify_race: {e}", file=sys.stderr)
        return 2
    return 1 if verify(data, announced=args.commitment, variant=args.variant) else 0


if __name__ == "__main__":
    sys.exit(main())
