"""Drawing boards, progress and results as text (no terminal, no server)."""

from __future__ import annotations

from spider_client.protocol import PlayerInfo, RaceInfo, Result
from spider_engine import Board
from spider_race.tui.render import (
    BACK,
    format_clock,
    progress_bar,
    render_board,
    render_players,
    render_results,
)


def test_board_shows_backs_suits_in_colour_and_the_stock() -> None:
    view = Board.deal("spider4", "1").view()
    text = render_board(view, selected=3)
    plain = text.plain
    assert plain.splitlines()[0].split() == list("abcdefghij")
    assert plain.count(BACK) == sum(view.down)
    assert "Q♥" in plain and "T♣" in plain
    assert "5 deals left" in plain
    styles = {str(span.style) for span in text.spans}
    assert "bold red" in styles  # hearts
    assert "reverse bold yellow" in styles  # the picked column


def test_compact_board_counts_the_backs() -> None:
    view = Board.deal("spider1", "1").view()
    plain = render_board(view, compact=True).plain
    assert "▒×5" in plain and "▒×4" in plain
    assert BACK not in plain


def test_progress_and_results() -> None:
    race = RaceInfo(
        code="K7QX2",
        variant="spider1",
        state="running",
        version=9,
        creator="p1",
        max_players=8,
        time_limit=1800,
        undo=True,
        live_boards=False,
        countdown=3,
        players=[
            PlayerInfo(player="p1", name="ada", status="won", runs=8, moves=130, time=95.0),
            PlayerInfo(player="p2", name="bob", status="playing", runs=2, turned_up=12),
        ],
    )
    plain = render_players(race, sets=8, cards=104, me="p2").plain
    assert "8/8 runs" in plain and "2/8 runs" in plain
    assert "won in 1:35" in plain
    assert "▶ bob" in plain
    results = [
        Result(
            rank=1, player="p1", name="ada", status="won", time=95.0, runs=8, moves=130, score=1170
        )
    ]
    assert "1. ada" in render_results(results).plain
    assert progress_bar(4, 8, width=8).plain == "████░░░░"
    assert format_clock(3725) == "1:02:05" and format_clock(-3) == "0:00"
