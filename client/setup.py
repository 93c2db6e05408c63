"""The client's dependencies: the engine of this very version (read from VERSION, the
repository's one version file), websockets and msgpack.

The floors are the versions of the workspace's lock (``requirements.lock``), which is what
the tests run; websockets has an upper bound because the client reaches under its public
API (see ``tests/packaging/test_lock.py``).
"""

from pathlib import Path

from setuptools import setup

VERSION = (Path(__file__).parent / "VERSION").read_text().strip()

setup(
    install_requires=[
        f"spider-race-engine=={VERSION}",
        "websockets>=17.4,<18",
        "msgpack>=1.2.4",
    ],
)
