"""A finished deal's par landing on its race: the rules, without I/O.

The par itself is computed in a solver worker (:func:`spider_engine.par.par`, started by
:mod:`spider_server.runners.par`); here the race gets it. Its line is a list of moves in
the spec's notation: moves name columns and counts (``d1j``, ``s``), never cards; still, a
daily race's par is part of what its day keeps hidden (its line would tell how the day's
deal is won): the ``par`` event goes out only when the race's deal is public
(:func:`~.fairness.revealed`), and the snapshot shows the par only then.

A par may land twice: first **provisional**, the shortest winning line known when the race
finishes (the proof that made the deal a winnable one, the lines hints gave the players,
each winner's standing moves), shown
at once; then **settled**, the shorter of that line and the solver's, once its search ends.
A shorter provisional line may replace a longer one; nothing replaces a settled par.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from spider_client.protocol import Par, ParInfo

from .fairness import revealed
from .model import ALL, Race, RaceChange, RaceState, Status

__all__ = ["known_par", "par_change", "par_event", "par_info", "settled", "standing_line"]


def par_info(verdict: str, line: list[str] | tuple[str, ...], first: int | None) -> ParInfo:
    """The par of a search's answer: its line when the solver won the deal, else no par."""
    if verdict != "won":
        return ParInfo(none=True)
    return ParInfo(moves=len(line), line=list(line), first=first)


def standing_line(actions: Sequence[str]) -> list[str]:
    """The moves that stand after a player's ``actions``: each undo takes back the action
    before it, a resign is no move."""
    line: list[str] = []
    for action in actions:
        if action == "undo":
            if line:
                line.pop()
        elif action != "resign":
            line.append(action)
    return line


def known_par(race: Race, known: Sequence[Sequence[str]]) -> ParInfo | None:
    """The provisional par of the finished ``race``: the shortest of the winning lines
    from the deal ``known`` to the solver (a winnable race's proof, the lines its hints
    gave) and each winner's standing moves; None when there is none, or the race is a
    daily one (its day's par is searched once, and hidden in the day)."""
    final = race.final
    if race.options.daily or final is None:
        return None
    lines = [list(line) for line in known]
    for result in final.results:
        if result.status == Status.WON and result.player in final.replays:
            lines.append(standing_line(final.replays[result.player]))
    best = min((line for line in lines if line), key=len, default=None)
    if best is None:
        return None
    return ParInfo(moves=len(best), line=best, provisional=True)


def settled(known: ParInfo | None, searched: ParInfo) -> ParInfo:
    """The settled par: the solver's (``searched``) unless the line ``known`` before it is
    shorter, or the solver found none (then the known line, with the solver's ``first``)."""
    if known is None or known.moves is None or known.line is None:
        return searched
    if searched.moves is not None and searched.moves <= known.moves:
        return searched
    return ParInfo(moves=known.moves, line=list(known.line), first=searched.first)


def par_event(code: str, par: ParInfo) -> Par:
    """The ``par`` event of ``par`` (its version is storage's)."""
    return Par(
        race=code,
        version=0,
        moves=par.moves,
        line=par.line,
        first=par.first,
        none=par.none,
        provisional=par.provisional,
    )


def par_change(race: Race, par: ParInfo, now: float) -> RaceChange | None:
    """Keep ``par`` with the finished ``race``, with a ``par`` event when the deal is public
    at ``now`` (a daily race during its day gets none). A provisional par lands on a race
    without one or with a longer provisional one; a settled par (:func:`settled` with the
    provisional one) on a race whose par is not settled yet. None when nothing changes."""
    current = race.par
    if race.state is not RaceState.FINISHED:
        return None
    if current is not None and not current.provisional:
        return None  # settled: it lands once
    if par.provisional:
        if par.moves is None or (current is not None and (current.moves or 0) <= par.moves):
            return None
        new_par = par
    else:
        new_par = settled(current, par)
    new = replace(race, par=new_par)
    events = [(ALL, par_event(race.code, new_par))] if revealed(new, now) else []
    return RaceChange(base=race.version, race=new, events=list(events), finished=True)
