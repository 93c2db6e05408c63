"""No hand-written module of the four packages, nor of the page's scripts, is over 500
lines: a file that grows past that is split along its seams (a package where one file was).

Counted: every ``.py`` file of spider_engine, spider_client, spider_server and spider_race,
and every script of the page (``server/spider_server/static``, ``.js`` and ``.mjs``) except
the vendored bundles in ``static/vendor``.
"""

from __future__ import annotations

from pathlib import Path

from tests.architecture.sources import PACKAGES, ROOT, modules

MAX_LINES = 500

STATIC = PACKAGES["spider_server"] / "static"
VENDOR = STATIC / "vendor"


def hand_written() -> list[Path]:
    """The files this test measures."""
    files = [m.path for m in modules()]
    files += [
        path
        for path in sorted(STATIC.rglob("*"))
        if path.suffix in (".js", ".mjs") and not path.is_relative_to(VENDOR)
    ]
    return files


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_files_measured() -> None:
    names = {path.relative_to(ROOT).as_posix() for path in hand_written()}
    assert "engine/spider_engine/board.py" in names
    assert "src/spider_race/tui/app.py" in names
    assert "server/spider_server/static/rules.js" in names
    assert not any("/vendor/" in name for name in names)


def test_no_module_over_500_lines() -> None:
    over = sorted(
        (lines, path.relative_to(ROOT).as_posix())
        for path in hand_written()
        if (lines := _lines(path)) > MAX_LINES
    )
    assert not over, (
        f"modules over {MAX_LINES} lines (split each along its seams, a package where one"
        " file was):\n" + "\n".join(f"    {path}: {lines} lines" for lines, path in reversed(over))
    )
