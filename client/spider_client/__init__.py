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
    NotAPlayer,
    NotFound,
    NotInRace,
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
    "RateLimited",
    "Unavailable",
    "InternalError",
]
