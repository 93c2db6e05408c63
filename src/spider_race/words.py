"""What players read: counts in words (``1 move``, ``2 moves``) and errors as sentences."""

from __future__ import annotations

from spider_client import ServerError

__all__ = ["error_text", "plural"]


def plural(count: int, word: str, many: str | None = None) -> str:
    """``count`` and ``word``, the word in the plural (``many``, or ``word`` + ``s``)
    unless the count is exactly one: ``plural(1, "move")`` is ``1 move``,
    ``plural(0, "run")`` is ``0 runs``."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def error_text(error: BaseException) -> str:
    """What a player reads of an error: a server's refusal by its message alone (``no race
    ZZZZZ``, not ``not_found: no race ZZZZZ``), which already says what was refused; any
    other error as it reads."""
    if isinstance(error, ServerError):
        return error.message or error.code
    return str(error)
