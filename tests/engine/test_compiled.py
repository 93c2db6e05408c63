"""The compiled engine (mypyc, engine/setup.py) and the pure-Python engine give the same
results: on fresh deals of every variant, the same verdicts, lines and position counts.

The engine this environment imports is the compiled one (``make`` builds it in place);
the pure one is a copy of the same sources without the extensions, run in a child
process with ``SPIDER_ENGINE_PURE=1``. A missing or stale compiled module fails these
tests. Only where the environment was built pure on purpose (``SPIDER_ENGINE_PURE=1 make
test``, which sets the variable for the tests too) or on a machine without a C compiler
(the build then falls back to the pure engine and says so) is there nothing compiled to
compare, and they skip, saying so.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from importlib import import_module
from pathlib import Path

import pytest

from spider_engine.variants import variant_ids

ENGINE = Path(__file__).resolve().parents[2] / "engine"
_LISTED = re.search(r"COMPILED = \[(.*?)\]", (ENGINE / "setup.py").read_text())
COMPILED = re.findall(r'"(\w+)"', _LISTED[1] if _LISTED else "")
"""The modules engine/setup.py compiles."""
VARIANTS = [*variant_ids(), "wizard+weave", "spider4+keep"]
"""Every deck, and options that take the search's other paths (extra moves, keep)."""

SOLVE = """
import json, sys
import spider_engine.search
from spider_engine import Board
from spider_engine.solver import solve
deals, budget = json.loads(sys.argv[1]), int(sys.argv[2])
out = {"search": spider_engine.search.__file__, "results": []}
for variant, seed in deals:
    s = solve(Board.deal(variant, seed), budget=budget)
    out["results"].append([variant, seed, s.verdict, s.positions, s.texts()])
print(json.dumps(out))
"""

def _no_compiler() -> bool:
    """Whether the build finds no C compiler (engine/setup.py's own look-up): it then
    builds the pure engine, and says so."""
    named = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    words = shlex.split(named)
    return not words or shutil.which(words[0]) is None


pure_on_purpose = pytest.mark.skipif(
    os.environ.get("SPIDER_ENGINE_PURE", "") not in ("", "0") or _no_compiler(),
    reason="the pure engine on purpose (SPIDER_ENGINE_PURE) or for want of a C compiler:"
    " nothing compiled to compare",
)


@pure_on_purpose
def test_every_compiled_module_is_built_from_its_source_as_it_is() -> None:
    assert COMPILED and "search" in COMPILED
    for name in COMPILED:
        module = import_module(f"spider_engine.{name}")
        built = Path(module.__file__ or "")
        assert built.suffix == ".so", (
            f"spider_engine.{name} is not compiled ({built.name}): run make to compile the "
            "engine (a C compiler is needed), or SPIDER_ENGINE_PURE=1 make for the pure one"
        )
        source = ENGINE / "spider_engine" / f"{name}.py"
        assert built.stat().st_mtime >= source.stat().st_mtime, (
            f"{built.name} is older than {source.name}: run make to compile the engine again"
        )
    # the variants stay plain Python, for new decks to subclass
    assert Path(import_module("spider_engine.variants").__file__ or "").suffix == ".py"


def _solve(deals: list[tuple[str, str]], budget: int, *, pure: Path | None) -> list[object]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPIDER_ENGINE_PURE")}
    if pure is not None:
        env["PYTHONPATH"] = str(pure)
        env["SPIDER_ENGINE_PURE"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", SOLVE, json.dumps(deals), str(budget)],
        env=env, capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    # each child ran the engine it was meant to: the copy's sources, or the compiled build
    if pure is None:
        assert out["search"].endswith(".so"), out["search"]
    else:
        assert Path(out["search"]) == pure / "spider_engine" / "search.py", out["search"]
    return list(out["results"])


def _agree(tmp_path: Path, deals_per_variant: int, budget: int) -> None:
    pure = tmp_path / "pure"
    shutil.copytree(
        ENGINE / "spider_engine", pure / "spider_engine",
        ignore=shutil.ignore_patterns("*.so", "__pycache__"),
    )  # fmt: skip
    # fresh deals: seeds no other test or benchmark uses
    deals = [(v, f"agree-{n}") for v in VARIANTS for n in range(deals_per_variant)]
    compiled = _solve(deals, budget, pure=None)
    plain = _solve(deals, budget, pure=pure)
    assert len(compiled) == len(plain) == len(deals)
    for a, b in zip(compiled, plain, strict=True):
        assert a == b
    assert any(r[2] == "won" for r in compiled)  # lines compared, not only budgets run out


@pure_on_purpose
def test_compiled_and_pure_agree_on_fresh_deals(tmp_path: Path) -> None:
    _agree(tmp_path, 1, 2_000)


@pytest.mark.slow
@pure_on_purpose
def test_compiled_and_pure_agree_on_fifty_fresh_deals_per_variant(tmp_path: Path) -> None:
    _agree(tmp_path, 50, 2_000)
