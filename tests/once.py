"""Work done once per test run, whichever test worker asks first.

pytest-xdist runs a worker per core, and a module or session fixture runs once in *each*
worker whose tests use it: an expensive one (the wheels, the pars of a dozen deals) would be
built as many times. :func:`run_once` builds it once per run: the first worker to ask takes
a lock file and builds, the others wait for that lock and read what it left. Without xdist
it is a plain cache in the run's temporary folder.

The time a test spends in :func:`run_once` (building, or waiting for another worker's
build) is the run's, not the test's: :func:`take_spent` hands it to the suite's 20-second
rule (``tests/conftest.py``), which leaves it out of the test's time and names what was
built apart.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

__all__ = ["run_once", "take_spent"]

_spent = 0.0
_built: list[tuple[str, float]] = []


def take_spent() -> tuple[float, list[tuple[str, float]]]:
    """Seconds spent in :func:`run_once` since the last call, and what this worker built
    then (name, seconds); both start again from nothing."""
    global _spent
    spent, built = _spent, list(_built)
    _spent = 0.0
    _built.clear()
    return spent, built


def run_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Any]
) -> Any:
    """``build(folder)``'s result (anything JSON holds), computed once per test run.

    ``folder`` is a fresh folder kept for the whole run, shared by the workers (files that
    ``build`` leaves there, named in its result, stay for every test). A build that raises
    leaves nothing: the next worker to ask builds again, and fails the same way."""
    global _spent
    started = time.monotonic()
    try:
        return _run_once(tmp_path_factory, name, build)
    finally:
        _spent += time.monotonic() - started


def _run_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Any]
) -> Any:
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # every worker's base folder is a folder of the run's
    folder = root / f"once-{name}"
    done = root / f"once-{name}.json"
    with open(root / f"once-{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if done.exists():
                return json.loads(done.read_text())
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            started = time.monotonic()
            value = build(folder)
            _built.append((name, time.monotonic() - started))
            done.write_text(json.dumps(value))
            return value
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
