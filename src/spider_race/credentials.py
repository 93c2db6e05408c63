"""The player's stored credentials, one per server URL: the guest token ``spider-race play``
comes back with, so that a player who quit a running race can rejoin it as the same player
(``play CODE``, or the lobby's unfinished races), or in its place the session token of an
account (``spider-race account login``), which ``play``, ``bot`` and ``watch`` then speak
for. :data:`TOKEN_ENV` in the environment overrides the file for every command.

The file is JSON, readable by its owner alone (mode 0600, in a directory of mode 0700 when
it makes one)::

    {"servers": {"ws://127.0.0.1:8765/ws": {"token": "…", "player": "…", "name": "ada"}}}

It is where ``--credentials`` says, else where :data:`ENV` says, else
``$XDG_CONFIG_HOME/spider-race/credentials.json`` (``~/.config/spider-race/credentials.json``
without it). A file that cannot be read as such is taken as empty (and written anew on the
next save). The token is a password to the player's races: whoever holds it plays as them.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_URL",
    "ENV",
    "SESSION_PREFIX",
    "TOKEN_ENV",
    "Credentials",
    "StoredPlayer",
    "default_path",
    "token_for",
    "token_from_environment",
]

DEFAULT_URL = "ws://127.0.0.1:8765/ws"
"""The server the commands speak to unless told another (``--url``)."""

ENV = "SPIDER_RACE_CREDENTIALS"
"""The environment variable naming the credentials file (``--credentials`` wins over it)."""

TOKEN_ENV = "SPIDER_RACE_TOKEN"
"""The environment variable holding a token (an account's session, or a guest's) that every
command speaks with in place of the one stored in the file."""

SESSION_PREFIX = "s1."
"""How an account's session token begins (a guest's begins ``g1.``, or has no prefix)."""


def token_from_environment(environ: dict[str, str] | None = None) -> str | None:
    """:data:`TOKEN_ENV`'s token, or None when it is unset or blank."""
    env = os.environ if environ is None else environ
    token = env.get(TOKEN_ENV, "").strip()
    return token or None


def token_for(
    url: str, path: str | os.PathLike[str] | None = None, *, guests: bool = False
) -> str | None:
    """The token a command speaks with at ``url``: :data:`TOKEN_ENV`'s, else the session
    stored for ``url`` in the credentials file at ``path`` (a guest's token too with
    ``guests``), else None (a new guest)."""
    token = token_from_environment()
    if token is not None:
        return token
    stored = Credentials(path).get(url)
    if stored is None or not (stored.account or guests):
        return None
    return stored.token


def default_path(environ: dict[str, str] | None = None) -> Path:
    """The credentials file: :data:`ENV`'s, else ``$XDG_CONFIG_HOME/spider-race/
    credentials.json`` (an absolute ``XDG_CONFIG_HOME`` only, as the XDG spec says), else
    ``~/.config/spider-race/credentials.json``."""
    env = os.environ if environ is None else environ
    named = env.get(ENV)
    if named:
        return Path(named).expanduser()
    config = env.get("XDG_CONFIG_HOME", "")
    base = Path(config) if config and Path(config).is_absolute() else Path.home() / ".config"
    return base / "spider-race" / "credentials.json"


@dataclass(frozen=True)
class StoredPlayer:
    """The player stored for one server: their token, id and name."""

    token: str
    player: str | None = None
    name: str | None = None

    @property
    def account(self) -> bool:
        """Whether the token is an account's session (else a guest's)."""
        return self.token.startswith(SESSION_PREFIX)


class Credentials:
    """The credentials file at ``path`` (:func:`default_path` when None): each server URL's
    :class:`StoredPlayer`. Every call reads the file again, and every change writes it
    whole, so that two terminals playing at once do not undo each other's tokens."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path).expanduser() if path is not None else default_path()

    def get(self, url: str) -> StoredPlayer | None:
        """The player stored for ``url``, or None."""
        entry = self._servers().get(url)
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
            return None
        player, name = entry.get("player"), entry.get("name")
        return StoredPlayer(
            token=entry["token"],
            player=player if isinstance(player, str) else None,
            name=name if isinstance(name, str) else None,
        )

    def put(self, url: str, *, token: str, player: str | None, name: str | None) -> None:
        """Store ``url``'s player (the file is written with mode 0600)."""
        servers = self._servers()
        servers[url] = {"token": token, "player": player, "name": name}
        self._write(servers)

    def drop(self, url: str) -> None:
        """Forget ``url``'s player (a token the server refused)."""
        servers = self._servers()
        if servers.pop(url, None) is not None:
            self._write(servers)

    def _servers(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        servers = data.get("servers") if isinstance(data, dict) else None
        return dict(servers) if isinstance(servers, dict) else {}

    def _write(self, servers: dict[str, Any]) -> None:
        """Write the file whole: a new file of mode 0600 beside it, then renamed over it
        (a reader never sees half a file, and the token is never readable by others)."""
        folder = self.path.parent
        if not folder.exists():
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=".credentials-", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                os.fchmod(out.fileno(), 0o600)
                json.dump({"servers": servers}, out, indent=2, sort_keys=True)
                out.write("\n")
            os.replace(temp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
