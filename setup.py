"""The ``spider-race`` command's dependencies: the engine, the client and the server of this
very version (read from VERSION, the repository's one version file)."""

from pathlib import Path

from setuptools import setup

VERSION = (Path(__file__).parent / "VERSION").read_text().strip()

setup(
    install_requires=[
        f"spider-race-engine=={VERSION}",
        f"spider-race-client=={VERSION}",
        f"spider-race-server=={VERSION}",
    ],
)
