"""How races, entries and games are laid out in Redis hashes (see :mod:`.keys`), both ways."""

from __future__ import annotations

from typing import Any

import msgpack

from spider_client.protocol import ParInfo, Result, fields_of, pack

from ..race import Entry, Final, Game, Race, RaceOptions, RaceState, RematchState

__all__ = [
    "changed_game_fields",
    "entry_bytes",
    "entry_from",
    "game_fields",
    "game_from",
    "meta_fields",
    "pack_payload",
    "par_bytes",
    "par_from",
    "race_from",
    "text",
]


IDLE_LIMIT = 3600
"""The ``idle_limit`` of a race stored without one (made before races had it): the most a
race may have, so that nobody in it is put out for idleness sooner than they were told."""


def text(value: bytes | str | None) -> str:
    """A reply as text (None: empty)."""
    if value is None:
        return ""
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _opt_float(value: bytes | str | None) -> float | None:
    t = text(value)
    return float(t) if t else None


def _num(value: float | int | None) -> str:
    return "" if value is None else repr(value)


def pack_payload(obj: Any) -> bytes:
    return bytes(msgpack.packb(obj, use_bin_type=False))


RARE_FLAGS = ("bot", "ghost", "guest", "dodged")
"""An entry's flags that are seldom set: kept in Redis only when set (their default, False,
is what :func:`entry_from` gives a missing one), since a move writes its player's entry."""


def entry_bytes(entry: Entry) -> bytes:
    stored = fields_of(entry)
    for name in RARE_FLAGS:
        if stored[name] is False:
            del stored[name]
    return pack(stored)


def entry_from(data: bytes) -> Entry:
    return Entry(**msgpack.unpackb(data, raw=False))


def meta_fields(race: Race) -> dict[str, str | bytes]:
    o = race.options
    fields: dict[str, str | bytes] = {
        "code": race.code,
        "variant": o.variant,
        "max_players": str(o.max_players),
        "time_limit": str(o.time_limit),
        "undo": "1" if o.undo else "0",
        "live_boards": "1" if o.live_boards else "0",
        "countdown": str(o.countdown),
        "winnable": "1" if o.winnable else "0",
        "hints": "1" if o.hints else "0",
        "daily": o.daily,
        "away_grace": str(o.away_grace),
        "idle_limit": str(o.idle_limit),
        "seed_chosen": "1" if o.seed_chosen else "0",
        "humans_only": "1" if o.humans_only else "0",
        "rated": "1" if o.rated else "0",
        "public": "1" if o.public else "0",
        "quick": "1" if o.quick else "0",
        "preparing": "1" if race.preparing else "0",
        "state": race.state.value,
        "creator": race.creator,
        "created_at": _num(race.created_at),
        "seed": race.seed,
        "salt": race.salt,
        "commitment": race.commitment,
        "next_order": str(race.next_order),
        "starts_at": _num(race.starts_at),
        "started_at": _num(race.started_at),
        "ends_at": _num(race.ends_at),
    }
    if race.rematch is not None:
        fields["rematch"] = pack(race.rematch)
    if race.par is not None:
        fields["par"] = par_bytes(race.par)
    if race.final is not None:
        f = race.final
        fields["final"] = pack(
            {"results": f.results, "replays": f.replays, "boards": f.boards, "times": f.times}
        )
    return fields


def par_bytes(par: ParInfo) -> bytes:
    """A par as stored (msgpack of its fields)."""
    return pack(par)


def par_from(data: Any) -> ParInfo:
    f = msgpack.unpackb(data, raw=False)
    provisional = bool(f.get("provisional", False))  # kept since provisional pars
    return ParInfo(f["moves"], f["line"], f["first"], f["none"], provisional)


def race_from(meta: dict[Any, Any], players: dict[Any, Any]) -> Race:
    m = {text(k): v for k, v in meta.items()}
    entries = sorted((entry_from(v) for v in players.values()), key=lambda e: e.order)
    final = None
    if m.get("final"):
        f = msgpack.unpackb(m["final"], raw=False)
        final = Final(
            results=[Result(**r) for r in f["results"]],
            replays=f["replays"],
            boards=f["boards"],
            times=f.get("times") or {},
        )
    return Race(
        code=text(m["code"]),
        options=RaceOptions(
            variant=text(m["variant"]),
            max_players=int(m["max_players"]),
            time_limit=int(m["time_limit"]),
            undo=m["undo"] == b"1",
            live_boards=m["live_boards"] == b"1",
            countdown=int(m["countdown"]),
            winnable=m.get("winnable") == b"1",
            hints=m.get("hints") == b"1",
            daily=text(m.get("daily")),
            away_grace=int(m.get("away_grace") or 60),
            seed_chosen=m.get("seed_chosen") == b"1",
            humans_only=m.get("humans_only") == b"1",
            rated=m.get("rated") == b"1",
            public=m.get("public") == b"1",
            quick=m.get("quick") == b"1",
            idle_limit=int(m.get("idle_limit") or IDLE_LIMIT),
        ),
        state=RaceState(text(m["state"])),
        version=int(m.get("version", b"0")),
        creator=text(m["creator"]),
        created_at=float(m["created_at"]),
        seed=text(m["seed"]),
        salt=text(m["salt"]),
        commitment=text(m["commitment"]),
        players={e.player: e for e in entries},
        next_order=int(m.get("next_order", b"0")),
        starts_at=_opt_float(m.get("starts_at")),
        started_at=_opt_float(m.get("started_at")),
        ends_at=_opt_float(m.get("ends_at")),
        final=final,
        preparing=m.get("preparing") == b"1",
        rematch=RematchState(**msgpack.unpackb(m["rematch"], raw=False))
        if m.get("rematch")
        else None,
        par=par_from(m["par"]) if m.get("par") else None,
    )


def game_fields(game: Game) -> dict[str, str]:
    return {
        "player": game.player,
        "seq": str(game.seq),
        "position": game.position,
        "status": game.status,
        "moves": str(game.moves),
        "turned_up": str(game.turned_up),
        "runs": str(game.runs),
        "deals_left": str(game.deals_left),
        "score": str(game.score),
        "time": _num(game.time),
        "down0": str(game.down0),
        "suited": str(game.suited),
        "raised_at": repr(game.raised_at),
        "undo_only_since": _num(game.undo_only_since),
    }


_GAME_FIELDS: tuple[tuple[str, Any], ...] = (
    ("player", str),
    ("seq", str),
    ("position", str),
    ("status", str),
    ("moves", str),
    ("turned_up", str),
    ("runs", str),
    ("deals_left", str),
    ("score", str),
    ("time", _num),
    ("down0", str),
    ("suited", str),
    ("raised_at", repr),
    ("undo_only_since", _num),
)


def changed_game_fields(before: Game, after: Game) -> dict[str, str]:
    """The fields of ``after`` (as :func:`game_fields` writes them) whose values differ
    from ``before``'s: what an action writes over the game it was decided on."""
    out: dict[str, str] = {}
    for name, conv in _GAME_FIELDS:
        value = getattr(after, name)
        if value != getattr(before, name):
            out[name] = conv(value)
    return out


def game_from(h: dict[Any, Any]) -> Game:
    m = {text(k): v for k, v in h.items()}
    return Game(
        player=text(m["player"]),
        seq=int(m["seq"]),
        position=text(m["position"]),
        status=text(m["status"]),
        moves=int(m["moves"]),
        turned_up=int(m["turned_up"]),
        runs=int(m["runs"]),
        deals_left=int(m["deals_left"]),
        score=int(m["score"]),
        time=_opt_float(m.get("time")),
        down0=int(m["down0"]),
        suited=int(m.get("suited") or 0),
        raised_at=float(m.get("raised_at") or 0.0),
        undo_only_since=_opt_float(m.get("undo_only_since")),
    )
