"""Names that cannot be faked (docs/protocol.md, "Names"): the acceptance table, each name
refused with its reason or taken with its display and key, by ``check_name`` and by a
real node's ``hello``."""

from __future__ import annotations

import pytest

from spider_client import protocol as p
from spider_server.names import MAX_NAME, Name, NameRefused, check_name, name_key
from spider_server.session import display_name
from tests.server.server_helpers import Client

ALICE = name_key("alice")

# name given -> ("shown", display, key) or ("refused", the reason)
TABLE: list[tuple[str, tuple[str, ...]]] = [
    # look-alikes folded to one key
    ("alice", ("shown", "alice", ALICE)),
    ("ALICE", ("shown", "ALICE", ALICE)),
    ("Alice", ("shown", "Alice", ALICE)),
    ("aIice", ("shown", "aIice", ALICE)),  # a capital I for the l
    ("  alice  ", ("shown", "alice", ALICE)),
    ("\U0001d41a\U0001d425\U0001d422\U0001d41c\U0001d41e", ("shown", "alice", ALICE)),  # bold
    ("\uff41\uff4c\uff49\uff43\uff45", ("shown", "alice", ALICE)),  # fullwidth
    ("b0b", ("shown", "b0b", name_key("bob"))),
    ("rnary", ("shown", "rnary", name_key("mary"))),
    ("\u0430\u0430", ("shown", "\u0430\u0430", name_key("aa"))),  # all Cyrillic: one script
    ("a\u00a0b", ("shown", "a b", name_key("a b"))),  # a no-break space is a space
    # allowed: one script, or the mixes the profile lets through
    ("Jos\u00e9", ("shown", "Jos\u00e9", name_key("jos\u00e9"))),
    ("j.doe-2_x", ("shown", "j.doe-2_x", name_key("j.doe-2_x"))),
    ("Alice\u3055\u3093\u6f22\u5b57", ("shown", "Alice\u3055\u3093\u6f22\u5b57", "")),
    ("\u6771\u4eac\u3055\u304f\u3089", ("shown", "\u6771\u4eac\u3055\u304f\u3089", "")),
    ("\uae40\ucca0\uc218abc", ("shown", "\uae40\ucca0\uc218abc", "")),  # Latin + Hangul
    ("abc \u0645\u0631\u062d\u0628\u0627", ("shown", "abc \u0645\u0631\u062d\u0628\u0627", "")),
    ("\u0395\u03bb\u03ad\u03bd\u03b7", ("shown", "\u0395\u03bb\u03ad\u03bd\u03b7", "")),
    ("player-ab12", ("shown", "player-ab12", "")),  # the name unnamed players are given
    ("x" * MAX_NAME, ("shown", "x" * MAX_NAME, "")),
    # mixed scripts
    ("\u0430lice", ("refused", "mixes Cyrillic and Latin letters")),
    ("alice\u03b1", ("refused", "mixes Latin and Greek letters")),
    ("\u0418\u0440\u0438\u043d\u0430X", ("refused", "mixes Cyrillic and Latin letters")),
    ("\u0430\u03b1", ("refused", "mixes Cyrillic and Greek letters")),
    ("ab\u0645\u05d0", ("refused", "mixes Latin, Arabic and Hebrew letters")),
    # invisible characters, fillers
    ("\u3164", ("refused", "contains an invisible character U+3164 HANGUL FILLER")),
    ("\u3164\u3164\u3164", ("refused", "contains an invisible character U+3164 HANGUL FILLER")),
    ("\u2800", ("refused", "contains an invisible character U+2800 BRAILLE PATTERN BLANK")),
    ("a\u115fb", ("refused", "contains an invisible character U+115F HANGUL CHOSEONG FILLER")),
    ("a\uffa0b", ("refused", "contains an invisible character U+FFA0 HALFWIDTH HANGUL FILLER")),
    ("a\u200bb", ("refused", "contains an invisible character U+200B ZERO WIDTH SPACE")),
    ("a\u200db", ("refused", "contains an invisible character U+200D ZERO WIDTH JOINER")),
    ("\ufeffbob", ("refused", "contains an invisible character U+FEFF ZERO WIDTH NO-BREAK")),
    ("a\u00adb", ("refused", "contains an invisible character U+00AD SOFT HYPHEN")),
    ("a\ufe0fb", ("refused", "contains an invisible character U+FE0F VARIATION SELECTOR-16")),
    ("a\U000e0041b", ("refused", "contains an invisible character U+E0041 TAG LATIN CAPITAL")),
    # bidirectional controls
    ("a\u202eb", ("refused", "contains a bidirectional control character U+202E RIGHT-TO")),
    ("a\u2066b", ("refused", "contains a bidirectional control character U+2066 LEFT-TO")),
    ("a\u200fb", ("refused", "contains a bidirectional control character U+200F")),
    # controls and other characters
    ("a\x07b", ("refused", "contains a control character U+0007")),
    ("a\tb", ("refused", "contains a control character U+0009")),
    ("a\x00b", ("refused", "contains a control character U+0000")),
    ("a\u2028b", ("refused", "contains a line break U+2028 LINE SEPARATOR")),
    ("a\ue000b", ("refused", "contains a private-use character U+E000")),
    ("a\u0378b", ("refused", "contains a code point that is not a character: U+0378")),
    ("Bob!", ("refused", "contains U+0021 EXCLAMATION MARK: a name has letters, digits")),
    ("\U0001f600bob", ("refused", "contains U+1F600 GRINNING FACE")),
    ("a\u1680b", ("refused", "contains a space other than the plain one: U+1680")),
    ("bo  b", ("refused", "has two spaces in a row")),
    ("\u0301abc", ("refused", "starts with a combining mark")),
    ("e\u0301\u0301", ("refused", "repeats the mark U+0301 COMBINING ACUTE ACCENT on one")),
    ("a\u0300\u0301\u0302\u0303\u0304", ("refused", "has more than 4 marks on one letter")),
    # length
    ("", ("refused", "is empty")),
    ("   ", ("refused", "is empty")),
    ("x" * (MAX_NAME + 1), ("refused", f"is longer than {MAX_NAME} characters")),
    ("\ufdfa" * 2, ("refused", f"is longer than {MAX_NAME} characters")),  # NFKC: 36 chars
    # reserved, by key
    ("admin", ("refused", "is reserved")),
    ("ADMIN", ("refused", "is reserved")),
    ("Adm1n", ("refused", "is reserved")),
    ("\uff41\uff44\uff4d\uff49\uff4e", ("refused", "is reserved")),
    ("Moderator", ("refused", "is reserved")),
    ("spider-race", ("refused", "is reserved")),
    ("guest", ("refused", "is reserved")),
    ("System", ("refused", "is reserved")),
]
IDS = [ascii(raw)[1:-1][:40] or "empty" for raw, _ in TABLE]


@pytest.mark.parametrize(("raw", "expected"), TABLE, ids=IDS)
def test_check_name_table(raw: str, expected: tuple[str, ...]) -> None:
    if expected[0] == "refused":
        with pytest.raises(NameRefused) as refused:
            check_name(raw)
        assert refused.value.reason.startswith(expected[1]), refused.value.reason
        assert str(refused.value) == f"the name {refused.value.reason}"
        with pytest.raises(Exception) as invalid:
            display_name(raw)
        assert str(invalid.value) == f"name: {refused.value.reason}"
        return
    name = check_name(raw)
    assert isinstance(name, Name)
    assert name.display == expected[1]
    if expected[2]:
        assert name.key == expected[2]
    assert name.key == name_key(name.display)
    assert display_name(raw) == name.display


def test_keys_tell_names_apart_and_fold_look_alikes() -> None:
    keys = {raw: check_name(raw).key for raw in ("alice", "bob", "alice2", "al ice", "Zo\u00eb")}
    assert len(set(keys.values())) == len(keys)  # different names, different keys
    assert check_name("Zoe").key != keys["Zo\u00eb"]
    # the same name however it is cased or drawn
    same = ["bill", "BILL", "Bill", "biII", "b\uff49ll", "\U0001d41b\U0001d422\U0001d425l"]
    assert len({check_name(raw).key for raw in same}) == 1
    # a name is frozen
    with pytest.raises(AttributeError):
        check_name("alice").key = "x"
    # the key of a shown name is the key of the name
    assert check_name(check_name("\uff21lice").display).key == ALICE


def test_the_script_profile() -> None:
    """UTS #39 Moderately Restrictive: Latin with Han and kana, Han and Bopomofo, Han and
    Hangul, or one other script but Cyrillic and Greek; digits go with any script."""
    for allowed in (
        "Tanaka\u7530\u4e2d\u305f\u30ab",  # Latin, Han, Hiragana, Katakana
        "Lin\u6797\u3105",  # Latin, Han, Bopomofo
        "Kim\u91d1\ud55c",  # Latin, Han, Hangul
        "Raj\u0930\u093e\u091c",  # Latin and Devanagari
        "\u0418\u0440\u0438\u043d\u0430 2",  # Cyrillic and digits
        "\u30c6\u30b9\u30c8\u30fc",  # Katakana with the prolonged sound mark
    ):
        assert check_name(allowed).display == allowed
    for refused, reason in (
        ("\u91d1\ud55c\u3042", "mixes Han, Hangul and Hiragana letters"),  # Korean + Japanese
        ("ab\u0930\u0995\u0996", "mixes Latin, Devanagari and Bengali letters"),
        ("\u03b1\u03b2\u0430", "mixes Greek and Cyrillic letters"),
    ):
        with pytest.raises(NameRefused) as e:
            check_name(refused)
        assert e.value.reason == reason


async def test_hello_refuses_each_name_with_its_reason(redis_server, server_node) -> None:
    """Over a real websocket: a refused name answers ``invalid`` with the reason and leaves
    the connection waiting for its hello; a taken one is welcomed under its display."""
    node = await server_node(redis_server.url, rate=1000.0, burst=1000)  # the whole table
    waiting = await Client.connect(node.url, hello=False)
    for raw, expected in TABLE:
        if expected[0] == "refused":
            await waiting.send(p.Hello(name=raw))
            error = await waiting.expect(("error", "welcome"))
            assert error.type == "error" and error.error == "invalid", (raw, error)
            assert error.message.startswith(f"name: {expected[1]}"), (raw, error.message)
            continue
        c = await Client.connect(node.url, name=raw)
        assert c.welcome is not None and c.welcome.name == expected[1], raw
        await c.ws.close()
    # nothing changed: the same connection is welcomed once it gives a name it may take
    await waiting.send(p.Hello(name="alice"))
    assert (await waiting.expect("welcome")).name == "alice"


async def test_a_refused_rename_keeps_the_player_and_its_name(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    first = await Client.connect(node.url, name="\uff22\uff4f\uff42")  # fullwidth: shown Bob
    assert first.welcome is not None and first.welcome.name == "Bob"
    again = await Client.connect(node.url, hello=False)
    await again.send(p.Hello(name="Bob\u202e", token=first.token))
    error = await again.expect(("error", "welcome"))
    assert error.type == "error" and error.error == "invalid"
    assert error.message == (
        "name: contains a bidirectional control character U+202E RIGHT-TO-LEFT OVERRIDE"
    )
    await again.send(p.Hello(token=first.token))
    welcome = await again.expect("welcome")
    assert (welcome.player, welcome.name) == (first.player, "Bob")
    # renamed with the token: the same player under the new name
    renamed = await Client.connect(node.url, name="Robert", token=first.token)
    assert renamed.welcome is not None
    assert (renamed.welcome.player, renamed.welcome.name) == (first.player, "Robert")
