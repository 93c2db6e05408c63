"""Redis: the only package of the server that sends it commands.

One store a thing kept, each a plain class holding its connection and what else it needs,
composed in one place (:class:`Store`, made by :meth:`Store.connect`):

- :mod:`.commits`: :class:`CommitLink`, the race and action scripts and the batched
  commits of players' actions; each returns what it committed (:class:`Committed`);
- :mod:`.races`: :class:`RaceStore`, the races, games and events read, and hints asked;
- :mod:`.presence`: :class:`PresenceStore`, the claims of who watches which race;
- :mod:`.players`: :class:`PlayerStore`, each player's list of races;
- :mod:`.ratings`: :class:`RatingStore`, records, histories, ladders, finished races'
  results;
- :mod:`.seeds`: :class:`SeedStore`, the proven seeds' pools, the daily deals and their
  leaderboards;
- :mod:`.par`: :class:`ParStore`, who computes a finished deal's par, the daily deal's par;
- :mod:`.lobby`: :class:`LobbyStore`, the quick-match queues and the lobby's channel;
- :mod:`.openlist`: :class:`OpenList`, the open public races' list and its places;
- :mod:`.matching`: :class:`MatchingStore`, matches waiting for their players, places
  first in line, and the strikes of players who missed a match or left one early;
- :mod:`.limits`: :class:`LimitStore`, the rate limits every node shares (per client
  address and per player) and the marks of addresses refused new players.

Every call follows :mod:`.guard`: a Redis error is :class:`~..errors.Unavailable`, and a
check-and-set that lost is decided again by :func:`check_and_set`, the server's one retry
loop. Every key and channel name is built in :mod:`.keys`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from ..race import event_data
from ..race.ratings import PairLimit
from ..settings import Settings
from .accounts import ranked_records
from .archive import archive_of
from .commits import CommitLink, Committed
from .durability import unmet
from .guard import CAS_TRIES, Attempt, as_unavailable, check_and_set
from .limits import LimitStore
from .lobby import LobbyStore
from .matching import MatchingStore
from .openlist import OpenList
from .par import ParStore
from .players import PlayerRace, PlayerStore
from .presence import PRESENCE_CHUNK, PresenceStore
from .races import SWEEP_CHUNK, RaceStore, StoredEvent
from .ratings import Archived, RatingStore
from .seeds import SeedStore, leaderboard_score

__all__ = [
    "archive_of",
    "ranked_records",
    "CAS_TRIES",
    "PRESENCE_CHUNK",
    "SWEEP_CHUNK",
    "Attempt",
    "CommitLink",
    "Committed",
    "LimitStore",
    "LobbyStore",
    "MatchingStore",
    "OpenList",
    "ParStore",
    "PlayerRace",
    "PlayerStore",
    "PresenceStore",
    "RaceStore",
    "RatingStore",
    "SeedStore",
    "Store",
    "StoredEvent",
    "as_unavailable",
    "check_and_set",
    "event_data",
    "leaderboard_score",
]


@dataclass(frozen=True, slots=True)
class Store:
    """One node's stores, each reached by what it keeps (``store.races.load_race(code)``).
    The hub's pub/sub connection aside, nothing else of the node sends Redis commands."""

    redis: Redis
    health: Redis
    """The client that answers :meth:`answers` (the node's asks once, without retries)."""
    clock: Callable[[], float]
    """The deployment's time."""
    commits: CommitLink
    races: RaceStore
    presence: PresenceStore
    players: PlayerStore
    ratings: RatingStore
    seeds: SeedStore
    par: ParStore
    lobby: LobbyStore
    open_list: OpenList
    matching: MatchingStore
    limits: LimitStore

    @classmethod
    def connect(
        cls,
        redis: Any,
        settings: Settings,
        *,
        clock: Callable[[], float] = time.time,
        health: Any = None,
        batch: bool = True,
        archived: Archived | None = None,
    ) -> Store:
        """The stores of one node on ``redis`` (a client, or a cluster's); ``archived``
        reads players' archived records (a record missing in Redis is read there)."""
        commits = CommitLink(redis, settings, batch=batch, clock=clock)
        races = RaceStore(redis, settings, commits)
        pairs = PairLimit(settings.rated_pair_per_day, settings.rated_pair_window)
        ratings = RatingStore(redis, races, clock, archived, pairs)
        return cls(
            redis=redis,
            health=health if health is not None else redis,
            clock=clock,
            commits=commits,
            races=races,
            presence=PresenceStore(redis, settings),
            players=PlayerStore(redis, clock),
            ratings=ratings,
            seeds=SeedStore(redis),
            par=ParStore(redis, settings),
            lobby=LobbyStore(redis, ratings, clock),
            open_list=OpenList(redis, settings, ratings, clock),
            matching=MatchingStore(redis),
            limits=LimitStore(redis),
        )

    async def aclose(self) -> None:
        """Close the commits' connection (the clients are closed by their owner)."""
        await self.commits.aclose()

    async def answers(self) -> bool:
        """Whether Redis answers PING now (with the health client: one try, within a
        second)."""
        try:
            return bool(await self.health.ping())
        except (RedisError, OSError):
            return False

    async def durability_unmet(self) -> str | None:
        """Why no commit can be saved as the node's durability asks now (None: it can be;
        see :func:`.durability.unmet`)."""
        with as_unavailable:
            return await unmet(self.health, self.commits.durability)

    async def now(self) -> float:
        """Redis's clock, in seconds."""
        with as_unavailable:
            sec, usec = await self.redis.time()
        return sec + usec / 1e6
