"""The import graph of every module of spider_engine, spider_client, spider_server and
spider_race, read from the source with ``ast``: no import circle, and dependencies only in
the direction of the README's layout (the engine depends on nothing; the client on the
engine; the server on the engine and the client; the ``spider-race`` command on all three).

Every import statement counts, wherever it stands: at module level, inside a function (a
lazy import) or under ``if TYPE_CHECKING:``. Relative imports are resolved against the
module's package; ``from pkg import name`` where ``pkg.name`` is a module is an edge to that
module, otherwise to ``pkg`` itself. An import is not an edge to the packages above the
module it names (``import a.b`` is an edge to ``a.b`` only), as import graph tools count.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tests.architecture.sources import PACKAGES, Module, modules

Graph = dict[str, dict[str, int]]
"""Module → the project's modules it imports → the line of the first such import."""


def _imported(module: Module, tree: ast.AST, known: set[str]) -> dict[str, int]:
    """The project's modules that ``module`` imports, with the line of the first import."""
    found: dict[str, int] = {}

    def add(name: str, line: int) -> None:
        if name in known and name != module.name:
            found.setdefault(name, line)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.package.split(".")
                if node.level > 1:
                    base = base[: -(node.level - 1)]
                assert base, f"{module.path}:{node.lineno}: relative import beyond the top"
                if node.module:
                    base.append(node.module)
                source = ".".join(base)
            else:
                assert node.module is not None
                source = node.module
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                add(submodule if submodule in known else source, node.lineno)
    return found


def import_graph() -> tuple[Graph, dict[str, Module]]:
    """The import graph of the project's modules, and the modules by name."""
    by_name = {m.name: m for m in modules()}
    known = set(by_name)
    graph: Graph = {}
    for name, module in by_name.items():
        tree = ast.parse(module.path.read_text(encoding="utf-8"), filename=str(module.path))
        graph[name] = _imported(module, tree, known)
    return graph, by_name


def import_groups(graph: Graph) -> list[list[str]]:
    """The groups of modules that import each other, directly or not (Tarjan's strongly
    connected components of more than one module), each sorted; empty when there is no
    circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:  # recursion depth: at most the number of modules
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(groups)


def circles(graph: Graph) -> list[list[str]]:
    """One circle (``[a, b, …, a]``) through each group of :func:`import_groups`."""
    return [_circle_in(graph, set(group)) for group in import_groups(graph)]


def _circle_in(graph: Graph, group: set[str]) -> list[str]:
    """A shortest circle through the first module of ``group`` (breadth first, inside it)."""
    start = min(group)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w not in group:
                    continue
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if w not in came_from:
                    came_from[w] = v
                    following.append(w)
        frontier = following
    raise AssertionError(f"no circle in {sorted(group)}")


def _where(name: str, by_name: dict[str, Module]) -> str:
    return str(by_name[name].path.relative_to(PACKAGES[name.split(".")[0]].parent))


def _describe(group: list[str], graph: Graph, by_name: dict[str, Module]) -> str:
    """A group of modules that import each other: a circle through it, and every import
    between its modules with its line."""
    lines = [" -> ".join(_circle_in(graph, set(group)))]
    for a in group:
        for b in sorted(graph[a]):
            if b in group:
                lines.append(f"    {a} imports {b} ({_where(a, by_name)}:{graph[a][b]})")
    return "\n".join(lines)


def test_no_import_circle() -> None:
    graph, by_name = import_graph()
    groups = import_groups(graph)
    assert not groups, "import circles (lazy and TYPE_CHECKING imports count):\n" + "\n".join(
        _describe(g, graph, by_name) for g in groups
    )


ALLOWED = {
    "spider_engine": {"spider_engine"},
    "spider_client": {"spider_engine", "spider_client"},
    "spider_server": {"spider_engine", "spider_client", "spider_server"},
    "spider_race": set(PACKAGES),
}
"""Which of the project's packages each package may import (the README's layout: each part
imports only the parts above it)."""


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_dependency_direction(package: str) -> None:
    graph, by_name = import_graph()
    wrong = [
        f"{name} imports {target} ({_where(name, by_name)}:{line})"
        for name, targets in sorted(graph.items())
        if name.split(".")[0] == package
        for target, line in sorted(targets.items())
        if target.split(".")[0] not in ALLOWED[package]
    ]
    allowed = ", ".join(sorted(ALLOWED[package]))
    assert not wrong, f"{package} may import only {allowed}:\n" + "\n".join(wrong)


def test_the_engine_needs_only_the_standard_library() -> None:
    """The engine is pure Python: the standard library only (no third-party dependency), and
    no asyncio."""
    wrong = []
    for module in modules():
        if not module.name.startswith("spider_engine"):
            continue
        tree = ast.parse(module.path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top == "spider_engine":
                    continue
                if top not in sys.stdlib_module_names or top == "asyncio":
                    wrong.append(f"{module.name} imports {name} (line {node.lineno})")
    assert not wrong, "the engine imports beyond the standard library:\n" + "\n".join(wrong)


def test_the_graph_sees_every_kind_of_import() -> None:
    """The graph counts lazy, TYPE_CHECKING, relative and submodule imports, and the circle
    finder names a circle made of them."""
    source = {
        "a": "from . import b\n",
        "b": "def f():\n    from .c import x\n",
        "c": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .sub.d import y\n",
        "sub.d": "from ..a import z\n",
        "e": "import pkg.c\n",
    }
    known = {"pkg", "pkg.sub", *(f"pkg.{n}" for n in source)}
    graph: Graph = {name: {} for name in known}
    for name, text in source.items():
        module = Module(f"pkg.{name}", Path(f"{name}.py"), is_package=False)
        graph[module.name] = _imported(module, ast.parse(text), known)
    assert graph["pkg.a"] == {"pkg.b": 1}
    assert graph["pkg.b"] == {"pkg.c": 2}
    assert graph["pkg.c"] == {"pkg.sub.d": 3}
    assert graph["pkg.sub.d"] == {"pkg.a": 1}
    assert graph["pkg.e"] == {"pkg.c": 1}
    assert circles(graph) == [["pkg.a", "pkg.b", "pkg.c", "pkg.sub.d", "pkg.a"]]
    graph["pkg.sub.d"] = {}
    assert circles(graph) == []
