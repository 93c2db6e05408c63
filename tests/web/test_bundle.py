"""The page's msgpack codec is the pinned npm package, bundled reproducibly.

``web/package.json`` pins ``@msgpack/msgpack`` and ``esbuild`` to exact versions, and
``web/package-lock.json`` records each package's integrity. ``make web`` runs ``npm ci``
(the locked versions, checked against their integrity) and ``node build.mjs``, which writes
``server/spider_server/static/vendor/msgpack.js`` and the package's licence beside it.

- Always: the pins are exact and agree with the lock, and the committed bundle's banner
  names the locked version and integrity.
- When ``web/node_modules`` holds the locked packages (after ``npm ci``; ``.ci/run`` does
  it): the bundle is rebuilt into a temporary folder, with no network, and must equal the
  committed files byte for byte. Without them this part fails in CI and is skipped
  elsewhere: the banner check alone cannot prove the committed file is the build's output.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.web.web_helpers import ROOT, STATIC

WEB = ROOT / "web"
VENDOR = STATIC / "vendor"
PINNED = ("@msgpack/msgpack", "esbuild")


def _lock() -> dict:
    return json.loads((WEB / "package-lock.json").read_text())


def test_pins_are_exact_and_locked() -> None:
    package = json.loads((WEB / "package.json").read_text())
    lock = _lock()["packages"]
    for name in PINNED:
        version = package["devDependencies"][name]
        assert version[0].isdigit() and all(c.isdigit() or c == "." for c in version), version
        entry = lock[f"node_modules/{name}"]
        assert entry["version"] == version
        assert entry["integrity"].startswith("sha512-")


def test_the_committed_bundle_names_the_locked_package() -> None:
    msgpack = _lock()["packages"]["node_modules/@msgpack/msgpack"]
    head = (VENDOR / "msgpack.js").read_text().splitlines()[:2]
    assert head[0].startswith(f"// @msgpack/msgpack {msgpack['version']} (ISC license")
    assert head[1] == f"// integrity {msgpack['integrity']}"
    assert "ISC" in head[0] and (VENDOR / "msgpack-LICENSE.txt").read_text().startswith("Copyright")


def test_the_bundle_rebuilds_byte_for_byte(tmp_path: Path) -> None:
    modules = WEB / "node_modules"
    node = shutil.which("node")
    if (
        node is None
        or not (modules / "esbuild").is_dir()
        or not (modules / "@msgpack" / "msgpack").is_dir()
    ):
        reason = "rebuilding the bundle needs node and web/node_modules (run make web)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    lock = _lock()["packages"]
    for name in PINNED:
        installed = json.loads((modules / name / "package.json").read_text())["version"]
        assert installed == lock[f"node_modules/{name}"]["version"], f"{name}: run make web"
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["npm_config_offline"] = "true"
    subprocess.run([node, "build.mjs", str(tmp_path)], cwd=WEB, env=env, check=True, timeout=120)
    for name in ("msgpack.js", "msgpack-LICENSE.txt"):
        assert (tmp_path / name).read_bytes() == (VENDOR / name).read_bytes(), (
            f"static/vendor/{name} is not what make web builds: rebuild and commit it"
        )
