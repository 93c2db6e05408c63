"""Redis: the only package of the server that sends it commands.

- :mod:`.guard`: every Redis error becomes :class:`~..errors.Unavailable`
  (``with as_unavailable:``), and a check-and-set that lost is tried again at most
  :data:`~.guard.CAS_TRIES` times (``for _ in cas_tries(): ...``);
- :mod:`.codec`: races, entries and games in Redis hashes;
- :mod:`.commits`: the race and action scripts, the batched commits of players' actions,
  and the one route of every committed event to the hub (``on_commit``);
- :mod:`.seeds`: the proven seeds' pools, the daily deals and their leaderboards;
- :mod:`.par`: who computes a finished deal's par (claims), the daily deal's par;
- :mod:`.races`: :class:`Store`, with the reads, the presence and watch claims, hints and
  players' races.

Every key and channel name is built in :mod:`..keys`.
"""

from __future__ import annotations

from ..race import event_data
from .commits import Acked, OnCommit
from .guard import CAS_TRIES, as_unavailable, cas_tries
from .races import PRESENCE_CHUNK, SWEEP_CHUNK, PlayerRace, Store, StoredEvent
from .seeds import leaderboard_score

__all__ = [
    "CAS_TRIES",
    "PRESENCE_CHUNK",
    "SWEEP_CHUNK",
    "Acked",
    "OnCommit",
    "PlayerRace",
    "Store",
    "StoredEvent",
    "as_unavailable",
    "cas_tries",
    "event_data",
    "leaderboard_score",
]
