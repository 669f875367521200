"""The recorder's own tests (``node --test``) under pytest, so the one test command runs
them; and the package a portal installs."""

from __future__ import annotations

import json
import subprocess
import tarfile

from .node import PORTAL, ROOT, need_node, need_npm


def test_node_test_passes_for_the_recorder():
    node = need_node()
    res = subprocess.run([node, "--test", "portal/recorder"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    # node prints its tally; a run that found no test would pass too
    assert "# fail 0" in res.stdout and "# pass 0" not in res.stdout, res.stdout[-2000:]


def test_npm_pack_builds_a_package_with_both_builds_types_and_schema(tmp_path):
    npm = need_npm()
    res = subprocess.run([npm, "pack", "--json", "--pack-destination", str(tmp_path)],
                         cwd=PORTAL / "recorder", capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    [tgz] = tmp_path.glob("*.tgz")
    with tarfile.open(tgz) as tar:
        names = set(tar.getnames())
        shipped = json.load(tar.extractfile("package/dist/solve_log.schema.json"))
    assert {"package/dist/recorder.mjs", "package/dist/recorder.global.js",
            "package/recorder.d.ts", "package/package.json"} <= names
    assert shipped == json.loads((ROOT / "daemon/ingest/solve_log.schema.json").read_text())
