"""A node that cannot start says why in one line on standard error (no traceback) and exits
with a status of its own: 3 when it cannot listen, 4 when its Redis does not answer or
refuses it, 5 when the embedded server or the data folder fails (2, a bad setting, is in
``test_settings.py``; 6, a database that does not answer, and the embedded PostgreSQL's
5 are in ``test_embedded_postgres.py``). Each case runs the real ``spider-race serve``."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from spider_server.embedded import free_port
from spider_server.main import (
    EXIT_DATABASE,
    EXIT_EMBEDDED,
    EXIT_LISTEN,
    EXIT_REDIS,
    EXIT_SETTING,
    EXIT_STATUSES,
)

GUIDE = Path(__file__).parents[2] / "docs" / "server.md"
QUIET = ("--log-level", "warning")
"""For a node that gets as far as its database: what it logs at start (the schema migrated
in a fresh test database) is not the one line these tests read."""


def _serve(data_dir: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        # any free port unless ``args`` name one (the last --port wins)
        [sys.executable, "-m", "spider_race", "serve", "--data-dir", str(data_dir), "--port", "0"]
        + list(args),
        env={**os.environ, "SPIDER_RACE_SECRET": "s", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def _the_line(done: subprocess.CompletedProcess[str], status: int) -> str:
    """The one line on standard error, once the exit status is ``status``."""
    assert done.returncode == status, done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("spider-race serve: ")
    return lines[0]


def test_a_busy_port_is_one_line_and_exit_3(redis_server, pg_database, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = ("--redis", redis_server.url, "--database", pg_database.url, "--port", str(port))
        done = _serve(tmp_path, *args, *QUIET)
    line = _the_line(done, EXIT_LISTEN)
    assert f"cannot listen on 127.0.0.1:{port}: the port is in use" in line
    assert "--port" in line


def test_an_address_not_of_this_machine_is_exit_3(
    redis_server, pg_database, tmp_path: Path
) -> None:
    done = _serve(
        tmp_path, "--redis", redis_server.url, "--database", pg_database.url,
        "--host", "192.0.2.1", "--port", "0", *QUIET,
    )  # fmt: skip
    line = _the_line(done, EXIT_LISTEN)
    assert "cannot listen on 192.0.2.1:0: the address is not one of this machine's" in line
    assert "--host" in line


def test_redis_that_does_not_answer_is_one_line_and_exit_4(tmp_path: Path) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    line = _the_line(_serve(tmp_path, "--redis", url), EXIT_REDIS)
    assert line.startswith(f"spider-race serve: Redis at {url} does not answer (")
    assert "Connection refused" in line or "Connect call failed" in line
    assert line.endswith("in --redis or SPIDER_RACE_REDIS")
    # the same from the environment, and for a cluster whose nodes do not answer
    cluster = f"redis+cluster://127.0.0.1:{free_port()}"
    done = _serve(tmp_path, SPIDER_RACE_REDIS=cluster)
    assert f"Redis at {cluster} does not answer (" in _the_line(done, EXIT_REDIS)
    assert not (tmp_path / "redis").exists()  # no embedded server was started instead


def test_redis_that_refuses_the_node_is_exit_4_without_the_password(
    redis_server, tmp_path: Path
) -> None:
    from redis import Redis

    with Redis(port=redis_server.port) as r:
        r.config_set("requirepass", "the-right-one")
    url = f"redis://:hunter2@127.0.0.1:{redis_server.port}/0"
    line = _the_line(_serve(tmp_path, "--redis", url), EXIT_REDIS)
    assert f"Redis at redis://:***@127.0.0.1:{redis_server.port}/0 refuses the node (" in line
    assert "hunter2" not in line
    # no password at all
    url = f"redis://127.0.0.1:{redis_server.port}/0"
    done = _serve(tmp_path, "--redis", url)
    assert f"Redis at {url} refuses the node (" in _the_line(done, EXIT_REDIS)


def test_an_embedded_server_that_cannot_start_is_one_line_and_exit_5(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    line = _the_line(_serve(not_a_folder), EXIT_EMBEDDED)
    assert line.startswith("spider-race serve: the embedded server cannot start: ")
    assert f"cannot make the data folder {not_a_folder / 'redis'}: Not a directory" in line
    assert "--data-dir" in line


def test_a_secret_that_cannot_be_kept_is_exit_5(redis_server, tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    done = _serve(not_a_folder, "--redis", redis_server.url, SPIDER_RACE_SECRET="")
    line = _the_line(done, EXIT_EMBEDDED)
    assert f"cannot keep the token secret in {not_a_folder}: " in line
    assert "SPIDER_RACE_SECRET" in line


def test_the_statuses_are_distinct_and_documented() -> None:
    statuses = [0, 1, EXIT_SETTING, EXIT_LISTEN, EXIT_REDIS, EXIT_EMBEDDED, EXIT_DATABASE]
    assert sorted(EXIT_STATUSES) == statuses and len(set(statuses)) == len(statuses)
    rows = [line.strip() for line in GUIDE.read_text().splitlines() if "| `" in line]
    for status, meaning in EXIT_STATUSES.items():
        row = next((r for r in rows if r.startswith(f"| `{status}` |")), None)
        assert row is not None and meaning in row, (status, row)
