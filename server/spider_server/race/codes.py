"""Join codes: what a person types to reach a race."""

from __future__ import annotations

import secrets

__all__ = ["CODE_ALPHABET", "CODE_LENGTH", "new_code", "normalize_code"]

CODE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
"""Join code characters: digits and capitals without 0/O and 1/I."""
CODE_LENGTH = 5


def new_code() -> str:
    """A random join code such as ``K7QX2`` (32**5 codes; the creator retries on a clash)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(text: str) -> str | None:
    """The join code a person typed (any case, surrounding spaces), or None if it cannot
    be one."""
    code = text.strip().upper()
    if len(code) != CODE_LENGTH or not _CODE_CHARS.issuperset(code):
        return None
    return code


_CODE_CHARS = frozenset(CODE_ALPHABET)
