"""The race's rules, without I/O: state in, decisions and events out.

A race goes through four states, in order (:class:`RaceState`)::

    open ──(every player ready)──> countdown ──(starts_at)──> running ──> finished
                                                         (everyone done, or the time limit)

Each operation takes the race (and a player's :class:`Game` where it acts on one) as read
from storage, checks that the state allows it (a named :class:`~..errors.RequestError`
otherwise, and nothing changes), and returns a decision: a :class:`RaceChange` (what to
write and which events to append, for a check-and-set on the race's version) or an
:class:`ActionOutcome` (the player's new game, the ack and the events, for a check-and-set
on the player's ``seq``). The caller commits; if the check-and-set loses, it reloads and
asks again. Nothing here reads a clock or a socket: ``now`` is always an argument.

Events are protocol dataclasses whose ``version`` is 0 here; storage numbers them when it
appends them. Every event goes to everyone in the race (audience ``all``) except ``board``
events, which go to spectators only (audience ``spectators``).

No event carries a card while the race runs, except ``board`` events of a race created with
live boards; an :class:`~spider_client.protocol.Ack` carries the mover's own view.

The package, by layer: :mod:`.model` (the race, its players' entries and games, the
decisions), :mod:`.options` (limits and a race's options), :mod:`.codes` (join codes),
:mod:`.fairness` (seed, salt, commitment and when they are revealed), :mod:`.ghosts`
(recorded runs raced again), :mod:`.progress` (a player's counts from their position),
:mod:`.presence` (away, back, abandoned, idle, and stuck on undo), :mod:`.par` (a finished
deal's par landing on its race), :mod:`.transitions` (open,
countdown, start,
finish), :mod:`.actions` (moves, undos, resigns), :mod:`.results` (the ranking), :mod:`.rematch`
(the same race again), :mod:`.lobby` and :mod:`.matches` (the open races' listing, quick
matches: confirmed seats, called off, dodged) and
:mod:`.snapshots` (the race as everyone sees it), :mod:`.record` (a finished race's record, as
exported). Every name is importable from here.
"""

from __future__ import annotations

from .actions import UndoBase, apply_action, count_hint, effective_moves, rebuild, replay
from .codes import CODE_ALPHABET, CODE_LENGTH, new_code, normalize_code
from .fairness import commitment, day_end, new_salt, new_seed, revealed
from .ghosts import (
    MAX_GHOSTS,
    GhostRun,
    add_ghosts,
    finish_ghosts,
    ghost_id,
    ghost_outcome,
    next_due,
    run_of,
)
from .lobby import listing, matched_race, window
from .matches import (
    FREE_DODGES,
    Dodge,
    cancel_match,
    confirm_seat,
    dodge,
    dodge_costs,
    dodge_kind,
    queue_wait,
    unconfirmed,
)
from .model import (
    ALL,
    FORFEIT,
    SPECTATORS,
    TERMINAL,
    ActionKind,
    ActionOutcome,
    Audience,
    Entry,
    Final,
    Game,
    Race,
    RaceChange,
    RaceState,
    RematchState,
    Status,
    entry_of,
    event_data,
)
from .options import Limits, RaceOptions, offered_variant
from .par import known_par, par_change, par_event, par_info, settled, standing_line
from .presence import OUT, Due, next_idle, out_times, presence_change, presence_plan
from .progress import progress_of, runs_completed, status_after, undo_only
from .record import NotYet, race_record
from .rematch import accept_rematch, rematch_due, rematch_made, rematch_race
from .results import Standing, rank, shared_ranks, standing
from .snapshots import race_info
from .transitions import (
    check_account,
    create_race,
    due_transition,
    finish,
    join,
    leave,
    prepare,
    set_ready,
    start,
)

_entry_of = entry_of
"""The name :func:`entry_of` had when the rules were one module."""

__all__ = [
    "listing",
    "matched_race",
    "FREE_DODGES",
    "Dodge",
    "cancel_match",
    "confirm_seat",
    "dodge",
    "dodge_costs",
    "dodge_kind",
    "queue_wait",
    "unconfirmed",
    "window",
    "ALL",
    "ActionKind",
    "SPECTATORS",
    "ActionOutcome",
    "Audience",
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "Due",
    "Entry",
    "FORFEIT",
    "Final",
    "Game",
    "GhostRun",
    "MAX_GHOSTS",
    "Limits",
    "Race",
    "RaceChange",
    "RaceOptions",
    "RaceState",
    "RematchState",
    "Standing",
    "Status",
    "TERMINAL",
    "add_ghosts",
    "apply_action",
    "commitment",
    "count_hint",
    "create_race",
    "day_end",
    "due_transition",
    "UndoBase",
    "effective_moves",
    "entry_of",
    "event_data",
    "finish",
    "finish_ghosts",
    "ghost_id",
    "ghost_outcome",
    "check_account",
    "join",
    "leave",
    "new_code",
    "offered_variant",
    "new_salt",
    "normalize_code",
    "new_seed",
    "next_due",
    "next_idle",
    "OUT",
    "out_times",
    "prepare",
    "presence_change",
    "presence_plan",
    "progress_of",
    "revealed",
    "known_par",
    "par_change",
    "par_event",
    "par_info",
    "settled",
    "standing_line",
    "run_of",
    "race_info",
    "race_record",
    "NotYet",
    "rank",
    "rebuild",
    "accept_rematch",
    "rematch_due",
    "rematch_made",
    "rematch_race",
    "replay",
    "runs_completed",
    "set_ready",
    "shared_ranks",
    "standing",
    "start",
    "status_after",
    "undo_only",
]
