"""A race's life: created, joined and left, ready, counted down, started and finished."""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from spider_client.protocol import BoardShown as BoardEvent
from spider_client.protocol import (
    Countdown,
    Finished,
    PlayerJoined,
    PlayerLeft,
    PlayerReady,
    Prepared,
    Started,
)
from spider_engine import Board, find_variant

from ..errors import AccountRequired, HumansOnly, NotAPlayer, RaceFull, WrongState
from .fairness import commitment, new_salt, new_seed, revealed
from .model import (
    ALL,
    SPECTATORS,
    TERMINAL,
    Audience,
    Entry,
    Final,
    Game,
    Race,
    RaceChange,
    RaceState,
    Status,
    entry_of,
)
from .options import RaceOptions
from .progress import progress_of, status_after, undo_only
from .results import rank

__all__ = [
    "create_race",
    "due_transition",
    "finish",
    "join",
    "leave",
    "prepare",
    "set_ready",
    "start",
]


def create_race(
    *,
    code: str,
    options: RaceOptions,
    creator: str,
    name: str,
    now: float,
    seed: str | None = None,
    salt: str | None = None,
    preparing: bool = False,
    bot: bool = False,
    guest: bool = False,
) -> RaceChange:
    """A new open race whose creator is its first player (not ready; ``bot`` when their
    hello said so, ``guest`` when they have no account); with ``preparing``, without a deal until :func:`prepare` gives it one.
    HumansOnly for a bot creating a ``humans_only`` race, AccountRequired for a guest
    creating a rated one."""
    seed = new_seed() if seed is None else seed
    salt = new_salt() if salt is None else salt
    if preparing:
        seed = salt = ""
    race = Race(
        code=code,
        options=options,
        state=RaceState.OPEN,
        version=0,
        creator=creator,
        created_at=now,
        seed=seed,
        salt=salt,
        commitment=commitment(seed, salt) if not preparing else "",
        preparing=preparing,
    )
    change = join(race, creator, name, now, bot=bot, guest=guest)
    assert change is not None
    return change


def join(
    race: Race, player: str, name: str, now: float, *, bot: bool = False, guest: bool = False
) -> RaceChange | None:
    """Add a player to an open race (``bot``: their hello said so; ``guest``: they have no
    account); None when they are in
    it already (a rejoin). HumansOnly for a bot in a ``humans_only`` race,
    AccountRequired for a guest in a rated race (rated races are between accounts),
    WrongState unless open, RaceFull at the maximum."""
    if player in race.players:
        return None
    if bot and race.options.humans_only:
        raise HumansOnly(f"race {race.code} is for humans only; this player said it is a bot")
    if guest and race.options.rated:
        raise AccountRequired(
            f"race {race.code} is rated: rated races are for accounts; sign up or sign in"
            " to race it (a guest may watch it, and race casual races)"
        )
    if race.state is not RaceState.OPEN:
        raise WrongState(f"race {race.code} is {race.state.value}: join as a spectator")
    if sum(not e.ghost for e in race.players.values()) >= race.options.max_players:
        raise RaceFull(f"race {race.code} has its {race.options.max_players} players")
    entry = Entry(
        player=player,
        name=name,
        order=race.next_order,
        deals_left=len(find_variant(race.options.variant).stock_deals),
        bot=bot,
        guest=guest,
    )
    new = replace(race, players={**race.players, player: entry}, next_order=race.next_order + 1)
    event = PlayerJoined(race=race.code, version=0, player=entry.info())
    return RaceChange(base=race.version, race=new, players=[entry], events=[(ALL, event)])


def leave(race: Race, player: str, now: float) -> RaceChange:
    """Take a player out of an open race or one counting down (the countdown goes on for
    the others; the race is deleted when no player is left). NotAPlayer when not in it;
    WrongState when running or finished (a running game is left by resigning)."""
    if player not in race.players:
        raise NotAPlayer(f"not a player of race {race.code}")
    if race.state not in (RaceState.OPEN, RaceState.COUNTDOWN):
        raise WrongState(f"race {race.code} is {race.state.value}")
    players = {p: e for p, e in race.players.items() if p != player}
    new = replace(race, players=players)
    if not any(not e.ghost for e in players.values()):  # ghosts alone do not keep it
        return RaceChange(base=race.version, race=new, removed=[player], delete=True)
    change = RaceChange(
        base=race.version,
        race=new,
        removed=[player],
        events=[(ALL, PlayerLeft(race=race.code, version=0, player=player))],
    )
    if race.state is RaceState.OPEN:
        _maybe_countdown(change, now)
    return change


def set_ready(race: Race, player: str, ready: bool, now: float) -> RaceChange | None:
    """Mark a player ready or not; when every player of an open race is ready, the countdown
    starts (``countdown`` event, ``starts_at`` = now + the race's countdown). None when
    nothing changes. NotAPlayer when not in it; WrongState unless open."""
    entry = race.players.get(player)
    if entry is None:
        raise NotAPlayer(f"not a player of race {race.code}")
    if race.state is not RaceState.OPEN:
        raise WrongState(f"race {race.code} is {race.state.value}")
    if entry.ready == ready:
        return None
    entry = replace(entry, ready=ready)
    new = replace(race, players={**race.players, player: entry})
    change = RaceChange(
        base=race.version,
        race=new,
        meta=False,
        players=[entry],
        events=[(ALL, PlayerReady(race=race.code, version=0, player=player, ready=ready))],
    )
    _maybe_countdown(change, now)
    return change


def prepare(race: Race, seed: str, now: float) -> RaceChange:
    """Give a preparing race its proven seed (with a new salt): a ``prepared`` event with
    the commitment, then the countdown if everyone is ready. WrongState unless preparing."""
    if not race.preparing:
        raise WrongState(f"race {race.code} has its deal")
    salt = new_salt()
    digest = commitment(seed, salt)
    new = replace(race, seed=seed, salt=salt, commitment=digest, preparing=False)
    event = Prepared(race=race.code, version=0, commitment=digest)
    change = RaceChange(base=race.version, race=new, events=[(ALL, event)])
    _maybe_countdown(change, now)
    return change


def _maybe_countdown(change: RaceChange, now: float) -> None:
    race = change.race
    if (
        race.state is RaceState.OPEN
        and not race.preparing
        and race.players
        and all(e.ready for e in race.players.values())
    ):
        starts_at = round(now + race.options.countdown, 3)
        change.race = replace(race, state=RaceState.COUNTDOWN, starts_at=starts_at)
        change.meta = True
        change.events.append((ALL, Countdown(race=race.code, version=0, starts_at=starts_at)))


# -- the start and the finish ---------------------------------------------------------------


def due_transition(race: Race, now: float) -> Literal["start", "finish"] | None:
    """Which transition is due now: ``start`` once a countdown reaches ``starts_at``,
    ``finish`` once a running race reaches ``ends_at`` or every live player's game is over
    (a ghost never holds a race)."""
    if race.state is RaceState.COUNTDOWN and race.starts_at is not None and now >= race.starts_at:
        return "start"
    if race.state is RaceState.RUNNING:
        if race.ends_at is not None and now >= race.ends_at:
            return "finish"
        if all(e.status in TERMINAL for e in race.players.values() if not e.ghost):
            return "finish"
    return None


def start(race: Race, now: float) -> RaceChange:
    """Deal: every player gets ``Board.deal(variant, seed)`` at ``starts_at`` (the same
    server time for all, whichever node performs it), and the idle deadline ``starts_at``
    plus the race's ``idle_limit``; with live boards, spectators get each player's view of
    it. WrongState unless the countdown is over."""
    if due_transition(race, now) != "start":
        raise WrongState(f"race {race.code} is {race.state.value}, not due to start")
    assert race.starts_at is not None
    board = Board.deal(race.options.variant, race.seed)
    position = board.text()
    started_at = race.starts_at
    ends_at = round(started_at + race.options.time_limit, 3)
    idle_at = round(started_at + race.options.idle_limit, 3)
    players: dict[str, Entry] = {}
    games: list[Game] = []
    down0 = sum(board.down)
    runs, turned_up, suited = progress_of(board, down0)
    for pid, entry in race.players.items():
        game = Game(
            player=pid,
            position=position,
            deals_left=board.deals_left(),
            runs=runs,
            turned_up=turned_up,
            suited=suited,
            score=board.classic_score(0),
            down0=down0,
        )
        game.status = status_after(board, race.options, game.status)
        if entry.dodged:  # left before the start (a dodge that costs): out at once
            game.status = Status.LEFT
        if game.status == Status.PLAYING and undo_only(board, race.options):
            game.undo_only_since = started_at
        games.append(game)
        players[pid] = entry_of(replace(entry, idle_at=idle_at), game)
    new = replace(
        race,
        state=RaceState.RUNNING,
        players=players,
        started_at=started_at,
        ends_at=ends_at,
    )
    event = Started(
        race=race.code,
        version=0,
        started_at=started_at,
        ends_at=ends_at,
        commitment=race.commitment,
        idle_at=idle_at,
    )
    events: list[tuple[Audience, object]] = [(ALL, event)]
    if race.options.live_boards:
        view = board.view_text()
        events += [
            (SPECTATORS, BoardEvent(race=race.code, version=0, player=pid, view=view))
            for pid in players
        ]
    return RaceChange(
        base=race.version,
        race=new,
        players=list(players.values()),
        games=games,
        events=events,
    )


def finish(
    race: Race,
    games: dict[str, Game],
    replays: dict[str, list[str]],
    now: float,
    hints: dict[str, int] | None = None,
    times: dict[str, list[int]] | None = None,
) -> RaceChange:
    """End a running race that is due to end: every game not over is out of time
    (``timeout``); results ranked by :func:`rank`; the ``finished`` event reveals seed,
    salt, every player's actions and final full position (for a daily race: not before
    its day is over, see :func:`revealed`). ``hints`` are the hints each player asked for;
    ``times`` each player's action times in ms (parallel to ``replays``; a player left
    out has none: ``replay_times`` leaves them out too). WrongState when not due."""
    if due_transition(race, now) != "finish":
        raise WrongState(f"race {race.code} is {race.state.value}, not due to finish")
    players: dict[str, Entry] = {}
    changed: list[Game] = []
    for pid, entry in race.players.items():
        game = games[pid]
        if game.status not in TERMINAL:
            game = replace(game, status=Status.TIMEOUT, time=float(race.options.time_limit))
            changed.append(game)
        players[pid] = entry_of(entry, game)
        if hints and hints.get(pid):
            players[pid] = replace(players[pid], hints=hints[pid])
    results = rank(players.values())
    final = Final(
        results=results,
        replays={pid: list(replays.get(pid, [])) for pid in players},
        boards={pid: games[pid].position for pid in players},
        times={
            pid: list(t)
            for pid, t in (times or {}).items()
            if pid in players and len(t) == len(replays.get(pid, []))
        },
    )
    new = replace(race, state=RaceState.FINISHED, players=players, final=final)
    public = revealed(new, now)
    event = Finished(
        race=race.code,
        version=0,
        results=results,
        seed=race.seed if public else None,
        salt=race.salt if public else None,
        commitment=race.commitment,
        replays=final.replays if public else None,
        boards=final.boards if public else None,
        replay_times=final.times if public else None,
    )
    return RaceChange(
        base=race.version,
        race=new,
        players=list(players.values()),
        games=changed,
        events=[(ALL, event)],
        finished=True,
    )
