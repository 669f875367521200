"""The disk fills up under the daemon: 503 with Retry-After and a clear log line, no
partial rows, and full service again once space returns.

"Disk full" is a real write failure, not a mock: the daemon runs with a file-size limit
(RLIMIT_FSIZE, which CPython's ignored SIGXFSZ turns into EFBIG for every write past it),
so DuckDB's WAL cannot grow; raising the limit on the running process (prlimit) is the
space coming back.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import time

import pytest

from fairgrid.daemon.testing import CMD, free_port, start, write_config
from ..helpers import count, request, signed, solve_body

pytestmark = pytest.mark.slow


@pytest.mark.skipif(not hasattr(resource, "prlimit"), reason="needs Linux prlimit")
def test_disk_full_is_503_nothing_partial_and_recovers(tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    db = tmp_path / "full.duckdb"
    cfg = tmp_path / "full.toml"
    write_config(cfg, port, db)
    start(cfg, base).send_signal(signal.SIGTERM)  # create the file and its schema
    time.sleep(2)
    limit = os.path.getsize(db) + 150_000

    def cap():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    proc = subprocess.Popen([*CMD, "serve", "--config", str(cfg)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, preexec_fn=cap)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if request(base + "/healthz")[0] == 200:
                break
        except OSError:
            time.sleep(0.1)
    try:
        accepted, full = [], None
        for k in range(2000):
            raw, headers = signed(solve_body(submission_id=f"d-{k}"), msg_id=f"d-{k}")
            status, doc = request(base + "/v1/webhooks/solves", raw, headers)
            if status == 202:
                accepted.append(k)
                continue
            full = (k, status, doc)
            break
        assert full is not None, "the file-size limit was never reached"
        k, status, doc = full
        assert status == 503 and "storage unavailable" in doc["error"], full
        # more attempts keep failing cleanly while the disk stays full
        raw, headers = signed(solve_body(submission_id=f"d-{k}"), msg_id=f"d-{k}")
        assert request(base + "/v1/webhooks/solves", raw, headers)[0] == 503
        # space returns: the same submission is accepted, and so are new ones
        resource.prlimit(proc.pid, resource.RLIMIT_FSIZE,
                         (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        assert request(base + "/v1/webhooks/solves", raw, headers)[0] == 202
        raw, headers = signed(solve_body(submission_id="after"), msg_id="after")
        assert request(base + "/v1/webhooks/solves", raw, headers)[0] == 202
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert "storage error" in err and "Traceback" not in err.split("storage error")[0][-200:]
    # every acknowledged submission whole, the refused one stored once (after recovery)
    assert count(str(db), "SELECT count(*) FROM submissions") == len(accepted) + 2
    assert count(str(db), "SELECT count(*) FROM submissions s WHERE s.n_moves <> "
                 "(SELECT count(*) FROM moves m WHERE m.sub_key = s.sub_key)") == 0
