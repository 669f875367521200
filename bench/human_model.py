"""The human-like model's speed: 30 runs per puzzle on one core (target: <= 50 ms typical).

    python bench/human_model.py [--puzzles 400] [--runs 30]

Times ``human_model`` on a seeded sample of sudoku.org.uk daily puzzles (the typical
puzzles of the target) and prints the median, p90 and worst time per puzzle, with the
same sample's backtracking uniqueness check timed alongside as a same-run reference.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from _common import org_uk_rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--puzzles", type=int, default=400)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    from fairgrid.solvers import parse
    from fairgrid.solvers.backtracking import unique_solution
    from fairgrid.solvers.propagation import human_model

    rows = org_uk_rows()
    pick = np.random.default_rng(0).choice(len(rows), args.puzzles, replace=False)
    first = parse(rows[pick[0]]["puzzle"])
    human_model(first, rng=0, runs=1)  # compile / load the numba caches
    model, ref = [], []
    for i in pick:
        puzzle = parse(rows[i]["puzzle"])
        t0 = time.perf_counter()
        solution = unique_solution(puzzle)
        t1 = time.perf_counter()
        human_model(puzzle, rng=1, runs=args.runs, solution=solution)
        t2 = time.perf_counter()
        ref.append(t1 - t0)
        model.append(t2 - t1)
    model, ref = np.array(model) * 1000, np.array(ref) * 1000
    print(f"{args.puzzles} sudoku.org.uk puzzles, {args.runs} runs each, one core")
    print(f"human model: median {np.median(model):.1f} ms, p90 {np.percentile(model, 90):.1f} ms,"
          f" worst {model.max():.0f} ms (target <= 50 ms for a typical puzzle)")
    print(f"reference, uniqueness check of the same puzzles: median {np.median(ref):.2f} ms;"
          f" ratio of medians {np.median(model) / np.median(ref):.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
