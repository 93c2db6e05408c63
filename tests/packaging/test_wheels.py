"""The wheels work outside the project's editable environment, as a new user installs them.

A copy of the four distributions' sources (engine, client, server and the root project) is
built into wheels with ``pip wheel --no-deps`` (each in pip's isolated build environment,
from the package index), and the wheels are installed, not editable, into fresh virtual
environments, away from the source tree:

- one holds the four wheels and ``requirements.lock``, installed together with
  ``--require-hashes`` and their dependencies resolved (so a wheel that needs something the
  lock lacks fails); there ``spider-race deal myrmex 1`` prints the deal the source prints,
  and ``spider-race demo --headless`` runs a whole race of bots with its embedded Valkey;
- one holds only the engine and the client wheels and what they ask for (bot authors'
  install), and ``import spider_client`` works there;
- the engine's wheel is compiled (mypyc, engine/setup.py: C extensions, a platform tag);
  with ``SPIDER_ENGINE_PURE=1`` it is built pure (``py3-none-any``); each is installed alone
  and solves the same deals with the same verdicts, lines and position counts.

Nothing but the package index is reached; pip's cache keeps the locked wheels between runs.
"""

from __future__ import annotations

import email
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from tests.once import run_once

ROOT = Path(__file__).resolve().parents[2]
VERSION = (ROOT / "VERSION").read_text().strip()
DISTRIBUTIONS = {  # distribution name: (source folder in the copy, import name)
    "spider-race-engine": ("engine", "spider_engine"),
    "spider-race-client": ("client", "spider_client"),
    "spider-race-server": ("server", "spider_server"),
    "spider-race": (".", "spider_race"),
}
SOURCES = ["engine", "client", "server", "src", "pyproject.toml", "setup.py", "VERSION"]
SOURCES += ["LICENSE", "README.md"]
JUNK = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist", ".*cache", "*.so")


def _env() -> dict[str, str]:
    """The environment without this virtual environment's traces (nor a choice of build)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "PYTHONPATH", "SPIDER_ENGINE_PURE")
    }
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


BUILD_TIMEOUT = 1800.0
"""Seconds a wheel's build may take: compiling the engine took over 300 s beside two other
test runs and two busy programs on two cores."""


def _run(
    args: list[str | Path], *, cwd: Path, timeout: float = 300, env: dict[str, str] | None = None
) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env={**_env(), **(env or {})}, capture_output=True,
        text=True, timeout=timeout,
    )  # fmt: skip
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _pip(venv: Path, *args: str | Path, cwd: Path) -> str:
    """This interpreter's pip, installing into ``venv`` (made without a pip of its own)."""
    return _run([sys.executable, "-m", "pip", "--python", venv / "bin" / "python", *args], cwd=cwd)


def _venv(path: Path) -> Path:
    _run([sys.executable, "-m", "venv", "--without-pip", path], cwd=path.parent)
    return path


def _build_wheels(base: Path) -> dict[str, str]:
    """The four wheels and a pure engine's, built in ``base`` from a clean copy of the
    sources (no stale ``build/``): each distribution's name and its wheel's path."""
    started = time.monotonic()
    tree = base / "src"
    tree.mkdir()
    for name in SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tree / name, symlinks=True, ignore=JUNK)
        else:
            shutil.copy2(source, tree / name)
    out = base / "dist"
    folders = [f"./{folder}" for folder, _ in DISTRIBUTIONS.values()]
    # compiling the engine takes minutes on a busy machine: the bound is only against a hang
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", out, *folders]
    _run(build, cwd=tree, timeout=BUILD_TIMEOUT)
    built = {}
    for wheel in out.glob("*.whl"):
        with zipfile.ZipFile(wheel) as z:
            meta_name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
            built[email.message_from_bytes(z.read(meta_name))["Name"]] = str(wheel)
    assert sorted(built) == sorted(DISTRIBUTIONS)
    print(f"wheels built in {time.monotonic() - started:.1f} s")
    pure = base / "pure"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", pure, "./engine"],
         cwd=tree, env={"SPIDER_ENGINE_PURE": "1"}, timeout=BUILD_TIMEOUT)  # fmt: skip
    (built["pure engine"],) = map(str, pure.glob("*.whl"))
    return built


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The wheels, built once per test run (whichever worker asks first builds them)."""
    built = run_once(tmp_path_factory, "wheels", _build_wheels)
    return {name: Path(path) for name, path in built.items()}


def test_each_wheel_has_its_metadata_and_every_package(wheels: dict[str, Path]) -> None:
    for name, wheel in wheels.items():
        folder, package = DISTRIBUTIONS["spider-race-engine" if name == "pure engine" else name]
        with zipfile.ZipFile(wheel) as z:
            names = set(z.namelist())
            meta = email.message_from_bytes(
                z.read(next(n for n in names if n.endswith(".dist-info/METADATA")))
            )
        assert meta["Version"] == VERSION
        assert meta["License-Expression"] == "MIT"
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
        assert meta["Project-URL"] and str(meta.get_payload()).strip(), name  # URLs and a readme
        assert f"{package}/py.typed" in names
        source = ROOT / ("src" if folder == "." else folder) / package
        for module in source.rglob("*.py"):  # every module of every subpackage
            assert module.relative_to(source.parent).as_posix() in names, (name, module)
        pins = [r for r in meta.get_all("Requires-Dist") or [] if r.startswith("spider-race")]
        assert all(pin.endswith(f"=={VERSION}") for pin in pins), pins
    with zipfile.ZipFile(wheels["spider-race-server"]) as z:
        names = set(z.namelist())
    static = ROOT / "server" / "spider_server" / "static"
    for file in static.rglob("*"):  # the page's files, in subfolders too
        if file.is_file():
            assert file.relative_to(static.parent.parent).as_posix() in names


def _lock_with_wheels(wheels: dict[str, Path], names: list[str], folder: Path) -> Path:
    """A requirements file of the given wheels, each with its hash (``--require-hashes``)."""
    lines = []
    for name in names:
        digest = hashlib.sha256(wheels[name].read_bytes()).hexdigest()
        lines.append(f"{name} @ {wheels[name].as_uri()} --hash=sha256:{digest}")
    path = folder / "wheels.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def installed(wheels: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment holding the four wheels and ``requirements.lock``,
    installed together with ``--require-hashes``, once per test run."""

    def install(folder: Path) -> str:
        venv = _venv(folder / "venv")
        ours = _lock_with_wheels(wheels, list(DISTRIBUTIONS), folder)
        _pip(venv, "install", "-q", "--require-hashes", "-r", ROOT / "requirements.lock",
             "-r", ours, cwd=folder)  # fmt: skip
        return str(venv)

    return Path(run_once(tmp_path_factory, "installed", install))


def test_the_installed_wheels_deal(installed: Path, tmp_path: Path) -> None:
    frozen = _pip(installed, "freeze", cwd=tmp_path)
    assert "-e " not in frozen and str(ROOT) not in frozen  # nothing editable, nothing from here
    py = installed / "bin" / "python"
    where = _run([py, "-c", "import spider_engine.decks as d; print(d.__file__)"], cwd=tmp_path)
    assert Path(where.strip()).is_relative_to(installed)
    deal = _run([installed / "bin" / "spider-race", "deal", "myrmex", "1"], cwd=tmp_path)
    from_source = _run([sys.executable, "-m", "spider_race.cli", "deal", "myrmex", "1"], cwd=ROOT)
    assert deal == from_source and deal.startswith("myrmex ")


def test_the_installed_wheels_race(installed: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    demo = _run([installed / "bin" / "spider-race", "demo", "--headless", "--bots", "2",
                 "--seed", "1"], cwd=tmp_path, timeout=240)  # fmt: skip
    print(f"headless demo in {time.monotonic() - started:.1f} s")
    assert "server at ws://127.0.0.1:" in demo  # its own server, with the embedded Valkey
    assert "finished — seed '1' revealed" in demo
    results = demo.split("revealed", 1)[1]  # the ranking, one line a bot
    assert "Ada greedy" in results and "Brian random" in results


def test_engine_and_client_alone_import(wheels: dict[str, Path], tmp_path: Path) -> None:
    venv = _venv(tmp_path / "venv")
    constraints = tmp_path / "constraints.txt"  # the locked versions, without their hashes
    constraints.write_text(
        "".join(
            line.split()[0] + "\n"
            for line in (ROOT / "requirements.lock").read_text().splitlines()
            if "==" in line and not line.startswith(("#", " "))
        )
    )
    _pip(venv, "install", "-q", "-c", constraints, wheels["spider-race-engine"],
         wheels["spider-race-client"], cwd=tmp_path)  # fmt: skip
    installed = {
        line.split("==")[0].split(" @ ")[0].lower()
        for line in _pip(venv, "freeze", cwd=tmp_path).splitlines()
    }
    assert installed == {"spider-race-engine", "spider-race-client", "websockets", "msgpack"}
    code = (
        "import spider_client, spider_engine\n"
        "from spider_client import Client\n"
        "from spider_engine import Board\n"
        "print(Client.__name__, len(Board.deal('myrmex', '1').legal_moves.texts()) > 0)\n"
    )
    assert _run([venv / "bin" / "python", "-c", code], cwd=tmp_path).split() == ["Client", "True"]


SOLVE = """
import json, spider_engine.search
from spider_engine import Board
from spider_engine.solver import solve
results = []
for variant in ("spider1", "spider4", "myrmex", "wizard+weave", "sparrow", "starfish"):
    s = solve(Board.deal(variant, "wheel"), budget=2_000)
    results.append([variant, s.verdict, s.positions, s.texts()])
print(json.dumps([spider_engine.search.__file__, results]))
"""


def test_the_compiled_and_the_pure_engine_wheels_solve_alike(
    wheels: dict[str, Path], tmp_path: Path
) -> None:
    compiled, pure = wheels["spider-race-engine"], wheels["pure engine"]
    assert pure.name.endswith("-py3-none-any.whl")
    assert "-cp3" in compiled.name and "linux" in compiled.name
    with zipfile.ZipFile(compiled) as z:
        extensions = {n.split("/")[-1].split(".")[0] for n in z.namelist() if n.endswith(".so")}
    assert {"search", "solver", "board", "legal"} <= extensions
    with zipfile.ZipFile(pure) as z:
        assert not any(n.endswith(".so") for n in z.namelist())
    answers = []
    for kind, wheel in (("compiled", compiled), ("pure", pure)):
        venv = _venv(tmp_path / kind)
        _pip(venv, "install", "-q", "--no-deps", wheel, cwd=tmp_path)
        where, results = json.loads(_run([venv / "bin" / "python", "-c", SOLVE], cwd=tmp_path))
        assert Path(where).is_relative_to(venv)
        assert where.endswith(".py") == (kind == "pure"), where
        answers.append(results)
    assert answers[0] == answers[1]
    assert any(verdict == "won" for _, verdict, _, _ in answers[0])
