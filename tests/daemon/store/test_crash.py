"""SIGKILL during ingestion loses nothing acknowledged (the long soak is
bench/crash_soak.py)."""

from __future__ import annotations

import pytest

from fairgrid.daemon.testing import check, run

pytestmark = pytest.mark.slow


def test_sigkill_while_webhooks_arrive_loses_nothing(tmp_path):
    out, db = run(tmp_path, submissions=300, cycles=4, senders=4, seed=1)
    report = check(db, out, 300)
    assert report["kills"] == 4, report
    assert report["acked"] == 300, report          # every sender eventually got a 2xx
    assert report["lost"] == 0 and report["duplicated"] == 0, report
    assert report["stored"] == 300, report
    assert report["partial"] == 0 and report["orphan_moves"] == 0, report
    assert report["duplicate_keys"] == 0, report
    assert report["refused"] > 0, report           # the kills really interrupted senders


def test_sigkill_during_puzzle_analysis_leaves_it_pending_and_a_restart_finishes_it(tmp_path):
    import json
    import signal
    import time
    import urllib.request

    from ...fixtures import SA_HARD
    from fairgrid.daemon.testing import free_port, start, write_config
    from ..helpers import count

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    db, cfg = tmp_path / "a.duckdb", tmp_path / "a.toml"
    write_config(cfg, port, db)
    slow = cfg.read_text().replace("order_budget_s = 1.0", "order_budget_s = 600.0")
    cfg.write_text(slow)
    proc = start(cfg, base)
    req = urllib.request.Request(base + "/v1/puzzles", method="POST",
                                 data=json.dumps({"id": "hard", "givens": SA_HARD}).encode(),
                                 headers={"Authorization": "Bearer adm",
                                          "Content-Type": "application/json"})
    assert urllib.request.urlopen(req, timeout=30).status == 201
    time.sleep(2)  # the SA runs of a 600 s budget are under way
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert count(str(db), "SELECT count(*) FROM puzzles WHERE status = 'pending'") == 1
    cfg.write_text(slow.replace("order_budget_s = 600.0", "order_budget_s = 1.0"))
    proc = start(cfg, base)
    try:
        deadline = time.monotonic() + 120
        status = "pending"
        while status == "pending" and time.monotonic() < deadline:
            time.sleep(0.5)
            with urllib.request.urlopen(urllib.request.Request(
                    base + "/v1/puzzles/hard", headers={"Authorization": "Bearer org"}),
                    timeout=30) as resp:
                status = json.loads(resp.read())["status"]
        assert status == "ready"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
