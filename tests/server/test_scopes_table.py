"""The scopes' table covers every client message: each type the session handles needs one
scope (``hello`` none), and docs/protocol.md's table lists each under that scope."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from spider_client import protocol as p
from spider_server.errors import MissingScope
from spider_server.scopes import BOT_PLAY, SCOPE_OF, SCOPES, check, needed
from spider_server.session import HANDLERS

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def wire(kind: type[object]) -> str:
    """A message type's name on the wire (its ``type`` field's default)."""
    return str(next(f.default for f in dataclasses.fields(kind) if f.name == "type"))


def test_every_handled_message_has_its_scope() -> None:
    assert set(SCOPE_OF) == set(HANDLERS)
    assert {s for s in SCOPE_OF.values() if s is not None} == set(SCOPES) - {BOT_PLAY}
    assert SCOPE_OF[p.Hello] is None


def test_the_documented_table_says_the_same() -> None:
    rows = {}
    for line in DOC.read_text().splitlines():
        m = re.match(r"^\| `(race:\w+|bot:play)` \| (.*) \|$", line)
        if m:
            rows[m[1]] = set(re.findall(r"`(\w+)`", m[2]))
    assert set(rows) == set(SCOPES)
    for kind, scope in SCOPE_OF.items():
        if scope is not None:
            assert wire(kind) in rows[scope], (wire(kind), scope)
    assert {"join", "leave"} <= rows["race:read"]  # as a spectator


def test_a_token_is_refused_past_its_scopes_and_bot_play_stands_for_all() -> None:
    move = p.MoveAction(code="K7QX2", seq=1, move="+")
    watch = p.Join(req=1, code="K7QX2", role="spectator")
    leave = p.Leave(req=2, code="K7QX2")
    check(None, move)  # a session: every scope
    check({BOT_PLAY}, move)
    check({"race:read"}, watch)
    check({"race:read"}, leave, spectating={"K7QX2"})
    for scopes, message in (({"race:read"}, move), ({"race:read"}, leave), ({"race:play"}, watch)):
        try:
            check(scopes, message)
        except MissingScope as e:
            assert needed(message) in str(e)
        else:
            raise AssertionError(f"{message} passed with {scopes}")
