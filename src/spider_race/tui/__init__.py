"""The terminal UI of spider-race (needs the ``tui`` extra: textual).

``spider-race play [CODE]`` and ``spider-race watch CODE`` run :class:`RaceApp`.
"""

from __future__ import annotations

from .app import LobbyScreen, RaceApp, RaceScreen

__all__ = ["RaceApp", "LobbyScreen", "RaceScreen"]
