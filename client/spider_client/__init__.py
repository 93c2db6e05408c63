"""spider_client: a thin asyncio client for spider-race, and bots.

::

    from spider_client import Client, GreedyBot, play_race

    client = await Client.connect("ws://127.0.0.1:8765/ws", name="my-bot", bot=True)
    await client.join("K7QX2")
    race = await play_race(client, GreedyBot())   # returns once the race is over

Installs with the engine, ``websockets`` and ``msgpack`` only. The wire format is in
:mod:`spider_client.protocol`; the errors in :mod:`spider_client.errors`; the client's own
events in :mod:`spider_client.events`. :class:`RaceMirror` (:mod:`spider_client.mirror`)
is the client's copy of its race without any I/O: the server's messages in, the race and
the player's view out.

The client's behaviour (:class:`Client`):

- **Bots**: ``Client.connect(url, bot=True)`` says in its hello that a program plays (the
  server marks the player as a bot in every list of players, result and leaderboard, and
  races created ``humans_only`` refuse it with :class:`~spider_client.errors.HumansOnly`).
  The flag is declared, not detected: a program that plays says so, as an honour rule.
- **Requests** (``create_race``, ``join``, ``ready``, ``leave``, ``my_races``, ``profile``,
  ``rating_changes``, ``rating_leaderboard``, ``rematch``) carry a request id and
  wait for their reply; an ``error`` reply raises the :mod:`~spider_client.errors` class of
  its code.
- **Actions** (``move``, ``deal``, ``undo``, ``resign``) carry the player's next ``seq``
  and wait for their ``ack``; one action is in flight at a time (concurrent calls queue up).
  An action is kept until it is acked or refused, and sent again after a reconnect and
  whenever no answer has come for ``resend_after`` seconds; the server applies each ``seq``
  once and answers a resend with the same ack again. Should that ack be another action's
  (the seq was used by another connection of the same player), the action is sent again
  as the next seq.
- **Rate**: when the server says ``rate_limited`` (it then drops frames for a while), the
  client pauses ``rate_limit_pause`` seconds, doubles ``send_interval`` (the time it keeps
  between frames), and sends again whatever waits for an answer.
- **The view**: ``client.view`` is the player's position (an engine
  :class:`~spider_engine.Board` with unknown cards), replaced by the view of every ack and
  of every ``joined`` reply, so after each it formats to exactly the server's view of the
  player. When the race starts, the client asks for its view by itself (a rejoin).
- **The race**: ``client.race`` is a :class:`~spider_client.protocol.RaceInfo` kept up to
  date from the race's events (players' progress, state, countdown, results).
- **Reconnects**: when the connection drops (anything but :meth:`close`), the client emits
  :class:`~spider_client.events.Disconnected`, then tries the URLs in turn with exponential
  backoff and jitter, says ``hello`` with its token (the same player), rejoins its race
  with ``since`` = the last event version it saw (the missed events are applied and
  yielded), sends again the action and the repeatable requests still waiting, and emits
  :class:`~spider_client.events.Reconnected`. A ``create_race`` caught by a drop fails with
  :class:`~spider_client.errors.RequestInterrupted` (it may have happened). After
  ``reconnect_timeout`` seconds without success (or when the server refuses the token) it
  gives up: everything waiting fails with :class:`~spider_client.errors.ConnectionLost`
  and :meth:`events` ends.
- **Race affinity** (``affinity=True``, the default): every URL opened while following a
  race carries ``?race=CODE``, and after ``create_race``, ``daily_race``, ``join``,
  ``quick_match`` and ``rematch`` the client moves to that URL (a new connection, hello
  with the token, a rejoin from the last version seen, then the old connection is
  closed), so that a load balancer hashing on ``race`` puts a race's members on one node
  (deploy/README.md). The move tells no event; :attr:`moves` counts them. A failed move
  leaves the client where it was.

"""

from __future__ import annotations

from . import protocol
from .bots import (
    Bot,
    CarelessBot,
    GreedyBot,
    RandomBot,
    connect_bot,
    make_bot,
    play_game,
    play_race,
)
from .client import Client
from .errors import (
    AccountRequired,
    BadRequest,
    BadToken,
    ConnectFailed,
    ConnectionLost,
    GameOver,
    HintsNotAllowed,
    HumansOnly,
    IllegalMove,
    InternalError,
    MalformedMove,
    MissingScope,
    NotAPlayer,
    NotFound,
    NotInRace,
    OtherKind,
    OutOfOrder,
    RaceFull,
    RateLimited,
    RequestInterrupted,
    ServerError,
    SpiderClientError,
    TooManyRaces,
    Unavailable,
    UndoNotAllowed,
    UnsupportedWebsockets,
    WrongState,
)
from .events import Disconnected, Event, Reconnected, ViewChanged
from .mirror import RaceMirror
from .options import ClientOptions

__all__ = [
    "protocol",
    "Client",
    "ClientOptions",
    "RaceMirror",
    "Bot",
    "CarelessBot",
    "GreedyBot",
    "RandomBot",
    "make_bot",
    "connect_bot",
    "play_game",
    "play_race",
    "Event",
    "Disconnected",
    "Reconnected",
    "ViewChanged",
    "SpiderClientError",
    "ConnectFailed",
    "ConnectionLost",
    "RequestInterrupted",
    "NotInRace",
    "UnsupportedWebsockets",
    "ServerError",
    "BadRequest",
    "MalformedMove",
    "BadToken",
    "MissingScope",
    "NotFound",
    "WrongState",
    "GameOver",
    "RaceFull",
    "TooManyRaces",
    "NotAPlayer",
    "OutOfOrder",
    "IllegalMove",
    "UndoNotAllowed",
    "HintsNotAllowed",
    "HumansOnly",
    "AccountRequired",
    "OtherKind",
    "RateLimited",
    "Unavailable",
    "InternalError",
]
