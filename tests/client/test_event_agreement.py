"""The client's race mirror against the table of event sequences that the page's mirror
(``static/mirror.js``) is checked against too (``tests/web/test_event_agreement_js.py``):
``tests/agreement/race_events.json``. Each case is a ``joined`` reply, then messages from the
server (race events, or another ``joined``), then the race they must leave."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import msgpack
import pytest

from spider_client import RaceMirror
from spider_client import protocol as p

TABLE = Path(__file__).resolve().parents[1] / "agreement" / "race_events.json"
CASES = json.loads(TABLE.read_text())["cases"]
PLAYER_FIELDS = ("player", "status", "ready", "connected", "moves", "time")


def mirror(messages: list[dict[str, Any]], player: str | None = None) -> RaceMirror:
    """The client library's race mirror (of ``player``, whose acks they are), fed
    ``messages`` as its reader takes frames."""
    race_mirror = RaceMirror(player)
    for message in messages:
        try:
            decoded = p.decode_all(msgpack.packb(message))
        except ValueError:
            continue  # a message this client does not know: its reader leaves it out
        for item in decoded:
            race_mirror.take(item)
    return race_mirror


def player_row(info: p.PlayerInfo, fields: tuple[str, ...] = PLAYER_FIELDS) -> dict[str, Any]:
    """A player's line as the table's ``expected`` holds it: ``away_since`` only while the
    player is away."""
    row = {k: getattr(info, k) for k in fields}
    if info.away_since is not None:
        row["away_since"] = info.away_since
    return row


def race_state(client: RaceMirror, fields: tuple[str, ...] = PLAYER_FIELDS) -> dict[str, Any]:
    """What the table's ``expected`` holds, read from the client (``fields`` of each
    player)."""
    race = client.race
    assert race is not None
    return {
        "code": client.code,
        "state": race.state,
        "starts_at": race.starts_at,
        "ends_at": race.ends_at,
        "commitment": race.commitment,
        "preparing": race.preparing,
        "version": race.version,
        "seen": client.version,
        "players": [player_row(info, fields) for info in race.players],
        "results": None if race.results is None else [dataclasses.asdict(r) for r in race.results],
        "seed": race.seed,
        "salt": race.salt,
        "boards": dict(client.boards),
        "par": None if race.par is None else dataclasses.asdict(race.par),
    }


def test_the_table_covers_every_event() -> None:
    types = {m["type"] for case in CASES for m in [*case["joined"]["events"], *case["events"]]}
    assert set(p.EVENT_TYPES) <= types
    assert len(CASES) >= 20


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_client_mirrors_the_race_as_the_table_says(case: dict[str, Any]) -> None:
    client = mirror([case["joined"], *case["events"]], case.get("player"))
    fields = tuple(case.get("player_fields", PLAYER_FIELDS))
    assert race_state(client, fields) == case["expected"]
