"""The accounts' routes of passkeys and e-mail (``/account/passkey/...``,
``/account/email...``, ``/account/password/forgot`` and ``/reset``, ``/account/config``),
decided from a request's headers into a :class:`~.account_headers.Reply`;
:mod:`.accounts_http` hands them over and gives the session and the cookie
(:class:`Front`).

A passkey's options are answered as the JSON that ``PublicKeyCredential.parse*OptionsFromJSON``
takes; the browser's answer (``credential.toJSON()``) comes back as base64url of its JSON
in ``X-WebAuthn``. Names and passkeys' names come as base64 of their UTF-8
(``X-Name``, ``X-Passkey-Name``); a link's token as ``X-Mail-Token``.
"""

from __future__ import annotations

from typing import Any, Protocol

from webauthn.helpers import bytes_to_base64url

from ..accounts import AccountError, Malformed, Signed
from ..accounts.emails import Emails, check_email
from ..accounts.passkeys import Passkeys, credential_id
from ..accounts.service import NoMail
from ..store import emails as email_rows
from .account_headers import MAX_WEBAUTHN, Headers, Reply, b64_text, b64url_text, one

__all__ = ["KEY_ROUTES", "Front", "KeyRoutes"]

KEY_ROUTES = {
    "/account/config": "GET",
    "/account/passkey/signup-options": "POST",
    "/account/passkey/signup": "POST",
    "/account/passkey/signin-options": "POST",
    "/account/passkey/signin": "POST",
    "/account/passkeys": "GET",
    "/account/passkey/add-options": "POST",
    "/account/passkey/add": "POST",
    "/account/passkey/remove": "POST",
    "/account/email": "POST",
    "/account/email/verify": "POST",
    "/account/password/forgot": "POST",
    "/account/password/reset": "POST",
}
"""Each route and its one method (HEAD too for a GET)."""


class Front(Protocol):
    """What the accounts' routes give these: the session of a request, the answer that
    signs a browser in, an ``Origin`` check."""

    async def current(self, headers: Headers, *, post: bool) -> Signed: ...

    def signed(self, status: int, signed: Signed) -> Reply: ...

    def check_origin(self, headers: Headers, *, required: bool) -> None: ...


def _webauthn(headers: Headers) -> str:
    raw = one(headers, "X-WebAuthn", limit=MAX_WEBAUTHN)
    if raw is None:
        raise Malformed("give the passkey's answer as X-WebAuthn: base64url(its JSON)")
    return b64url_text(raw, "X-WebAuthn")


def _label(headers: Headers, agent: str) -> str:
    raw = one(headers, "X-Passkey-Name", limit=400)
    label = b64_text(raw, "X-Passkey-Name").strip() if raw is not None else ""
    return label or (agent[:40] or "a passkey")


def _email(headers: Headers) -> str:
    raw = one(headers, "X-Email", limit=400)
    if raw is None:
        raise Malformed("give the address as X-Email")
    return raw


def _token(headers: Headers) -> str:
    raw = one(headers, "X-Mail-Token", limit=200)
    if raw is None:
        raise Malformed("give the link's token as X-Mail-Token")
    return raw.strip()


def _passkey(p: Any) -> dict[str, Any]:
    return {
        "id": bytes_to_base64url(p.id),
        "name": p.name,
        "created_at": p.created_at,
        "last_used_at": p.last_used_at,
    }


class KeyRoutes:
    """The routes of passkeys and e-mail of one node."""

    def __init__(self, passkeys: Passkeys, emails: Emails) -> None:
        self.passkeys = passkeys
        self.emails = emails

    def signup_email(self, headers: Headers) -> str | None:
        """A sign-up's ``X-Email``, checked before the account is made (None: none)."""
        raw = one(headers, "X-Email", limit=400)
        if raw is None or not raw.strip():
            return None
        if not self.emails.offered:
            raise NoMail("this server sends no e-mail: sign up without an address")
        return check_email(raw)

    async def mailed(self, reply: Reply, signed: Signed, email: str | None, address: str) -> Reply:
        """``reply`` to a sign-up, with the link to verify ``email`` mailed (``"email"``
        in the answer), or why not (``"email_error"``: the account is made all the same)."""
        if email is None:
            return reply
        try:
            reply.body["email"] = await self.emails.ask_verify(
                signed.account, email, address=address
            )
        except AccountError as e:
            reply.body["email_error"] = {"error": e.code, "message": str(e)}
        return reply

    async def route(
        self, front: Front, path: str, headers: Headers, address: str, agent: str
    ) -> Reply:
        passkeys, emails = self.passkeys, self.emails
        if path == "/account/config":
            kept = passkeys.accounts.archive is not None  # no database: no accounts at all
            body = {"email": kept and emails.offered, "passkeys": kept, "rp_id": passkeys.rp_id}
            return Reply(200, body)
        if path in (
            "/account/passkey/signup-options",
            "/account/passkey/signup",
            "/account/passkey/signin-options",
            "/account/passkey/signin",
            "/account/email/verify",
            "/account/password/forgot",
            "/account/password/reset",
        ):
            front.check_origin(headers, required=False)
            return await self._signed_out(front, path, headers, address, agent)
        current = await front.current(headers, post=KEY_ROUTES[path] == "POST")
        if path == "/account/passkeys":
            listed = await passkeys.listed(current)
            _, password = await email_rows.account_extras(
                passkeys.accounts.db(), current.account.id
            )
            return Reply(200, {"passkeys": [_passkey(p) for p in listed], "password": password})
        if path == "/account/passkey/add-options":
            return Reply(200, await passkeys.add_options(current, address=address))
        if path == "/account/passkey/add":
            added = await passkeys.add(current, _webauthn(headers), label=_label(headers, agent))
            return Reply(201, _passkey(added))
        if path == "/account/passkey/remove":
            raw = one(headers, "X-Passkey", limit=2000)
            if raw is None:
                raise Malformed("give the passkey's id as X-Passkey")
            await passkeys.remove(current, credential_id(raw.strip()))
            return Reply(200, {"removed": True})
        # /account/email
        email = await emails.ask_verify(current.account, _email(headers), address=address)
        return Reply(202, {"sent": True, "email": email})

    async def _signed_out(
        self, front: Front, path: str, headers: Headers, address: str, agent: str
    ) -> Reply:
        """The routes that need no session."""
        passkeys, emails = self.passkeys, self.emails
        if path == "/account/passkey/signup-options":
            raw = one(headers, "X-Name", limit=400)
            if raw is None:
                raise Malformed("give the account's name as X-Name: base64(name)")
            name = b64_text(raw, "X-Name")
            guest = one(headers, "X-Guest-Token")
            return Reply(200, await passkeys.signup_options(name, address=address, guest=guest))
        if path == "/account/passkey/signup":
            label = _label(headers, agent)
            email = self.signup_email(headers)
            made = await passkeys.sign_up(
                _webauthn(headers), label=label, address=address, agent=agent
            )
            return await self.mailed(front.signed(201, made), made, email, address)
        if path == "/account/passkey/signin-options":
            return Reply(200, await passkeys.signin_options(address=address))
        if path == "/account/passkey/signin":
            signed = await passkeys.sign_in(_webauthn(headers), address=address, agent=agent)
            return front.signed(200, signed)
        if path == "/account/email/verify":
            _, email = await emails.verify(_token(headers))
            return Reply(200, {"email": email})
        if path == "/account/password/forgot":
            await emails.ask_reset(_email(headers), address=address)
            return Reply(202, {"sent": True})
        # /account/password/reset
        raw = one(headers, "X-New-Password")
        if raw is None:
            raise Malformed("give the new password as X-New-Password: base64(password)")
        password = b64_text(raw, "X-New-Password")
        signed = await emails.reset(_token(headers), password, address=address, agent=agent)
        return front.signed(200, signed)
