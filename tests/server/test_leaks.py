"""No frame to anyone carries a card they have not seen while a race runs."""

from __future__ import annotations

import msgpack
from redis import Redis

from spider_engine import Board
from tests.leakscan import LeakScanner, messages
from tests.server.server_helpers import Client, Player, start_race


def _secrets(redis_url: str, code: str) -> tuple[str, str]:
    r = Redis.from_url(redis_url, decode_responses=True)
    seed, salt = r.hget(f"{{race:{code}}}:meta", "seed"), r.hget(f"{{race:{code}}}:meta", "salt")
    r.close()
    return seed, salt


async def _race_with_undo_and_reconnect(node_url: str, redis_url: str, *, live: bool):
    """A whole race; returns (variant, secrets, [(recipient, role, frames)], finished)."""
    variant = "spider2"
    code, (a, b), (w1,) = await start_race(
        node_url, players=2, spectators=1, variant=variant, live_boards=live
    )
    secrets = _secrets(redis_url, code)
    pa = Player(a, code, (await a.join(code)).view, seed=11)
    pb = Player(b, code, (await b.join(code)).view, seed=12)
    for _ in range(8):
        await pa.step()
        await pb.step()
    await pa.undo()
    await pa.undo()
    await pb.undo()
    # an illegal move: its error message names face-up cards only
    board = Board.from_text(pa.view)
    legal = set(board.legal_moves.texts())
    illegal = next(
        f"{s}1{d}"
        for s in "abcdefghij"
        for d in "abcdefghij"
        if s != d
        and f"{s}1{d}" not in legal
        and board.cols[ord(s) - 97]
        and board.cols[ord(d) - 97]
    )
    err = await a.move(code, pa.seq + 1, illegal)
    assert err.type == "error" and err.error == "illegal_move"
    # player A drops and comes back with the token and since
    await a.drain(0.1)
    since = max(m.version for m in a.events())
    await a.close()
    await pb.step()
    a2 = await Client.connect(node_url, token=a.token, name=None)
    joined = await a2.join(code, since=since)
    pa2 = Player(a2, code, joined.view, seed=13)
    pa2.seq = joined.seq
    # a spectator who arrives late, mid-race
    w2 = await Client.connect(node_url, name="late")
    await w2.join(code, role="spectator", since=3)
    for _ in range(4):
        await pa2.step()
        await pb.step()
    await pa2.undo()
    await pa2.resign()
    await pb.resign()
    finished = [await c.expect("finished") for c in (a2, b, w1, w2)]
    for c in (a2, b, w1, w2):
        await c.drain(0.1)
    recipients = [
        ("A", "player", a.frames + a2.frames),
        ("B", "player", b.frames),
        ("W1", "spectator", w1.frames),
        ("W2", "spectator", w2.frames),
    ]
    return variant, secrets, recipients, finished[0]


async def _scan(variant, secrets, recipients):
    scanner = LeakScanner(variant, secrets=secrets)
    for who, role, frames in recipients:
        scanner.feed_all(who, role, frames)
    return scanner


async def test_no_card_leaks_over_a_whole_race(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    variant, secrets, recipients, finished = await _race_with_undo_and_reconnect(
        node.url, redis_server.url, live=False
    )
    scanner = await _scan(variant, secrets, recipients)
    assert scanner.leaks == []
    assert scanner.frames > 100
    # the players saw cards (their views); the spectators saw none before the finish
    assert len(scanner.seen["A"]) >= 5 and len(scanner.seen["B"]) >= 5
    assert not scanner.seen["W1"] and not scanner.seen["W2"]
    assert finished.seed == secrets[0]


async def test_no_card_leaks_with_live_boards(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    variant, secrets, recipients, _ = await _race_with_undo_and_reconnect(
        node.url, redis_server.url, live=True
    )
    scanner = await _scan(variant, secrets, recipients)
    assert scanner.leaks == []
    # spectators saw the players' views, players never saw a board event
    assert scanner.seen["W1"]
    for who, role, frames in recipients:
        types = [m["type"] for f in frames for m in messages(f)]
        assert ("board" in types) == (role == "spectator"), who


def _tamper(frames: list[bytes], kind: str, change) -> list[bytes]:
    out, done = [], False
    for f in frames:
        m = msgpack.unpackb(f)
        if not done and isinstance(m, dict) and m["type"] == kind:
            change(m)
            f, done = msgpack.packb(m), True
        out.append(f)
    assert done, f"no {kind} frame to tamper with"
    return out


async def test_one_slipped_card_fails_the_scan(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    variant, secrets, recipients, _ = await _race_with_undo_and_reconnect(
        node.url, redis_server.url, live=False
    )
    hidden = Board.deal(variant, secrets[0])
    stock_card = hidden.variant.cards.tokens[hidden.stock[-1]]  # dealt last, if ever
    clean = await _scan(variant, secrets, recipients)
    assert clean.leaks == []
    by = {who: (role, frames) for who, role, frames in recipients}

    def rescan(who: str, frames: list[bytes]) -> LeakScanner:
        scanner = LeakScanner(variant, secrets=secrets)
        for w, r, f in recipients:
            scanner.feed_all(w, r, frames if w == who else f)
        return scanner

    cases = {
        "a card as an extra field of a progress event": lambda m: m.__setitem__("card", stock_card),
        "a card in a player's name": lambda m: m["player"].__setitem__("name", f"x {stock_card} y"),
        "the seed in a progress event": lambda m: m["player"].__setitem__("status", secrets[0]),
    }
    for label, change in cases.items():
        scanner = rescan("W1", _tamper(by["W1"][1], "progress", change))
        assert scanner.leaks, label
        assert all(
            leak.recipient == "W1" and leak.message_type == "progress" for leak in scanner.leaks
        ), label
    # a full position where the player's view belongs
    scanner = rescan(
        "B", _tamper(by["B"][1], "ack", lambda m: m.__setitem__("view", hidden.text()))
    )
    assert any(leak.recipient == "B" and "face-down" in leak.what for leak in scanner.leaks)


def test_the_scanner_reads_cards_with_the_engine_grammar() -> None:
    s = LeakScanner("spider4")
    assert s.cards_in("d1j") == [] and s.cards_in("a12b") == [] and s.cards_in("+") == []
    assert s.cards_in("K7QX2") == [] and s.cards_in("p3fa2d9c01b2e") == []
    assert s.cards_in("illegal move a1b: Qh does not go onto Ks in column b") == ["Qh", "Ks"]
    assert s.cards_in("spider4 *5|Qh/*5|Tc/*5|Ts/*5|5s/*4|2c/*4|Ts/*4|5d/*4|7s/*4|Ac/*4|6d *50 -") == [
        "Qh", "Tc", "Ts", "5s", "2c", "Ts", "5d", "7s", "Ac", "6d",
    ]  # fmt: skip
    assert s.cards_in("Th3d7c") == ["Th", "3d", "7c"]


def test_the_scanner_reads_every_event_of_a_frame_sent_together() -> None:
    s = LeakScanner("spider4")
    info = {"player": "p1", "name": "a", "status": "playing", "moves": 3}
    clean = {"type": "progress", "race": "K7QX2", "version": 5, "player": info}
    leaky = {**clean, "version": 6, "player": {**info, "name": "look: Qh"}}
    assert s.feed("B", "player", msgpack.packb([clean, clean])) == []
    found = s.feed("B", "player", msgpack.packb([clean, leaky]))
    assert [(leak.recipient, leak.message_type) for leak in found] == [("B", "progress")]
    assert "Qh" in found[0].what


def test_random_ids_and_tokens_are_not_read_as_cards() -> None:
    """Sparrow's cards (``1c``, ``1f``, ``2c``) look like hex digits: the token, player id
    and default name the server made up are not cards; the same text elsewhere is."""
    s = LeakScanner("sparrow")
    assert s.cards_in("player-1f2c") == ["1f", "2c"]  # what made the false alarms
    welcome = {
        "type": "welcome",
        "player": "p1f2c00000000",
        "name": "player-1f2c",
        "token": "v1.eyJwIjoicDg5OWFi.A3z_Phjn71Y7Q4vCK-1c",
        "node": "node1",
    }
    assert s.feed("A", "player", msgpack.packb(welcome)) == []
    info = {"player": "p1f2c00000000", "name": "look 1c", "status": "playing"}
    leaky = {"type": "progress", "race": "K7QX2", "version": 3, "player": info}
    assert [leak.message_type for leak in s.feed("A", "player", msgpack.packb(leaky))] == [
        "progress"
    ]
    renamed = {**welcome, "name": "player-1f2c 1c"}  # not a default name: searched
    assert s.feed("A", "player", msgpack.packb(renamed))
