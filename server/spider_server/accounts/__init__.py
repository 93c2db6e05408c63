"""Accounts: names that cannot be faked, passwords kept with Argon2id, sessions
(:mod:`.service`, :mod:`.passwords`). Guests need none of it."""

from __future__ import annotations

from .passwords import Busy, Hasher, PasswordRefused, check_password
from .service import (
    AccountError,
    Accounts,
    BadCredentials,
    CrossOrigin,
    Malformed,
    NameNotTaken,
    NameTaken,
    NoAccounts,
    Signed,
    TooSoon,
    Unauthorized,
    WeakPassword,
)

__all__ = [
    "AccountError",
    "Accounts",
    "BadCredentials",
    "Busy",
    "CrossOrigin",
    "Hasher",
    "Malformed",
    "NameNotTaken",
    "NameTaken",
    "NoAccounts",
    "PasswordRefused",
    "Signed",
    "TooSoon",
    "Unauthorized",
    "WeakPassword",
    "check_password",
]
