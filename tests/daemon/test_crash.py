"""SIGKILL during ingestion loses nothing acknowledged (issue 7; the long soak is
bench/crash_soak.py)."""

from __future__ import annotations

from .crash_harness import check, run


def test_sigkill_while_webhooks_arrive_loses_nothing(tmp_path):
    out, db = run(tmp_path, submissions=150, cycles=4, senders=4, seed=1,
                  min_gap=0.3, max_gap=1.0)
    report = check(db, out, 150)
    assert report["kills"] >= 3, report
    assert report["acked"] == 150, report          # every sender eventually got a 2xx
    assert report["lost"] == 0 and report["duplicated"] == 0, report
    assert report["stored"] == 150, report
    assert report["partial"] == 0 and report["orphan_moves"] == 0, report
    assert report["duplicate_keys"] == 0, report
    assert report["refused"] > 0, report           # the kills really interrupted senders
