"""The lobby's handlers: the open races' list (and following it), quick match and its
cancel. The queue and the feed are the node's :class:`~..match.Lobby`."""

from __future__ import annotations

from spider_client.protocol import CancelMatch, Done, OpenRaceList, OpenRaces, QuickMatch
from spider_engine import VariantError, find_variant

from ..errors import InvalidMessage
from .core import SessionBase

__all__ = ["LobbyHandlers"]

OPEN_LIST_MAX = 100
"""Races one ``open_races`` reply lists at most."""


def _variant(name: str) -> str:
    try:
        variant = find_variant(name)
    except VariantError as e:
        raise InvalidMessage(f"variant: {e}") from None
    if not variant.listed:
        raise InvalidMessage(f"variant: {name!r} is not offered")
    return variant.id


class LobbyHandlers(SessionBase):
    """The open races and the quick-match queue."""

    def send_frame(self, frame: bytes) -> None:
        """Send a frame built once for many connections."""
        self.out.send(frame)

    async def open_races(self, msg: OpenRaces) -> None:
        """The public races waiting for players, newest first (reply: ``open_race_list``);
        with ``watch``, ``open_race`` events follow (``watch`` False stops them)."""
        variant = _variant(msg.variant) if msg.variant is not None else None
        self.ctx.lobby.watch(self, msg.watch)  # before reading: no change falls between
        races = await self.ctx.store.open_races(OPEN_LIST_MAX)
        if variant is not None:
            races = [r for r in races if r.variant == variant]
        self.send_msg(OpenRaceList(req=msg.req, races=races))

    async def quick_match(self, msg: QuickMatch) -> None:
        """Queue for a quick match (reply: ``queued``; ``matched`` follows). Bots queue
        with bots, humans with humans unless ``with_bots``; the player's rating in the
        variant is read once, now, and the race made is rated."""
        assert self.identity is not None
        variant = _variant(msg.variant)
        await self.check_race_limit()
        queued = await self.ctx.lobby.queue(
            self,
            name=self.identity.name,
            variant=variant,
            undo=msg.undo,
            bots=self.identity.bot or msg.with_bots,
            bot=self.identity.bot,
        )
        queued.req = msg.req
        self.send_msg(queued)

    async def cancel_match(self, msg: CancelMatch) -> None:
        """Leave the quick-match queue (reply: ``done``)."""
        await self.ctx.lobby.cancel(self)
        self.send_msg(Done(req=msg.req))

    def ended(self) -> None:
        """The connection is gone: out of the queue and the open races' watchers too."""
        super().ended()
        if self.ctx.lobby is not None and self.identity is not None:
            self.ctx.lobby.gone(self, self.ctx.spawn)
