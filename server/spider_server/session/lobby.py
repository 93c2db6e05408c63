"""The lobby's handlers: the open races' list (and following it), quick match and its
cancel. The queue and the feed are the node's :class:`~..runners.lobby.Lobby`."""

from __future__ import annotations

from spider_client.protocol import CancelMatch, Done, OpenRaceList, OpenRaces, QuickMatch
from spider_engine import VariantError, find_variant

from ..errors import AccountRequired, InvalidMessage
from .core import Session
from .creation import check_creation
from .matching import check_queue_wait

__all__ = ["cancel_match", "open_races", "quick_match"]


def _variant(name: str) -> str:
    try:
        variant = find_variant(name)
    except VariantError as e:
        raise InvalidMessage(f"variant: {e}") from None
    if not variant.listed:
        raise InvalidMessage(f"variant: {name!r} is not offered")
    return variant.id


async def open_races(session: Session, msg: OpenRaces) -> None:
    """The public races waiting for players, in the list's order (one an address at a
    time, the longest waiting first; reply: ``open_race_list``): at most
    ``open_list_length``, of ``variant`` only and rated only when asked, the filters
    applied before the length. With ``watch``, ``open_race`` events follow (``watch``
    False stops them)."""
    variant = _variant(msg.variant) if msg.variant is not None else None
    session.ctx.lobby.watch(session, msg.watch)  # before reading: no change falls between
    races = await session.ctx.store.open_list.open_races(variant=variant, rated=msg.rated)
    session.send_msg(OpenRaceList(req=msg.req, races=races))


async def quick_match(session: Session, msg: QuickMatch) -> None:
    """Queue for a quick match (reply: ``queued``; ``matched`` follows). Bots queue
    with bots, humans with humans unless ``with_bots``; the player's rating in the
    variant is read once, now. The race made is rated in the rated pool (accounts only:
    a guest asking for it is AccountRequired), not in the casual one (``rated`` false;
    a guest's by default). A player who (or whose
    address) missed a match or left one before its start lately waits first
    (:func:`~.matching.check_queue_wait`)."""
    assert session.identity is not None
    variant = _variant(msg.variant)
    rated = (not session.guest) if msg.rated is None else msg.rated
    if rated and session.guest:
        raise AccountRequired(
            "the rated pool is for accounts: sign up or sign in, or queue casual (rated: false)"
        )
    await check_queue_wait(session)
    await check_creation(session)  # a match is a race made: the same limits as a create
    queued = await session.ctx.lobby.queue(
        session,
        name=session.identity.name,
        variant=variant,
        undo=msg.undo,
        bots=session.identity.bot or msg.with_bots,
        bot=session.identity.bot,
        address=session.address,
        guest=session.guest,
        rated=rated,
    )
    queued.req = msg.req
    session.send_msg(queued)


async def cancel_match(session: Session, msg: CancelMatch) -> None:
    """Leave the quick-match queue (reply: ``done``)."""
    await session.ctx.lobby.cancel(session)
    session.send_msg(Done(req=msg.req))
