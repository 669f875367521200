"""The single writer's group commit: when it waits for company and when it does not."""

from __future__ import annotations

import threading
import time

import pytest

from fairgrid.daemon.store import Store, StoreError

from ..helpers import query
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
        assert query(store, "SELECT count(*) FROM submissions") == [(4,)]
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


# -- moves are stored behind the acknowledging transaction ------------------------------

NEVER = 3600.0  # seconds: the writer stores pending moves only when asked


def _solves(n: int) -> list[tuple[bytes, object]]:
    """(raw body, record) pairs as the webhook builds them, move logs of different lengths
    with pencil marks and erases, bodies written compactly and indented."""
    import json

    from fairgrid.daemon.store import SubmissionRecord
    from fairgrid.daemon.ingest import parse_body

    from ..helpers import solve_body, solve_moves

    out = []
    for k in range(n):
        moves = solve_moves()[: 10 + 7 * k]
        moves.insert(3, {"t_ms": moves[2]["t_ms"], "cell": 0, "digit": 5, "kind": "note"})
        moves.insert(5, {"t_ms": moves[4]["t_ms"], "cell": moves[4]["cell"], "digit": 0})
        raw = json.dumps(solve_body(submission_id=f"r-{k}", moves=moves),
                         indent=None if k % 2 else 1).encode()
        ev = parse_body(raw)
        out.append((raw, SubmissionRecord.of(ev, ev.puzzle_id, f"h-{k}", ev.started_at,
                                             False, raw.decode())))
    return out


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
    solves = _solves(4)
    store = Store(str(tmp_path / "m.duckdb"), moves_idle_s=NEVER, moves_max_age_s=NEVER)
    try:
        results = [store.writer.submit(r) for _raw, r in solves]
        assert [f.result(30).outcome for f in results] == ["accepted"] * 4
        # acknowledged with its raw body; its moves rows are not written yet...
        cur = store._con.cursor()
        assert cur.execute("SELECT count(*) FROM submissions").fetchone()[0] == 4
        assert cur.execute("SELECT count(*) FROM moves").fetchone()[0] == 0
        assert store.writer.moves_pending()
        # ...but a writer call runs after they are, and so does any read of the table
        n = sum(r.t_ms.size for _raw, r in solves)
        counted = store.writer.call(
            lambda con: con.execute("SELECT count(*) FROM moves").fetchone()[0])
        assert counted.result(30) == n
        assert not store.writer.moves_pending()
        assert store.writer.submit(_solves(5)[4][1]).result(30).outcome == "accepted"
        assert store.writer.moves_pending()
        assert query(store, "SELECT count(*) FROM moves", needs_moves=True)[0][0] > n  # waited for them
        assert not store.writer.moves_pending()
        assert _moves_table(cur) == _expected(_solves(5))
        cur.close()
    finally:
        store.close()


def test_an_idle_writer_stores_pending_moves_by_itself(tmp_path):
    store = Store(str(tmp_path / "m.duckdb"), moves_idle_s=0.05, moves_max_age_s=NEVER)
    try:
        assert store.writer.submit(_solves(1)[0][1]).result(30).outcome == "accepted"
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
from tests.daemon.store.test_writer import NEVER, _solves
from fairgrid.daemon.store import Store
store = Store(sys.argv[1], moves_idle_s=NEVER, moves_max_age_s=NEVER)
futures = [store.writer.submit(r) for _raw, r in _solves(int(sys.argv[2]))]
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
        assert _moves_table(con) == _expected(_solves(6))
        assert con.execute("SELECT through FROM moves_through").fetchall() == [(6,)]
    finally:
        con.close()
    con = connect(path, moves_of=moves_of)  # and once stored, never again
    try:
        assert con.execute("SELECT count(*) FROM moves").fetchone()[0] == sum(
            r.t_ms.size for _raw, r in _solves(6))
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
            assert store.writer.submit(_record("a", "h-a")).result(30).outcome == "accepted"
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
