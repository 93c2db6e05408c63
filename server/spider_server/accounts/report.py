"""The operators' report, without I/O: rated results in, the accounts to look at out.

Over the rated races of the window (voided ones left out), an account is listed

- ``same_opponents``: when it has at least :data:`MIN_RACES` rated races and more than
  half of them were against nobody but its :data:`FEW` most frequent opponents;
- ``shared_address``: when it has at least :data:`MIN_RACES` rated races and in more than
  half of them it joined from the same address (IPv4, or IPv6 /64) as an opponent;
- ``rating_moved``: when its rating shown moved more than ``threshold`` within a day
  (from before one rated race to after one no later than 24 hours after it).

An opponent is another player of the same rated race. The first two rules count the
rated races played, whether or not they moved the rating (a rule of rated play may have
left a race of the same pair unrated: it still counts here).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["FEW", "MIN_RACES", "Finding", "Rated", "findings", "table"]

MIN_RACES = 5
"""Rated races in the window an account needs before its opponents and addresses count."""
FEW = 2
"""The few opponents: at most this many."""
DAY = 24 * 3600


@dataclass(frozen=True, slots=True)
class Rated:
    """One player's rating change in one rated race."""

    player: str
    race_id: int
    at: float
    before: int
    after: int


@dataclass(frozen=True, slots=True)
class Finding:
    """One account the report lists, and why."""

    name: str
    player: str
    rule: str
    """``same_opponents``, ``shared_address`` or ``rating_moved``."""
    races: int
    """Its rated races in the window."""
    detail: str
    closed: bool = False

    def fields(self) -> dict[str, Any]:
        return asdict(self)


def findings(
    seats: Iterable[tuple[int, str]],
    changes: Iterable[Rated],
    addresses: Mapping[tuple[int, str], str],
    accounts: Mapping[str, tuple[str, bool]],
    *,
    threshold: int,
) -> list[Finding]:
    """The accounts to look at (see the module), by name then rule. ``seats``: (race id,
    player) of each player of each rated race; ``changes``: the rating changes;
    ``addresses``: (race id, player) -> address; ``accounts``: player -> (name, closed); players who are no
    account's are left out."""
    by_race: dict[int, list[str]] = defaultdict(list)
    played: dict[str, list[int]] = defaultdict(list)
    for race_id, player in seats:
        by_race[race_id].append(player)
        played[player].append(race_id)
    by_player: dict[str, list[Rated]] = defaultdict(list)
    for c in changes:
        by_player[c.player].append(c)
    out: list[Finding] = []
    for player in sorted(set(played) | set(by_player)):
        if player not in accounts:
            continue
        name, closed = accounts[player]
        mine = sorted(by_player.get(player, []), key=lambda c: (c.at, c.race_id))
        races = len(played.get(player, []))
        opponents = {r: [p for p in by_race[r] if p != player] for r in played.get(player, [])}
        found: list[tuple[str, str]] = []
        if races >= MIN_RACES:
            counts = Counter(p for others in opponents.values() for p in set(others))
            few = {p for p, _ in counts.most_common(FEW)}
            against = sum(1 for others in opponents.values() if others and set(others) <= few)
            if 2 * against > races:
                names = ", ".join(sorted(accounts.get(p, (p, False))[0] for p in few))
                found.append(
                    ("same_opponents", f"{against} of {races} rated races against only {names}")
                )
            shared = 0
            for race_id, others in opponents.items():
                own = addresses.get((race_id, player))
                if own is not None and any(addresses.get((race_id, p)) == own for p in others):
                    shared += 1
            if 2 * shared > races:
                found.append(
                    (
                        "shared_address",
                        f"{shared} of {races} rated races from an address an opponent shared",
                    )
                )
        moved = _most_moved(mine)
        if abs(moved) > threshold:
            found.append(("rating_moved", f"{moved:+d} within a day"))
        out += [Finding(name, player, rule, races, detail, closed) for rule, detail in found]
    out.sort(key=lambda f: (f.name.casefold(), f.player, f.rule))
    return out


def _most_moved(mine: list[Rated]) -> int:
    """The largest move of the rating shown (signed) from before one race to after one no
    later than a day after it."""
    best = 0
    for i, first in enumerate(mine):
        for last in mine[i:]:
            if last.at - first.at > DAY:
                break
            moved = last.after - first.before
            if abs(moved) > abs(best):
                best = moved
    return best


def table(found: list[Finding], *, days: int, threshold: int) -> str:
    """The report as text: a line per finding, in columns."""
    head = (
        f"Rated races of the last {days} days: {len(found)} finding(s) "
        f"(rating moves above {threshold} within a day)"
    )
    if not found:
        return head + "\nnothing to look at"
    rows = [("ACCOUNT", "PLAYER", "RULE", "RACES", "DETAIL")]
    for f in found:
        name = f.name + (" (closed)" if f.closed else "")
        rows.append((name, f.player, f.rule, str(f.races), f.detail))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4] for r in rows]
    return "\n".join([head, *lines])
