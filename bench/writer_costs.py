"""What one group commit costs: the writer's fixed cost per batch and its cost per solve.

Drives the daemon's real :class:`~fairgrid.daemon.store.Writer` on a fresh DuckDB file,
alone (no HTTP, no other threads), with batches of 1 to 64 webhooks of the load bench
(~60 moves each). Each batch is queued whole behind a held writer call, so the writer
takes it as one transaction, as it does under load. A least-squares line through the
median wall time per batch size gives the fixed cost of a transaction and the cost of
each solve in it; the fixed part is also printed in units of a trivial DuckDB statement
(``SELECT 1``) and of an empty transaction, measured in the same run.
Each measurement commits ``--batches`` transactions in a row and divides, so the held
call that lines them up adds a fraction of a transaction.

The moves of the acknowledged solves, which the writer stores behind those transactions
(daemon/store.py), are stored after each measurement and timed apart: a line through
those times gives the cost of one such insert and of each 1,000 move rows in it.

The load bench runs 64 connections, so under load about half of them wait in the batch
being written and half in the one being gathered: batches of ~30, where the fixed cost
is most of the writer's cost per solve.

    python bench/writer_costs.py [--repeats 9] [--batches 8] [--threads 1]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from _common import machine
from ingest_load import make_bodies

from fairgrid.daemon.store import Store, SubmissionRecord
from fairgrid.daemon.ingest import parse_body

SIZES = (1, 4, 16, 32, 64)


def records(n: int) -> list[SubmissionRecord]:
    """``n`` webhooks of the load bench, parsed as the webhook layer parses them."""
    out = []
    for i, (body, _headers) in enumerate(make_bodies(n, "wc")):
        ev = parse_body(body)
        out.append(SubmissionRecord.of(ev, ev.puzzle_id, f"hook-{i}",
                                       datetime.now(timezone.utc), True, body.decode()))
    return out


def batches(store: Store, solves: list[SubmissionRecord], size: int) -> float:
    """Wall seconds per transaction while the writer commits ``solves`` back to back,
    ``size`` to a transaction, as it does under load (a backlog: no gathering window)."""
    store.writer._max_batch = size  # a bench's liberty: the Store is built for it
    gate = threading.Event()
    held = store.writer.call(lambda con: gate.wait())  # the writer waits here...
    futures = [store.writer.submit(r) for r in solves]  # ...while the solves queue
    start = time.perf_counter()
    gate.set()
    held.result()
    outcomes = [f.result().outcome for f in futures]
    elapsed = time.perf_counter() - start
    if outcomes.count("accepted") != len(solves):
        raise SystemExit(f"unexpected outcomes: {set(outcomes)}")
    return elapsed / (len(solves) / size)


def moves_insert(store: Store) -> tuple[float, int]:
    """Wall seconds of storing the pending moves (what the writer does behind the
    acknowledging transactions), and how many rows that was."""
    rows = store.writer._pending_rows  # a bench's liberty, again
    start = time.perf_counter()
    store.writer.sync().result()
    return time.perf_counter() - start, rows


def statement(con, sql: str, repeats: int) -> float:
    """Median wall seconds of one ``sql`` on ``con``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        con.execute(sql)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=9, help="measurements per size")
    ap.add_argument("--batches", type=int, default=8, help="transactions per measurement")
    ap.add_argument("--threads", type=int, default=1,
                    help="DuckDB threads, as storage.threads (the daemon's default is 1; "
                         "0 is DuckDB's default, one per core)")
    args = ap.parse_args()
    print(f"# machine: {machine()}; DuckDB threads: {args.threads or 'one per core'}")
    pool = records(sum(SIZES) * args.batches * (args.repeats + 1))
    with tempfile.TemporaryDirectory(prefix="fairgrid-writer-") as tmp:
        # no gathering window: the batch is queued whole before the writer takes it; the
        # pending moves are stored when this script asks, and timed apart
        store = Store(str(Path(tmp) / "w.duckdb"), group_commit_ms=0, moves_idle_s=3600,
                      moves_max_age_s=3600, threads=args.threads)
        try:
            walls = {size: [] for size in SIZES}
            inserts = []
            for repeat in range(args.repeats + 1):  # sizes interleaved: drift hits all alike
                for size in SIZES:
                    n = size * args.batches
                    wall = batches(store, pool[:n], size)
                    del pool[:n]
                    moves = moves_insert(store)
                    if repeat:  # the first round warms up (first statements, first blocks)
                        walls[size].append(wall)
                        inserts.append(moves)
            cur = store._con.cursor()
            select1 = statement(cur, "SELECT 1", 200)
            empty = statement(cur, "BEGIN TRANSACTION; COMMIT", 200)
            cur.close()
        finally:
            store.close()
    sizes = np.array(SIZES, dtype=float)
    medians = np.array([np.median(walls[s]) for s in SIZES])
    per_solve, fixed = np.polyfit(sizes, medians, 1)
    print(f"{'batch':>6} {'ms per batch':>13} {'us per solve':>13}")
    for size, wall in zip(SIZES, medians):
        print(f"{size:>6} {wall * 1e3:>13.2f} {wall / size * 1e6:>13.0f}")
    print(f"fit: {fixed * 1e3:.2f} ms per transaction + {per_solve * 1e6:.0f} us per solve "
          f"(~60 moves)")
    print(f"reference, same run: SELECT 1 {select1 * 1e3:.3f} ms, an empty transaction "
          f"{empty * 1e3:.3f} ms; the fixed cost is {fixed / select1:.0f} x SELECT 1")
    seconds, rows = (np.array(v, dtype=float) for v in zip(*inserts))
    per_row, insert_fixed = np.polyfit(rows, seconds, 1)
    print(f"the moves, stored behind: {insert_fixed * 1e3:.2f} ms per insert + "
          f"{per_row * 1e6:.2f} ms per 1,000 rows ({rows.min():,.0f}-{rows.max():,.0f} rows "
          "an insert here)")
    at32 = fixed + 32 * per_solve
    print(f"at 32 solves a batch (64 connections, half of them being written): "
          f"{at32 / 32 * 1e6:.0f} us per solve, {fixed / at32:.0%} of it fixed; one writer "
          f"alone commits at most {32 / at32:.0f} solves/s")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
