"""The single writer's group commit: when it waits for company and when it does not."""

from __future__ import annotations

import threading
import time

import pytest

from fairgrid.daemon.store import Store, StoreError

from ..helpers import NEVER, query, record, solves


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
    # a window far longer than any test waits: whatever is written came without it
    batches = []
    store = Store(str(tmp_path / "w.duckdb"), group_commit_ms=600_000, max_batch=2,
                  on_batch=batches.append)
    try:
        # idle: the first submission waits for company, and is written with it
        first = store.writer.submit(record("a", "h-a"))
        second = store.writer.submit(record("b", "h-b"))
        assert [f.result(30).outcome for f in (first, second)] == ["accepted"] * 2
        assert batches == [2]
    finally:
        store.close()
    store = Store(str(tmp_path / "w.duckdb"), group_commit_ms=600_000, on_batch=batches.append)
    try:
        # busy: submissions queued behind other work were gathered by it; they are
        # written as soon as the writer is free, in one batch, without waiting the window
        _, release = _blocking_call(store)
        futures = [store.writer.submit(record(s, f"h-{s}")) for s in "cde"]
        _until(lambda: store.writer.depth() == 3)
        release.set()
        assert [f.result(30).outcome for f in futures] == ["accepted"] * 3
        assert batches == [2, 3]
        assert query(store, "SELECT count(*) FROM submissions") == [(5,)]
    finally:
        store.close()


def test_idle_seconds_grow_while_the_writer_waits_for_work_only(tmp_path):
    now = [0.0]
    store = Store(str(tmp_path / "w.duckdb"), clock=lambda: now[0])

    def idle_for(seconds: float) -> float:
        before = store.writer.idle_seconds()
        now[0] += seconds
        return store.writer.idle_seconds() - before

    try:
        _until(lambda: idle_for(1.0) == 1.0)  # the writer thread waits for work
        assert idle_for(2.5) == 2.5
        _, release = _blocking_call(store)  # busy: no idle time accrues
        assert idle_for(5.0) == 0.0
        release.set()
    finally:
        store.close()


def _until(check, timeout: float = 30.0) -> None:
    """Poll ``check()`` until it is true (a thread's state, not a wall-clock window)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


# -- moves are stored behind the acknowledging transaction ------------------------------


def _moves_table(con) -> dict:
    rows = con.execute("SELECT s.submission_id, list(m.t_ms ORDER BY m.seq), "
                       "list(m.cell ORDER BY m.seq), list(m.digit ORDER BY m.seq), "
                       "list(m.note ORDER BY m.seq), list(m.seq ORDER BY m.seq) "
                       "FROM moves m JOIN submissions s USING (sub_key) "
                       "GROUP BY s.submission_id").fetchall()
    return {sid: rest for sid, *rest in rows}


def _expected(solves) -> dict:
    return {r.submission_id: [r.t_ms.tolist(), r.cell.tolist(), r.digit.tolist(),
                              r.note.tolist(), list(range(r.t_ms.size))] for _raw, r in solves}


def test_acknowledged_moves_are_stored_behind_and_every_reader_sees_them(tmp_path):
    made = solves(4)
    store = Store(str(tmp_path / "m.duckdb"), moves_idle_s=NEVER, moves_max_age_s=NEVER)
    try:
        results = [store.writer.submit(r) for _raw, r in made]
        assert [f.result(30).outcome for f in results] == ["accepted"] * 4
        # acknowledged with its raw body; its moves rows are not written yet...
        cur = store._con.cursor()
        assert cur.execute("SELECT count(*) FROM submissions").fetchone()[0] == 4
        assert cur.execute("SELECT count(*) FROM moves").fetchone()[0] == 0
        assert store.writer.moves_pending()
        # ...but a writer call runs after they are, and so does any read of the table
        n = sum(r.t_ms.size for _raw, r in made)
        counted = store.writer.call(
            lambda con: con.execute("SELECT count(*) FROM moves").fetchone()[0])
        assert counted.result(30) == n
        assert not store.writer.moves_pending()
        assert store.writer.submit(solves(5)[4][1]).result(30).outcome == "accepted"
        assert store.writer.moves_pending()
        assert query(store, "SELECT count(*) FROM moves", needs_moves=True)[0][0] > n  # waited for them
        assert not store.writer.moves_pending()
        assert _moves_table(cur) == _expected(solves(5))
        cur.close()
    finally:
        store.close()


def test_an_idle_writer_stores_pending_moves_by_itself(tmp_path):
    store = Store(str(tmp_path / "m.duckdb"), moves_idle_s=0.05, moves_max_age_s=NEVER)
    try:
        assert store.writer.submit(solves(1)[0][1]).result(30).outcome == "accepted"
        deadline = time.monotonic() + 10
        while store.writer.moves_pending() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not store.writer.moves_pending()
        cur = store._con.cursor()
        assert cur.execute("SELECT count(*) FROM moves").fetchone()[0] > 0
        assert cur.execute("SELECT through FROM moves_through").fetchall() == [(1,)]
        cur.close()
    finally:
        store.close()


CRASH = r'''
import json, os, sys
from tests.daemon.helpers import NEVER, solves
from fairgrid.daemon.store import Store
store = Store(sys.argv[1], moves_idle_s=NEVER, moves_max_age_s=NEVER)
futures = [store.writer.submit(r) for _raw, r in solves(int(sys.argv[2]))]
print(json.dumps([f.result(30).outcome for f in futures]), flush=True)
os._exit(0)  # dies like a SIGKILL would find it: acknowledged, moves not yet stored
'''


def test_moves_acknowledged_before_a_crash_are_re_derived_at_the_next_start(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    from fairgrid.daemon.ingest import moves_of
    from fairgrid.daemon.store import connect

    path = str(tmp_path / "crash.duckdb")
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, "-c", CRASH, path, "6"], cwd=root, check=True,
                         capture_output=True, text=True, timeout=120).stdout
    assert json.loads(out) == ["accepted"] * 6
    with pytest.raises(StoreError, match="fairgrid serve"):  # no parser: refused
        connect(path)
    con = connect(path, moves_of=moves_of)  # the next start
    try:
        assert _moves_table(con) == _expected(solves(6))
        assert con.execute("SELECT through FROM moves_through").fetchall() == [(6,)]
    finally:
        con.close()
    con = connect(path, moves_of=moves_of)  # and once stored, never again
    try:
        assert con.execute("SELECT count(*) FROM moves").fetchone()[0] == sum(
            r.t_ms.size for _raw, r in solves(6))
    finally:
        con.close()


def test_duckdb_runs_on_the_threads_setting_and_a_job_gets_every_core(tmp_path):
    import duckdb

    default = duckdb.connect().execute("SELECT current_setting('threads')").fetchone()[0]
    store = Store(str(tmp_path / "t.duckdb"), threads=1)
    try:
        def threads():
            return query(store, "SELECT current_setting('threads')")[0][0]

        assert threads() == 1
        with store.all_cores():
            assert threads() == default
            # ingestion goes on meanwhile
            assert store.writer.submit(record("a", "h-a")).result(30).outcome == "accepted"
        assert threads() == 1
        try:
            with store.all_cores():
                raise RuntimeError("a failed job")
        except RuntimeError:
            pass
        assert threads() == 1
    finally:
        store.close()
    store = Store(str(tmp_path / "t.duckdb"), threads=0)  # 0: DuckDB's default throughout
    try:
        assert query(store, "SELECT current_setting('threads')")[0][0] == default
        with store.all_cores():
            assert query(store, "SELECT current_setting('threads')")[0][0] == default
    finally:
        store.close()


def test_a_resent_solve_is_a_duplicate_after_retention_dropped_its_moves(tmp_path):
    """A portal re-sends a solve it already delivered (same webhook-id and body, after
    the dedupe window, as a relay that "keeps the solve to send later" does). Once
    retention has dropped the moves from the stored raw body, the identical resend was
    answered ``conflict`` (409: "a new solve needs a new id") instead of ``duplicate``.
    Another solve under the id is still a conflict."""
    import dataclasses
    from datetime import datetime, timedelta, timezone

    from fairgrid.daemon.ingest import moves_of
    from fairgrid.daemon.store.repository import lifecycle

    (raw, rec), = solves(1)
    path = str(tmp_path / "fg.duckdb")
    store = Store(path, moves_of=moves_of, dedupe_days=0)
    try:
        assert store.writer.submit(rec).result(30).outcome == "accepted"
        store.writer.sync().result(30)
        old = datetime.now(timezone.utc) - timedelta(days=30)

        def age(con):
            con.execute("UPDATE submissions SET status = 'scored', committed_at = ?", [old])
        store.write(age).result(30)
        dropped = store.write(lifecycle.apply_retention,
                              datetime.now(timezone.utc) - timedelta(days=8)).result(30)
        assert dropped == 1
        again = store.writer.submit(rec).result(30).outcome
        other = dataclasses.replace(rec, raw=rec.raw.replace(rec.player_id, "someone-else"))
        assert other.raw != rec.raw
        assert store.writer.submit(other).result(30).outcome == "conflict"
    finally:
        store.close()
    assert again == "duplicate", again
