"""A real SMTP server for the accounts' mail tests: aiosmtpd's ``Controller`` on loopback,
in its own thread, keeping every mail it is handed (:class:`Inbox`)."""

from __future__ import annotations

import asyncio
import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any, cast

__all__ = ["Inbox", "link_token", "running_inbox"]

MAIL_WAIT = 60.0
"""The most seconds a test waits for a mail to arrive (it never waits that long on
success: it wakes as soon as one does)."""


class Inbox:
    """The mails an SMTP server took, in order, each with its envelope's recipients."""

    def __init__(self) -> None:
        self.mails: list[tuple[list[str], EmailMessage]] = []
        self._arrived = threading.Condition()
        self.url = ""

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        mail = message_from_bytes(envelope.content, policy=policy.default)
        with self._arrived:
            self.mails.append((list(envelope.rcpt_tos), cast(EmailMessage, mail)))
            self._arrived.notify_all()
        return "250 OK"

    async def mail(self, n: int) -> tuple[list[str], EmailMessage]:
        """The ``n``-th mail (from 1), once it has arrived."""

        def wait() -> tuple[list[str], EmailMessage]:
            with self._arrived:
                if not self._arrived.wait_for(lambda: len(self.mails) >= n, MAIL_WAIT):
                    raise AssertionError(f"mail {n} never came: {len(self.mails)} arrived")
                return self.mails[n - 1]

        return await asyncio.to_thread(wait)


def link_token(mail: EmailMessage, kind: str) -> str:
    """The token of the ``kind`` link (``verify``, ``reset``) in a mail's text."""
    body = mail.get_body(preferencelist=("plain",))
    assert body is not None
    found = re.search(rf"http://\S+/#{kind}=([A-Za-z0-9_-]+)", body.get_content())
    assert found is not None, body.get_content()
    return found.group(1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running_inbox() -> Iterator[Inbox]:
    """An SMTP server on loopback (``.url``: its ``smtp://`` URL) and the mails it took,
    stopped at the end of the ``with``."""
    from aiosmtpd.controller import Controller

    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=_free_port())
    controller.start()
    inbox.url = f"smtp://127.0.0.1:{controller.port}"
    try:
        yield inbox
    finally:
        controller.stop()
