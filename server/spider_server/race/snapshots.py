"""What everyone may see of a race."""

from __future__ import annotations

from collections.abc import Iterable

from spider_client.protocol import RaceInfo

from .fairness import revealed
from .model import Race, RaceState

__all__ = ["race_info"]


def race_info(
    race: Race, *, online: Iterable[str] = (), spectators: int = 0, now: float | None = None
) -> RaceInfo:
    """The race as everyone may see it: no seed or salt (nor results and replays) before the
    finish (for a daily race, before its day is over at ``now``). ``online`` are the players
    with a connection watching it now; a player marked away (``away`` event) is not
    connected until they are back."""
    connected = set(online)
    final = race.final if race.state is RaceState.FINISHED else None
    public = revealed(race, now)
    return RaceInfo(
        code=race.code,
        variant=race.options.variant,
        state=race.state.value,
        version=race.version,
        creator=race.creator,
        max_players=race.options.max_players,
        time_limit=race.options.time_limit,
        undo=race.options.undo,
        live_boards=race.options.live_boards,
        countdown=race.options.countdown,
        players=[e.info(online=e.player in connected) for e in race.players.values()],
        spectators=spectators,
        commitment=race.commitment or None,
        starts_at=race.starts_at,
        ends_at=race.ends_at,
        results=final.results if final else None,
        seed=race.seed if final and public else None,
        salt=race.salt if final and public else None,
        replays=final.replays if final and public else None,
        replay_times=final.times if final and public else None,
        winnable=race.options.winnable,
        hints=race.options.hints,
        preparing=race.preparing,
        daily=race.options.daily or None,
        away_grace=race.options.away_grace,
        seed_chosen=race.options.seed_chosen,
        humans_only=race.options.humans_only,
        rated=race.options.rated,
        par=race.par if public else None,
        public=race.options.public,
        quick=race.options.quick,
        idle_limit=race.options.idle_limit,
    )
