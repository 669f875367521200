"""Lewis (2007) §3.3: SA success rate and solution time against the proportion p of givens.

    python experiments/lewis_phase.py [--orders 3 4 5] [--instances 10 6 3] [--trials 4 3 2]

For p = 0, 0.05, ..., 1 it makes instances with the Lewis generator (a random solution,
each cell kept with probability p) and runs the Lewis SA schedule (α = 0.99) several
times on each, with a step cap standing in for the paper's time limit (5 s for order 3,
30 s for order 4 on a 2007 PC; here caps of 10 M and 30 M steps, ~0.5 s and ~1.5 s).
Success rate = share of runs solving within the cap; time = mean seconds of the
successful runs, as in the paper. Prints the table and draws docs/img/lewis_phase.png.
Scaled down from the paper's 20 instances × 20 trials so the script runs in minutes.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from _common import DOCS_IMG  # noqa: E402

CAPS = {3: 10_000_000, 4: 30_000_000, 5: 100_000_000}


def _trial(args):
    order, p, instance_seed, trial_seed, cap = args
    from fairgrid.solvers.annealing import solve_sa
    from fairgrid.solvers.generator import random_puzzle
    puzzle = random_puzzle(order, p, rng=np.random.default_rng(instance_seed))
    t0 = time.perf_counter()
    res = solve_sa(puzzle, rng=trial_seed, schedule="lewis", max_steps=cap)
    return order, p, res.solved, time.perf_counter() - t0, res.steps


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--orders", type=int, nargs="+", default=[3, 4])
    ap.add_argument("--instances", type=int, nargs="+", default=[10, 6])
    ap.add_argument("--trials", type=int, nargs="+", default=[4, 3])
    ap.add_argument("--workers", "--jobs", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from tqdm import tqdm

    ps = np.round(np.arange(0, 1.0001, 0.05), 2)
    tasks = []
    for k, order in enumerate(args.orders):
        n_inst = args.instances[min(k, len(args.instances) - 1)]
        n_trial = args.trials[min(k, len(args.trials) - 1)]
        for p in ps:
            for i in range(n_inst):
                for t in range(n_trial):
                    tasks.append((order, float(p), args.seed * 1_000_003 + order * 10_007
                                  + int(p * 100) * 101 + i, 1000 * i + t, CAPS[order]))
    results = []
    with ProcessPoolExecutor(args.workers) as pool:
        for r in tqdm(pool.map(_trial, tasks, chunksize=4), total=len(tasks),
                      desc="SA runs", unit="run"):
            results.append(r)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(args.orders), 1, figsize=(7, 3.2 * len(args.orders)),
                             squeeze=False)
    for k, order in enumerate(args.orders):
        print(f"\norder {order} (cap {CAPS[order]:,} steps)")
        print(f"{'p':>5} {'success %':>10} {'mean s':>8} {'mean steps':>12}")
        rates, times = [], []
        for p in ps:
            rs = [r for r in results if r[0] == order and r[1] == float(p)]
            ok = [r for r in rs if r[2]]
            rate = 100 * len(ok) / len(rs)
            t = np.mean([r[3] for r in ok]) if ok else float("nan")
            st = np.mean([r[4] for r in ok]) if ok else float("nan")
            rates.append(rate)
            times.append(t)
            print(f"{p:5.2f} {rate:10.0f} {t:8.3f} {st:12,.0f}")
        ax = axes[k, 0]
        ax.plot(ps, rates, "o-", color="tab:blue", label="success rate (%)")
        ax.set_ylim(-5, 105)
        ax.set_ylabel("success rate (%)")
        ax2 = ax.twinx()
        ax2.plot(ps, times, "s--", color="tab:red", label="mean time of successes (s)")
        ax2.set_ylabel("time (s)", color="tab:red")
        ax.set_title(f"order {order}: Lewis SA, α = 0.99, cap {CAPS[order]:,} steps")
        ax.set_xlabel("proportion of givens p")
    fig.tight_layout()
    DOCS_IMG.mkdir(parents=True, exist_ok=True)
    fig.savefig(DOCS_IMG / "lewis_phase.png", dpi=100)
    print("\nwrote docs/img/lewis_phase.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
