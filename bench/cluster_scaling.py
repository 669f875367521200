"""Puzzle analysis on a Dask cluster against the local process pool, in one run.

    python bench/cluster_scaling.py [--puzzles 40] [--workers 1,2] [--runs 100]

A bank of 9x9 puzzles (qqwing intermediate, ../shared/data) gets the daemon's fill-order
prediction (100 SA runs each, the default budget): first on a local process pool with
as many processes as the largest cluster, then on a ``distributed.LocalCluster`` of
1, 2, ... single-threaded worker processes. Then the SA-hard test puzzle at a fixed step
cap (fixed quality), the same way. Every prediction is checked to be the same on every
backend. Prints wall times, the speed-up per added worker (target: at least 0.8 of linear
up to the cores available) and the cluster's overhead against the local pool with the
same number of processes (target: at most 5 % on the bank).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# Dask workers sample their own stacks every 10 ms by default; that costs a few % of a
# core. The deploy files turn it off as well (docs/scaling.md).
os.environ.setdefault("DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED", "False")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import PUZZLES, SHARED_DATA, machine  # noqa: E402


def bank(n: int) -> list[str]:
    path = SHARED_DATA / "qqwing_intermediate.txt"
    if not path.exists():
        raise SystemExit(f"needs {path} (../shared/data)")
    return [line.strip() for line in path.read_text().splitlines() if line.strip()][:n]


def predict_all(texts, executor, runs, max_steps=None, progress=None):
    """Predictions of every puzzle, four at a time so that the executor always has work
    (a bank registered at once; the daemon's lanes take one puzzle each, and a puzzle's
    runs alone fill a small cluster)."""
    from concurrent.futures import ThreadPoolExecutor

    from fairgrid.solvers import parse
    from fairgrid.solvers.fill_order import predict_fill_order

    def one(text):
        pred = predict_fill_order(parse(text), seed=0, runs=runs, max_steps=max_steps,
                                  executor=executor)
        if progress:
            progress()
        return pred.rank
    with ThreadPoolExecutor(4) as threads:
        return list(threads.map(one, texts))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--puzzles", type=int, default=40)
    ap.add_argument("--workers", default="1,2", help="cluster sizes, comma-separated")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--hard-steps", type=int, default=2_000_000,
                    help="step cap per run of the SA-hard puzzle (fixed quality)")
    args = ap.parse_args()
    sizes = [int(x) for x in args.workers.split(",")]
    texts = bank(args.puzzles)
    hard = [PUZZLES["sa-hard"]]
    print(machine())
    print(f"bank: {len(texts)} qqwing intermediate puzzles x {args.runs} SA runs; "
          f"SA-hard: {args.runs} runs capped at {args.hard_steps:,} steps")

    from distributed import Client, LocalCluster

    from fairgrid.daemon.work.pool import Lane, LanePool

    # warm up: compile or load the kernels in this process
    predict_all(texts[:1], None, 2)
    rows = []
    pool = LanePool(max(sizes))
    try:
        lane = pool.lane(Lane.SMALL_PUZZLES)
        predict_all(texts[:2], lane, 4)  # the pool's processes load the kernels
        t = time.perf_counter()
        ref_bank = predict_all(texts, lane, args.runs)
        local_bank = time.perf_counter() - t
        t = time.perf_counter()
        ref_hard = predict_all(hard, lane, args.runs, args.hard_steps)
        local_hard = time.perf_counter() - t
    finally:
        pool.shutdown()
    rows.append((f"local pool, {max(sizes)} processes", local_bank, local_hard))
    times = {}
    for n in sizes:
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                          dashboard_address=":0", silence_logs=40) as cluster, \
                Client(cluster) as client:
            executor = client.get_executor(pure=False)
            executor.workers = n
            predict_all(texts[:2], executor, 4)  # workers load the kernels
            t = time.perf_counter()
            got_bank = predict_all(texts, executor, args.runs)
            bank_s = time.perf_counter() - t
            t = time.perf_counter()
            got_hard = predict_all(hard, executor, args.runs, args.hard_steps)
            hard_s = time.perf_counter() - t
        same = all(np.array_equal(a, b) for a, b in zip(got_bank + got_hard,
                                                         ref_bank + ref_hard))
        if not same:
            raise SystemExit(f"cluster of {n}: predictions differ from the local pool's")
        times[n] = (bank_s, hard_s)
        rows.append((f"Dask LocalCluster, {n} worker{'s' if n > 1 else ''}", bank_s, hard_s))
    print(f"\n{'backend':<34} {'bank s':>8} {'SA-hard s':>10}")
    for name, b, h in rows:
        print(f"{name:<34} {b:8.2f} {h:10.2f}")
    base = min(sizes)
    print("\nspeed-up against the smallest cluster (per added worker, 1.0 = linear):")
    for n in sizes[1:]:
        for k, what in ((0, "bank"), (1, "SA-hard")):
            s = times[base][k] / times[n][k]
            print(f"  {n} workers, {what}: {s:.2f}x ({s / (n / base):.2f} of linear)")
    big = max(sizes)
    over = times[big][0] / local_bank - 1
    print(f"\ncluster overhead on the bank, {big} workers against {big} local processes: "
          f"{100 * over:+.1f} % (target at most +5 %); every prediction identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
