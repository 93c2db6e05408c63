"""The server's accounts' routes (``/account/...``) as the command line calls them: one
HTTP request each, credentials in headers (the server takes no request body).

:class:`AccountServer` is the server of a websocket URL (``ws://host:port/ws`` ->
``http://host:port/account/...``; ``wss`` -> ``https``). Each call returns the route's
JSON answer, or raises :class:`AccountFailure` with a sentence for the player and the
command's exit status:

====  ==================================================================================
1     the server refused: a name refused (with its reason), a weak password (with its
      reason), a name taken, a wrong name or password, no session (or it has ended), too
      many attempts (with the wait), a bot upgrade of an account with rated races as a
      human, a deletion while a race is not recorded yet, no such API token
3     the server does not answer, or cannot do it now (no database, busy: with the wait),
      or keeps no accounts
====  ==================================================================================
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = ["REFUSED", "UNREACHABLE", "AccountFailure", "AccountServer", "http_base"]

REFUSED = 1
"""Exit status: the server refused (the reason said)."""
UNREACHABLE = 3
"""Exit status: the server does not answer, or cannot do it now."""
TIMEOUT = 60.0
"""Seconds the server has to answer (a password's hashing waits for a free slot)."""

_SCHEMES = {"ws": "http", "wss": "https", "http": "http", "https": "https"}


def http_base(url: str) -> str:
    """The HTTP address of the server of websocket URL ``url`` (no trailing slash);
    ValueError for a URL that is no server's."""
    parts = urlsplit(url)
    scheme = _SCHEMES.get(parts.scheme)
    if scheme is None or not parts.netloc:
        raise ValueError(f"{url!r} is not a server's URL (such as ws://127.0.0.1:8765/ws)")
    path = parts.path.rstrip("/")
    if path.endswith("/ws"):
        path = path[: -len("/ws")]
    return urlunsplit((scheme, parts.netloc, path, "", ""))


class AccountFailure(Exception):
    """A route that did not do what was asked: ``str(e)`` says why, ``status`` is the exit
    status (:data:`REFUSED` or :data:`UNREACHABLE`), ``code`` the server's error code
    (empty when it did not answer)."""

    def __init__(self, message: str, *, status: int, code: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def _basic(name: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{name}:{password}".encode()).decode()


class AccountServer:
    """The accounts' routes of the server of ``url`` (a websocket URL, as ``--url``);
    ``agent`` is the ``User-Agent`` the server lists with each session."""

    def __init__(self, url: str, *, agent: str = "spider-race") -> None:
        self.url = url
        self.base = http_base(url)
        self.agent = agent

    def sign_up(self, name: str, password: str, *, guest: str | None = None) -> dict[str, Any]:
        """A new account and its session: ``{"name", "player", "token"}``. ``guest``: the
        guest token the account takes over (sent as ``X-Guest-Token``)."""
        return self._call("POST", "/account/signup", self._signing(name, password, guest))

    def sign_in(self, name: str, password: str, *, guest: str | None = None) -> dict[str, Any]:
        """A new session of the account: ``{"name", "player", "token"}``."""
        return self._call("POST", "/account/signin", self._signing(name, password, guest))

    def me(self, token: str) -> dict[str, Any]:
        """The session's account: ``{"name", "player", "created_at", "bot"}``."""
        return self._call("GET", "/account/me", self._bearer(token))

    def tokens(self, token: str) -> list[dict[str, Any]]:
        """The account's API tokens (``id``, ``name``, ``scopes``, ``created_at``,
        ``last_used_at``), never the tokens themselves."""
        return list(self._call("GET", "/account/tokens", self._bearer(token))["tokens"])

    def create_token(self, token: str, scopes: list[str], *, name: str | None) -> dict[str, Any]:
        """A new API token of the account: its line and ``token`` (shown this once)."""
        headers = {**self._bearer(token), "X-Scopes": " ".join(scopes)}
        if name is not None:
            headers["X-Token-Name"] = name
        return self._call("POST", "/account/tokens/new", headers)

    def revoke_token(self, token: str, number: int) -> None:
        """Revoke the account's API token ``number``."""
        headers = {**self._bearer(token), "X-Token-Id": str(number)}
        self._call("POST", "/account/tokens/revoke", headers)

    def upgrade_to_bot(self, token: str) -> dict[str, Any]:
        """Make the account a bot account, for good: ``{"name", "player", "bot"}``."""
        return self._call("POST", "/account/upgrade-to-bot", self._bearer(token))

    def delete(self, name: str, password: str) -> dict[str, Any]:
        """Delete the account ``name`` (its password): ``{"deleted", "player"}``."""
        return self._call("POST", "/account/delete", {"Authorization": _basic(name, password)})

    def sessions(self, token: str) -> list[dict[str, Any]]:
        """The account's sessions (``id``, ``created_at``, ``last_used_at``, ``address``,
        ``user_agent``, ``current``)."""
        return list(self._call("GET", "/account/sessions", self._bearer(token))["sessions"])

    def sign_out(self, token: str, *, everywhere: bool = False) -> int:
        """End the session (every session of the account with ``everywhere``); how many
        ended (1 without ``everywhere``)."""
        path = "/account/signout-everywhere" if everywhere else "/account/signout"
        return int(self._call("POST", path, self._bearer(token)).get("ended", 1))

    def change_password(self, name: str, old: str, new: str, *, keep: str | None) -> int:
        """Change the account's password from ``old`` to ``new``; every session ends but
        ``keep`` (the caller's). How many ended."""
        headers = {
            "Authorization": _basic(name, old),
            "X-New-Password": base64.b64encode(new.encode()).decode(),
        }
        if keep is not None:
            headers["Cookie"] = f"spider_session={keep}"  # the session the route keeps
        return int(self._call("POST", "/account/password", headers).get("ended", 0))

    # -- the requests -------------------------------------------------------------------

    @staticmethod
    def _signing(name: str, password: str, guest: str | None) -> dict[str, str]:
        headers = {"Authorization": _basic(name, password)}
        if guest:
            headers["X-Guest-Token"] = guest
        return headers

    @staticmethod
    def _bearer(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    def _call(self, method: str, path: str, headers: dict[str, str]) -> dict[str, Any]:
        sent = {"Accept": "application/json", "User-Agent": self.agent, **headers}
        request = urllib.request.Request(self.base + path, method=method, headers=sent)
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                body = response.read()
        except urllib.error.HTTPError as e:
            raise self._refusal(e.code, e.read(), e.headers.get("Retry-After")) from None
        except (OSError, TimeoutError) as e:
            reason = getattr(e, "reason", None) or e
            raise AccountFailure(
                f"the server at {self.url} does not answer ({reason})", status=UNREACHABLE
            ) from None
        try:
            answer = json.loads(body)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise AccountFailure(
                f"the server at {self.url} answered something that is not an account's",
                status=UNREACHABLE,
            )
        return answer

    def _refusal(self, status: int, body: bytes, retry_after: str | None) -> AccountFailure:
        try:
            answer: Any = json.loads(body)
            code, message = str(answer["error"]), str(answer["message"])
        except (ValueError, KeyError, TypeError):
            code, message = "", ""
        if status in (404, 405) and code in ("", "not_found", "method"):
            return AccountFailure(
                f"the server at {self.url} keeps no accounts", status=UNREACHABLE, code=code
            )
        if not message:
            message = f"the server answered HTTP {status}"
        wait = retry_after.strip() if retry_after else ""
        if wait.isdigit() and f"{wait} s" not in message:
            message += f" (try again in {wait} s)"
        if status == 503:
            return AccountFailure(
                f"the server cannot do it now: {message}", status=UNREACHABLE, code=code
            )
        return AccountFailure(message, status=REFUSED, code=code)
