"""One connection's protocol state: :class:`Session`.

A session is in one :class:`State` at a time: it awaits ``hello``, then is ready for
every other message, and once closing handles nothing more. Frames come from the
transport one at a time (:meth:`Session.handle`: rate, size, decoding, validation, then
the message's handler from :attr:`Session.handlers`, the package's table
:data:`~spider_server.session.HANDLERS`); replies and race events go out through an
:class:`~.parts.Outbox` (the transport's connection). The handlers are functions of the
session and the message (:mod:`.actions`, :mod:`.races`, :mod:`.lists`, :mod:`.profile`,
:mod:`.lobby`); they, and the session, depend on a :class:`~.parts.Context` (the store,
the hub, the seed pool, the node's clock and transitions), never on sockets.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any, ClassVar

from spider_client.protocol import (
    PROTOCOL_VERSION,
    Error,
    Hello,
    MoveAction,
    Resign,
    Undo,
    Welcome,
    encode,
)
from spider_engine import Board

from .. import race as rules
from ..accounts.service import cookie_session
from ..errors import (
    BadFrame,
    InvalidMessage,
    ProtocolViolation,
    RaceNotFound,
    RateLimited,
    RequestError,
    TooManyRaces,
)
from ..fanout.watches import Subscription
from ..limits import OverLimit, TokenBucket, address_key
from ..names import MAX_NAME, NameRefused, check_name
from ..race import Game, Race
from ..scopes import check as check_scope
from ..store import PlayerRace, keys
from ..tokens import Identity, issue, new_player_id, verify
from ..transport import (
    CLOSE_GOING_AWAY,
    CLOSE_POLICY,
    CLOSE_PROTOCOL,
    CLOSE_TOO_BIG,
    CLOSE_TRY_LATER,
)
from .departures import left_public_race
from .parts import Context, Outbox
from .validation import parse_frame

__all__ = [
    "MAX_NAME",
    "Handler",
    "Session",
    "State",
    "counts",
    "display_name",
    "race_code",
]

log = logging.getLogger("spider_server.session")

_LIMIT_NAMES = {
    "new_player": "new_players",
    "return": "returns",
    "create": "creations",
    "player_create": "creations",
    "wrong_join": "wrong_joins",
    "hint": "hints",
    "player_hint": "hints",
}


class State(enum.Enum):
    """Where a connection is in the protocol."""

    AWAITING_HELLO = "awaiting hello"
    """Only ``hello`` is taken (within ``hello_timeout``)."""
    READY = "ready"
    """Every message is taken."""
    CLOSING = "closing"
    """Nothing more is handled; frames are read only to reach the close."""


def display_name(text: str) -> str:
    """A display name as shown (:func:`~..names.check_name`: NFKC-normalized, trimmed);
    InvalidMessage with the reason when the name is refused."""
    try:
        return check_name(text).display
    except NameRefused as e:
        raise InvalidMessage(f"name: {e.reason}") from None


def counts(row: PlayerRace) -> bool:
    """Whether a race of a player's list counts towards their limit of races: it waits
    (open, counting down, preparing) or runs with the player's game not over."""
    if row.state in (rules.RaceState.OPEN.value, rules.RaceState.COUNTDOWN.value):
        return True
    return row.state == rules.RaceState.RUNNING.value and row.status not in rules.TERMINAL


def race_code(text: str) -> str:
    """A join code as typed, normalized; RaceNotFound when it cannot be one."""
    code = rules.normalize_code(text)
    if code is None:
        raise RaceNotFound(f"no race {text!r}")
    return code


Handler = Callable[["Session", Any], Awaitable[None]]
"""A message's handler: called with the session and the message (of the type the table
names it for; the table's type cannot say which, hence ``Any``)."""


class Session:
    """One connection: its protocol state (who it speaks for, the races it follows), and
    its frames handled."""

    _next_id = 0
    handlers: ClassVar[Mapping[type[object], Handler]] = MappingProxyType({})
    """Message type -> handler, the same for every session: the package's table
    :data:`~spider_server.session.HANDLERS`, set by the package as it is imported (which
    is done before an import of this module returns). This module imports no handler
    module: they import it."""

    def __init__(self, ctx: Context, out: Outbox) -> None:
        self.ctx = ctx
        self.out = out
        Session._next_id += 1
        self.id = f"{ctx.settings.node}:{Session._next_id}"
        s = ctx.settings
        self.state = State.AWAITING_HELLO
        self.identity: Identity | None = None
        self.bot = False
        """The player joins races as a bot (a bot account's, or a guest that said so)."""
        self.scopes: frozenset[str] | None = None
        """An API token's scopes (:mod:`..scopes`); None: every one (a session, a guest)."""
        self.token_id: int | None = None
        """The API token the connection said hello with (its revocation ends it)."""
        self.guest = False
        """The player has no account (its hello had no session) on a server that keeps
        accounts: it joins races as a guest (``guest`` on its entries)."""
        self.subs: dict[str, Subscription] = {}
        self.bucket = TokenBucket(s.rate, s.burst)
        self.strikes = 0
        self.told_rate = False
        self.oversize = 0
        self.hint_tasks: set[asyncio.Task[object]] = set()
        """Hints being worked out for this connection (see :func:`~.races.hint`)."""
        self.hinting: dict[str, int] = {}
        """Race -> the request of the hint this connection waits for there."""
        self.known: dict[str, tuple[Race, Game, Board]] = {}
        """Race code -> the race, game and board as this connection's last action left
        them (see :func:`~.actions.apply`)."""

    @property
    def player(self) -> str:
        assert self.identity is not None
        return self.identity.player

    @property
    def address(self) -> str:
        """The client's address (the transport's word on it) as every limit per address
        keys it (:func:`~..limits.address_key`: an IPv6 address's /64)."""
        return address_key(str(getattr(self.out, "address", "") or ""))

    async def limit(self, *checks: tuple[str, str, str]) -> None:
        """Take one of each check's ``(what, key, text)`` from the limits every node shares
        (:class:`~..limits.AddressLimits`; one round trip to Redis); when one has none
        left, none is taken and :class:`~..limits.OverLimit` (``rate_limited``) says the
        first such check's text and the seconds to wait."""
        addresses = self.ctx.addresses
        if addresses is None:
            return
        refused = await addresses.take(*((what, key) for what, key, _ in checks))
        if refused is not None:
            self.ctx.metrics.refused_total[_LIMIT_NAMES[refused.what]] += 1
            text = next(t for what, _, t in checks if what == refused.what)
            raise OverLimit(text, retry_after=refused.wait)

    # -- what the transport asks ----------------------------------------------------------

    def read_timeout(self) -> float | None:
        """Seconds the next frame may take: ``hello_timeout`` before hello, then
        ``idle_timeout`` while following no race, no limit in a race."""
        s = self.ctx.settings
        if self.state is State.AWAITING_HELLO:
            return s.hello_timeout
        if self.state is State.CLOSING:
            return s.ping_timeout
        return None if self.subs else s.idle_timeout

    def timed_out(self) -> None:
        """Silent too long: closed (1008 before hello, else 1001)."""
        code = CLOSE_POLICY if self.state is State.AWAITING_HELLO else CLOSE_GOING_AWAY
        self.close(code, "idle")

    def closing(self) -> None:
        self.state = State.CLOSING

    def ended(self) -> None:
        """The connection is gone: stop following its races, and waiting for hints and
        proven deals (their solver work is cancelled unless someone else waits too); out
        of the quick-match queue and the open races' watchers too."""
        hints = self.ctx.hints
        for sub in list(self.subs.values()):
            if hints is not None and sub.role == "player" and self.identity is not None:
                hints.forget(sub.code, self.player)
            self.unsubscribe(sub)
        self.ctx.seeds.release(self)
        for task in list(self.hint_tasks):
            task.cancel()
        if self.identity is not None:
            self.ctx.lobby.gone(self, self.ctx.spawner.spawn)

    def close(self, code: int, reason: str) -> None:
        """Close after the frames already queued (the outbox then calls :meth:`closing`)."""
        self.out.close_soon(code, reason)
        self.state = State.CLOSING

    # -- frames -----------------------------------------------------------------------------

    async def handle(self, frame: bytes | str) -> None:
        """Handle one frame: rate, size, decoding, validation, then the message."""
        ctx = self.ctx
        s = ctx.settings
        ctx.metrics.frames_total += 1
        if not self.bucket.take():
            self.strikes += 1
            if self.strikes > s.flood_strikes:
                self.close(CLOSE_POLICY, "too many messages")
            elif not self.told_rate:
                self.told_rate = True
                self.error("rate_limited", f"more than {s.rate:g} messages a second; slow down")
            return
        if self.bucket.calm:
            self.strikes, self.told_rate = 0, False
        message: object = None
        started = time.perf_counter()
        try:
            if isinstance(frame, str):
                raise BadFrame("text frames are not accepted: send msgpack in binary frames")
            if len(frame) > s.max_frame:
                self.oversize += 1
                if self.oversize > 1:
                    self.error("bad_frame", f"frame of {len(frame)} bytes again; closing")
                    self.close(CLOSE_TOO_BIG, "frames too big")
                    return
                raise BadFrame(f"frame of {len(frame)} bytes; the limit is {s.max_frame}")
            message = parse_frame(frame)
            await self.dispatch(message)
        except RequestError as e:
            self.error(
                e.code,
                str(e),
                message,
                req=e.req,
                races=getattr(e, "races", None),
                retry_after=getattr(e, "retry_after", None),
            )
        except Exception:
            log.exception("handling %r failed", message)
            self.error("internal", "the server failed; nothing was changed", message)
        else:
            if isinstance(message, (MoveAction, Undo, Resign)):
                ctx.metrics.action_seconds.observe(time.perf_counter() - started)

    async def dispatch(self, message: object) -> None:
        """Run the message's handler; before hello, only hello."""
        handler = self.handlers.get(type(message))
        if handler is None:  # pragma: no cover - the validator admits only known types
            raise BadFrame("unexpected message")
        if self.state is State.AWAITING_HELLO and type(message) is not Hello:
            raise ProtocolViolation("say hello first")
        if self.scopes is not None:
            spectating = [c for c, sub in self.subs.items() if sub.role == "spectator"]
            check_scope(self.scopes, message, spectating=spectating)
        await handler(self, message)

    def send_msg(self, message: object) -> None:
        self.out.send(encode(message))

    def send_frame(self, frame: bytes) -> None:
        """Send a frame built once for many connections (the lobby's)."""
        self.out.send(frame)

    def error(
        self,
        code: str,
        text: str,
        message: object = None,
        *,
        req: int | None = None,
        races: list[str] | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.ctx.metrics.errors_total[code] += 1
        self.send_msg(
            Error(
                error=code,
                message=text,
                req=getattr(message, "req", req),
                seq=getattr(message, "seq", None),
                race=getattr(message, "code", None),
                races=races,
                retry_after=retry_after,
            )
        )

    # -- identity ---------------------------------------------------------------------------

    async def hello(self, msg: Hello) -> None:
        """Say who this connection speaks for: a new player, or with a token the same one."""
        if self.state is not State.AWAITING_HELLO:
            raise ProtocolViolation("hello was said already on this connection")
        ctx = self.ctx
        if msg.protocol != PROTOCOL_VERSION:
            self.error(
                "protocol",
                f"protocol {msg.protocol} is not supported; this server speaks {PROTOCOL_VERSION}",
            )
            self.close(CLOSE_PROTOCOL, "unsupported protocol version")
            return
        accounts, cookie = ctx.accounts, getattr(self.out, "cookie", None)
        if accounts is not None and (msg.token is not None or cookie_session(cookie)):
            try:  # each asks the database: a flood of them stops at the limit first
                await self.limit(("return", self.address, "too many hellos from your address"))
            except RateLimited as e:
                self._refuse_hello(e, "too many hellos")
                return
        signed = None if accounts is None else await accounts.hello(msg.token, cookie)
        if signed is not None:  # an account's session or token: its player, by its name
            identity = signed.identity
            if msg.bot and not identity.bot:
                raise InvalidMessage(
                    "bot: this account is a human's; a program plays with a bot account"
                    " (upgrade an account with no rated races to a bot)"
                )
        elif msg.token is not None:
            identity = verify(ctx.secret, msg.token)
            if msg.name is not None:
                identity = Identity(identity.player, display_name(msg.name))
            if accounts is not None:  # taken over by an account? its name held by one?
                await accounts.guests.check(identity.player, identity.name)
        else:
            name = display_name(msg.name) if msg.name is not None else None
            try:  # before the database is asked: a flood of hellos stops at the limit
                await self.limit(
                    ("new_player", self.address, "too many new players from your address")
                )
            except RateLimited as e:
                self._refuse_hello(e, "too many new players")
                return
            if accounts is not None and name is not None:
                await accounts.guests.check(None, name)
            player = new_player_id()
            identity = Identity(player, name or f"player-{player[1:5]}")
        bot = identity.bot if signed is not None else msg.bot  # an account's kind, or said
        self.identity = replace(identity, bot=bot)
        self.bot = bot
        self.scopes, self.token_id = (signed.scopes, signed.token_id) if signed else (None, None)
        self.guest = accounts is not None and accounts.guests.kept and not identity.account
        self.state = State.READY
        self.out.together = msg.together
        self.send_msg(
            Welcome(
                player=identity.player,
                name=identity.name,
                token=issue(ctx.secret, identity) if signed is None else signed.token,
                node=ctx.settings.node,
                server_time=ctx.clock(),
                account=identity.name if identity.account else None,
            )
        )

    def _refuse_hello(self, e: RateLimited, why: str) -> None:
        """Past the address's new players (or hellos with a token): say so, and close
        with 1013 and the seconds to wait (after new players, until then the address's
        connections get HTTP 429 before the upgrade)."""
        wait = max(1, int(getattr(e, "retry_after", None) or 1))
        hint = "say hello with your token, or " if why == "too many new players" else ""
        self.error(e.code, f"{e}; {hint}try again in {wait} s", retry_after=wait)
        self.close(CLOSE_TRY_LATER, f"retry after {wait} s: {why}")

    # -- races followed ---------------------------------------------------------------------

    async def load(self, code: str) -> Race:
        """The race now (a finished race gone from Redis: archived); RaceNotFound when
        there is none."""
        race = await self.finished_race(code)
        if race is None:
            raise RaceNotFound(f"no race {code}")
        return race

    async def finished_race(self, code: str) -> Race | None:
        """The race of that code: in Redis, else archived (:mod:`..store.archive_races`);
        None when there is none."""
        finished = self.ctx.finished
        if finished is not None:
            return await finished.race(code)
        return await self.ctx.store.races.load_race(code)

    async def my_races_now(self, *, archived: bool = False) -> list[PlayerRace]:
        """The player's races now, newest first. Races gone, or that the player is no
        longer in, are dropped from the player's list, and so are those that no longer
        count (:func:`counts`) beyond the newest :data:`~..store.keys.PLAYER_RACES_KEPT`.
        With an archive, a race gone from Redis stays listed while archived: read from
        it with ``archived`` (one query), else left as it is (it counts for nothing)."""
        store = self.ctx.store
        rows = await store.players.player_races(self.player)
        archive = self.ctx.finished.archived if self.ctx.finished is not None else None
        found: dict[str, PlayerRace] = {}
        if archive is not None and archived:
            gone = [row.code for row in rows if row.state is None]
            found = await archive.player_races(self.player, gone)
        kept: list[PlayerRace] = []
        stale: list[str] = []
        over = 0
        for row in rows:
            if row.state is None and archive is not None and (row.code in found or not archived):
                row = found.get(row.code, row)
            elif row.state is None or row.status is None:
                stale.append(row.code)
                continue
            if not counts(row):
                over += 1
                if over > keys.PLAYER_RACES_KEPT:
                    stale.append(row.code)
                    continue
            kept.append(row)
        await store.players.drop_player_races(self.player, stale)
        return kept

    async def check_race_limit(self) -> None:
        """TooManyRaces (with the codes) when the player is in ``max_races_per_player``
        races that count (:func:`counts`: waiting or running, the player's game not
        over)."""
        limit = self.ctx.settings.max_races_per_player
        counting = [row.code for row in await self.my_races_now() if counts(row)]
        if len(counting) >= limit:
            raise TooManyRaces(
                f"you are in {len(counting)} races that are waiting or running"
                f" ({', '.join(counting)}); finish or leave one first",
                races=counting,
            )

    def member(self, code: str, role: str) -> str:
        """This connection's member of a race's presence set."""
        return f"{self.id}" if role == "spectator" else f"{self.player}|{self.id}"

    def presence_items(self) -> list[tuple[str, str, bool]]:
        """(race, member, is spectator) of every race followed (renewed by the node)."""
        return [
            (code, self.member(code, s.role), s.role == "spectator")
            for code, s in self.subs.items()
        ]

    def unsubscribe(self, sub: Subscription, *, keep_presence: bool = False) -> None:
        """Stop following a race (and, unless ``keep_presence``, say so in its presence)."""
        if self.subs.get(sub.code) is sub:
            del self.subs[sub.code]
        self.known.pop(sub.code, None)
        self.out.drop_held(sub.code)  # progress held for it is no longer for this connection
        self.ctx.hub.remove(sub)
        if not keep_presence and self.identity is not None:
            self.ctx.spawner.spawn(self._drop_presence(sub.code, sub.role))

    async def _drop_presence(self, code: str, role: str) -> None:
        """Drop this connection's claim on a race; a player's race then sees at once
        whether they are away (no other connection of theirs watches it), and a public
        race waiting for players loses them (:func:`~.departures.left_public_race`)."""
        await self.ctx.store.presence.drop_presence(
            code, self.member(code, role), role == "spectator"
        )
        if role == "player":
            await self.ctx.presence.check(code)
            await left_public_race(self.ctx, code, self.player)
