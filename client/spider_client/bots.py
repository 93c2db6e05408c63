"""Bots: programs that see what a player sees and choose the next move.

A bot is any callable that takes the player's view (an engine :class:`~spider_engine.Board`
whose face-down and stock cards are unknown) and returns a move in the spec's notation
(``"d1j"``, ``"+"`` to deal), or ``None`` when it has nothing left to try (its game is then
resigned). Two ship here:

- :class:`RandomBot` plays a uniformly random legal move, and gives up (resigns) after
  ``max_moves`` of them.
- :class:`GreedyBot` ranks moves the way players do, on every variant: a move that finishes
  a set first, then one that turns up a face-down card or empties a column, then one that
  builds a group; it deals when nothing useful is left, remembers the positions it has seen
  so that it does not shuffle cards back and forth, and gives up when a long while has
  brought nothing.
- :class:`CarelessBot` plays as the greedy one but makes a random move instead about one
  time in three (:data:`~spider_client.strategies.SLIP`): a strength between the two.

:func:`make_bot` names them ``random``, ``careless`` and ``greedy`` (weakest first).
:func:`play_race` runs a bot in a race through a :class:`~spider_client.Client`;
:func:`play_game` runs one on a full engine position without a server (for testing bots).
The strategies live in :mod:`spider_client.strategies`; all are exported from here.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from spider_engine import Board, Move

from .errors import WrongState
from .options import ClientOptions
from .strategies import CarelessBot, GreedyBot, RandomBot

if TYPE_CHECKING:
    from .client import Client
    from .protocol import RaceInfo

__all__ = [
    "Bot",
    "RandomBot",
    "GreedyBot",
    "CarelessBot",
    "STRATEGIES",
    "connect_bot",
    "make_bot",
    "play_race",
    "play_game",
]

STRATEGIES = ("random", "careless", "greedy")
"""The strategies :func:`make_bot` knows, weakest first."""

Bot = Callable[[Board], "str | None"]
"""A bot: the player's view in, a move's text out (``None``: give up)."""


async def connect_bot(
    url: str | list[str],
    *,
    name: str | None = None,
    token: str | None = None,
    options: ClientOptions | None = None,
) -> Client:
    """A client whose hello says ``bot`` (the way a bot should connect: the server then
    shows the player as a bot, and races for humans only refuse it); ``token``: a bot
    account's API token (``a1.``) or session, to play as that account (a human's account
    is refused: ``BadRequest``); ``options`` are the client's other options (its name,
    token and bot flag are these)."""
    from .client import Client

    chosen = ClientOptions() if options is None else options
    if token is not None:
        chosen = dataclasses.replace(chosen, token=token)
    return await Client.open(url, dataclasses.replace(chosen, name=name, bot=True))


def make_bot(strategy: str, *, seed: int | str | None = None, max_moves: int | None = None) -> Bot:
    """A new bot by name (:data:`STRATEGIES`): ``greedy``, ``careless`` (greedy with random
    slips) or ``random`` (which gives up after ``max_moves`` moves, by default
    :data:`~spider_client.strategies.RANDOM_MAX_MOVES`)."""
    if strategy == "greedy":
        return GreedyBot(seed)
    if strategy == "careless":
        return CarelessBot(seed) if max_moves is None else CarelessBot(seed, max_moves=max_moves)
    if strategy == "random":
        return RandomBot(seed) if max_moves is None else RandomBot(seed, max_moves=max_moves)
    raise ValueError(f"unknown bot strategy {strategy!r} ({', '.join(STRATEGIES)})")


def play_game(board: Board, bot: Bot, *, max_actions: int = 1000) -> Board:
    """Play ``board`` (a full position, changed in place and returned) with ``bot``, showing
    the bot only the player's view each time, until it is won, the bot gives up (returns
    ``None``) or ``max_actions`` moves and deals were made."""
    for _ in range(max_actions):
        if board.is_won():
            break
        text = bot(board.view())
        if text is None:
            break
        board.push(Move.from_text(text))
    return board


async def play_race(
    client: Client,
    bot: Bot,
    *,
    ready: bool = True,
    max_actions: int = 5000,
    delay: float = 0.0,
    until: Literal["race", "game"] = "race",
) -> RaceInfo:
    """Play the race ``client`` has joined as a player with ``bot`` and return the race:
    by default once the race is over for everyone (``until="race"``: its results are in
    ``client.race.results``, and a race with players who do not play lasts until its time
    limit), or as soon as this player's game is over (``until="game"``: the results may
    not be in yet). The client should have said it is a bot (:func:`connect_bot`, or
    ``Client.connect(..., bot=True)``).

    Marks the player ready (unless ``ready`` is false, or the race is counting down or
    running already: a quick match, a rematch), waits for the deal, then asks the
    bot for a move on each new view and sends it, waiting for its ack, until the player's
    game is over (won, stuck, resigned, out of time, or the race finished). A bot that
    returns ``None``, or that has made ``max_actions`` actions, resigns (so does a player
    with no legal move left in a race that allows undo). ``delay`` seconds pass between
    actions (for races people watch). Reconnects happen underneath (the client resends the
    action in flight); server errors other than "the game or race is over" propagate, and
    so does :class:`~spider_client.errors.ConnectionLost` when the client gives up.
    """
    if ready and client.race is not None and client.race.state == "open":
        await client.ready()  # a race counting down already (a match, a rematch) needs none
    await client.wait_until(lambda c: c.view is not None or c.finished)
    actions = 0
    while not client.finished and client.status in (None, "waiting", "playing", "stuck"):
        view = client.view
        assert view is not None
        text = bot(view) if actions < max_actions else None
        try:
            if text is None:
                await client.resign()
                break
            await client.move(text)
        except WrongState:  # GameOver included: the game or the race ended meanwhile
            break
        actions += 1
        if delay:
            await asyncio.sleep(delay)
    if until == "race":
        await client.wait_until(lambda c: c.finished)
    assert client.race is not None
    return client.race
