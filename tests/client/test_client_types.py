"""The client library as bot authors type-check it: ``mypy --strict`` finds nothing, no
``type: ignore`` is needed, and every class is made of parts rather than stacked on the
project's own classes."""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import spider_client

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "client" / "spider_client"


def test_mypy_strict_finds_nothing_in_the_client(tmp_path: Path) -> None:
    env = dict(os.environ, MYPYPATH=str(ROOT / "engine"))  # the engine's sources, typed
    done = subprocess.run(
        [
            sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
            "--ignore-missing-imports", "--python-version=3.11", "--config-file=",
            f"--cache-dir={tmp_path / 'cache'}", str(PACKAGE),
        ],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout


def test_no_type_ignore_in_the_client() -> None:
    ignored = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "type: ignore" in line
    ]
    assert ignored == []


def client_classes() -> list[type]:
    classes = []
    for info in pkgutil.walk_packages(spider_client.__path__, "spider_client."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == info.name:
                classes.append(cls)
    return classes


def test_no_client_class_stacks_more_than_one_of_the_projects_own() -> None:
    classes = client_classes()
    assert {"Client", "Connection", "Outbox", "RaceMirror", "Affinity"} <= {
        c.__name__ for c in classes
    }
    stacked = {
        cls.__qualname__: [b.__qualname__ for b in cls.__mro__[1:] if is_own(b)]
        for cls in classes
        if not issubclass(cls, BaseException)  # the errors: a tree of kinds, caught by kind
    }
    assert {name: bases for name, bases in stacked.items() if len(bases) > 1} == {}


def is_own(cls: type) -> bool:
    """A class of the project's own."""
    return cls.__module__.split(".")[0] in {"spider_client", "spider_engine", "spider_server"}
