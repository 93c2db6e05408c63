"""``spider-race bench solver`` on the other decks: a row of figures per variant, each won
deal's line replayed before it counts."""

from __future__ import annotations

import pytest

from spider_race.cli import main


@pytest.mark.parametrize("variant", ["myrmex", "wizard+weave"])
def test_bench_solver_prints_a_row_for_the_variant(
    variant: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "solver", "--deals", "1", "--variant", variant, "--budget", "10000"]) == 0
    out, err = capsys.readouterr()
    figures = dict(line.split(": ", 1) for line in out.splitlines())
    assert figures["budgets"] == "10000 10000"
    assert figures[f"{variant}_won_at_10000"] == "1/1"
    assert figures[f"{variant}_settled_at_10000"] == "1/1"
    assert int(figures[f"{variant}_positions_per_s"].replace(",", "")) > 0
    assert f"{variant} solver-0: won positions=" in err


def test_bench_solver_counts_a_deal_it_cannot_settle(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "solver", "--deals", "1", "--variant", "sparrow", "--budget", "300"]) == 0
    out, err = capsys.readouterr()
    figures = dict(line.split(": ", 1) for line in out.splitlines())
    assert figures["sparrow_settled_at_300"] == "0/1"
    assert figures["sparrow_won_at_300"] == "0/1"
    assert "sparrow solver-0: unknown positions=300" in err


def test_bench_solver_jobs_give_the_same_verdicts(capsys: pytest.CaptureFixture[str]) -> None:
    """Deals solved in worker processes are the same searches as one at a time here."""

    def verdicts(jobs: str) -> list[str]:
        args = ["bench", "solver", "--deals", "3", "--variant", "spider1", "--budget", "3000"]
        assert main([*args, "--jobs", jobs]) == 0
        out, err = capsys.readouterr()
        assert f"jobs: {jobs}" in out.splitlines()
        return [line.split(" seconds=")[0] for line in err.splitlines() if "solver-" in line]

    alone = verdicts("1")
    assert len(alone) == 3
    assert verdicts("2") == alone
