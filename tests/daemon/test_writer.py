"""The single writer's group commit: when it waits for company and when it does not."""

from __future__ import annotations

import threading
import time

from fairgrid.daemon.store import Store

from .test_keyfilter import _record


def _blocking_call(store: Store) -> tuple[threading.Event, threading.Event]:
    """Hold the writer thread in a call until released: (started, release)."""
    started, release = threading.Event(), threading.Event()

    def hold(_con):
        started.set()
        release.wait(30)

    store.writer.call(hold)
    assert started.wait(30)
    return started, release


def test_an_idle_writer_waits_its_window_and_a_busy_one_writes_what_waits(tmp_path):
    window_s = 1.5
    store = Store(str(tmp_path / "w.duckdb"), group_commit_ms=window_s * 1000)
    try:
        # idle: the first submission waits up to the window for company
        start = time.monotonic()
        assert store.writer.submit(_record("a", "h-a")).result(30).outcome == "accepted"
        assert time.monotonic() - start >= window_s * 0.9

        # busy: submissions queued behind other work were gathered by it; they are
        # written as soon as the writer is free, without a second wait
        _, release = _blocking_call(store)
        futures = [store.writer.submit(_record(s, f"h-{s}")) for s in "bcd"]
        time.sleep(0.2)
        start = time.monotonic()
        release.set()
        assert [f.result(30).outcome for f in futures] == ["accepted"] * 3
        assert time.monotonic() - start < window_s / 2
        assert store.read("SELECT count(*) FROM submissions") == [(4,)]
    finally:
        store.close()


def test_idle_seconds_grow_while_the_writer_waits_for_work_only(tmp_path):
    store = Store(str(tmp_path / "w.duckdb"))
    try:
        time.sleep(0.2)
        before = store.writer.idle_seconds()
        time.sleep(0.3)
        idle = store.writer.idle_seconds() - before
        assert 0.25 <= idle <= 0.6

        _, release = _blocking_call(store)  # busy: no idle time accrues
        before = store.writer.idle_seconds()
        time.sleep(0.3)
        assert store.writer.idle_seconds() - before < 0.05
        release.set()
    finally:
        store.close()
