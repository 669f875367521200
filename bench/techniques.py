"""Rating speed: what the expected time needs, per daily puzzle on one core (target:
median <= 0.1 s), against every metric of ``fairgrid rate`` in the same run.

    python bench/techniques.py [--puzzles 400] [--full 20]

On a seeded sample of sudoku.org.uk daily puzzles, times per puzzle:

* the technique model alone (``solve_with_techniques``);
* the quick rating, ``rate(only=<families the shipped calibration reads>)``, what
  ``fairgrid rate --quick`` and the daemon's analysis run (the uniqueness check, 30
  human-model runs, the technique model);
* as the same-run reference, the full ``rate`` of every metric on the first ``--full``
  puzzles of the sample;

and prints medians, p90 and worst times by the site's level, and the ratio of the full
rating's median to the quick one's.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from _common import machine, org_uk_rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--puzzles", type=int, default=400)
    ap.add_argument("--full", type=int, default=20)
    args = ap.parse_args()
    from fairgrid.analytics.expected_time import load_default
    from fairgrid.solvers import parse
    from fairgrid.solvers.propagation import solution_of
    from fairgrid.solvers.rate import families_for, rate
    from fairgrid.solvers.techniques import solve_with_techniques

    only = families_for(load_default().metrics_needed)
    rows = org_uk_rows()
    pick = np.random.default_rng(0).choice(len(rows), args.puzzles, replace=False)
    rate(parse(rows[pick[0]]["puzzle"]), rng=0, only=only)  # load the numba caches
    tq, quick, full, levels = [], [], [], []
    for n, i in enumerate(pick):
        puzzle = parse(rows[i]["puzzle"])
        solution = solution_of(puzzle)
        t0 = time.perf_counter()
        solve_with_techniques(puzzle, solution)
        t1 = time.perf_counter()
        rate(puzzle, rng=1, only=only)
        t2 = time.perf_counter()
        tq.append(t1 - t0)
        quick.append(t2 - t1)
        levels.append(rows[i]["level"])
        if n < args.full:
            t3 = time.perf_counter()
            rate(puzzle, rng=1)
            full.append(time.perf_counter() - t3)
    tq, quick, full = (np.array(x) * 1000 for x in (tq, quick, full))
    levels = np.array(levels)
    print(f"{args.puzzles} sudoku.org.uk puzzles, one core, {machine()}")
    print(f"quick rating = families {', '.join(only)}\n")
    print(f"{'level':<11} {'n':>4} {'technique model ms':>22} {'quick rating ms':>22}")
    print(f"{'':<11} {'':>4} {'median':>8} {'p90':>6} {'max':>6} {'median':>8} {'p90':>6} "
          f"{'max':>6}")
    for lvl in ("Gentle", "Moderate", "Tough", "Diabolical", "all"):
        m = np.ones(levels.size, bool) if lvl == "all" else levels == lvl
        a, b = tq[m], quick[m]
        print(f"{lvl:<11} {m.sum():>4} {np.median(a):8.1f} {np.percentile(a, 90):6.1f} "
              f"{a.max():6.1f} {np.median(b):8.1f} {np.percentile(b, 90):6.1f} {b.max():6.1f}")
    print(f"\nquick rating median {np.median(quick):.1f} ms (target <= 100 ms); "
          f"{args.puzzles} puzzles in {quick.sum() / 1000:.1f} s on one core")
    print(f"reference, every metric (`fairgrid rate`), first {full.size} puzzles: median "
          f"{np.median(full):.0f} ms; ratio of medians {np.median(full) / np.median(quick):.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
