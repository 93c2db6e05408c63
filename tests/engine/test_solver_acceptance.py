"""The solver on fresh ``spider4`` deals, through ``spider-race bench solver`` (which
replays every won line to a win and fails otherwise).

``make acceptance`` (``-m slow``) runs the issue's demonstration: 100 fresh deals, two at a
time, printing the deals won within 167,000 and 1,000,000 positions and within 1, 4 and 20
CPU-seconds each, and every deck's ten fresh deals, at least nine won within 167,000
positions. It asserts what does not depend on the machine's speed (the search is
deterministic: the deals won within a number of positions are the same on any machine);
the CPU-second figures are printed for the reader. ``make test`` runs a short version."""

from __future__ import annotations

import pytest

from spider_race.cli import main


def _figures(
    capsys: pytest.CaptureFixture[str], args: list[str], variant: str = "spider4"
) -> dict[str, str]:
    assert main(["bench", "solver", "--variant", variant, *args]) == 0
    out, _ = capsys.readouterr()
    with capsys.disabled():
        print()
        print(out)
    return dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)


def _count(figures: dict[str, str], key: str) -> int:
    return int(figures[key].split("/")[0])


def test_three_fresh_deals_in_two_processes(capsys: pytest.CaptureFixture[str]) -> None:
    """The short version: three deals at a budget of 60,000, two at a time; the figures
    hold together (a deal won within fewer positions or CPU-seconds is won within more)."""
    figures = _figures(capsys, ["--deals", "3", "--jobs", "2", "--budget", "60000"])
    assert figures["jobs"] == "2"
    won = _count(figures, "spider4_won_at_60000")
    assert 2 <= won <= 3  # solver-0 and solver-2 take about 40,000 positions each
    within = [_count(figures, f"spider4_won_within_{n}_cpu_s") for n in (1, 4, 20)]
    assert within == sorted(within) and within[-1] <= won


@pytest.mark.slow
def test_acceptance_a_hundred_fresh_deals(capsys: pytest.CaptureFixture[str]) -> None:
    """At least 95 of 100 fresh deals won within 1,000,000 positions (and the printed
    figures within 1, 4 and 20 CPU-seconds a deal, one deal a core)."""
    figures = _figures(capsys, ["--deals", "100", "--jobs", "2"])
    assert _count(figures, "spider4_won_at_1000000") >= 95
    small = _count(figures, "spider4_won_at_167000")
    assert small <= _count(figures, "spider4_won_at_1000000")


@pytest.mark.slow
@pytest.mark.parametrize(
    "variant", ["spider1", "spider2", "myrmex", "wizard", "wizard+weave", "sparrow", "starfish"]
)
def test_acceptance_every_deck_wins_nine_of_ten_fresh_deals(
    capsys: pytest.CaptureFixture[str], variant: str
) -> None:
    """The other variants' ten fresh deals (the bench's seeds), at least nine of them won
    within 167,000 positions."""
    figures = _figures(capsys, ["--deals", "10", "--jobs", "2", "--budget", "167000"], variant)
    assert _count(figures, f"{variant}_won_at_167000") >= 9
