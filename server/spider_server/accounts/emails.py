"""E-mail for accounts, where the operator gave an SMTP server: an address verified by a
link mailed to it, and a forgotten password reset by a link mailed to the account's
verified address.

A link is ``<public origin>/#verify=<token>`` or ``#reset=<token>`` (the fragment never
reaches a server's log; the page sends the token on): it works once, within
``mail_link_lifetime`` seconds (:mod:`..store.account_links`). A reset sets the new
password and ends every session of the account, then signs the browser that opened the
link in. A mail is counted against the address it goes to and the network that asked for
it (``email_mails``, ``address_mails`` an hour), before anything is looked up; a reset
asked for an address no account verified answers exactly as one that was sent, so the
answer never says whether an address is known.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable

from ..store import accounts as rows
from ..store import emails as email_rows
from ..store.account_links import AccountLinks
from .mail import Mailer
from .passwords import PasswordRefused, check_password
from .service import (
    Accounts,
    BadLink,
    EmailTaken,
    Malformed,
    NoMail,
    Signed,
    TooSoon,
    WeakPassword,
)

__all__ = ["MAX_EMAIL", "Emails", "check_email"]

MAX_EMAIL = 254
"""The longest address taken (RFC 5321's path limit, less its brackets)."""
_EMAIL = re.compile(r"[^@\s\"<>,;]+@[^@\s\"<>,;]+\.[^@\s\"<>,;.]+")


def check_email(raw: str) -> str:
    """``raw`` as an address to mail (stripped); :class:`Malformed` when it is not one."""
    email = raw.strip()
    if len(email) > MAX_EMAIL or not _EMAIL.fullmatch(email) or not email.isprintable():
        raise Malformed("X-Email: not an e-mail address (such as ada@example.org)")
    return email


class Emails:
    """The accounts' e-mail on a node: ``mailer`` None when it has no SMTP server (every
    call is then :class:`NoMail`); ``origin`` gives the page's origin that links go to."""

    def __init__(
        self,
        accounts: Accounts,
        links: AccountLinks,
        mailer: Mailer | None,
        origin: Callable[[], str],
        *,
        lifetime: int,
    ) -> None:
        self.accounts = accounts
        self.links = links
        self.mailer = mailer
        self.origin = origin
        self.lifetime = lifetime

    @property
    def offered(self) -> bool:
        """Whether this node sends mail (the page offers e-mail only then)."""
        return self.mailer is not None

    def _mailer(self) -> Mailer:
        if self.mailer is None:
            raise NoMail("this server sends no e-mail")
        return self.mailer

    async def _counted(self, email: str, address: str) -> None:
        wait = await self.links.mail_wait(email_rows.email_key(email), address)
        if wait is not None:
            raise TooSoon(
                f"too many mails asked for (to this address, or from yours): try again in {wait} s",
                retry_after=wait,
            )

    async def _link(self, kind: str, account: rows.AccountRow, email: str) -> str:
        token = secrets.token_urlsafe(32)
        value = {"kind": kind, "account": account.id, "email": email}
        await self.links.put_link(token, value, self.lifetime)
        return f"{self.origin()}/#{kind}={token}"

    def _minutes(self) -> str:
        minutes = max(1, self.lifetime // 60)
        return f"{minutes} minute{'s' if minutes != 1 else ''}"

    async def ask_verify(self, account: rows.AccountRow, raw: str, *, address: str) -> str:
        """Mail a link that verifies ``raw`` as the account's address (its verified one,
        if any, stays until the link is opened); the address."""
        mailer = self._mailer()
        email = check_email(raw)
        await self._counted(email, address)
        link = await self._link("verify", account, email)
        mailer.send(
            email,
            "Confirm your e-mail address for Spider Race",
            f"Someone, we hope you, asked to use this address for the Spider Race account "
            f"{account.name}. Open this link within {self._minutes()} to confirm it:\n\n"
            f"{link}\n\nIf it was not you, ignore this mail: nothing changes.\n",
        )
        return email

    async def verify(self, token: str) -> tuple[int, str]:
        """Keep the address of a verify link's ``token`` as its account's (once); the
        account's id and the address. :class:`BadLink` when the token is unknown, used or
        ended; :class:`EmailTaken` when another account verified the address meanwhile."""
        self._mailer()
        found = await self.links.take_link(token)
        if found is None or found.get("kind") != "verify":
            raise BadLink("this link was used already, has expired, or is not one of ours")
        account, email = int(found["account"]), str(found["email"])
        db = self.accounts.db()
        if not await email_rows.set_email(db, account, email, self.accounts.clock()):
            raise EmailTaken("another account has verified this address")
        return account, email

    async def ask_reset(self, raw: str, *, address: str) -> None:
        """Mail a link that resets the password to the account that verified ``raw``, if
        one did; the same answer (and the same count) whether one did or not."""
        mailer = self._mailer()
        email = check_email(raw)
        await self._counted(email, address)
        found = await email_rows.account_by_email(self.accounts.db(), email)
        if found is None:
            return
        account, kept = found
        link = await self._link("reset", account, kept)
        mailer.send(
            kept,
            "Reset your Spider Race password",
            f"Someone, we hope you, asked to reset the password of the Spider Race account "
            f"{account.name}. Open this link within {self._minutes()} to choose a new one "
            f"(every browser and program signed in to the account is then signed out):\n\n"
            f"{link}\n\nIf it was not you, ignore this mail: your password stays.\n",
        )

    async def reset(self, token: str, password: str, *, address: str, agent: str) -> Signed:
        """Set ``password`` as the password of a reset link's account (once), end every
        session of the account, and sign in anew. :class:`WeakPassword` (the link still
        works then), or :class:`BadLink` when it is unknown, used or ended, or the account
        no longer keeps the address it was mailed to."""
        self._mailer()
        db = self.accounts.db()
        found = await self.links.take_link(token)
        if found is None or found.get("kind") != "reset":
            raise BadLink("this link was used already, has expired, or is not one of ours")
        holder = await email_rows.account_by_email(db, str(found["email"]))
        if holder is None or holder[0].id != int(found["account"]):
            raise BadLink("this link's address is no longer the account's")
        account = holder[0]
        try:
            kept = check_password(password, name=account.name)
        except PasswordRefused as e:
            lifetime = float(found["until"]) - self.accounts.clock()
            await self.links.put_link(token, found, lifetime)  # the link is not used up
            raise WeakPassword(e.reason) from None
        hashed = await self.accounts.hash_password(kept)
        await rows.set_password(db, account.id, hashed, self.accounts.clock())
        await rows.end_other_sessions(db, account.id)
        return await self.accounts.new_session(account, address=address, agent=agent)
