"""The players' requests of the client: profiles, rating changes, the rematch.

:class:`~spider_client.Client`'s methods of the same names call these (their arguments,
returns and errors are told there).
"""

from __future__ import annotations

import asyncio
from typing import Any

from . import protocol as p
from .lobby import Asker

__all__ = ["profile", "rating_changes", "rematch"]


async def profile(
    client: Asker, player_or_name: str | None, before: str | None = None
) -> p.ProfileReply:
    """A player's profile: by id first, then by name (the one who finished a race last);
    ``before``: a page's ``next``, for the races after that page."""
    if player_or_name is None:
        make = lambda req: p.Profile(req=req, before=before)  # noqa: E731
    else:
        make = lambda req: p.Profile(req=req, player=player_or_name, before=before)  # noqa: E731
    reply: p.ProfileReply = await client._request(make)
    if not reply.found and player_or_name is not None:
        reply = await client._request(
            lambda req: p.Profile(req=req, name=player_or_name, before=before)
        )
    return reply


async def rating_changes(client: Asker, code: str, timeout: float) -> p.RatingChangesReply:
    """The rating changes of finished race ``code``, asked again until they are written
    (within ``timeout`` seconds; then the last reply)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        reply: p.RatingChangesReply = await client._request(
            lambda req: p.RatingChanges(req=req, code=code)
        )
        if reply.applied or loop.time() >= end:
            return reply
        await asyncio.sleep(0.1)


async def rematch(client: Asker, code: str, timeout: float | None) -> str:
    """Accept the rematch of finished race ``code``, wait until it is made, join it and
    return its code."""
    await client._request(lambda req: p.Rematch(req=req, code=code))

    def made(_: Any) -> bool:
        offer = client.mirror.rematch
        return offer is not None and offer.race == code and offer.code is not None

    await client.wait_until(made, timeout=timeout)
    offer = client.mirror.rematch
    assert offer is not None and offer.code is not None
    await client.join(offer.code)
    return offer.code
