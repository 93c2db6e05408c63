"""The node's side of ghosts: emitting each ghost's recorded actions on the race's clock.

A node emits the due actions of the running ghost races it watches (its tick loop starts a
:class:`GhostRunner` task per such race). The schedule is derived from the race's start
and the recorded times alone (:func:`~..race.next_due`), so any node can emit the next
action, and after a restart the node that watches the race next goes on from the ghost's
seq in Redis (actions already due are emitted at once, in order). Every node that watches
the race tries each action when it is due; the action is committed like a player's, with
the check-and-set on the ghost's game seq, so exactly one try wins and the others reload
the ghost's game.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import time
from collections.abc import Awaitable, Callable

from spider_engine import Board

from .. import race as rules
from ..closing import Spawner
from ..errors import GameOver, RequestError, Unavailable, WrongState
from ..fanout.changes import Changes
from ..race import ActionOutcome, Game, GhostRun, Race, RaceState
from ..store import Store, check_and_set

__all__ = ["GhostRunner"]

log = logging.getLogger(__name__)

RECHECK = 1.0
"""Seconds a runner sleeps at most before it checks that the race is still watched."""


class GhostRunner:
    """The ghost-emitting tasks of one node, one per running ghost race it watches.
    ``active(code)`` says whether the node still watches the race running; ``spawner`` runs
    a coroutine in the node's background."""

    def __init__(
        self,
        store: Store,
        changes: Changes,
        clock: Callable[[], float],
        spawner: Spawner,
        active: Callable[[str], bool],
    ) -> None:
        self.store = store
        self.changes = changes
        self.clock = clock
        self.spawn = spawner.spawn
        self.active = active
        self.running: set[str] = set()
        self.done: dict[str, float] = {}
        """Races whose ghosts are done here (code -> monotonic time of a retry, infinite
        when every ghost's run is over or the race is): not started again before."""
        self.emitted = 0
        """Ghost actions this node committed."""
        self.lost = 0
        """Ghost actions another node committed first (this node's try lost)."""

    def ensure(self, code: str) -> None:
        """Emit the ghosts of race ``code`` from now on (once per race on this node)."""
        if code in self.running or self.done.get(code, 0.0) > time.monotonic():
            return
        if len(self.done) >= 10_000:
            self.done.clear()
        self.running.add(code)
        if self.spawn(self._run(code)) is None:
            self.running.discard(code)

    async def _run(self, code: str) -> None:
        try:
            race = await self.store.races.load_race(code)
            if race is None or race.state is not RaceState.RUNNING:
                self.done[code] = math.inf
                return
            runs = await self.store.races.load_ghost_runs(code)
            games: dict[str, Game] = {}
            for gid in runs:
                game = await self.store.races.load_game(code, gid)
                if game is not None:
                    games[gid] = game
            await self._emit(race, runs, games)
            if self.active(code):  # over, not merely unwatched: nothing more to emit
                self.done[code] = math.inf
        except Unavailable:
            log.warning("ghosts of race %s paused: storage unavailable", code)
            self.done[code] = time.monotonic() + RECHECK
        finally:
            self.running.discard(code)

    async def _emit(self, race: Race, runs: dict[str, GhostRun], games: dict[str, Game]) -> None:
        code = race.code
        boards: dict[str, Board | None] = {}
        while self.active(code):
            due = [
                (at, gid)
                for gid, game in games.items()
                if (at := rules.next_due(race, game, runs[gid])) is not None
            ]
            if not due:
                return
            at, gid = min(due)
            wait = at - self.clock()
            if wait > 0:
                await asyncio.sleep(min(wait, RECHECK))
                continue
            run = runs[gid]
            try:
                attempt = await check_and_set(
                    self._reader(code, gid, games[gid], boards.get(gid)),
                    functools.partial(_due, race, run),
                    functools.partial(self.store.commits.commit_action, race),
                )
            except (WrongState, GameOver):
                return  # the race is over
            except RequestError as e:  # a recorded run that no longer replays: it stops
                log.warning("ghost %s of race %s stopped: %s", gid, code, e)
                return
            game, board, _ = attempt.loaded
            if game is None:
                return
            if attempt.committed is None:  # another node emitted it: what is due now
                games[gid], boards[gid] = game, board
                continue
            self.changes.publish(attempt.committed)
            outcome = attempt.decision
            assert outcome is not None
            self.emitted += 1
            games[gid], boards[gid] = outcome.game, outcome.board

    def _reader(
        self, code: str, gid: str, game: Game, board: Board | None
    ) -> Callable[[], Awaitable[_Read]]:
        """The loads of one ghost action's tries: first the game and board as the last
        action left them, then (the try lost: another node emitted it) read afresh."""
        first = True

        async def load() -> _Read:
            nonlocal first
            if first:
                first = False
                return game, board, self.clock()
            self.lost += 1
            return await self.store.races.load_game(code, gid), None, self.clock()

        return load


_Read = tuple[Game | None, "Board | None", float]
"""A ghost's game (None: gone), its board if known, and the time it was read."""


def _due(race: Race, run: GhostRun, read: _Read) -> ActionOutcome | None:
    """The ghost's next action if it is due at the time read (None: not yet, or no game)."""
    game, board, now = read
    if game is None:
        return None
    at = rules.next_due(race, game, run)
    if at is None or at > now:
        return None
    return rules.ghost_outcome(race, game, run, board)
