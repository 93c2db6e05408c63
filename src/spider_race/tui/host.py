"""What the screens ask of the app that shows them.

The lobby and the race screen reach the app through :class:`RaceHost`, the part of
:class:`~.app.RaceApp` they use, so that they need not import the module of the app,
which imports them.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from textual.screen import Screen

from spider_client import Client

__all__ = ["RaceHost", "host_of"]


@runtime_checkable
class RaceHost(Protocol):
    """The app's side of a screen: its client and role, and the jobs a screen starts."""

    client: Client | None
    """The connection to the server, once made."""
    role: str
    """``"player"`` or ``"spectator"``."""
    player_name: str

    def start(
        self,
        *,
        code: str | None = None,
        create: dict[str, Any] | None = None,
        quick: dict[str, Any] | None = None,
    ) -> object:
        """Connect, then create or join the race (or queue for a quick match of ``quick``:
        ``variant``, ``with_bots``), and show it (in the background)."""
        ...

    def cancel_match(self) -> object:
        """Stop waiting for a quick match and leave its queue (in the background)."""
        ...

    def list_races(self, *, leave: str | None = None) -> object:
        """Show the player's races in the lobby, after leaving ``leave`` (in the
        background)."""
        ...

    def act(self, what: str, **kwargs: Any) -> object:
        """Send one action or ``ready`` (in the background)."""
        ...

    async def quit_app(self, message: str = "") -> None:
        """Close the connection and leave (``message``: printed once the app has left the
        terminal)."""
        ...

    def come_back(self, code: str) -> str:
        """The command that comes back to race ``code`` as this player (empty: none)."""
        ...


def host_of(screen: Screen[Any]) -> RaceHost:
    """The app showing ``screen``."""
    app = screen.app
    assert isinstance(app, RaceHost)
    return app
