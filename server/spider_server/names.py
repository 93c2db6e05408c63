"""Players' names that cannot be faked: :func:`check_name`.

A name is shown as given, NFKC-normalized and trimmed (:attr:`Name.display`), and known by
its key (:attr:`Name.key`): the name case-folded and reduced to its confusable skeleton
(UTS #39), so that two names that look alike share one key ("alice", "ALICE", "aIice",
"ａｌｉｃｅ", a Cyrillic "аlice" if it were allowed). Refused, with the reason in words
(:class:`NameRefused`):

- an empty name, or one longer than :data:`MAX_NAME` characters once normalized;
- a control, format, bidirectional control, default-ignorable, filler or invisible
  character, a private-use, surrogate or unassigned code point, a line or paragraph
  separator;
- any character but letters, combining marks, digits, ``-``, ``_``, ``.`` and a space
  between words (never two in a row); a combining mark that starts the name, or more than
  :data:`MAX_MARKS` marks (or the same mark twice) on one letter;
- letters of scripts that UTS #39's Moderately Restrictive profile does not let mix: one
  script, or Latin with Han, Hiragana and Katakana, with Han and Bopomofo, with Han and
  Hangul, or with any one other script but Cyrillic and Greek (characters of the Common
  and Inherited scripts, such as digits, go with any);
- a reserved name (:data:`RESERVED`), compared by key.

The Unicode data (the confusables' prototypes, the letters' Script_Extensions) is in
``data/confusables.txt`` and ``data/scripts.txt``, made by ``scripts/names_data.py``;
normalization and character categories are Python's :mod:`unicodedata`.
"""

from __future__ import annotations

import bisect
import unicodedata
from dataclasses import dataclass
from functools import cache
from importlib import resources

__all__ = ["MAX_MARKS", "MAX_NAME", "RESERVED", "Name", "NameRefused", "check_name", "name_key"]

MAX_NAME = 24
"""The most characters a name has, once NFKC-normalized and trimmed."""
MAX_MARKS = 4
"""The most combining marks on one letter (NFD)."""
RESERVED = (
    "admin",
    "administrator",
    "moderator",
    "mod",
    "system",
    "server",
    "spider-race",
    "spider race",
    "spider_race",
    "spiderrace",
    "support",
    "staff",
    "official",
    "guest",
    "anonymous",
    "nobody",
    "everyone",
    "null",
    "none",
    "undefined",
    "you",
)
"""Names nobody may take, nor any name of the same key ("Admin", "ADM1N"). Not "root",
which the terminal takes by default when it is the login's name, nor the names the server
gives players who name none (``player-`` and four hex digits): a player's page and the
client library say hello again with the name they were welcomed under."""

PUNCTUATION = frozenset("-_.")
LETTERS = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nd"})
MARKS = frozenset({"Mn", "Mc"})
DEFAULT_IGNORABLE = (  # Default_Ignorable_Code_Point (DerivedCoreProperties.txt)
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
FILLERS = frozenset({0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x1D159})
"""Characters drawn blank that are not spaces: the Hangul fillers, the blank braille
pattern, and more."""
BIDI_CONTROLS = frozenset({0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)})
SCRIPT_GROUPS = (  # the mixes of the Highly Restrictive profile (with Latin)
    frozenset({"Latn", "Hani", "Hira", "Kana"}),
    frozenset({"Latn", "Hani", "Bopo"}),
    frozenset({"Latn", "Hani", "Hang"}),
)
NOT_WITH_LATIN = frozenset({"Cyrl", "Grek"})


@dataclass(frozen=True, slots=True)
class Name:
    """A name that may be taken."""

    display: str
    """The name as shown: NFKC-normalized and trimmed, its case kept."""
    key: str
    """The name's identity: two names of one key look alike (see :func:`name_key`)."""


class NameRefused(ValueError):
    """A name that may not be taken; :attr:`reason` says why, in words for the user
    ("mixes Latin and Cyrillic letters")."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the name {reason}")
        self.reason = reason


def check_name(raw: str) -> Name:
    """``raw`` as a name (:class:`Name`); NameRefused, with the reason, when it may not be
    one."""
    text = raw.strip()
    if len(text) > 4 * MAX_NAME:
        raise NameRefused(f"is longer than {MAX_NAME} characters")
    for ch in text:  # before NFKC, which turns some of them into others
        _refuse_hidden(ch)
    display = unicodedata.normalize("NFKC", text).strip()
    if not display:
        raise NameRefused("is empty")
    if len(display) > MAX_NAME:
        raise NameRefused(f"is longer than {MAX_NAME} characters")
    for ch in display:
        _refuse_hidden(ch)
        _refuse_other(ch)
    if "  " in display:
        raise NameRefused("has two spaces in a row")
    _refuse_marks(display)
    _refuse_mixed_scripts(display)
    key = name_key(display)
    if key in _reserved_keys():
        raise NameRefused("is reserved")
    return Name(display, key)


def name_key(display: str) -> str:
    """The key of a normalized name: its confusable skeleton, case folded.

    The skeleton of the name in capitals, case folded, then the skeleton of that: letters
    that look alike in one case only are caught in either (a capital ``I`` and ``l``;
    ``rn`` and ``m``), and "ALICE", "alice" and "aIice" share one key.
    """
    return _skeleton(_skeleton(display.upper()).casefold())


def describe(ch: str) -> str:
    """A character as the user can look it up: ``U+3164 HANGUL FILLER``."""
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X} {name}" if name else f"U+{ord(ch):04X}"


# -- the rules --------------------------------------------------------------------------


def _refuse_hidden(ch: str) -> None:
    """Refuse a character that hides, or changes how the name reads."""
    cp = ord(ch)
    category = unicodedata.category(ch)
    if cp in BIDI_CONTROLS:
        raise NameRefused(f"contains a bidirectional control character {describe(ch)}")
    if cp in FILLERS or _default_ignorable(cp):
        raise NameRefused(f"contains an invisible character {describe(ch)}")
    if category == "Cc":
        raise NameRefused(f"contains a control character {describe(ch)}")
    if category == "Cf":
        raise NameRefused(f"contains an invisible formatting character {describe(ch)}")
    if category in ("Zl", "Zp"):
        raise NameRefused(f"contains a line break {describe(ch)}")
    if category == "Co":
        raise NameRefused(f"contains a private-use character {describe(ch)}")
    if category in ("Cs", "Cn"):
        raise NameRefused(f"contains a code point that is not a character: U+{cp:04X}")


def _refuse_other(ch: str) -> None:
    """Refuse what is not a letter, a mark, a digit, ``-_.`` or a space."""
    category = unicodedata.category(ch)
    if ch == " " or ch in PUNCTUATION or category in MARKS:
        return
    if category in LETTERS:
        if category == "Lm" and _scripts(ch) is None:
            raise NameRefused(f"contains a modifier letter {describe(ch)}")
        return
    if category.startswith("Z"):
        raise NameRefused(f"contains a space other than the plain one: {describe(ch)}")
    raise NameRefused(f"contains {describe(ch)}: a name has letters, digits, spaces and - _ . only")


def _refuse_marks(display: str) -> None:
    """Refuse a name starting with a mark, or a letter with too many marks."""
    decomposed = unicodedata.normalize("NFD", display)
    if unicodedata.category(decomposed[0]) in MARKS:
        raise NameRefused("starts with a combining mark")
    run: list[str] = []
    for ch in decomposed:
        if unicodedata.category(ch) not in MARKS:
            run = []
            continue
        if ch in run:
            raise NameRefused(f"repeats the mark {describe(ch)} on one letter")
        run.append(ch)
        if len(run) > MAX_MARKS:
            raise NameRefused(f"has more than {MAX_MARKS} marks on one letter")


def _refuse_mixed_scripts(display: str) -> None:
    """Refuse letters of scripts that may not mix (UTS #39, Moderately Restrictive)."""
    sets = [s for s in map(_scripts, display) if s is not None]
    if not sets or _covered(sets, None):
        return
    others = {code for s in sets for code in s} - {"Latn"}
    if any(_covered(sets, group) for group in SCRIPT_GROUPS):
        return
    if any(_covered(sets, frozenset({"Latn", code})) for code in others - NOT_WITH_LATIN):
        return
    shown: list[str] = []
    for s in sets:  # each letter's script, in the name's order; a shared letter's first
        code = "Latn" if "Latn" in s else min(s)
        if code not in shown:
            shown.append(code)
    names = [_script_names().get(code, code) for code in shown]
    listed = f"{', '.join(names[:-1])} and {names[-1]}"
    raise NameRefused(f"mixes {listed} letters")


def _covered(sets: list[frozenset[str]], group: frozenset[str] | None) -> bool:
    """Whether every letter is of ``group`` (None: of one script that they all share,
    Han with Japanese or Korean letters counting as one)."""
    if group is None:
        common = set(_augmented(sets[0]))
        for s in sets[1:]:
            common &= _augmented(s)
        return bool(common)
    return all(s & group for s in sets)


def _augmented(scripts: frozenset[str]) -> frozenset[str]:
    """A letter's scripts with the writing systems they belong to (UTS #39: Han is of
    Japanese, Korean and Han with Bopomofo)."""
    extra: set[str] = set()
    if "Hani" in scripts:
        extra |= {"Jpan", "Kore", "Hanb"}
    if scripts & {"Hira", "Kana"}:
        extra.add("Jpan")
    if "Hang" in scripts:
        extra.add("Kore")
    if "Bopo" in scripts:
        extra.add("Hanb")
    return scripts | extra


def _default_ignorable(cp: int) -> bool:
    return any(first <= cp <= last for first, last in DEFAULT_IGNORABLE)


def _skeleton(text: str) -> str:
    """UTS #39's skeleton: NFD, each character to its prototype, NFD."""
    prototypes = _prototypes()
    mapped = "".join(prototypes.get(ch, ch) for ch in unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", mapped)


# -- the data ---------------------------------------------------------------------------


def _lines(name: str) -> list[str]:
    text = resources.files("spider_server").joinpath("data", name).read_text("utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("#")]


@cache
def _prototypes() -> dict[str, str]:
    """Character -> its prototype (data/confusables.txt)."""
    table: dict[str, str] = {}
    for line in _lines("confusables.txt"):
        source, target = line.split(";")
        table[chr(int(source, 16))] = "".join(chr(int(cp, 16)) for cp in target.split())
    return table


@cache
def _script_table() -> tuple[list[int], list[int], list[frozenset[str]], dict[str, str]]:
    """The letters' Script_Extensions as sorted ranges (firsts, lasts, scripts), and the
    scripts' names (data/scripts.txt)."""
    firsts: list[int] = []
    lasts: list[int] = []
    values: list[frozenset[str]] = []
    names: dict[str, str] = {}
    for line in _lines("scripts.txt"):
        span, value = line.split(";")
        if span.startswith("="):
            names[span[1:]] = value
            continue
        first, _, last = span.partition("..")
        firsts.append(int(first, 16))
        lasts.append(int(last or first, 16))
        values.append(frozenset(value.split()))
    return firsts, lasts, values, names


def _scripts(ch: str) -> frozenset[str] | None:
    """A character's scripts (Script_Extensions); None for the Common and Inherited
    scripts, which go with any."""
    firsts, lasts, values, _ = _script_table()
    cp = ord(ch)
    i = bisect.bisect_right(firsts, cp) - 1
    return values[i] if i >= 0 and cp <= lasts[i] else None


def _script_names() -> dict[str, str]:
    return _script_table()[3]


@cache
def _reserved_keys() -> frozenset[str]:
    return frozenset(name_key(unicodedata.normalize("NFKC", name)) for name in RESERVED)
