"""The lobby's list of open public races in Redis: listings, the places a creator and an
address hold in it, and the list read in its order.

Each public race's commit updates its listing through one script (:data:`~.open_scripts.
LIST_RACE`) that keeps the newest version only, puts the race in the full list, its
variant's and (rated) the rated ones, and publishes the change on the lobby's channel: a
filter reads its own list, so no cap of another list can hide a race from it.

A public race's creation first claims a place (:meth:`OpenList.claim`): the player's
listed races, the client address's, and the whole list each have a cap
(``player_open_races``, ``address_open_races``, :data:`~.keys.OPEN_MAX`), checked and
taken in one script, so that two creations at once cannot both take the last place.
Once created, the claim is settled (:meth:`OpenList.settle`): the race holds the places
while it is listed, and its address orders the list.

The list's order (:data:`~.open_scripts.READ_OPEN`): one race an address at a time, in
rounds (every address's oldest race, then every address's second...), oldest first
within a round: races made in numbers from a few addresses cannot push an older race, or
another address's, down the list. Reading it is one script and a pipeline over the races
shown: never a scan. Every method raises :class:`~..errors.Unavailable` when Redis does
not answer.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis

from spider_client.protocol import OpenRace, pack

from ..errors import TooManyRaces
from ..race import Race, listing
from ..settings import Settings
from . import keys
from .codec import text
from .guard import as_unavailable
from .lobby import open_race_from
from .open_scripts import CLAIM_OPEN, LIST_RACE, READ_OPEN, SETTLE_OPEN
from .ratings import RatingStore

__all__ = ["CLAIM_TTL", "OpenList"]

CLAIM_TTL = 60.0
"""Seconds a claim of a place holds it while its race is being created (a node that died
meanwhile frees it then)."""

_READS = 3
"""Reads of the list at most while listings it shows turn out stale (and are taken off)."""


class OpenList:
    """The open public races' list: listings, places, the list read."""

    def __init__(
        self, redis: Redis, settings: Settings, ratings: RatingStore, clock: Callable[[], float]
    ) -> None:
        self.redis = redis
        self.settings = settings
        self.ratings = ratings
        """The players' records (a listing shows its creator's rating)."""
        self.clock = clock
        """The deployment's time."""
        self._scripts: dict[str, Any] = {}

    def _script(self, source: str) -> Any:
        if source not in self._scripts:
            self._scripts[source] = self.redis.register_script(source)
        return self._scripts[source]

    # -- places -------------------------------------------------------------------------------

    async def claim(self, player: str, address: str) -> str:
        """Claim a place in the list for a public race ``player`` is about to create from
        ``address``: the claim, for :meth:`settle`. :class:`~..errors.TooManyRaces` when
        the player has ``player_open_races`` listed races (with their codes), the address
        ``address_open_races``, or the list :data:`~.keys.OPEN_MAX`; nothing is taken
        then."""
        s = self.settings
        claim = "~" + secrets.token_hex(8)
        now = self.clock()
        args = [claim, repr(now), repr(now + CLAIM_TTL), str(s.player_open_races)]
        args += [str(s.address_open_races), str(keys.OPEN_MAX), str(s.race_ttl)]
        key_list = [keys.LOBBY_OPEN, keys.lobby_mine(player), keys.lobby_from(address)]
        with as_unavailable:
            reply = await self._script(CLAIM_OPEN)(keys=key_list, args=args)
        verdict, *codes = [text(x) for x in reply]
        if verdict == "player":
            raise TooManyRaces(
                f"you have {len(codes)} public races waiting in the lobby ({', '.join(codes)})"
                f"; at most {s.player_open_races}: start, fill or leave one first",
                races=codes,
            )
        if verdict == "address":
            raise TooManyRaces(
                f"{s.address_open_races} public races from your address wait in the lobby"
                " already: start, fill or leave one first"
            )
        if verdict == "full":
            raise TooManyRaces("the lobby is full: create a private race, or try again later")
        return claim

    async def settle(self, claim: str, player: str, address: str, code: str | None) -> None:
        """The race of ``claim`` was created as ``code`` (it holds its places while
        listed), or was not (None: the places are free again)."""
        key_list = [keys.LOBBY_OPEN, keys.lobby_mine(player), keys.lobby_from(address)]
        args = [claim, code or "", address, str(self.settings.race_ttl)]
        with as_unavailable:
            await self._script(SETTLE_OPEN)(keys=[*key_list, keys.LOBBY_FROM], args=args)

    # -- listings -----------------------------------------------------------------------------

    async def list_race(self, race: Race, version: int, *, deleted: bool = False) -> None:
        """Bring the race's listing to ``version`` (listed while open and its creator is
        in it, else off the list)."""
        shown = listing(race, deleted=deleted)
        if shown is not None:
            shown.version = version
            shown.creator_rating, shown.creator_provisional = await self._creator_rating(
                shown.creator, shown.variant
            )
        data = b"" if shown is None else pack(shown)
        o = race.options
        await self._list(race.code, version, race.created_at, data, o.variant, o.rated)

    async def _creator_rating(self, player: str, variant: str) -> tuple[float, bool]:
        """The rating shown of ``player`` in ``variant`` and whether it is provisional (a
        player without one: the display base, provisional)."""
        from ..race.ratings import DISPLAY_BASE

        records = await self.ratings.load_records([player])
        record = records.get(player)
        found = record.variants.get(variant) if record is not None else None
        if found is None:
            return float(DISPLAY_BASE), True
        return float(found.rating), bool(found.provisional)

    async def _list(
        self, code: str, version: int, created_at: float, data: bytes, variant: str, rated: bool
    ) -> None:
        args: list[str | bytes] = [code, str(version), repr(created_at), data]
        args += ["1" if rated else "0", repr(self.clock()), str(keys.GONE_MAX)]
        key_list = [keys.LOBBY_OPEN, keys.LOBBY_INFO, keys.LOBBY_VERSIONS, keys.LOBBY_GONE]
        key_list += [keys.LOBBY_CHANNEL, keys.LOBBY_RATED, keys.lobby_variant(variant)]
        key_list += [keys.lobby_variant(variant, rated=True), keys.LOBBY_FROM]
        with as_unavailable:
            await self._script(LIST_RACE)(keys=key_list, args=args)

    async def _unlist(self, race: OpenRace) -> None:
        """Take a listing off for good (its race is gone, or its creator's claims lapsed)."""
        await self._list(race.code, 1 << 60, 0.0, b"", race.variant, race.rated)

    # -- the list read ------------------------------------------------------------------------

    async def open_races(
        self, *, variant: str | None = None, rated: bool = False, limit: int | None = None
    ) -> list[OpenRace]:
        """The first ``limit`` (default ``open_list_length``) listed races in the list's
        order (see the module's docstring), of ``variant`` only and rated only when asked.
        A listed race whose keys are gone (expired), or whose creator no longer holds a
        claim on it (their node died) while it is older than a claim's life, is taken off
        the list and the list read again."""
        n = self.settings.open_list_length if limit is None else limit
        if variant is not None:
            key = keys.lobby_variant(variant, rated=rated)
        else:
            key = keys.LOBBY_RATED if rated else keys.LOBBY_OPEN
        shown: list[OpenRace] = []
        for _ in range(_READS):
            with as_unavailable:
                reply = await self._script(READ_OPEN)(
                    keys=[key, keys.LOBBY_INFO, keys.LOBBY_FROM], args=[str(n)]
                )
            shown = [open_race_from(info) for info in reply[1::2] if info]
            stale = await self._stale(shown)
            for race in stale:
                await self._unlist(race)
            if not stale:
                return shown
            shown = [r for r in shown if r not in stale]
        return shown

    async def _stale(self, races: list[OpenRace]) -> list[OpenRace]:
        """The races of ``races`` whose keys are gone, or whose creator has held no claim
        on it for a claim's life (``presence_ttl``)."""
        if not races:
            return []
        now = self.clock()
        with as_unavailable:
            async with self.redis.pipeline(transaction=False) as pipe:
                for race in races:
                    pipe.exists(keys.meta(race.code))
                    pipe.zrangebyscore(keys.online(race.code), now, "+inf")
                replies = await pipe.execute()
        stale = []
        settled = now - self.settings.presence_ttl
        for i, race in enumerate(races):
            exists, online = replies[2 * i], replies[2 * i + 1]
            present = any(text(m).split("|", 1)[0] == race.creator for m in online)
            if not exists or (not present and race.created_at < settled):
                stale.append(race)
        return stale
