"""A finished deal's par landing on its race: the rules, without I/O.

The par itself is computed in a solver worker (:func:`spider_engine.par.par`, started by
:mod:`spider_server.runners.par`); here the race gets it once. Its line is a list of moves in
the spec's notation: moves name columns and counts (``d1j``, ``s``), never cards; still, a
daily race's par is part of what its day keeps hidden (its line would tell how the day's
deal is won): the ``par`` event goes out only when the race's deal is public
(:func:`~.fairness.revealed`), and the snapshot shows the par only then.
"""

from __future__ import annotations

from dataclasses import replace

from spider_client.protocol import Par, ParInfo

from .fairness import revealed
from .model import ALL, Race, RaceChange, RaceState

__all__ = ["par_change", "par_info", "par_event"]


def par_info(verdict: str, line: list[str] | tuple[str, ...], first: int | None) -> ParInfo:
    """The par of a search's answer: its line when the solver won the deal, else no par."""
    if verdict != "won":
        return ParInfo(none=True)
    return ParInfo(moves=len(line), line=list(line), first=first)


def par_event(code: str, par: ParInfo) -> Par:
    """The ``par`` event of ``par`` (its version is storage's)."""
    return Par(race=code, version=0, moves=par.moves, line=par.line, first=par.first, none=par.none)


def par_change(race: Race, par: ParInfo, now: float) -> RaceChange | None:
    """Keep ``par`` with the finished ``race``, with a ``par`` event when the deal is public
    at ``now`` (a daily race during its day gets none); None when the race is not finished
    or has its par already (it lands once)."""
    if race.state is not RaceState.FINISHED or race.par is not None:
        return None
    new = replace(race, par=par)
    events = [(ALL, par_event(race.code, par))] if revealed(new, now) else []
    return RaceChange(base=race.version, race=new, events=list(events), finished=True)
