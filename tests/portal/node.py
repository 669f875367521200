"""Node for the portal kit's tests: the one on PATH (Node 20 or newer). Outside CI a
machine without it skips with what to install; in CI (``CI`` set) it is a failure."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PORTAL = ROOT / "portal"


def need_node() -> str:
    node = shutil.which("node")
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout if node else ""
    if not version.startswith("v") or int(version[1:].split(".")[0]) < 20:
        msg = f"Node 20 or newer is needed for the portal kit (found {version.strip() or 'none'})"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return node


def need_npm() -> str:
    need_node()
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm comes with Node; it is missing")
    return npm
