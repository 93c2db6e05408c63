"""Limits: a token bucket (a connection's message rate), the limits per client address
(shared by every node, in Redis), and the client's real address behind a trusted load
balancer."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from .errors import RateLimited, Unavailable

if TYPE_CHECKING:  # the store is given (settings, which the store imports, imports this)
    from .store.limits import LimitStore

__all__ = [
    "MAX_ADDRESSES",
    "OPEN_WHEN_DOWN",
    "PLAYER_LIMITS",
    "AddressLimits",
    "OverLimit",
    "Refusal",
    "address_key",
    "Proxies",
    "TokenBucket",
    "parse_networks",
    "proxy_line",
]


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` kept; each message takes one.

    :meth:`take` is True when a token was there (and takes it), False when the message is
    over the rate. ``clock`` is injectable for tests; it defaults to ``time.monotonic``.
    """

    def __init__(
        self, rate: float, burst: int, *, clock: Callable[[], float] | None = None
    ) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self._clock = clock or time.monotonic
        self._last = self._clock()

    def _refill(self) -> None:
        now = self._clock()
        self.tokens = min(self.burst, self.tokens + (now - self._last) * self.rate)
        self._last = now

    def take(self) -> bool:
        self._refill()
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    def take_none(self) -> None:
        """Bring the tokens up to date (take nothing)."""
        self._refill()

    @property
    def full(self) -> bool:
        """Whether the bucket is full again (its sender has been quiet)."""
        self._refill()
        return self.tokens >= self.burst

    @property
    def calm(self) -> bool:
        """Whether the bucket is at least half full (the sender keeps to the rate)."""
        self._refill()
        return self.tokens >= self.burst / 2


class OverLimit(RateLimited):
    """A request refused by a limit of :class:`AddressLimits`: ``rate_limited``, with the
    seconds until the limit allows one again (``retry_after``)."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = float(retry_after)


class Refusal(NamedTuple):
    """Which limit refused a request, and the whole seconds (at least 1) until it allows
    one again."""

    what: str
    wait: int


PLAYER_LIMITS = frozenset({"player_create", "player_hint"})
"""The limits kept per player (the others are kept per client address)."""
OPEN_WHEN_DOWN = frozenset({"new_player"})
"""The limits that let a request through while Redis does not answer: a new player costs
nothing until it does something, and all it can do then asks Redis (and its limits). The
others refuse it (``unavailable``), as the request itself would."""


def address_key(address: str) -> str:
    """The key of a client address in every limit per address: an IPv4 address as it is
    (an IPv4-mapped IPv6 address as its IPv4 address), an IPv6 address as its /64 (one
    subscriber's network: ``2001:db8:1:2::/64``), anything else (``unix``) as it is.
    Idempotent: the key of a key is the key."""
    try:
        network = ipaddress.ip_network(address, strict=False)
    except ValueError:
        return address
    if isinstance(network, ipaddress.IPv4Network):
        return str(network.network_address) if network.prefixlen == 32 else address
    mapped = network.network_address.ipv4_mapped
    if mapped is not None and network.prefixlen == 128:
        return str(mapped)
    if network.prefixlen < 64:
        return address
    return str(network.supernet(new_prefix=64))


class AddressLimits:
    """The limits per client address, shared by every node of a deployment, and the
    node's own count of open connections.

    Kept in Redis (:class:`~.store.limits.LimitStore`), one bucket a limit and key: the
    hellos that make a new player, the races created, the joins with a code that names no
    race, the hints asked for and the races' records exported, per address; the races
    created and the hints per player too; each ``per_minute`` a minute, as many at once.
    Whichever node a client reaches, it spends the same buckets. An address is keyed by
    :func:`address_key` (an IPv6 address by its /64), here and wherever an address is a
    limit's key. Time is the node's clock (``clock``), passed to Redis.

    An address refused a new player is marked refused until its bucket holds one again,
    in Redis (every node reads the mark: :meth:`retry_after`) and on this node; until
    then the node answers its connections before the websocket upgrade (HTTP 429).

    Open connections are this node's own resource: counted here, in memory, per
    :func:`address_key` (``connections`` a node)."""

    def __init__(
        self,
        store: LimitStore,
        *,
        connections: int,
        new_players: int,
        creations: int,
        returns: int = 1_000_000,
        player_creations: int,
        wrong_joins: int,
        hints: int = 1_000_000,
        player_hints: int = 1_000_000,
        exports: int = 1_000_000,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.store = store
        self.max_connections = connections
        self._per_minute = {
            "new_player": new_players,
            "return": returns,
            "create": creations,
            "player_create": player_creations,
            "wrong_join": wrong_joins,
            "hint": hints,
            "player_hint": player_hints,
            "export": exports,
        }
        self.clock = clock or time.time
        """The nodes' time (the buckets are kept in it)."""
        self.connections: dict[str, int] = {}
        """Address key -> websocket connections open from it to this node."""
        self._refused: dict[str, float] = {}
        """Address key -> until when (``clock``) it is refused new players, as this node
        learned it (a refusal of its own, or a mark read): no Redis command to answer it
        again. A cache: dropped when it grows past :data:`MAX_ADDRESSES`."""

    @classmethod
    def of(
        cls, settings: Any, store: LimitStore, *, clock: Callable[[], float] | None = None
    ) -> AddressLimits:
        """The limits of a node's :class:`~.settings.Settings` (``address_*`` and
        ``player_*``), kept in ``store``."""
        return cls(
            store,
            connections=settings.address_connections,
            new_players=settings.address_new_players,
            returns=settings.address_returns,
            creations=settings.address_creations,
            player_creations=settings.player_creations,
            wrong_joins=settings.address_wrong_joins,
            hints=settings.address_hints,
            player_hints=settings.player_hints,
            exports=settings.address_exports,
            clock=clock,
        )

    # -- connections (this node's) ----------------------------------------------------------

    def connect(self, address: str) -> bool:
        """Count a new connection from ``address``; False (not counted) when it has its
        maximum open already."""
        key = address_key(address)
        n = self.connections.get(key, 0)
        if n >= self.max_connections:
            return False
        self.connections[key] = n + 1
        return True

    def disconnect(self, address: str) -> None:
        """A connection counted by :meth:`connect` ended."""
        key = address_key(address)
        n = self.connections.get(key, 0) - 1
        if n > 0:
            self.connections[key] = n
        else:
            self.connections.pop(key, None)

    # -- rates (shared) ---------------------------------------------------------------------

    async def _spend(
        self, what: str, key: str, now: float, how: Literal["take", "ask", "give"]
    ) -> float:
        n = self._per_minute[what]
        player = what in PLAYER_LIMITS
        if not player:
            key = address_key(key)
        return await self.store.spend(
            what,
            key,
            player=player,
            now=now,
            interval=60.0 / n,
            burst=n,
            how=how,
            mark=what == "new_player" and how == "take",
        )

    async def take(self, *wanted: tuple[str, str]) -> Refusal | None:
        """Take one of each ``(what, key)``: ``what`` one of ``new_player``, ``create``,
        ``player_create``, ``wrong_join``, ``hint``, ``player_hint``, ``export``; ``key``
        an address (a player for ``player_create`` and ``player_hint``). None when each
        had one (all taken), else the first that had none and the seconds to wait: then
        none is taken (those taken are given back). One round trip (the buckets asked at
        once; a second to give back after a refusal). :class:`~.errors.Unavailable` when
        Redis does not answer, unless every ``what`` is in :data:`OPEN_WHEN_DOWN`."""
        now = self.clock()
        try:
            waits = await asyncio.gather(
                *(self._spend(what, key, now, "take") for what, key in wanted)
            )
        except Unavailable:
            if all(what in OPEN_WHEN_DOWN for what, _ in wanted):
                return None
            raise
        refused = [(w, k, wait) for (w, k), wait in zip(wanted, waits, strict=True) if wait > 0]
        if not refused:
            return None
        taken = [(w, k) for (w, k), wait in zip(wanted, waits, strict=True) if wait == 0]
        if taken:
            with contextlib.suppress(Unavailable):  # at worst a token spent for nothing
                await asyncio.gather(*(self._spend(w, k, now, "give") for w, k in taken))
        what, key, wait = refused[0]
        if what == "new_player":
            self._remember(address_key(key), now + wait)
        return Refusal(what, max(1, math.ceil(wait)))

    async def allows(self, what: str, key: str) -> bool:
        """Whether ``key`` has one of ``what`` left (without taking it). One round trip;
        :class:`~.errors.Unavailable` when Redis does not answer."""
        return await self._spend(what, key, self.clock(), "ask") == 0

    # -- refusals ---------------------------------------------------------------------------

    def _remember(self, key: str, until: float) -> None:
        if len(self._refused) >= MAX_ADDRESSES:
            now = self.clock()
            self._refused = {a: t for a, t in self._refused.items() if t > now}
            if len(self._refused) >= MAX_ADDRESSES:  # all still refused: Redis has them
                self._refused.clear()
        self._refused[key] = until

    async def retry_after(self, address: str) -> int | None:
        """Whole seconds (at least 1) ``address`` still has to wait after a refused new
        player (on any node); None when it is not refused now. Answered from this node's
        memory when it knows of the refusal, else from its mark in Redis (one read, no
        bucket touched); None too when Redis does not answer (the hello's own limit
        decides then)."""
        key = address_key(address)
        now = self.clock()
        until = self._refused.get(key)
        if until is None:
            try:
                until = await self.store.refused_until(key)
            except Unavailable:
                return None
            if until is None or until <= now:
                return None
            self._remember(key, until)
        left = until - now
        if left <= 0:
            self._refused.pop(key, None)
            return None
        return max(1, math.ceil(left))


MAX_ADDRESSES = 100_000
"""Refused addresses a node remembers before it forgets those whose time has passed (or,
all still refused, every one: the marks in Redis still say so)."""


def parse_networks(text: str) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """The networks of a comma-separated list of addresses and CIDRs (``10.0.0.5``,
    ``10.0.0.0/8``, ``::1``); ValueError naming the first that is not one."""
    networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ValueError(f"{item!r} is not an address or a CIDR") from None
    return networks


class Proxies:
    """Which peers are the deployment's load balancers (``SPIDER_RACE_TRUSTED_PROXIES``):
    only theirs is the word on a client's real address (``X-Forwarded-For``, or the PROXY
    protocol's line)."""

    def __init__(self, text: str) -> None:
        self.networks = parse_networks(text)

    def trusts(self, peer: str) -> bool:
        if not self.networks:
            return False
        try:
            address = ipaddress.ip_address(peer)
        except ValueError:
            return False
        return any(address in net for net in self.networks)

    def client_of(self, peer: str, forwarded_for: str | None) -> str:
        """The client's address: ``peer`` itself unless it is trusted and says whom it
        forwards for; then the last address in ``X-Forwarded-For`` that is not a trusted
        proxy (the one the first trusted proxy heard from)."""
        if not forwarded_for or not self.trusts(peer):
            return peer
        hops = [h.strip() for h in forwarded_for.split(",") if h.strip()]
        for hop in reversed(hops):
            try:
                ipaddress.ip_address(hop)
            except ValueError:
                return peer  # not an address: not the proxy's word
            if not self.trusts(hop):
                return hop
        return hops[0] if hops else peer


def proxy_line(data: bytes) -> tuple[str | None, int] | None:
    """A PROXY protocol v1 line at the start of ``data``: (the client's address, or None
    for ``UNKNOWN``; the line's length with its CRLF), or None when ``data`` does not
    start with a whole, well-formed one."""
    if not data.startswith(b"PROXY "):
        return None
    end = data.find(b"\r\n", 0, 108)
    if end < 0:
        return None
    parts = data[:end].decode("ascii", "replace").split(" ")
    if len(parts) >= 2 and parts[1] == "UNKNOWN":
        return None, end + 2
    if len(parts) != 6 or parts[1] not in ("TCP4", "TCP6"):
        return None
    try:
        ipaddress.ip_address(parts[2])
    except ValueError:
        return None
    return parts[2], end + 2
