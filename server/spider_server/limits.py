"""Limits: a token bucket (a connection's message rate), the node's limits per client
address, and the client's real address behind a trusted load balancer."""

from __future__ import annotations

import ipaddress
import math
import time
from collections.abc import Callable
from typing import Any

__all__ = [
    "MAX_ADDRESSES",
    "AddressLimits",
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


class AddressLimits:
    """The node's limits per client address: open websocket connections, and token
    buckets for the hellos that make a new player, the races created, the joins with a
    code that names no race, the hints asked for and the races' records exported (each
    ``per_minute`` a minute, as many at once); the races created and the hints per player
    too.

    An address refused a new player is told when to come back (:meth:`refuse`); until then
    :meth:`retry_after` names it, and the node answers its connections before the websocket
    upgrade (HTTP 429) instead of serving them.

    Buckets of addresses that have gone quiet are dropped once more than
    :data:`MAX_ADDRESSES` are kept (a full bucket holds nothing worth keeping); so are
    refusals whose time has passed."""

    def __init__(
        self,
        *,
        connections: int,
        new_players: int,
        creations: int,
        player_creations: int,
        wrong_joins: int,
        hints: int = 1_000_000,
        player_hints: int = 1_000_000,
        exports: int = 1_000_000,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.max_connections = connections
        self._per_minute = {
            "new_player": new_players,
            "create": creations,
            "player_create": player_creations,
            "wrong_join": wrong_joins,
            "hint": hints,
            "player_hint": player_hints,
            "export": exports,
        }
        self._clock = clock or time.monotonic
        self.connections: dict[str, int] = {}
        """Address -> websocket connections open from it."""
        self._buckets: dict[tuple[str, str], TokenBucket] = {}
        self._refused: dict[str, float] = {}
        """Address -> the time (``clock``) until which it is refused (:meth:`refuse`)."""

    @classmethod
    def of(cls, settings: Any) -> AddressLimits:
        """The limits of a node's :class:`~.settings.Settings` (``address_*`` and
        ``player_*``)."""
        return cls(
            connections=settings.address_connections,
            new_players=settings.address_new_players,
            creations=settings.address_creations,
            player_creations=settings.player_creations,
            wrong_joins=settings.address_wrong_joins,
            hints=settings.address_hints,
            player_hints=settings.player_hints,
            exports=settings.address_exports,
        )

    # -- connections ------------------------------------------------------------------------

    def connect(self, address: str) -> bool:
        """Count a new connection from ``address``; False (not counted) when it has its
        maximum open already."""
        n = self.connections.get(address, 0)
        if n >= self.max_connections:
            return False
        self.connections[address] = n + 1
        return True

    def disconnect(self, address: str) -> None:
        """A connection counted by :meth:`connect` ended."""
        n = self.connections.get(address, 0) - 1
        if n > 0:
            self.connections[address] = n
        else:
            self.connections.pop(address, None)

    # -- rates ------------------------------------------------------------------------------

    def _bucket(self, what: str, key: str) -> TokenBucket:
        bucket = self._buckets.get((what, key))
        if bucket is None:
            if len(self._buckets) >= MAX_ADDRESSES:
                self._forget_quiet()
            n = self._per_minute[what]
            bucket = TokenBucket(n / 60.0, n, clock=self._clock)
            self._buckets[(what, key)] = bucket
        return bucket

    def _forget_quiet(self) -> None:
        full = [k for k, b in self._buckets.items() if b.full]
        for k in full:
            del self._buckets[k]
        if len(self._buckets) >= MAX_ADDRESSES:  # all busy: start over rather than grow
            self._buckets.clear()

    def take(self, what: str, key: str) -> bool:
        """Take one of ``key``'s (an address; a player for ``player_create`` and
        ``player_hint``) ``what``: ``new_player``, ``create``, ``player_create``,
        ``wrong_join``, ``hint``, ``player_hint`` or ``export``; False when it has none
        left now."""
        return self._bucket(what, key).take()

    def allows(self, what: str, key: str) -> bool:
        """Whether ``key`` has one of ``what`` left (without taking it)."""
        bucket = self._bucket(what, key)
        bucket.take_none()
        return bucket.tokens >= 1.0

    # -- refusals ---------------------------------------------------------------------------

    def wait(self, what: str, key: str) -> int:
        """The whole seconds (at least 1) until ``key``'s bucket of ``what`` holds one."""
        bucket = self._bucket(what, key)
        bucket.take_none()
        return max(1, math.ceil((1.0 - bucket.tokens) / bucket.rate))

    def refuse(self, what: str, address: str) -> int:
        """``address`` was refused for want of one of ``what``: the whole seconds until its
        bucket holds one again (at least 1), during which :meth:`retry_after` names it."""
        wait = self.wait(what, address)
        if len(self._refused) >= MAX_ADDRESSES:
            now = self._clock()
            self._refused = {a: t for a, t in self._refused.items() if t > now}
            if len(self._refused) >= MAX_ADDRESSES:  # all still refused: start over
                self._refused.clear()
        self._refused[address] = self._clock() + wait
        return wait

    def retry_after(self, address: str) -> int | None:
        """Whole seconds (at least 1) ``address`` still has to wait after a refusal
        (:meth:`refuse`); None when it is not refused now. Reads no bucket: nothing is
        taken, nothing is made for an address never refused."""
        until = self._refused.get(address)
        if until is None:
            return None
        left = until - self._clock()
        if left <= 0:
            del self._refused[address]
            return None
        return max(1, math.ceil(left))


MAX_ADDRESSES = 100_000
"""Buckets kept by :class:`AddressLimits` before quiet ones are dropped."""


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
