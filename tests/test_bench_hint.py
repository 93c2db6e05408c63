"""The hint corpus and ``spider-race bench hint``: the committed corpus is what its
generator writes, and the benchmark counts each hint by the solver's own verdict."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

import pytest

from spider_engine import Board
from spider_engine.solver import rank_moves, solve
from spider_race.bench_hint import percentile
from spider_race.cli import main
from spider_race.hint_corpus import (
    GAMES,
    HEADER,
    corpus_lines,
    default_corpus,
    game_positions,
    read_corpus,
)


def test_the_generator_writes_the_committed_corpus_first_lines() -> None:
    committed = default_corpus().read_text(encoding="utf-8").splitlines()
    # the header and the positions of the first two games, generated again
    again = list(corpus_lines(2))
    assert len(again) > len(HEADER) + 2
    assert committed[: len(again)] == again


def test_the_corpus_holds_three_playable_positions_of_each_game() -> None:
    positions = read_corpus(default_corpus().read_text(encoding="utf-8"))
    seeds = {p.seed for p in positions}
    assert seeds == {f"hint-{n}" for n in range(GAMES)}
    assert len(positions) == 3 * GAMES
    for p in positions:
        assert p.board.variant.id == "spider4"
        assert not p.board.is_view()
        assert p.board.legal_moves
    # each position is the deal after that many of the greedy bot's actions
    first = game_positions("hint-0")
    assert [p.line() for p in first] == [p.line() for p in positions[:3]]
    assert [p.actions for p in first] == sorted({p.actions for p in first})


def test_percentile_is_the_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 95) == 95.0
    assert percentile(values, 100) == 100.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    with pytest.raises(ValueError):
        percentile([], 50)


def test_bench_hint_counts_won_and_fallback_hints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    budget = 3_000
    won = Board.deal("spider1", "0")
    # a position of the corpus from which no line wins (the solver proves it in 168)
    lost = next(
        p.board
        for p in read_corpus(default_corpus().read_text(encoding="utf-8"))
        if (p.seed, p.actions) == ("hint-13", 39)
    )
    unsettled = Board.deal("spider4", "1")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(
        "# three positions\n"
        + "".join(f"s{n} 0 {b.text()}\n" for n, b in enumerate((won, lost, unsettled))),
        encoding="utf-8",
    )
    verdicts = [solve(b, budget=budget) for b in (won, lost, unsettled)]
    assert [v.verdict for v in verdicts] == ["won", "lost", "unknown"]
    assert main(["bench", "hint", "--corpus", str(corpus), "--budget", str(budget)]) == 0
    out, err = capsys.readouterr()
    figures = dict(line.split(": ", 1) for line in out.splitlines())
    assert figures["positions"] == "3"
    assert figures["budget"] == str(budget)
    assert figures["solver_won"] == "1/3"
    assert figures["fallback_lost"] == "1/3"
    assert figures["fallback_unknown"] == "1/3"
    half = int(verdicts[0].positions <= budget // 2)
    assert figures[f"solver_won_at_{budget // 2}"] == f"{half}/3"
    cpu = dict(kv.split("=") for kv in figures["cpu_s_per_hint"].split())
    assert list(cpu) == ["p50", "p90", "p95", "p99", "max"]
    assert float(cpu["p50"]) <= float(cpu["p95"]) <= float(cpu["max"])
    assert "wall_s_per_hint" in figures
    lines = err.splitlines()
    assert lines[0].startswith(f"  s0 0: won {verdicts[0].line[0].text()} ")
    assert lines[1].startswith(f"  s1 0: lost {rank_moves(lost)[0].text()} ")
    assert f"positions={budget} " in lines[2]


def test_bench_hint_refuses_a_corpus_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("hint-0 x spider4\n", encoding="utf-8")
    assert main(["bench", "hint", "--corpus", str(bad)]) == 2
    assert "line 1" in capsys.readouterr().err
    assert main(["bench", "hint", "--corpus", str(tmp_path / "missing.txt")]) == 2


def test_the_corpus_generator_writes_a_file(tmp_path: Path) -> None:
    from spider_race.hint_corpus import main as write_corpus

    out = tmp_path / "c.txt"
    assert write_corpus(["--games", "1", "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8").splitlines() == list(islice(corpus_lines(1), 100))
