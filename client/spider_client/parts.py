"""How the client tells what its parts know: :class:`PartOf`, a read-only attribute that
is one of its parts' (``client.code`` is ``client.mirror.code``)."""

from __future__ import annotations

from typing import Generic, TypeVar, overload

__all__ = ["PartOf"]

T = TypeVar("T")


class PartOf(Generic[T]):
    """A read-only attribute of the client that is its part's attribute of the same name
    (or ``attr``): ``client.code`` is ``client.mirror.code`` (the client holds its
    parts; what they know, it tells)."""

    def __init__(self, part: str, doc: str, *, attr: str | None = None) -> None:
        self.part, self.attr, self.__doc__ = part, attr, doc

    def __set_name__(self, owner: type, name: str) -> None:
        self.attr = self.attr or name

    @overload
    def __get__(self, client: None, owner: type) -> PartOf[T]: ...
    @overload
    def __get__(self, client: object, owner: type) -> T: ...
    def __get__(self, client: object, owner: type) -> T | PartOf[T]:
        if client is None:
            return self
        value: T = getattr(getattr(client, self.part), self.attr or "")
        return value
