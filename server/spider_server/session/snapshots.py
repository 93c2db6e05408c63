"""Finished races' snapshots, encoded once and shared by every ``joined`` of them.

A finished race changes no more but for its presence (who watches it now) and its later
events (its par, a rematch offer: each a new version). What makes its ``joined`` big —
every player's actions and their times (``race.replays``, ``race.replay_times``), the
results and the final boards — is encoded once per version, kept in :class:`Snapshots`
(bounded by bytes, the least recently asked for dropped first), and spliced, as the same
bytes, into each requester's ``joined`` around the fields encoded for it (its ``req``, its
role, who is connected, the spectators; :func:`~..transport.frames.spliced_map`): the
frame is one msgpack map like any other ``joined``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from spider_client.protocol import ParInfo, PlayerInfo, Role, fields_of, pack

from .. import race as rules
from ..race import Race, RaceState
from ..transport.frames import spliced_map

__all__ = ["FINISHED_CATCH_UP", "SHARED_FIELDS", "Snapshot", "Snapshots", "snapshot_of"]

SHARED_FIELDS = ("results", "replays", "replay_times")
"""The fields of a finished race's ``RaceInfo`` encoded once and shared."""

FINISHED_CATCH_UP = 64
"""A ``joined`` of a finished race carries the events after ``since`` only when there are
at most this many; else none (the snapshot holds the race's end: results, replays,
boards), so that its bytes are the shared ones whatever ``since`` is."""


@dataclass(frozen=True, eq=False)
class Snapshot:
    """A finished race at one version, ready to be sent to anyone: the fields told per
    request left to :meth:`frame`, the big ones encoded (:attr:`shared`, :attr:`boards`)."""

    code: str
    version: int
    fields: dict[str, Any]
    """The race's ``RaceInfo`` fields but :data:`SHARED_FIELDS`, ``players`` and
    ``spectators``."""
    players: tuple[PlayerInfo, ...]
    """The players as shown when connected (``connected`` is set per request)."""
    shared: dict[str, bytes]
    """:data:`SHARED_FIELDS`, encoded."""
    boards: bytes
    """``joined.boards`` (every player's final position), encoded."""
    statuses: dict[str, str]
    """Player -> their game's status (not the ghosts'), for the hub."""
    ghosts: bool
    starts_at: float | None
    ends_at: float | None

    @property
    def par_settled(self) -> bool:
        """Whether the race's par is settled: until it is, showing the race still sees
        that its par is on its way."""
        par = self.fields.get("par")
        return isinstance(par, ParInfo) and not par.provisional

    @property
    def size(self) -> int:
        """Bytes kept encoded."""
        return len(self.boards) + sum(len(b) for b in self.shared.values())

    def frame(
        self,
        *,
        req: int,
        role: Role,
        online: Iterable[str],
        spectators: int,
        view: str | None = None,
        seq: int = 0,
        events: list[dict[str, Any]] | None = None,
    ) -> bytes:
        """The ``joined`` of this snapshot for one request: ``online`` are the players with
        a connection watching the race now."""
        connected = set(online)
        info = dict(self.fields)
        info["players"] = [
            p if p.player in connected else replace(p, connected=False) for p in self.players
        ]
        info["spectators"] = spectators
        race = spliced_map(pack(info), len(info), dict(self.shared), pack=pack)
        head = {"req": req, "role": role, "view": view, "seq": seq, "events": events or []}
        head["type"] = "joined"
        pieces = spliced_map(
            pack(head), len(head), {"race": race, "boards": self.boards}, pack=pack
        )
        return b"".join(pieces)


def snapshot_of(race: Race, now: float) -> Snapshot | None:
    """The snapshot of a finished race whose end is public at ``now`` (a daily race's once
    its day is over); None for any other race."""
    if race.state is not RaceState.FINISHED or race.final is None:
        return None
    if not rules.revealed(race, now):
        return None
    info = rules.race_info(race, online=[p for p in race.players], spectators=0, now=now)
    fields = fields_of(info)
    shared = {name: pack(fields.pop(name)) for name in SHARED_FIELDS}
    players = tuple(fields.pop("players"))
    del fields["spectators"]
    return Snapshot(
        code=race.code,
        version=race.version,
        fields=fields,
        players=players,
        shared=shared,
        boards=pack(dict(race.final.boards)),
        statuses={p: e.status for p, e in race.players.items() if not e.ghost},
        ghosts=any(e.ghost for e in race.players.values()),
        starts_at=race.starts_at,
        ends_at=race.ends_at,
    )


class Snapshots:
    """The node's finished races' snapshots, at most ``budget`` bytes of them (a snapshot
    bigger than that is made for its request and not kept; 0 keeps none). One version of
    a race is kept: a later one replaces it."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.size = 0
        """Bytes kept."""
        self._kept: OrderedDict[str, Snapshot] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, code: str, version: int) -> Snapshot | None:
        """The snapshot of race ``code`` at ``version``, if kept."""
        snapshot = self._kept.get(code)
        if snapshot is None or snapshot.version != version:
            return None
        self._kept.move_to_end(code)
        return snapshot

    def keep(self, race: Race, now: float) -> Snapshot | None:
        """The snapshot of ``race`` (see :func:`snapshot_of`; None when it has none), kept
        when it fits the budget."""
        snapshot = snapshot_of(race, now)
        if snapshot is None or snapshot.size > self.budget:
            return snapshot
        old = self._kept.pop(race.code, None)
        if old is not None:
            self.size -= old.size
        self._kept[race.code] = snapshot
        self.size += snapshot.size
        while self.size > self.budget:
            _, dropped = self._kept.popitem(last=False)
            self.size -= dropped.size
        return snapshot
