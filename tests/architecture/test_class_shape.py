"""The server's classes are put together, not stacked: no class has more than one base
class of the server's own, no method is left to a subclass (``raise NotImplementedError``)
except in a :class:`typing.Protocol`'s body, and the session's :class:`Context` names
what each of its fields is (no ``Any``, no ``Callable[..., X]``).

The first two are read from the source with ``ast``: a base class's name is resolved by
the module's imports (``from .core import SessionBase``, ``from .. import race as rules``
then ``rules.Race``), through the modules that import it in turn, to the module that
defines it; bases from other packages (``Protocol``, ``Generic``, ``NamedTuple``, ``Enum``,
``Exception``, redis-py's connections) do not count.
"""

from __future__ import annotations

import ast
import collections.abc
import dataclasses
import importlib
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import spider_server

CONTEXT = ("spider_server.session", "Context")
"""The session's context (module, class): what every session of a node shares."""

PROTOCOLS = {"typing.Protocol", "typing_extensions.Protocol"}

ROOT = Path(spider_server.__file__).resolve().parent
TOP = ROOT.name


@dataclass
class Source:
    name: str
    path: Path
    tree: ast.Module
    is_package: bool

    @property
    def package(self) -> str:
        return self.name if self.is_package else self.name.rpartition(".")[0]


def _sources() -> dict[str, Source]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if "__pycache__" in parts:
            continue
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        name = ".".join(parts)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        out[name] = Source(name, path, tree, is_package)
    return out


class Names:
    """What the names of the server's modules stand for, from their imports and classes."""

    def __init__(self, sources: dict[str, Source]) -> None:
        self.sources = sources
        self.tables: dict[str, dict[str, tuple[str, str]]] = {}
        """Module -> name -> ("module", dotted name) | ("from", module, name) of an import,
        or ("class", module) of a class it defines."""
        for name, source in sources.items():
            self.tables[name] = self._table(source)

    def _table(self, source: Source) -> dict[str, tuple[str, str]]:
        table: dict[str, tuple[str, str]] = {}
        for node in ast.walk(source.tree):  # lazy and TYPE_CHECKING imports too
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        table[alias.asname] = ("module", alias.name)
                    else:
                        top = alias.name.split(".")[0]
                        table[top] = ("module", top)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = source.package.split(".")
                    base = base[: len(base) - node.level + 1]
                    origin = ".".join(base + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                for alias in node.names:
                    table[alias.asname or alias.name] = ("from:" + origin, alias.name)
            elif isinstance(node, ast.ClassDef):
                table.setdefault(node.name, ("class", source.name))
        return table

    def resolve(self, module: str, expr: ast.expr) -> str | None:
        """The dotted name of what ``expr`` (a base class) stands for in ``module``: a
        server class as ``spider_server.x.Class``, anything else as its import path
        (``typing.Protocol``); a name defined nowhere (a builtin) as itself."""
        if isinstance(expr, ast.Subscript):  # Generic[T], Protocol[T]
            return self.resolve(module, expr.value)
        if isinstance(expr, ast.Attribute):
            owner = self.resolve(module, expr.value)
            if owner is None:
                return None
            if owner in self.sources:
                return self.lookup(owner, expr.attr, set(), attribute=True)
            return f"{owner}.{expr.attr}"
        if isinstance(expr, ast.Name):
            return self.lookup(module, expr.id, set())
        return None

    def lookup(
        self, module: str, name: str, seen: set[tuple[str, str]], *, attribute: bool = False
    ) -> str:
        """What ``name`` stands for in ``module`` (``attribute``: as ``module.name``),
        followed through the server's modules."""
        if (module, name) in seen:
            return f"{module}.{name}"
        seen.add((module, name))
        entry = self.tables.get(module, {}).get(name)
        if entry is None:  # a builtin (Exception), or what the module makes otherwise
            return name if len(seen) == 1 and not attribute else f"{module}.{name}"
        kind, value = entry
        if kind == "class":
            return f"{value}.{name}"
        if kind == "module":
            return value
        origin = kind.removeprefix("from:")
        if f"{origin}.{value}" in self.sources:  # a submodule
            return f"{origin}.{value}"
        if origin in self.sources:
            return self.lookup(origin, value, seen, attribute=True)
        return f"{origin}.{value}"

    def is_server_class(self, dotted: str | None) -> bool:
        if dotted is None or not dotted.startswith(TOP + "."):
            return False
        module, _, name = dotted.rpartition(".")
        return self.tables.get(module, {}).get(name, ("", ""))[0] == "class"


def _classes(sources: dict[str, Source]) -> list[tuple[str, ast.ClassDef]]:
    return [
        (name, node)
        for name, source in sources.items()
        for node in ast.walk(source.tree)
        if isinstance(node, ast.ClassDef)
    ]


def test_no_class_has_two_server_bases() -> None:
    sources = _sources()
    names = Names(sources)
    wrong = []
    for module, node in _classes(sources):
        ours = [
            ast.unparse(base)
            for base in node.bases
            if names.is_server_class(names.resolve(module, base))
        ]
        if len(ours) > 1:
            where = sources[module].path.relative_to(ROOT.parent)
            wrong.append(f"{module}.{node.name} ({where}:{node.lineno}): {', '.join(ours)}")
    assert not wrong, (
        "classes with more than one base class of the server's (compose them instead):\n"
        + "\n".join(f"    {w}" for w in wrong)
    )


def _not_implemented(sources: dict[str, Source], names: Names) -> list[tuple[str, bool]]:
    """Every ``raise NotImplementedError`` of the server (where), and whether it is in the
    body of a Protocol class."""
    found = []
    for module, source in sources.items():
        parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(source.tree):
            for child in ast.iter_child_nodes(node):
                parents[child] = node
        for node in ast.walk(source.tree):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if names.resolve(module, exc) != "NotImplementedError":
                continue
            owner: ast.AST | None = parents.get(node)
            while owner is not None and not isinstance(owner, ast.ClassDef):
                owner = parents.get(owner)
            protocol = isinstance(owner, ast.ClassDef) and any(
                names.resolve(module, base) in PROTOCOLS for base in owner.bases
            )
            where = f"{source.path.relative_to(ROOT.parent)}:{node.lineno}"
            if isinstance(owner, ast.ClassDef):
                where += f" (in {owner.name})"
            found.append((where, protocol))
    return found


def test_not_implemented_only_in_protocols() -> None:
    sources = _sources()
    wrong = [where for where, protocol in _not_implemented(sources, Names(sources)) if not protocol]
    assert not wrong, (
        "raise NotImplementedError outside a Protocol's body (a method left to a subclass:"
        " pass what does it instead):\n" + "\n".join(f"    {w}" for w in wrong)
    )


def _loose(hint: Any) -> list[str]:
    """What is loose in a type: ``Any``, ``Callable[..., X]`` (anywhere inside it)."""
    if hint is Any:
        return ["Any"]
    found = []
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is collections.abc.Callable and args and args[0] is Ellipsis:
        found.append("Callable[..., X]")
    for arg in args:
        for item in arg if isinstance(arg, list) else [arg]:
            found += _loose(item)
    return found


def _loose_text(annotation: str) -> list[str]:
    """The same, read from an annotation's text (when it cannot be evaluated)."""
    found = []
    for node in ast.walk(ast.parse(annotation, mode="eval")):
        if isinstance(node, ast.Name | ast.Attribute):
            if (node.id if isinstance(node, ast.Name) else node.attr) == "Any":
                found.append("Any")
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("Callable"):
            first = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else None
            if isinstance(first, ast.Constant) and first.value is Ellipsis:
                found.append("Callable[..., X]")
    return found


def test_the_context_names_its_fields_types() -> None:
    module, name = CONTEXT
    context = getattr(importlib.import_module(module), name)
    fields = dataclasses.fields(context)
    try:
        hints = typing.get_type_hints(context)
    except (NameError, TypeError):  # a name imported for the type checker only: the text
        hints = None
    wrong = []
    for f in fields:
        if hints is not None:
            loose = _loose(hints[f.name])
        else:
            loose = _loose_text(f.type if isinstance(f.type, str) else repr(f.type))
        if loose:
            text = f.type if isinstance(f.type, str) else repr(f.type)
            wrong.append(f"{f.name}: {text}  ({', '.join(sorted(set(loose)))})")
    assert fields
    assert not wrong, f"{module}.{name}'s fields with loose types:\n" + "\n".join(
        f"    {w}" for w in wrong
    )


def test_the_reading_of_the_source() -> None:
    """Bases through aliases, submodules and re-exports; Protocol bodies; loose types."""
    text = {
        "spider_server.a": "class A: ...\nclass P(Protocol): ...\nfrom typing import Protocol\n",
        "spider_server.b": "from .a import A as AA\nfrom . import a\nimport typing\n"
        "class B(AA, a.P, typing.Generic[T]):\n    def f(self):\n"
        "        raise NotImplementedError\n"
        "class Q(typing.Protocol):\n    def f(self):\n        raise NotImplementedError()\n",
        "spider_server": "from .b import B\n",
        "spider_server.c": "from spider_server import B\nfrom .a import A\n"
        "class C(B, Exception):\n    pass\nclass D(A, B):\n    pass\n",
    }
    sources = {
        name: Source(name, ROOT.parent / f"{name}.py", ast.parse(t), name == "spider_server")
        for name, t in text.items()
    }
    names = Names(sources)

    def bases(module: str, cls: str) -> list[str | None]:
        node = next(n for m, n in _classes(sources) if m == module and n.name == cls)
        return [names.resolve(module, b) for b in node.bases]

    assert bases("spider_server.b", "B") == [
        "spider_server.a.A",
        "spider_server.a.P",
        "typing.Generic",
    ]
    assert bases("spider_server.c", "C") == ["spider_server.b.B", "Exception"]
    assert bases("spider_server.c", "D") == ["spider_server.a.A", "spider_server.b.B"]
    assert names.is_server_class("spider_server.a.P")
    assert not names.is_server_class("typing.Generic")
    assert [p for _, p in _not_implemented(sources, names)] == [False, True]
    assert _loose(typing.Callable[..., int]) == ["Callable[..., X]"]
    assert _loose(collections.abc.Callable[[int], collections.abc.Awaitable[Any]]) == ["Any"]
    assert _loose(int | None) == []
    assert _loose_text("Callable[..., Coroutine[Any, Any, None]]") == [
        "Callable[..., X]",
        "Any",
        "Any",
    ]
