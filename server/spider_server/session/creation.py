"""The one check every way a race is made for a player goes through: creating one,
accepting a rematch, the daily race, queueing for a quick match (and any later way in).

:func:`check_creation` counts the new race against the same limits whichever way it
comes: the finished races waiting for the database (``archive_backlog_max``, when the node
keeps an archive; ``unavailable``: the records of new races cannot be kept now, while
joining, moving and finishing go on), the player's races that count
(``max_races_per_player``: waiting or running, their game not over; ``too_many_races``)
and the creations a minute of the player (``player_creations``) and of the client's
address (``address_creations``; ``rate_limited``). It is called before anything is
written: a refusal changes nothing.
"""

from __future__ import annotations

from .core import Session

__all__ = ["check_creation"]


async def check_creation(session: Session) -> None:
    """Count a race about to be made with this session's player in it against the
    creation limits, or refuse it: :class:`~..errors.Unavailable` while
    ``archive_backlog_max`` finished races wait for the database
    (:meth:`~..runners.archiver.Archiver.check`, counted now), else
    :class:`~..errors.TooManyRaces` (with the codes of the races that count) when the
    player is in ``max_races_per_player`` races already, else
    :class:`~..errors.RateLimited` past ``player_creations`` races a minute by the player
    or ``address_creations`` from the client's address (limits every node shares, asked
    together in one round trip to Redis; a refusal takes from neither, and says the
    seconds to wait; Redis not answering: :class:`~..errors.Unavailable`). The backlog
    and the cap are read first: a race refused for either takes none of the player's or
    the address's creations."""
    archiver = session.ctx.archiver
    if archiver is not None:
        await archiver.check()
    await session.check_race_limit()
    await session.limit(
        ("player_create", session.player, "you created too many races; wait a minute"),
        ("create", session.address, "too many races created from your address"),
    )
