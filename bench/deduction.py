"""Deduction trace speed: the time to trace every placement of a solve
(``fairgrid.solvers.deduction.trace_placements``) on one core, per sudoku.org.uk level.

    python bench/deduction.py [--per-level 25] [--reference 3] [--repeats 3] [--data TSV]

For a seeded sample of daily puzzles (``--per-level`` of each site level) it traces two
fill orders of each: (a) the technique model's own order (``solve_with_techniques``,
what an honest pencil-mark solver's order looks like), (b) a random order (what a copy
typed from a solution looks like: the worst case, most placements need the high rungs).
Each time is the best of ``--repeats`` runs (the machine is shared). As the same-run
reference, the pure-Python twin (``trace_reference``: the same trace, step for step, on
the reference techniques of ``solvers/techniques.py``) traces both orders of the first
``--reference`` puzzles of each level; the script checks that both give identical
results and prints the ratio of their times. Prints median, p99 and max per level and
order, the rungs found and the chain searches spent.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time

import numpy as np

from _common import machine, org_uk_rows

LEVELS = ("Gentle", "Moderate", "Tough", "Diabolical")
FIELDS = ("rung", "rung_d1", "offer", "offers", "cands_bare", "cands_closed")


def best_of(repeats: int, fn):
    """(the result, the best wall time in ms of ``repeats`` calls)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return out, best * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-level", type=int, default=25)
    ap.add_argument("--reference", type=int, default=3,
                    help="puzzles per level also traced by the pure-Python twin")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--data", help="the sudoku.org.uk TSV (default: ../shared/data)")
    args = ap.parse_args()
    from fairgrid.solvers import deduction as D
    from fairgrid.solvers import parse
    from fairgrid.solvers.propagation import solution_of
    from fairgrid.solvers.techniques import solve_with_techniques

    if args.data:
        with open(args.data, newline="") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
    else:
        rows = org_uk_rows()
    rng = np.random.default_rng(0)
    first = parse(rows[0]["puzzle"])
    D.trace_placements(first.givens, solution_of(first), first.empty_cells)  # load caches
    times = {(lvl, o): [] for lvl in LEVELS for o in ("model", "random")}
    rungs = {o: np.zeros(D.NOT_ANALYSED + 1, int) for o in ("model", "random")}
    chains = {o: [] for o in ("model", "random")}
    ref_numba = ref_python = 0.0
    ref_traces = 0
    for lvl in LEVELS:
        pool = [i for i, r in enumerate(rows) if r["level"] == lvl]
        for n, i in enumerate(rng.choice(pool, args.per_level, replace=False)):
            puzzle = parse(rows[i]["puzzle"])
            solution = solution_of(puzzle)
            run = solve_with_techniques(puzzle, solution)
            orders = {"model": np.array([c for c, _, _ in run.placements()]),
                      "random": rng.permutation(puzzle.empty_cells)}
            for name, cells in orders.items():
                trace, ms = best_of(args.repeats, lambda: D.trace_placements(
                    puzzle.givens, solution, cells))
                times[lvl, name].append(ms)
                rungs[name] += np.bincount(trace.rung, minlength=D.NOT_ANALYSED + 1)
                chains[name].append(trace.chain_searches)
                if n < args.reference:
                    ref, ref_ms = best_of(1, lambda: D.trace_reference(
                        puzzle.givens, solution, cells))
                    for f in FIELDS:
                        if getattr(ref, f).tolist() != getattr(trace, f).tolist():
                            raise SystemExit(f"the reference trace differs ({f}) on "
                                             f"{rows[i]['puzzle']}")
                    ref_numba += ms
                    ref_python += ref_ms
                    ref_traces += 1
    print(f"{args.per_level} sudoku.org.uk puzzles per level, one core, {machine()}")
    print(f"{'level':<11} {'order':<7} {'median ms':>10} {'p99 ms':>8} {'max ms':>8}")
    for lvl in LEVELS + ("all",):
        for name in ("model", "random"):
            a = np.array(sum((times[lv, name] for lv in LEVELS), []) if lvl == "all"
                         else times[lvl, name])
            print(f"{lvl:<11} {name:<7} {np.median(a):10.3f} {np.percentile(a, 99):8.3f} "
                  f"{a.max():8.3f}")
    labels = [D.rung_name(r) for r in range(D.NOT_ANALYSED + 1)]
    for name in ("model", "random"):
        mix = ", ".join(f"{lab} {k}" for lab, k in zip(labels, rungs[name]) if k)
        print(f"\nrungs, {name} order: {mix}; chain searches per trace median "
              f"{np.median(chains[name]):.0f}, max {max(chains[name])} "
              f"(budget {D.DEFAULT_CHAIN_BUDGET})")
    print(f"\nreference: the pure-Python twin on {ref_traces} of these traces (identical "
          f"results) took {ref_python / 1000:.1f} s against {ref_numba:.1f} ms: "
          f"{ref_python / ref_numba:.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
