"""The project's import packages and their modules, read from the source tree."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PACKAGES", "ROOT", "Module", "modules"]

ROOT = Path(__file__).resolve().parents[2]

PACKAGES = {
    "spider_engine": ROOT / "engine" / "spider_engine",
    "spider_client": ROOT / "client" / "spider_client",
    "spider_server": ROOT / "server" / "spider_server",
    "spider_race": ROOT / "src" / "spider_race",
}
"""Each import package of the project, and its folder."""


@dataclass(frozen=True)
class Module:
    """One Python module of the project's packages."""

    name: str
    """Its dotted name (``spider_engine.decks.wizard``; a package's ``__init__.py`` is the
    package: ``spider_engine.decks``)."""
    path: Path
    is_package: bool
    """Whether it is a package's ``__init__.py``."""

    @property
    def package(self) -> str:
        """The package its relative imports start from."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


def modules() -> Iterator[Module]:
    """Every ``.py`` file of the four packages, as a module, in path order."""
    for top, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if "__pycache__" in parts:
                continue
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            yield Module(".".join((top, *parts)), path, is_package)
