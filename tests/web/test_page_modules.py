"""The page's own JavaScript modules (``static/``, the vendored bundle excepted) stay small
and import one another without a circle; every import names a module that is there."""

from __future__ import annotations

import re

from tests.web.web_helpers import STATIC

IMPORT = re.compile(r'^(?:import|export)\b[^;]*?"(\.\.?/[^"]+)"', re.M)
MAX_LINES = 500


def _modules() -> dict[str, list[str]]:
    """Each module (its path in the static folder) and the modules it imports."""
    graph: dict[str, list[str]] = {}
    for path in sorted(STATIC.rglob("*.js")):
        name = path.relative_to(STATIC).as_posix()
        if name.startswith("vendor/"):
            continue
        graph[name] = [
            (path.parent / target).resolve().relative_to(STATIC.resolve()).as_posix()
            for target in IMPORT.findall(path.read_text())
        ]
    return graph


def _circle(graph: dict[str, list[str]]) -> list[str] | None:
    """An import circle of ``graph``, or None."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = "open"
        path.append(name)
        for target in graph.get(name, []):
            if state.get(target) == "open":
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[name] = "done"
        return None

    for name in graph:
        if name not in state and (found := visit(name)):
            return found
    return None


def test_the_page_is_small_modules_without_circles() -> None:
    graph = _modules()
    assert {"app.js", "mirror.js", "rules.js", "rules/board.js"} <= set(graph)
    for name, targets in graph.items():
        lines = len((STATIC / name).read_text().splitlines())
        assert lines <= MAX_LINES, f"{name} has {lines} lines"
        for target in targets:
            assert (STATIC / target).is_file(), f"{name} imports a missing {target}"
    assert _circle(graph) is None, _circle(graph)


def test_a_circle_is_found() -> None:
    assert _circle({"a.js": ["b.js"], "b.js": ["c.js"], "c.js": ["a.js"]}) == [
        "a.js",
        "b.js",
        "c.js",
        "a.js",
    ]
    assert _circle({"a.js": ["b.js", "c.js"], "b.js": ["c.js"], "c.js": []}) is None
