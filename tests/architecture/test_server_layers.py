"""The server's layers stay apart: Redis reached only from the store, the Redis links, the
hub's pub/sub listeners (one connection, or a cluster's shards) and the embedded server's start-up check (it asks the child process
it started for its version), websockets only from the transport, HTTP and the node. Import
circles are the architecture tests' (``test_import_graph.py``)."""

from __future__ import annotations

import ast
from pathlib import Path

import spider_server

ROOT = Path(spider_server.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path) -> set[str]:
    """Every module named by an import anywhere in the file (inside functions and
    ``if TYPE_CHECKING:`` blocks too)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def test_libraries_below_their_api_are_reached_from_their_layers_only() -> None:
    modules = _modules()
    users: dict[str, set[str]] = {"redis": set(), "websockets": set(), "asyncpg": set()}
    for name, path in modules.items():
        for imported in _imports(name, path):
            top = imported.split(".")[0]
            if top in users:
                users[top].add(name)
    assert users["redis"] <= {
        "spider_server.store.redisconn",
        "spider_server.fanout.hub",
        "spider_server.fanout.shards",
        "spider_server.embedded",
        *(m for m in modules if m.startswith("spider_server.store")),
    }
    # the database: the archive's store alone speaks to it (and the check at start)
    assert users["asyncpg"] == {"spider_server.store.archive"}
    assert users["websockets"] == {
        "spider_server.transport.reading",
        "spider_server.transport.writing",
        "spider_server.transport.http",
        "spider_server.node",
    }
