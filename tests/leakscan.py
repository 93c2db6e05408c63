"""Scan every frame a recipient receives for cards that recipient has not seen.

While a race runs, a recipient legitimately sees cards only in:

- a player's own view (``ack.view``, ``joined.view``) — sent to that player;
- a spectator's ``board`` events (alone or in ``joined.events``) and ``joined.boards`` —
  only in races with live boards;
- everything, once the race is finished (``finished``, or a snapshot of a finished race).

Each such view is checked to *be* a view (every face-down and stock card unknown) and its
face-up cards are added to what the recipient has seen. Every other string in every frame
(map keys included) is then searched for card tokens with the engine's own card grammar:
a string that is a position is tokenized field by field; any other string is split into
words, and a word is a card (or several) only if it parses entirely as cards of the
variant's deck, so move texts (``d1j``), codes (``K7QX2``) and ids do not count; tokens,
player ids and default names, made up at random before any deal, are not searched (their
hex digits may read as cards of some decks). A card found that the recipient has not seen
is a leak. Secrets (the seed, the salt) must not
appear at all before the finish.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import msgpack

from spider_engine import UNKNOWN, Board, find_variant

__all__ = ["Leak", "LeakScanner"]

_WORD = re.compile(r"[^0-9A-Za-z?*@]+")


@dataclass(frozen=True)
class Leak:
    recipient: str
    message_type: str
    what: str


@dataclass
class LeakScanner:
    """Feed it, per recipient and in the order received, every frame (:meth:`feed`)."""

    variant: str
    secrets: tuple[str, ...] = ()
    seen: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    revealed: set[str] = field(default_factory=set)
    leaks: list[Leak] = field(default_factory=list)
    frames: int = 0

    def __post_init__(self) -> None:
        self._cards = find_variant(self.variant).cards

    # -- cards in text ----------------------------------------------------------------------

    def cards_in(self, text: str) -> list[str]:
        """The card tokens of the variant's deck in ``text`` (see the module docstring)."""
        fields = text.split(" ")
        if len(fields) == 4:
            try:
                board = Board.from_text(text)
            except ValueError:
                board = None
            if board is not None:
                return [
                    self._cards.tokens[c] for col in board.cols for c in col if c != UNKNOWN
                ] + [self._cards.tokens[c] for c in board.stock[board.stock_pos :] if c != UNKNOWN]
        found: list[str] = []
        for word in _WORD.split(text):
            if not word:
                continue
            try:
                cards = self._cards.parse(word)
            except ValueError:
                continue
            found += [self._cards.tokens[c] for c in cards if c != UNKNOWN]
        return found

    def _view_cards(self, recipient: str, kind: str, text: Any) -> list[str]:
        """The face-up cards of a view; a leak when it is not a view."""
        if not isinstance(text, str):
            return []
        try:
            board = Board.from_text(text)
        except ValueError:
            self.leaks.append(
                Leak(recipient, kind, f"not a position where a view belongs: {text!r}")
            )
            return []
        for col, down in zip(board.cols, board.down, strict=True):
            if any(c != UNKNOWN for c in col[:down]):
                self.leaks.append(Leak(recipient, kind, f"a face-down card is shown: {text!r}"))
        if any(c != UNKNOWN for c in board.stock[board.stock_pos :]):
            self.leaks.append(Leak(recipient, kind, f"a stock card is shown: {text!r}"))
        return [self._cards.tokens[c] for col in board.cols for c in col if c != UNKNOWN]

    # -- frames -----------------------------------------------------------------------------

    def feed(self, recipient: str, role: str, frame: bytes) -> list[Leak]:
        """Scan one frame received by ``recipient`` (a ``player`` or a ``spectator``);
        returns the leaks found in it (also kept in :attr:`leaks`)."""
        self.frames += 1
        before = len(self.leaks)
        for message in messages(frame):
            self._scan(recipient, role, message)
        return self.leaks[before:]

    def _scan(self, recipient: str, role: str, message: Any) -> None:
        if not isinstance(message, dict):
            self.leaks.append(Leak(recipient, "?", f"not a message: {message!r}"))
            return
        kind = str(message.get("type"))
        if kind == "finished" or (
            kind == "joined"
            and isinstance(message.get("race"), dict)
            and message["race"].get("state") == "finished"
        ):
            self.revealed.add(recipient)
        skip: set[int] = _issued(message)
        if recipient not in self.revealed:
            granted: list[str] = []
            if kind in ("ack", "joined") and "view" in message:
                if role == "player":
                    granted += self._view_cards(recipient, kind, message["view"])
                    skip.add(id(message["view"]))
                elif message["view"] is not None:
                    self.leaks.append(Leak(recipient, kind, "a view sent to a spectator"))
            boards = [message] if kind == "board" else []
            if kind == "joined" and isinstance(message.get("events"), list):
                boards += [
                    e for e in message["events"] if isinstance(e, dict) and e.get("type") == "board"
                ]
            for event in boards:
                if role == "spectator":
                    granted += self._view_cards(recipient, kind, event.get("view"))
                    skip.add(id(event.get("view")))
                else:
                    self.leaks.append(Leak(recipient, kind, "a board event sent to a player"))
            if kind == "joined" and isinstance(message.get("boards"), dict):
                if role == "spectator":
                    for view in message["boards"].values():
                        granted += self._view_cards(recipient, kind, view)
                        skip.add(id(view))
                else:
                    self.leaks.append(Leak(recipient, kind, "boards sent to a player"))
            self.seen[recipient].update(granted)
            for text in _strings(message):
                if id(text) in skip:
                    continue
                for secret in self.secrets:
                    if secret and secret in text:
                        self.leaks.append(Leak(recipient, kind, f"a secret in {text!r}"))
                unseen = [c for c in self.cards_in(text) if c not in self.seen[recipient]]
                if unseen:
                    self.leaks.append(Leak(recipient, kind, f"unseen cards {unseen} in {text!r}"))

    def feed_all(self, recipient: str, role: str, frames: Iterable[bytes]) -> list[Leak]:
        found: list[Leak] = []
        for frame in frames:
            found += self.feed(recipient, role, frame)
        return found


def messages(frame: bytes) -> list[Any]:
    """The messages of a frame: one map, or several race events sent together (an array)."""
    data = msgpack.unpackb(frame, raw=False)
    return data if isinstance(data, list) else [data]


_PLAYER_ID = re.compile(r"p[0-9a-f]{12}")
_DEFAULT_NAME = re.compile(r"player-[0-9a-f]{4}")


def _issued(value: Any) -> set[int]:
    """The strings the server makes up at random, before any deal, whose hex digits may
    read as cards of a deck (Sparrow's ``1c``, ``2f``): tokens, player ids, and the default
    names made from those ids. No card can be in them; every other string is scanned."""
    found: set[int] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, str) and (
                k == "token"
                or (k == "player" and _PLAYER_ID.fullmatch(v))
                or (k == "name" and _DEFAULT_NAME.fullmatch(v))
            ):
                found.add(id(v))
            else:
                found |= _issued(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            found |= _issued(v)
    return found


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)
