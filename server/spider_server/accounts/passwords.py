"""Passwords: which are taken (:func:`check_password`, NIST SP 800-63B) and how they are
kept (:class:`Hasher`, Argon2id).

A password is taken as given, normalized to NFKC (so that the same password typed on
another keyboard matches), with no rule on what it is made of: at least
:data:`MIN_LENGTH` and at most :data:`MAX_LENGTH` characters (code points, counted after
NFKC), not one of the most common passwords (``data/common-passwords.txt``, compared case
folded), not the account's name.

Hashing and verifying run in a bounded pool of threads, never on the event loop (the
Argon2 library lets go of the interpreter's lock while it works): at most ``concurrency``
at once on a node; one more is refused at once (:class:`Busy`) rather than queued.
"""

from __future__ import annotations

import asyncio
import secrets
import unicodedata
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from importlib import resources
from typing import TypeVar

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

__all__ = [
    "MAX_LENGTH",
    "MIN_LENGTH",
    "Busy",
    "Hasher",
    "PasswordRefused",
    "check_password",
    "common_passwords",
]

MIN_LENGTH = 8
MAX_LENGTH = 1024

T = TypeVar("T")


class PasswordRefused(ValueError):
    """A password that is not taken; ``reason`` says why, for its owner."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Busy(Exception):
    """Every hashing slot of the node is taken: try again in a moment."""


@cache
def common_passwords() -> frozenset[str]:
    """The common passwords shipped with the server (lowercase)."""
    text = resources.files("spider_server").joinpath("data", "common-passwords.txt")
    lines = text.read_text(encoding="utf-8").splitlines()
    return frozenset(line for line in lines if line and not line.startswith("#"))


def check_password(raw: str, *, name: str | None = None) -> str:
    """The password to keep for ``raw`` (NFKC); :class:`PasswordRefused` with the reason
    when it is too short, too long, common, or the account's ``name``."""
    password = unicodedata.normalize("NFKC", raw)
    if len(password) < MIN_LENGTH:
        raise PasswordRefused(f"a password needs at least {MIN_LENGTH} characters")
    if len(password) > MAX_LENGTH:
        raise PasswordRefused(f"a password has at most {MAX_LENGTH} characters")
    folded = password.casefold()
    if folded in common_passwords():
        raise PasswordRefused("this password is one of the most common ones: choose another")
    if name is not None and folded == unicodedata.normalize("NFKC", name).casefold():
        raise PasswordRefused("a password may not be the account's name")
    return password


class Hasher:
    """Argon2id with the node's parameters (``memory`` in KiB), at most ``concurrency``
    hashings at once. Close it with :meth:`close`."""

    def __init__(self, *, time_cost: int, memory: int, parallelism: int, concurrency: int) -> None:
        self.argon2 = PasswordHasher(
            time_cost=time_cost, memory_cost=memory, parallelism=parallelism, type=Type.ID
        )
        self.concurrency = concurrency
        self.running = 0
        self._pool = ThreadPoolExecutor(concurrency, thread_name_prefix="passwords")
        self._dummy: str | None = None

    async def _run(self, work: Callable[[], T]) -> T:
        if self.running >= self.concurrency:
            raise Busy("the server is checking too many passwords at once")
        self.running += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, work)
        finally:
            self.running -= 1

    async def hash(self, password: str) -> str:
        """The password's hash (PHC string, with its salt and parameters)."""
        return await self._run(lambda: self.argon2.hash(password))

    async def verify(self, hashed: str | None, password: str) -> tuple[bool, str | None]:
        """Whether ``password`` is the one ``hashed`` keeps, and when it is and the hash was
        made with other parameters than the node's, its new hash (else None). With
        ``hashed`` None (no such account), the same work is done against a hash of a
        random password, and the answer is False: a wrong name takes as long as a wrong
        password."""
        missing = hashed is None
        if hashed is None:
            if self._dummy is None:
                self._dummy = await self.hash(secrets.token_urlsafe(16))
            hashed = self._dummy

        def work() -> tuple[bool, str | None]:
            try:
                self.argon2.verify(hashed, password)
            except (VerifyMismatchError, VerificationError, InvalidHashError):
                return False, None
            if self.argon2.check_needs_rehash(hashed):
                return True, self.argon2.hash(password)
            return True, None

        ok, new = await self._run(work)
        return ok and not missing, new

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
