"""The WAL stays near ``storage.checkpoint_mb`` while solves are written, scored and read."""

from __future__ import annotations

import json
import os
import threading
import time

import numpy as np

from fairgrid.daemon.ingest import parse_body
from fairgrid.daemon.store import Store, SubmissionRecord
from fairgrid.daemon.store.connection import connect
from fairgrid.daemon.store.records import utc_now
from fairgrid.daemon.store.repository import ingest, organiser, scores

from ..helpers import solve_body

THRESHOLD_MB = 1
MB = 10**6  # DuckDB's "MB"
BOUND = 3 * THRESHOLD_MB * MB


def _wal(path) -> int:
    try:
        return os.stat(f"{path}.wal").st_size
    except FileNotFoundError:
        return 0


def _records(first: int, n: int) -> list[SubmissionRecord]:
    """Solves as the webhook stores them (49 moves, a ~3 KB raw body each)."""
    out = []
    for k in range(first, first + n):
        raw = json.dumps(solve_body(submission_id=f"s-{k}", player_id=f"p-{k % 40}"))
        ev = parse_body(raw.encode())
        out.append(SubmissionRecord.of(ev, ev.puzzle_id, f"h-{k}", ev.started_at, True,
                                       raw))
    return out


def _write(store: Store, first: int, n: int) -> list[int]:
    """Submit ``n`` solves and wait for their acknowledgement: their sub_keys."""
    futures = [store.writer.submit(r) for r in _records(first, n)]
    results = [f.result(60) for f in futures]
    assert [r.outcome for r in results] == ["accepted"] * n
    return [r.sub_key for r in results]


def _score(store: Store, first: int, keys: list[int]) -> None:
    """Write scores for solves ``first``.. (sub_keys ``keys``), every third flagged, as
    the scorer does."""
    n = len(keys)
    flagged = np.arange(n) % 3 == 0
    batch = {"sub_key": np.array(keys, dtype=np.int64),
             "portal": np.array(["demo"] * n, dtype=object),
             "submission_id": np.array([f"s-{first + i}" for i in range(n)], dtype=object),
             "anomaly": np.where(flagged, 5.0, 0.5), "p_value": np.where(flagged, 1e-6, 0.4),
             "flagged": flagged, "evidence": np.array(['{"signals": {}}'] * n, dtype=object),
             "reasons": np.array(['["too fast"]'] * n, dtype=object),
             "note": np.array(["raised by scoring: too fast"] * n, dtype=object),
             "run_id": np.array([None] * n, dtype=object)}
    store.write(scores.write_scores, batch, utc_now(), False).result(60)


def test_connect_leaves_no_transaction_open_that_keeps_duckdb_from_checkpointing(tmp_path):
    # DuckDB's automatic checkpoint alone (no writer thread): the writer's moves inserts,
    # which update moves_through, on a cursor of the connection connect() returns
    path = tmp_path / "c.duckdb"
    con = connect(str(path), checkpoint_mb=THRESHOLD_MB)
    try:
        cur = con.cursor()
        rows, written, peak = 20_000, 0, 0
        for k in range(40):
            moves = {"sub_key": np.full(rows, k + 1, dtype=np.int64),
                     "seq": np.arange(rows, dtype=np.int32),
                     "t_ms": np.arange(rows, dtype=np.int64) * 1000,
                     "cell": np.arange(rows, dtype=np.int16) % 81,
                     "digit": np.arange(rows, dtype=np.int16) % 9 + 1,
                     "note": np.zeros(rows, dtype=bool)}
            ingest.insert_moves(cur, moves, k + 1)
            written += sum(column.nbytes for column in moves.values())
            peak = max(peak, _wal(path))
        cur.close()
        assert written > 10 * THRESHOLD_MB * MB
        assert peak < BOUND, f"WAL reached {peak / MB:.1f} MB (threshold {THRESHOLD_MB} MB)"
    finally:
        con.close()


def test_the_wal_stays_bounded_while_solves_are_written_scored_and_read(tmp_path):
    path = tmp_path / "w.duckdb"
    store = Store(str(path), checkpoint_mb=THRESHOLD_MB, threads=1)
    stop, failures = threading.Event(), []
    keys: list[int] = []

    def reader():
        """The scorer's and an organiser's reads, back to back."""
        try:
            while not stop.is_set():
                if len(keys) >= 50:
                    recent = keys[-50:]
                    store.read(scores.submissions_to_score, recent)
                    store.read(scores.moves_of, recent)
                store.read(scores.due)
                store.read(organiser.flags, limit=50)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            failures.append(exc)

    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in readers:
        t.start()
    peak = 0
    try:
        for first in range(0, 2000, 50):
            keys += _write(store, first, 50)
            if first % 200 == 150:  # scores come in batches behind ingestion
                _score(store, first - 150, keys[-200:])
            peak = max(peak, _wal(path))
    finally:
        stop.set()
        for t in readers:
            t.join(60)
        store.close()
    assert not failures
    assert peak < BOUND, f"WAL reached {peak / MB:.1f} MB (threshold {THRESHOLD_MB} MB)"
    assert _wal(path) == 0  # a clean stop checkpoints what is left


def test_a_checkpoint_a_long_read_put_off_follows_once_it_ends(tmp_path):
    # a read holding its snapshot across the writer's updates (an export, say) keeps
    # DuckDB from checkpointing; once it ends, the idle writer checkpoints by itself,
    # with no further commit to set DuckDB's own checkpoint off
    path = tmp_path / "r.duckdb"
    store = Store(str(path), checkpoint_mb=THRESHOLD_MB, threads=1)
    reading, release = threading.Event(), threading.Event()
    seen: list = []

    def long_read(cur):
        cur.execute("SELECT sub_key FROM submissions ORDER BY sub_key")
        first = cur.fetchone()
        reading.set()
        release.wait(120)
        return [first] + cur.fetchall()

    reader = threading.Thread(target=lambda: seen.append(store.read(long_read)))
    try:
        before = _write(store, 0, 100)
        reader.start()
        assert reading.wait(30)
        for first in range(100, 1500, 50):
            keys = _write(store, first, 50)
            if first % 200 == 50:
                _score(store, first - 150, list(range(keys[-1] - 199, keys[-1] + 1)))
        store.writer.sync().result(60)
        release.set()
        reader.join(60)
        # the checkpoints the writer tried meanwhile left the reader's snapshot whole
        assert seen == [[(k,) for k in before]]
        deadline = time.monotonic() + 30
        while _wal(path) > THRESHOLD_MB * MB and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _wal(path) <= THRESHOLD_MB * MB
        # and the writer goes on as before
        assert len(_write(store, 1500, 50)) == 50
    finally:
        release.set()
        store.close()
