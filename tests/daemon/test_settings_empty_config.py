"""``fairgrid serve --config ""`` (``--config "$CONFIG"`` with the variable unset) is
refused with one line, exit 2: read as no config, it started a daemon on the embedded
default, a new empty database and a new demo portal, while the real portals got 401."""

from __future__ import annotations

import os
import subprocess
import time

from .helpers import CMD, free_port


def test_an_empty_config_option_is_a_usage_error_not_the_embedded_default(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRGRID_")}
    env["FAIRGRID_SERVER_PORT"] = str(free_port())
    err = tmp_path / "stderr.txt"
    work = tmp_path / "cwd"
    work.mkdir()
    with err.open("w") as fh:
        proc = subprocess.Popen([*CMD, "serve", "--config", ""], cwd=work, env=env,
                                stdout=subprocess.DEVNULL, stderr=fh, text=True)
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and "listening on" not in err.read_text():
            assert time.monotonic() < deadline, "neither refused nor listening in 60 s"
            time.sleep(0.1)
        started = proc.poll() is None
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    created = sorted(p.name for p in work.iterdir())
    assert not started, (f"serve --config '' started on the embedded default, making "
                         f"{created}: {err.read_text().splitlines()[:3]}")
    assert proc.returncode == 2 and "config" in err.read_text().strip().splitlines()[-1]
    assert created == []
