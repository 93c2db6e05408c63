"""The engine's build: its hot modules compiled with mypyc into C extensions, unless
``SPIDER_ENGINE_PURE=1`` asks for the pure-Python build (the same modules as plain Python,
with the same results, in about twice the time).

The compiled modules are the engine's own machinery: the board, its legal moves and
positions, moves, cards and the solver with its search. The variants (``variants.py`` and
the decks) stay plain Python, so that a new deck subclasses them and overrides their hooks
as before; the compiled code calls those hooks like any Python code does.

Without a C compiler (``$CC``, else the one Python was built with, else ``cc``) the build
says so on standard error and builds the pure-Python engine.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import sysconfig

from setuptools import setup

COMPILED = ["board", "cards", "legal", "moves", "position", "search", "solver"]
"""The modules of ``spider_engine`` that the compiled build turns into C extensions."""

PURE = "SPIDER_ENGINE_PURE"
"""The environment variable that asks for the pure-Python build (any value but 0)."""


def _compiler() -> str | None:
    """The C compiler the build would call, when it is on the path."""
    named = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    words = shlex.split(named)
    return shutil.which(words[0]) if words else None


def _extensions() -> list[object]:
    if os.environ.get(PURE, "") not in ("", "0"):
        return []
    if _compiler() is None:
        print(
            "spider-race-engine: no C compiler found (set CC or install gcc or clang): "
            f"building the pure-Python engine, as with {PURE}=1",
            file=sys.stderr,
        )
        return []
    from mypyc.build import mypycify

    paths = [f"spider_engine/{name}.py" for name in COMPILED]
    return list(mypycify(paths, opt_level="3", group_name="spider_engine"))


setup(ext_modules=_extensions())
