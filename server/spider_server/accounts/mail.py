"""Mails sent by the accounts (an address to verify, a password to reset), through the
operator's SMTP server (``SPIDER_RACE_SMTP_URL``).

:meth:`Mailer.send` hands a mail over and returns at once: the standard library's
:mod:`smtplib` delivers it in a thread of its own, never on the event loop, so that an
answer takes as long whether a mail went out or not (and says nothing of the address). A
mail that cannot be delivered is logged (never its link) and dropped: its owner asks
again. :meth:`Mailer.close` waits a few seconds for the mails under way.
"""

from __future__ import annotations

import asyncio
import logging
import smtplib
import ssl
from collections.abc import Callable
from email.message import EmailMessage
from email.utils import formataddr, make_msgid
from urllib.parse import unquote, urlsplit

__all__ = ["Mailer", "sender_of"]

log = logging.getLogger(__name__)

SMTP_TIMEOUT = 30.0
"""Seconds a connection to the SMTP server may take at each step."""
CLOSE_WAIT = 5.0
"""Seconds :meth:`Mailer.close` waits for the mails under way."""


class Mailer:
    """Sends mail through the SMTP server of ``url`` (``smtp://``, ``smtps://``,
    ``smtp+starttls://``, with ``user:password@`` to log in), from ``sender`` (asked at
    each mail: the node's origin is known once it listens)."""

    def __init__(self, url: str, sender: Callable[[], str]) -> None:
        parts = urlsplit(url)
        self.scheme = parts.scheme
        self.host = parts.hostname or "localhost"
        self.port = parts.port or (465 if parts.scheme == "smtps" else 25)
        self.user = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password else None
        self.sender = sender
        self.sent = 0
        """Mails the SMTP server took."""
        self.failed = 0
        """Mails that could not be delivered to it."""
        self._tasks: set[asyncio.Task[None]] = set()

    def send(self, to: str, subject: str, text: str) -> None:
        """Deliver a mail to ``to`` in the background."""
        message = EmailMessage()
        sender = self.sender()
        message["From"] = sender
        message["To"] = formataddr(("", to))
        message["Subject"] = subject
        message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2].strip("> "))
        message.set_content(text)
        task = asyncio.get_running_loop().create_task(self._deliver(message, to))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, message: EmailMessage, to: str) -> None:
        try:
            await asyncio.to_thread(self._send_now, message)
        except Exception as e:  # noqa: BLE001 - any failure: logged, the mail dropped
            self.failed += 1
            domain = to.rpartition("@")[2]
            log.warning("a mail to an address at %s was not sent: %s", domain, e)
        else:
            self.sent += 1

    def _send_now(self, message: EmailMessage) -> None:
        if self.scheme == "smtps":
            context = ssl.create_default_context()
            smtp: smtplib.SMTP = smtplib.SMTP_SSL(
                self.host, self.port, timeout=SMTP_TIMEOUT, context=context
            )
        else:
            smtp = smtplib.SMTP(self.host, self.port, timeout=SMTP_TIMEOUT)
        with smtp:
            if self.scheme == "smtp+starttls":
                smtp.starttls(context=ssl.create_default_context())
            if self.user is not None:
                smtp.login(self.user, self.password or "")
            smtp.send_message(message)

    async def close(self) -> None:
        """Wait (:data:`CLOSE_WAIT` seconds at most) for the mails under way."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=CLOSE_WAIT)


def sender_of(configured: str, origin: str) -> str:
    """The mails' sender: ``configured``, else ``noreply@`` the host of ``origin``."""
    if configured:
        return configured
    host = urlsplit(origin).hostname or "localhost"
    return formataddr(("Spider Race", f"noreply@{host}"))
