"""The accounts' HTTP routes (``/account/...``), decided from a request's method, path and
headers into a :class:`Reply` that :mod:`.http` sends. Requests carry no body (the
websocket server takes none): credentials come in headers.

==================================  ======================================================
``POST /account/signup``            ``Authorization: Basic base64(name:password)``: a new
                                    account and its session (201); with ``X-Guest-Token``
                                    (a guest's token), the account takes that guest over
``POST /account/signin``            the same header: a new session of the account
``POST /account/signout``           ends this session
``POST /account/signout-everywhere`` ends every session of the account
``GET /account/sessions``           the account's sessions (``current``: this one)
``POST /account/password``          Basic with the old password, ``X-New-Password``
                                    (base64 of the new one): ends every other session;
                                    without Basic, by the session, an account's first
                                    password (one made with a passkey)
``GET /account/me``                 the account's name, player, kind (``bot``), address,
                                    whether it has a password
``GET /account/tokens``             the account's API tokens (never the tokens themselves)
``POST /account/tokens/new``        ``X-Scopes`` (space-separated), optionally
                                    ``X-Token-Name``: a new API token, shown once (201)
``POST /account/tokens/revoke``     ``X-Token-Id``: revokes that token
``POST /account/upgrade-to-bot``    makes the account a bot account, for good
``POST /account/delete``            Basic with the password: deletes the account; without
                                    Basic, by the session, an account without a password
==================================  ======================================================

The routes of passkeys and e-mail are :mod:`.account_keys_http`'s (:data:`KEY_ROUTES`).

Sign-up and sign-in answer ``{"name", "player", "token"}`` and set the cookie
``spider_session`` (HttpOnly, SameSite=Lax, Path=/, Secure when the first public origin is
https). The others act for the session of ``Authorization: Bearer <token>``, else of the
cookie; a POST by the cookie must come from a public origin (``Origin``), and a sign-up,
sign-in or password change that says its ``Origin`` too. Errors are JSON ``{"error",
"message"}`` (:class:`~..accounts.AccountError` names them), and change nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection
from typing import Any, Protocol

from ..accounts import (
    AccountError,
    Accounts,
    CrossOrigin,
    Malformed,
    Signed,
    Unauthorized,
)
from ..accounts.changes import AccountChanges, parse_scopes, token_name
from ..accounts.emails import Emails
from ..accounts.mail import Mailer, sender_of
from ..accounts.passkeys import Passkeys, page_origin
from ..accounts.service import COOKIE, cookie_session
from ..errors import Unavailable
from ..runners.endings import Endings
from ..settings import Settings, parse_origins
from ..store import account_links
from ..store import emails as email_rows
from ..store.account_erasure import Erasure
from ..store.account_links import AccountLinks
from ..store.endings import EndingStore
from .account_headers import MAX_HEADER, Headers, Reply, b64_text, basic, one
from .account_keys_http import KEY_ROUTES, KeyRoutes

__all__ = ["ROUTES", "AccountRoutes", "Reply"]

ROUTES = {
    "/account/signup": "POST",
    "/account/signin": "POST",
    "/account/signout": "POST",
    "/account/signout-everywhere": "POST",
    "/account/sessions": "GET",
    "/account/password": "POST",
    "/account/me": "GET",
    "/account/tokens": "GET",
    "/account/tokens/new": "POST",
    "/account/tokens/revoke": "POST",
    "/account/upgrade-to-bot": "POST",
    "/account/delete": "POST",
    **KEY_ROUTES,
}
"""Each route and its one method (HEAD too for a GET)."""


def _token(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "name": row.name,
        "scopes": list(row.scopes),
        "created_at": row.created_at,
        "last_used_at": row.last_used_at,
    }


class Listening(Protocol):
    @property
    def port(self) -> int:
        """The port the node listens on."""

    @property
    def secret(self) -> bytes:
        """The guests' token secret (a keyring)."""

    @property
    def store(self) -> Any:
        """The node's stores (its ratings put a guest taken over back on the ladders)."""

    @property
    def connections(self) -> Collection[Any]:
        """The node's connections (a deleted account's, a revoked token's, end)."""


class AccountRoutes:
    """The routes of one node: its :class:`~..accounts.Accounts`; ``origins`` gives the
    public origins; ``lifetime`` is the cookie's Max-Age."""

    def __init__(
        self,
        accounts: Accounts,
        origins: Callable[[], tuple[str, ...]],
        *,
        lifetime: int,
        keys: KeyRoutes,
        changes: AccountChanges | None = None,
    ) -> None:
        self.accounts = accounts
        self.origins = origins
        self.lifetime = lifetime
        self.keys = keys
        """The routes of passkeys and e-mail (:mod:`.account_keys_http`)."""
        self.changes = changes or AccountChanges(accounts)
        self.endings: Endings | None = None
        """This node's side of the ended accounts and tokens (:meth:`_listen`)."""
        self._listening: asyncio.Task[None] | None = None

    @classmethod
    def of(
        cls,
        settings: Settings,
        archive: Any,
        redis: Any,
        clock: Callable[[], float],
        node: Listening,
    ) -> AccountRoutes:
        """A node's routes and accounts: the origins are ``public_origin``'s, else the
        node's own (``http://host:port`` once it listens, and ``localhost`` for a loopback
        host)."""
        configured = parse_origins(settings.public_origin)

        def origins() -> tuple[str, ...]:
            if configured:
                return configured
            host, number = settings.host, node.port
            own = [f"http://{host}:{number}"]
            if host in ("127.0.0.1", "::1", "localhost", "0.0.0.0", "::"):
                own += [f"http://localhost:{number}", f"http://127.0.0.1:{number}"]
            return tuple(dict.fromkeys(own))

        accounts = Accounts.of(
            settings,
            archive,
            redis,
            clock,
            secret=node.secret,
            rated=node.store.ratings.put_on_ladders,
        )
        links = AccountLinks(
            redis,
            clock,
            mails_to=settings.email_mails,
            mails_from=settings.address_mails,
            challenges=account_links.CHALLENGES_AN_HOUR,
        )

        def origin() -> str:
            return page_origin(origins())

        mailer = None
        if settings.smtp_url:
            mailer = Mailer(settings.smtp_url, lambda: sender_of(settings.smtp_from, origin()))

        emails = Emails(accounts, links, mailer, origin, lifetime=settings.mail_link_lifetime)
        passkeys = Passkeys(accounts, links, origins, lifetime=settings.passkey_challenge_lifetime)
        keys = KeyRoutes(passkeys, emails)
        ratings = node.store.ratings

        async def rated_human(player: str) -> bool:
            record = (await ratings.load_records([player])).get(player)
            return (
                record is not None
                and not record.bot
                and any(vr.rated for vr in record.variants.values())
            )

        erasure = None if archive is None else Erasure(redis, archive, node.store.races)
        endings = EndingStore(redis)
        changes = AccountChanges(
            accounts, rated_human=rated_human, erasure=erasure, endings=endings, links=links
        )
        routes = cls(
            accounts, origins, lifetime=settings.session_lifetime, keys=keys, changes=changes
        )
        routes.endings = Endings(endings, node.connections)
        return routes

    async def aclose(self) -> None:
        """Stop hashing passwords and hearing of ended accounts; wait a moment for the
        mails under way."""
        self.accounts.close()
        if self._listening is not None:
            self._listening.cancel()
        if self.keys.emails.mailer is not None:
            await self.keys.emails.mailer.close()

    def _listen(self) -> None:
        """Start hearing of deleted accounts and revoked tokens (:mod:`..runners.endings`:
        this node's connections of them end), once, as the node's first connection is
        upgraded: before it, no connection here speaks for an account."""
        if self._listening is None and self.endings is not None:
            self._listening = asyncio.get_running_loop().create_task(self.endings.run())

    # -- the websocket upgrade --------------------------------------------------------------

    def upgrade(self, headers: Headers) -> Reply | None:
        """403 for an upgrade that brings the session cookie from a foreign page (or
        none); None: go on."""
        self._listen()
        cookies = headers.get_all("Cookie")
        if not any(cookie_session(c) for c in cookies):
            return None
        origin = (headers.get_all("Origin") or [""])[0]
        if origin.rstrip("/").lower() not in self.origins():
            return self._error(
                CrossOrigin(f"a signed-in connection from {origin[:100]!r} is refused")
            )
        return None

    # -- the routes -------------------------------------------------------------------------

    async def answer(self, method: str, path: str, headers: Headers, address: str) -> Reply:
        allowed = ROUTES.get(path)
        if allowed is None:
            return Reply(404, {"error": "not_found", "message": f"no route {path[:60]!r}"})
        if method != allowed and not (method == "HEAD" and allowed == "GET"):
            text = f"{path} takes {allowed} only"
            return Reply(405, {"error": "method", "message": text}, {"allow": allowed})
        try:
            if path in KEY_ROUTES:
                agent = one(headers, "User-Agent", limit=MAX_HEADER) or ""
                return await self.keys.route(self, path, headers, address, agent)
            return await self._route(path, headers, address)
        except AccountError as e:
            return self._error(e)
        except Unavailable as e:
            return Reply(503, {"error": "unavailable", "message": str(e)}, {"retry_after": "5"})

    def _error(self, e: AccountError) -> Reply:
        extra = {} if e.retry_after is None else {"retry_after": str(e.retry_after)}
        return Reply(e.status, {"error": e.code, "message": str(e)}, extra)

    def check_origin(self, headers: Headers, *, required: bool) -> None:
        origin = one(headers, "Origin", limit=300)
        if origin is None and not required:
            return
        if origin is None or origin.rstrip("/").lower() not in self.origins():
            raise CrossOrigin("this request must come from the game's own page (Origin)")

    async def current(self, headers: Headers, *, post: bool) -> Signed:
        """The session the request acts for: a Bearer token's, else the cookie's (and then,
        for a POST, only from a public origin)."""
        value = one(headers, "Authorization")
        if value is not None:
            scheme, _, token = value.partition(" ")
            if scheme.lower() != "bearer" or not token:
                raise Malformed("Authorization: Bearer <session token> is expected")
            return await self.accounts.session(token.strip())
        found = cookie_session(one(headers, "Cookie"))
        if found is None:
            raise Unauthorized("sign in first (no session cookie nor Bearer token)")
        if post:
            self.check_origin(headers, required=True)
        return await self.accounts.session(found)

    def _cookie(self, token: str, max_age: int) -> str:
        secure = "; Secure" if any(o.startswith("https:") for o in self.origins()[:1]) else ""
        return f"{COOKIE}={token}; HttpOnly; SameSite=Lax; Path=/; Max-Age={max_age}{secure}"

    def signed(self, status: int, signed: Signed) -> Reply:
        assert signed.token is not None
        body = {"name": signed.account.name, "player": signed.account.player, "token": signed.token}
        return Reply(status, body, {"set_cookie": self._cookie(signed.token, self.lifetime)})

    async def _route(self, path: str, headers: Headers, address: str) -> Reply:
        accounts = self.accounts
        agent = one(headers, "User-Agent", limit=MAX_HEADER) or ""
        if path in ("/account/signup", "/account/signin"):
            self.check_origin(headers, required=False)
            name, password = basic(headers)
            if path == "/account/signin":
                return self.signed(
                    200, await accounts.sign_in(name, password, address=address, agent=agent)
                )
            guest = one(headers, "X-Guest-Token")
            email = self.keys.signup_email(headers)
            signed = await accounts.sign_up(
                name, password, address=address, agent=agent, guest=guest
            )
            return await self.keys.mailed(self.signed(201, signed), signed, email, address)
        if path == "/account/password":
            self.check_origin(headers, required=False)
            raw = one(headers, "X-New-Password")
            if raw is None:
                raise Malformed("give the new password as X-New-Password: base64(password)")
            new = b64_text(raw, "X-New-Password")
            auth = one(headers, "Authorization") or ""
            if not auth.lower().startswith("basic "):  # a first password, by the session
                current = await self.current(headers, post=True)
                account = await accounts.first_password(current, new)
                return Reply(200, {"name": account.name, "ended": 0})
            name, old = basic(headers)
            keep = cookie_session(one(headers, "Cookie"))
            kept = b"" if keep is None else (await self._kept(keep))
            account, ended = await accounts.change_password(
                name, old, new, address=address, keep=kept
            )
            return Reply(200, {"name": account.name, "ended": ended})
        if path == "/account/delete":
            return await self._delete(headers, address)
        current = await self.current(headers, post=ROUTES[path] == "POST")
        if path == "/account/me":
            a = current.account
            email, has_password = await email_rows.account_extras(accounts.db(), a.id)
            return Reply(200, {
                "name": a.name,
                "player": a.player,
                "created_at": a.created_at,
                "bot": a.bot,
                "email": email,
                "password": has_password,
            })  # fmt: skip
        if path.startswith("/account/tokens") or path == "/account/upgrade-to-bot":
            return await self._tokens_and_kind(path, headers, current)
        if path == "/account/sessions":
            listed = await accounts.sessions(current)
            return Reply(200, {"sessions": [
                {
                    "id": s.hash[:6].hex(),
                    "created_at": s.created_at,
                    "last_used_at": s.last_used_at,
                    "address": s.address,
                    "user_agent": s.user_agent,
                    "current": s.hash == current.hash,
                }
                for s in listed
            ]})  # fmt: skip
        cleared = {"set_cookie": self._cookie("", 0)}
        if path == "/account/signout":
            await accounts.sign_out(current)
            return Reply(200, {"signed_out": True}, cleared)
        ended = await accounts.sign_out_everywhere(current)
        return Reply(200, {"signed_out": True, "ended": ended}, cleared)

    async def _delete(self, headers: Headers, address: str) -> Reply:
        """Delete the account of Basic's name and password; without Basic, the account of
        the session when it has no password (one made with a passkey)."""
        self.check_origin(headers, required=False)
        auth = one(headers, "Authorization") or ""
        if auth.lower().startswith("basic "):
            name, password = basic(headers)
            gone = await self.changes.delete(name, password, address=address)
        else:
            gone = await self.changes.delete_signed(await self.current(headers, post=True))
        cleared = {"set_cookie": self._cookie("", 0)}
        return Reply(200, {"deleted": True, "player": gone.player}, cleared)

    async def _tokens_and_kind(self, path: str, headers: Headers, current: Signed) -> Reply:
        changes = self.changes
        if path == "/account/tokens":
            listed = await changes.tokens(current)
            return Reply(200, {"tokens": [_token(t) for t in listed]})
        if path == "/account/tokens/new":
            scopes = parse_scopes(one(headers, "X-Scopes", limit=200))
            name = token_name(one(headers, "X-Token-Name", limit=200))
            token, row = await changes.create_token(current, name=name, scopes=scopes)
            return Reply(201, {**_token(row), "token": token})
        if path == "/account/tokens/revoke":
            raw = (one(headers, "X-Token-Id", limit=20) or "").strip()
            if not raw.isdigit() or not raw.isascii() or len(raw) > 18:
                raise Malformed(
                    "give the token's id as X-Token-Id: a number (see GET /account/tokens)"
                )
            await changes.revoke_token(current, int(raw))
            return Reply(200, {"revoked": int(raw)})
        account = await changes.upgrade_to_bot(current)
        return Reply(200, {"name": account.name, "player": account.player, "bot": account.bot})

    async def _kept(self, token: str) -> bytes:
        """The hash of the cookie's session when it is one still running (kept through a
        password change), else nothing."""
        try:
            return (await self.accounts.session(token)).hash
        except Unauthorized:
            return b""
