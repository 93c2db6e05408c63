"""The page's words and standings (``static/words.js``, ``static/standings.js``) in
Chromium: counts in the singular for one, ordinals, moves in words as the engine's boards
say they are, the server's reasons with card faces, and places as rules.md §7a ranks
players (from the fields the player entries carry)."""

from __future__ import annotations

from spider_engine import Board
from tests.web.web_helpers import blank_page

WORDS_JS = """async ([position, moves, reason]) => {
  const { count, ordinal, moveWords, readableReason } = await import('/words.js');
  const { Board } = await import('/rules.js');
  const board = Board.fromText(position);
  return {
    counts: [count(0, 'move'), count(1, 'move'), count(2, 'move'), count(1, 'deal left', 'deals left'), count(3, 'deal left', 'deals left')],
    ordinals: [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112].map(ordinal),
    moves: moves.map((m) => moveWords(board, m)),
    reason: readableReason(reason, board.variant),
  };
}"""

STANDINGS_JS = """async (players) => {
  const { standings, placeText, leader, newsSince } = await import('/standings.js');
  const places = standings(players);
  const fmt = (s) => `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, '0')}`;
  const first = newsSince(null, players.map((p) => ({ ...p, status: 'playing' })), null, fmt);
  const news = newsSince(first.seen, players, 'c', fmt);
  return {
    places: Object.fromEntries(places),
    texts: players.map((p) => placeText(places, p.player)),
    leader: leader(players).player,
    first: first.texts,
    news: news.texts,
  };
}"""

SUITS = {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}


def face(token: str) -> str:
    """A Spider card as players read it: ten as 10, suits as symbols."""
    rank = "10" if token[0] == "T" else token[0]
    return rank + SUITS[token[1]]


async def test_words(browser, static_url) -> None:
    board = Board.deal("spider4+open", "words-1")
    tokens = board.variant.cards.tokens
    moves = [m for m in board.legal_moves if m.kind == "move"][:6]
    expected = []
    for m in moves:
        column = board.cols[m.src]
        first, last = face(tokens[column[-m.count]]), face(tokens[column[-1]])
        where = f"from {chr(97 + m.src)} to {chr(97 + m.dst)}"
        expected.append(
            f"{first} {where}" if m.count == 1 else f"{first}–{last} ({m.count} cards) {where}"
        )
    reason = "illegal move b3e: 4c does not go onto Th in column e"
    page = await blank_page(browser, static_url)
    got = await page.evaluate(
        WORDS_JS, [board.view_text(), [m.text() for m in moves] + ["+", "undo"], reason]
    )
    assert got["counts"] == ["0 moves", "1 move", "2 moves", "1 deal left", "3 deals left"]
    assert got["ordinals"] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st",
        "111th", "112th",
    ]  # fmt: skip
    assert got["moves"] == [*expected, "deal", "undo"]
    assert got["reason"] == "illegal move b3e: 4♣ does not go onto 10♥ in column e"


def entry(player: str, status: str, *, runs: int = 0, up: int = 0, time=None, moves=0) -> dict:
    return {
        "player": player,
        "name": player.upper(),
        "status": status,
        "runs": runs,
        "turned_up": up,
        "time": time,
        "moves": moves,
        "score": 500,
    }


async def test_standings(browser, static_url) -> None:
    players = [
        entry("a", "won", runs=8, up=44, time=300.0, moves=200),
        entry("b", "won", runs=8, up=44, time=250.0, moves=260),
        entry("c", "playing", runs=2, up=30),
        entry("d", "stuck", runs=2, up=30),
        entry("e", "timeout", runs=2, up=31),
        entry("f", "resigned", runs=5, up=40),
        entry("g", "left", runs=0, up=2),
        entry("h", "abandoned", runs=0, up=2),
        entry("i", "idle", runs=0, up=2),
    ]
    page = await blank_page(browser, static_url)
    got = await page.evaluate(STANDINGS_JS, players)
    # winners by time, then who played on by runs then cards turned up, forfeits last
    assert got["places"] == {
        "b": 1, "a": 2, "e": 3, "c": 4, "d": 4, "f": 6, "g": 7, "h": 7, "i": 7,
    }  # fmt: skip
    assert got["texts"][2] == "4th of 9 (tied)" and got["texts"][1] == "1st of 9"
    assert got["leader"] == "b"
    assert got["first"] == []  # nothing is told the first time
    assert got["news"] == [
        "A won in 5:00!",
        "B won in 4:10!",
        "D is stuck.",
        "E ran out of time.",
        "F resigned.",
        "G left the race.",
        "H is away: out of the race.",
        "I made no move in time: out of the race.",
    ]
