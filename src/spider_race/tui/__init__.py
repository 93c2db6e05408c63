"""The terminal UI of spider-race (needs the ``tui`` extra: textual).

``spider-race play [CODE]`` and ``spider-race watch CODE`` run :class:`RaceApp`, which shows
the :class:`LobbyScreen` and the :class:`RaceScreen`.
"""

from __future__ import annotations

from .app import RaceApp
from .lobby import LobbyScreen
from .race_screen import RaceScreen

__all__ = ["RaceApp", "LobbyScreen", "RaceScreen"]
