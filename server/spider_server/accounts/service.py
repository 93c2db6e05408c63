"""What a node does with accounts: sign up, sign in, the sessions, a password changed.

:class:`Accounts` keeps its rows in the database (:mod:`..store.accounts`), its limits in
Redis (:mod:`..store.account_limits`), and hashes passwords off the event loop
(:mod:`.passwords`). Every refusal is an :class:`AccountError` that says why and changes
nothing::

    AccountError(ServerError)      status, code
    ├── Malformed                  400 bad_request      a header missing, garbled or too long
    ├── NameNotTaken               400 name_refused     the name is refused (the reason)
    ├── WeakPassword               400 weak_password    the password is refused (the reason)
    ├── PasskeyRefused             400 passkey_refused  a passkey's answer does not hold, or
                                                        its challenge was used or has ended
    ├── BadLink                    400 bad_link         an e-mailed link used, ended, unknown
    ├── BadCredentials             401 bad_credentials  no such name, or a wrong password;
                                                        a passkey no account has
    ├── Unauthorized               401 unauthorized     no session, or it has ended
    ├── CrossOrigin                403 forbidden        a request from a foreign page
    ├── NoMail                     404 no_email         this server sends no e-mail
    ├── NameTaken                  409 name_taken       an account holds the name
    ├── GuestTaken                 409 guest_taken      an account took that guest over
    ├── PasskeyTaken               409 passkey_taken    that passkey is registered already,
                                                        or the account has as many as it may
    ├── LastSignIn                 409 last_sign_in     the last passkey of an account
                                                        without a password
    ├── EmailTaken                 409 email_taken      another account verified the address
    ├── TooSoon                    429 rate_limited     sign-ins backing off, sign-ups used up
    └── NoAccounts                 503 unavailable      no database, or it does not answer,
                                                        or every hashing slot is busy

A failed sign-in answers alike whether the name exists or not: the same error, after the
same Argon2 work (:meth:`.passwords.Hasher.verify` against a dummy hash).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import BadToken, ServerError, Unavailable
from ..names import Name as CheckedName
from ..names import NameRefused, check_name
from ..settings import Settings
from ..store import accounts as rows
from ..store.account_limits import AccountLimits
from ..store.admin import account_closed
from ..store.archive import ArchiveStore
from ..tokens import (
    API_PREFIX,
    SESSION_PREFIX,
    Identity,
    kind,
    new_player_id,
    new_session_token,
    verify,
)
from .guests import Guests
from .passwords import Busy, Hasher, PasswordRefused, check_password
from .speakers import Speaker, account_identity, api_speaker

__all__ = [
    "AccountClosed",
    "AccountError",
    "Accounts",
    "BadCredentials",
    "BadLink",
    "CrossOrigin",
    "EmailTaken",
    "GuestTaken",
    "LastSignIn",
    "Malformed",
    "NameNotTaken",
    "NameTaken",
    "NoAccounts",
    "NoMail",
    "PasskeyRefused",
    "PasskeyTaken",
    "Signed",
    "TooSoon",
    "Unauthorized",
    "WeakPassword",
]

COOKIE = "spider_session"
"""The cookie that holds a session's token on the page."""
USER_AGENT_KEPT = 200
"""Characters of a session's user agent kept."""
TOUCH_EVERY = 60.0
"""Seconds between two writes of a session's last use."""


def cookie_session(cookie: str | None) -> str | None:
    """The session token of a ``Cookie`` header's ``spider_session``, if it has one."""
    if not cookie or len(cookie) > 8192:
        return None
    for part in cookie.split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name == COOKIE and value:
            return value.strip('"')
    return None


class AccountError(ServerError):
    status: ClassVar[int] = 400
    code: ClassVar[str] = "bad_request"

    def __init__(self, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Malformed(AccountError):
    pass


class NameNotTaken(AccountError):
    code = "name_refused"


class WeakPassword(AccountError):
    code = "weak_password"


class BadCredentials(AccountError):
    status, code = 401, "bad_credentials"


class Unauthorized(AccountError):
    status, code = 401, "unauthorized"


class AccountClosed(AccountError):
    status, code = 403, "account_closed"


class CrossOrigin(AccountError):
    status, code = 403, "forbidden"


class NameTaken(AccountError):
    status, code = 409, "name_taken"


class GuestTaken(AccountError):
    status, code = 409, "guest_taken"


class PasskeyRefused(AccountError):
    code = "passkey_refused"


class BadLink(AccountError):
    code = "bad_link"


class NoMail(AccountError):
    status, code = 404, "no_email"


class PasskeyTaken(AccountError):
    status, code = 409, "passkey_taken"


class LastSignIn(AccountError):
    status, code = 409, "last_sign_in"


class EmailTaken(AccountError):
    status, code = 409, "email_taken"


class TooSoon(AccountError):
    status, code = 429, "rate_limited"


class NoAccounts(AccountError):
    status, code = 503, "unavailable"


@dataclass(frozen=True, slots=True)
class Signed:
    """An account and one of its sessions: ``token`` when it was just made (sign-up,
    sign-in), ``hash`` always."""

    account: rows.AccountRow
    hash: bytes
    token: str | None = None


class Accounts:
    """The node's accounts (``archive`` None: the node keeps none, and every call is
    :class:`NoAccounts`)."""

    def __init__(
        self,
        archive: ArchiveStore | None,
        limits: AccountLimits,
        hasher: Hasher,
        settings: Settings,
        clock: Callable[[], float],
        *,
        secret: bytes | Sequence[bytes] = b"",
        rated: Callable[[str], Awaitable[object]] | None = None,
    ) -> None:
        self.archive = archive
        self.limits = limits
        self.hasher = hasher
        self.lifetime = float(settings.session_lifetime)
        self.clock = clock
        self.secret = secret
        """The guests' token secret: a sign-up's guest token is verified with it."""
        self.rated = rated
        """Puts a player's ratings back on the ladders (a guest taken over by a sign-up)."""
        self.guests = Guests(archive)
        """The guests' checks at hello (:mod:`.guests`)."""

    @classmethod
    def of(
        cls,
        settings: Settings,
        archive: ArchiveStore | None,
        redis: Any,
        clock: Callable[[], float],
        *,
        secret: bytes | Sequence[bytes] = b"",
        rated: Callable[[str], Awaitable[object]] | None = None,
    ) -> Accounts:
        hasher = Hasher(
            time_cost=settings.argon2_time_cost,
            memory=settings.argon2_memory,
            parallelism=settings.argon2_parallelism,
            concurrency=settings.password_hashing,
        )
        limits = AccountLimits(redis, clock, signups=settings.address_signups)
        return cls(archive, limits, hasher, settings, clock, secret=secret, rated=rated)

    def close(self) -> None:
        self.hasher.close()

    def db(self) -> ArchiveStore:
        if self.archive is None:
            raise NoAccounts("this server keeps no accounts (it has no database)")
        return self.archive

    async def hash_password(self, password: str) -> str:
        try:
            return await self.hasher.hash(password)
        except Busy as e:
            raise NoAccounts(f"{e}: try again in a moment", retry_after=1) from None

    async def _verify(self, hashed: str | None, password: str) -> tuple[bool, str | None]:
        try:
            return await self.hasher.verify(hashed, password)
        except Busy as e:
            raise NoAccounts(f"{e}: try again in a moment", retry_after=1) from None

    # -- sign-up and sign-in ------------------------------------------------------------

    async def sign_up(
        self, name: str, password: str, *, address: str, agent: str, guest: str | None = None
    ) -> Signed:
        """A new account named ``name`` with ``password``, and its first session. With
        ``guest`` (a guest's token), the account takes that guest's player over: its races,
        history and ratings are the account's, its ratings go back on the ladders, and the
        guest's tokens speak for nobody from then on (:mod:`.guests`)."""
        self.db()  # no database: NoAccounts before anything else
        taken = None if guest is None else self.guest_player(guest)
        checked = self.checked_name(name)
        try:
            kept = check_password(password, name=checked.display)
        except PasswordRefused as e:
            raise WeakPassword(e.reason) from None
        await self.check_free(checked, taken, address=address)
        hashed = await self.hash_password(kept)
        made = await rows.create_account(
            self.db(),
            name=checked.display,
            key=checked.key,
            password=hashed,
            player=new_player_id() if taken is None else taken,
            now=self.clock(),
            guest=taken is not None,
        )
        return await self.made(made, checked, taken, address=address, agent=agent)

    def checked_name(self, name: str) -> CheckedName:
        """``name`` as an account's (:class:`NameNotTaken` with the reason)."""
        try:
            return check_name(name)
        except NameRefused as e:
            raise NameNotTaken(f"this name is refused: {e.reason}") from None

    async def check_free(self, checked: CheckedName, taken: str | None, *, address: str) -> None:
        """Refuse a sign-up from ``address`` (:class:`TooSoon`) when its sign-ups of the
        hour are used up, or when an account holds the name (:class:`NameTaken`) or took
        the guest ``taken`` over (:class:`GuestTaken`)."""
        db = self.db()
        wait = await self.limits.signup_wait(address)
        if wait is not None:
            raise TooSoon(
                f"too many accounts made from your address: try again in {wait} s",
                retry_after=wait,
            )
        if await rows.account_by_key(db, checked.key) is not None:
            raise NameTaken(f"the name {checked.display!r} is taken (or one that looks like it)")
        if taken is not None and await rows.account_by_player(db, taken) is not None:
            raise GuestTaken(_GUEST_TAKEN)

    async def made(
        self,
        made: int | None,
        checked: CheckedName,
        taken: str | None,
        *,
        address: str,
        agent: str,
        otherwise: AccountError | None = None,
    ) -> Signed:
        """The first session of the account just made (``made``, its id), counted for
        ``address``, the guest ``taken`` handed over; when ``made`` is None (another
        request took the name or the guest meanwhile) the refusal that says so, else
        ``otherwise``."""
        db = self.db()
        if made is None:  # made meanwhile by another request
            if taken is not None and await rows.account_by_player(db, taken) is not None:
                raise GuestTaken(_GUEST_TAKEN)
            if otherwise is not None and await rows.account_by_key(db, checked.key) is None:
                raise otherwise
            raise NameTaken(f"the name {checked.display!r} is taken (or one that looks like it)")
        await self.limits.signed_up(address)
        account = await rows.account_by_key(db, checked.key)
        assert account is not None
        if taken is not None:
            self.guests.taken_over(taken)
            if self.rated is not None:
                await self.rated(taken)
        return await self.new_session(account, address=address, agent=agent)

    def guest_player(self, token: str) -> str:
        """The player of a guest's token (Malformed when it is not a valid one)."""
        if kind(token) != "guest":
            raise Malformed("X-Guest-Token: not a guest's token")
        try:
            return verify(self.secret, token).player
        except BadToken as e:
            raise Malformed(f"X-Guest-Token: {e}") from None

    async def _check_password(self, name: str, password: str, *, address: str) -> rows.AccountRow:
        """The account of that name when ``password`` is its password; else
        :class:`BadCredentials`, alike for a missing name and a wrong password, or
        :class:`TooSoon` while the (name, address) pair backs off."""
        db = self.db()
        try:
            key = check_name(name).key
        except NameRefused:
            key = None
        limit_key = key if key is not None else "?" + name.casefold()
        wait = await self.limits.signin_wait(limit_key, address)
        if wait is not None:
            raise TooSoon(
                f"too many failed sign-ins to this account from your address: try again in {wait} s",
                retry_after=wait,
            )
        account = None if key is None else await rows.account_by_key(db, key)
        ok, rehashed = await self._verify(None if account is None else account.password, password)
        if not ok or account is None:
            await self.limits.signin_failed(limit_key, address)
            raise BadCredentials("the name or the password is wrong")
        await self.limits.signin_succeeded(limit_key, address)
        if rehashed is not None:  # the node's Argon2 parameters changed since
            await rows.set_password(db, account.id, rehashed, self.clock())
        return account

    async def sign_in(self, name: str, password: str, *, address: str, agent: str) -> Signed:
        """A new session of the account ``name`` whose password is ``password``."""
        account = await self._check_password(name, password, address=address)
        return await self.new_session(account, address=address, agent=agent)

    async def new_session(self, account: rows.AccountRow, *, address: str, agent: str) -> Signed:
        if await account_closed(self.db(), account.id):
            raise AccountClosed(f"the account {account.name} was closed by the service's operators")
        token = new_session_token()
        hashed = rows.token_hash(token)
        now = self.clock()
        await rows.create_session(
            self.db(),
            account.id,
            hashed,
            now=now,
            address=address,
            user_agent=agent[:USER_AGENT_KEPT],
            expired_before=now - self.lifetime,
        )
        return Signed(account, hashed, token)

    # -- sessions ---------------------------------------------------------------------------

    async def session(self, token: str) -> Signed:
        """The account a session token speaks for (its last use now);
        :class:`Unauthorized` when there is no such session or it has ended."""
        if not token.startswith(SESSION_PREFIX) or len(token) > 100:
            raise Unauthorized("not a session token: sign in")
        db = self.db()
        hashed = rows.token_hash(token)
        now = self.clock()
        found = await rows.session(db, hashed, now - self.lifetime)
        if found is None:
            raise Unauthorized(
                "this session has ended (signed out, expired, or its password changed): sign in again"
            )
        account, last_used = found
        if now - last_used >= TOUCH_EVERY:
            await rows.touch_session(db, hashed, now)
        return Signed(account, hashed)

    async def identity(self, token: str) -> Identity:
        """Who a session token speaks for in races (:class:`Unauthorized` as
        :meth:`session`): a bot when the account is one."""
        return account_identity((await self.session(token)).account)

    async def hello(self, token: str | None, cookie: str | None) -> Speaker | None:
        """Whom ``hello`` speaks for, when an account: with a session token or an API token
        (:mod:`.speakers`), its account (BadToken when the session has ended or the token
        was revoked); without one, or with a guest's, the account of the session of the
        upgrade's ``cookie`` when it still runs (an ended one is left out: the connection
        is a guest's). With it the ``welcome``'s token: the token given, or an empty one
        for the cookie's (the page cannot read the cookie, and need not). None: a guest."""
        try:
            if token is not None and token.startswith(SESSION_PREFIX):
                return Speaker(await self.identity(token), token)
            if token is not None and token.startswith(API_PREFIX):
                found_token = await api_speaker(self.db(), token, self.clock)
                if found_token is None:
                    raise Unauthorized("this API token was revoked, or never was: make a new one")
                return found_token
            found = cookie_session(cookie)
            if found is None or self.archive is None:
                return None
            try:
                return Speaker(await self.identity(found), "")
            except Unauthorized:
                return None
        except Unauthorized as e:
            raise BadToken(str(e)) from None
        except NoAccounts as e:
            raise Unavailable(str(e)) from None

    async def sign_out(self, signed: Signed) -> None:
        await rows.end_session(self.db(), signed.hash)

    async def sign_out_everywhere(self, signed: Signed) -> int:
        """End every session of the account, this one too; how many."""
        return await rows.end_other_sessions(self.db(), signed.account.id)

    async def sessions(self, signed: Signed) -> list[rows.SessionRow]:
        return await rows.sessions_of(self.db(), signed.account.id, self.clock() - self.lifetime)

    async def change_password(
        self, name: str, old: str, new: str, *, address: str, keep: bytes = b""
    ) -> tuple[rows.AccountRow, int]:
        """Change the password of the account ``name`` from ``old`` to ``new`` and end its
        sessions but ``keep`` (the caller's, when it is one of them); the account and how
        many sessions ended."""
        account = await self._check_password(name, old, address=address)
        try:
            kept = check_password(new, name=account.name)
        except PasswordRefused as e:
            raise WeakPassword(e.reason) from None
        hashed = await self.hash_password(kept)
        db = self.db()
        await rows.set_password(db, account.id, hashed, self.clock())
        return account, await rows.end_other_sessions(db, account.id, keep)

    async def first_password(self, signed: Signed, new: str) -> rows.AccountRow:
        """Give ``new`` as its password to the account of ``signed`` when it has none (it
        was made with a passkey); :class:`Malformed` when it has one (a change gives the
        old one)."""
        account = signed.account
        if account.password is not None:
            raise Malformed(
                "this account has a password: give it (Authorization: Basic) to change it"
            )
        try:
            kept = check_password(new, name=account.name)
        except PasswordRefused as e:
            raise WeakPassword(e.reason) from None
        hashed = await self.hash_password(kept)
        await rows.set_password(self.db(), account.id, hashed, self.clock())
        return account


_GUEST_TAKEN = "this guest has an account already: sign in to it"
