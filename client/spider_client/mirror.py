"""The race as one client sees it, kept from what the server sends: events in, state out.

:class:`RaceMirror` does no I/O (no sockets, no asyncio): give it the server's messages in
the order they arrived (``joined`` replies, race events, acks, as the protocol's
dataclasses) and read the race, the player's view, the boards and the last event version
seen. Each ``take_*`` method returns what a reader of the client's events is given for
that message, in order (the events it applied, the ack, a
:class:`~spider_client.events.ViewChanged`); an empty list means the message changed
nothing here (another race's event, or one seen already). :class:`~spider_client.Client`
feeds one from its connection; a program can feed one itself::

    mirror = RaceMirror(player="p1")
    for message in messages:          # e.g. spider_client.protocol.decode_all(frame)
        for event in mirror.take(message):
            ...
    mirror.race.state, mirror.me, mirror.view

How each message changes the state:

- ``joined`` (:meth:`take_joined`): another race's reply first forgets the race held. The
  race becomes the reply's snapshot, and its boards are added. Of the events it carries,
  those after the last version seen are given back; those newer than the snapshot are
  applied, the others only add their boards (a shown board does not replace one held, a
  finished race's final boards do). The view and ``seq`` are taken when the reply's
  ``seq`` is not behind the one held (or on a new race, or when no view is held); a
  different view gives a ``ViewChanged``.
- a race event (:meth:`take_event`): ignored unless it is of the race held and newer than
  the last version seen; then applied, raising the version seen (and the race's): a player
  joining or making progress replaces their line (or adds it); a player leaving an open
  race or a countdown is removed, later marked ``left`` and not connected;
  ``player_ready`` sets their readiness, and not ready during a countdown reopens the race
  (no start time); ``countdown`` sets the start time; ``started`` makes the race running
  with its times and commitment, and every waiting player playing (with the event's idle
  deadline); ``board`` sets that
  player's board; ``prepared`` clears ``preparing`` and sets the commitment; ``finished``
  makes the race finished with its results, seed, salt, replays (and their times) and commitment, sets every
  ranked player's status, and adds the final boards.
- an ack (:meth:`take_ack`): when it is of the race held and its ``seq`` is not behind,
  the view, ``seq`` and the player's status, moves, score, cards turned up, runs, deals
  left and time become the ack's (all of one state: what the player's next ``progress``
  says), and a ``ViewChanged`` follows the ack; otherwise only the ack is given back.
"""

from __future__ import annotations

import logging
from typing import Any

from spider_engine import Board

from . import protocol as p
from .events import ViewChanged

__all__ = ["RaceMirror"]

log = logging.getLogger("spider_client")


class RaceMirror:
    """One client's copy of its race and its player's view (see the module's docstring for
    how each message changes it). ``player`` is the player id the server gave the client
    (None until known: then :attr:`me` is None)."""

    def __init__(self, player: str | None = None) -> None:
        self.player = player
        """The player id whose view and progress this is."""
        self.code: str | None = None
        """The join code of the race followed."""
        self.role: p.Role | None = None
        """``player`` or ``spectator`` in that race."""
        self.race: p.RaceInfo | None = None
        """The race as everyone may see it, kept up to date from its events."""
        self.seq = 0
        """The player's last applied action number."""
        self.version = 0
        """The last race event version seen."""
        self.boards: dict[str, str] = {}
        """Player id -> view text, for spectators of live-board races; after the race,
        every player's final full position."""
        self.rematch: p.RematchOffer | None = None
        """The finished race's last ``rematch_offer`` (who accepted; the new race's code)."""
        self._view_text: str | None = None
        self._view: Board | None = None

    # -- state out --------------------------------------------------------------------------

    @property
    def view_text(self) -> str | None:
        """The player's view as the server sent it last (None before the deal, and for
        spectators)."""
        return self._view_text

    @property
    def view(self) -> Board | None:
        """The player's view of their game (None before the deal, and for spectators): the
        view of the last ack or ``joined`` reply, read into a board when first asked for.
        Copy it before changing it."""
        if self._view is None and self._view_text is not None:
            self._view = Board.from_text(self._view_text)
        return self._view

    @property
    def me(self) -> p.PlayerInfo | None:
        """The player's public progress in the race (None for a spectator)."""
        if self.race is None:
            return None
        for info in self.race.players:
            if info.player == self.player:
                return info
        return None

    @property
    def status(self) -> str | None:
        """The player's status: waiting, playing, won, stuck, resigned, timeout, left,
        abandoned, idle."""
        me = self.me
        return me.status if me is not None else None

    @property
    def finished(self) -> bool:
        """Whether the race is over (results are in ``race.results``)."""
        return self.race is not None and self.race.state == "finished"

    def legal_moves(self) -> list[str]:
        """The legal moves of the player's view, sorted as the spec prints them."""
        return self.view.legal_moves.texts() if self.view is not None else []

    # -- messages in ------------------------------------------------------------------------

    def take(self, message: Any) -> list[Any]:
        """Take in one message from the server: a ``joined`` reply, a race event or an ack
        (anything else changes nothing: ``[]``); returns what a reader is given for it."""
        if isinstance(message, p.Ack):
            return self.take_ack(message)
        if isinstance(message, p.Joined):
            return self.take_joined(message)
        if isinstance(message, p.EVENT_CLASSES):
            return self.take_event(message)
        return []

    def take_ack(self, ack: p.Ack) -> list[Any]:
        """Take in an ack of the player's action: ``[ack, ViewChanged]`` when it is of this
        race and not behind the ``seq`` held, else ``[ack]``."""
        if ack.code == self.code and ack.seq >= self.seq:
            self.seq = ack.seq
            self._set_view(ack.view)
            me = self.me
            if me is not None:
                me.status, me.moves, me.score = ack.status, ack.moves, ack.score
                me.turned_up, me.runs, me.deals_left = ack.turned_up, ack.runs, ack.deals_left
                me.time = ack.time
            return [ack, ViewChanged(view=ack.view, seq=ack.seq)]
        return [ack]

    def take_joined(self, joined: p.Joined) -> list[Any]:
        """Take in a ``joined`` reply; returns its events after the last version seen, then
        a ``ViewChanged`` when the view changed. An event it carries that cannot be decoded
        is logged and left out."""
        out: list[Any] = []
        new_race = joined.race.code != self.code
        if new_race:
            self.forget_race()
        self.code = joined.race.code
        self.role = joined.role
        since = self.version
        # a snapshot older than what is held (a move to the race's URL: events went on
        # arriving on the old connection while the new one joined) is not taken: the held
        # race is newer; the reply's events after it are applied below
        if new_race or joined.race.version >= self.version:
            self.race = joined.race
            if joined.boards:
                self.boards.update(joined.boards)
        for data in joined.events:
            try:
                event = p.decode_event(data)
            except (ValueError, TypeError) as e:
                log.warning("ignored an undecodable event in joined: %s", e)
                continue
            if getattr(event, "version", 0) <= since:
                continue
            # the snapshot already holds these; apply only what is newer than it
            if event.version > joined.race.version:
                self._apply_event(event)
            else:
                self._keep_event_data(event)
            out.append(event)
        self.version = max(self.version, joined.race.version)
        if joined.view is not None and (
            joined.seq >= self.seq or new_race or self._view_text is None
        ):
            self.seq = joined.seq
            if self._set_view(joined.view):
                out.append(ViewChanged(view=joined.view, seq=joined.seq))
        return out

    def take_event(self, event: Any) -> list[Any]:
        """Take in a race event: ``[event]`` when it was applied, ``[]`` when it is of
        another race or not newer than the last version seen (a catch-up and the live
        stream may overlap)."""
        if event.race != self.code:
            return []
        if event.version <= self.version:
            return []
        self._apply_event(event)
        return [event]

    def forget_race(self) -> None:
        """Follow no race: no code, role, race, view or boards; ``seq`` and ``version`` 0."""
        self.code = self.role = None
        self.race = None
        self._set_view(None)
        self.seq = 0
        self.version = 0
        self.boards = {}
        self.rematch = None

    # -- applying ---------------------------------------------------------------------------

    def _set_view(self, text: str | None) -> bool:
        """Take the server's view ``text``; True when it differs from the one held."""
        if text == self._view_text:
            return False
        self._view_text, self._view = text, None
        return True

    def _apply_event(self, event: Any) -> None:
        race = self.race
        self.version = max(self.version, event.version)
        if race is None:
            return
        race.version = max(race.version, event.version)
        if isinstance(event, p.PlayerJoined | p.Progress):
            self._put_player(event.player)
        elif isinstance(event, p.PlayerLeft):
            if race.state in ("open", "countdown"):
                race.players = [i for i in race.players if i.player != event.player]
            else:
                for info in race.players:
                    if info.player == event.player:
                        info.status, info.connected = "left", False
        elif isinstance(event, p.Away):
            for info in race.players:
                if info.player == event.player:
                    info.connected, info.away_since = False, event.since
        elif isinstance(event, p.Back):
            for info in race.players:
                if info.player == event.player:
                    info.connected, info.away_since = True, None
        elif isinstance(event, p.PlayerReady):
            for info in race.players:
                if info.player == event.player:
                    info.ready = event.ready
            if not event.ready and race.state == "countdown":
                race.state, race.starts_at = "open", None
        elif isinstance(event, p.Countdown):
            race.state, race.starts_at = "countdown", event.starts_at
        elif isinstance(event, p.Started):
            race.state, race.starts_at, race.ends_at = "running", event.started_at, event.ends_at
            race.commitment = event.commitment
            for info in race.players:
                if info.status == "waiting":
                    info.status, info.idle_at = "playing", event.idle_at
        elif isinstance(event, p.BoardShown):
            self.boards[event.player] = event.view
        elif isinstance(event, p.RematchOffer):
            self.rematch = event
        elif isinstance(event, p.Prepared):
            race.preparing, race.commitment = False, event.commitment
        elif isinstance(event, p.Par):
            race.par = p.ParInfo(
                moves=event.moves,
                line=event.line,
                first=event.first,
                none=event.none,
                provisional=event.provisional,
            )
        elif isinstance(event, p.Finished):
            race.state = "finished"
            race.results = event.results
            race.seed, race.salt, race.replays = event.seed, event.salt, event.replays
            race.replay_times = event.replay_times
            race.commitment = event.commitment
            self._keep_event_data(event)
            for result in event.results:
                for info in race.players:
                    if info.player == result.player:
                        info.status = result.status

    def _keep_event_data(self, event: Any) -> None:
        if isinstance(event, p.BoardShown):
            self.boards.setdefault(event.player, event.view)
        elif isinstance(event, p.Finished) and event.boards:
            self.boards.update(event.boards)

    def _put_player(self, info: p.PlayerInfo) -> None:
        assert self.race is not None
        players = self.race.players
        for i, old in enumerate(players):
            if old.player == info.player:
                players[i] = info
                return
        players.append(info)
