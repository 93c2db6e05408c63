"""How a client connects, speaks and paces itself: :class:`ClientOptions`.

:meth:`Client.connect <spider_client.Client.connect>` takes each of them as a keyword
argument with the same default; a program that keeps its settings together can build one
and pass it to :meth:`Client.open <spider_client.Client.open>`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ClientOptions"]


@dataclass(frozen=True)
class ClientOptions:
    """A client's options (all have defaults)."""

    name: str | None = None
    """The name a new player takes (None: the server's choice)."""
    token: str | None = None
    """A session token from an earlier connection: come back as that player."""
    bot: bool = False
    """Say in the hello that a program plays (the server shows the player as a bot)."""
    reconnect_timeout: float | None = 60.0
    """Seconds a dropped connection is tried again before the client gives up (None:
    for ever)."""
    backoff_initial: float = 0.05
    """Seconds between the first rounds of reconnect attempts (doubled each round)."""
    backoff_max: float = 2.0
    """The longest wait between two rounds of reconnect attempts."""
    request_timeout: float | None = 30.0
    """Seconds a request waits for its reply before TimeoutError (None: no bound)."""
    open_timeout: float = 10.0
    """Seconds to open a connection and be welcomed."""
    resend_after: float = 5.0
    """Seconds without an answer after which a request or action is sent again."""
    rate_limit_pause: float = 1.0
    """Seconds nothing is sent after the server said ``rate_limited``."""
    max_unread: int = 10_000
    """Events kept for :meth:`~spider_client.Client.events` until read."""
    affinity: bool = True
    """Open the followed race's URL (``?race=CODE``) and move there after joining."""
