"""The Nurikabe uniqueness check registration runs: the exact island-expansion count from
the propagation rules' deductions against the same count from an empty grid.

Both sides count the solutions (up to 2) of every ``--every``-th puzzle of the public
collection (../shared/data/nurikabe, ordered by size) with the same step cap; the script
checks that every count both sides settle agrees with the collection (one solution),
then prints per size band the puzzles settled, the capped ones and the seconds, and the
ratio of total time (empty / seeded).

    python bench/nurikabe_unique.py [--every 5] [--max-steps 10000000]
"""

from __future__ import annotations

import argparse
import csv
import sys
import time

import numpy as np

from _common import SHARED_DATA, machine
from fairgrid.solvers.nurikabe import SearchLimitError, count_solutions, parse_nurikabe
from fairgrid.solvers.nurikabe.bruteforce import STOP_CAP, _run, island_order

BANDS = ((0, 100, "up to 10x10"), (101, 225, "to 15x15"), (226, 10**6, "larger"))


def from_empty(puzzle, max_steps: int) -> int | None:
    """The count from an empty grid (the search as the thesis runs it); None when capped."""
    count, _, stop, _ = _run(puzzle, island_order(puzzle), 2, max_steps)
    return None if stop == STOP_CAP else count


def seeded(puzzle, max_steps: int) -> int | None:
    try:
        return count_solutions(puzzle, 2, max_steps=max_steps)
    except SearchLimitError:
        return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=5, help="take every N-th puzzle by size")
    ap.add_argument("--max-steps", type=int, default=10_000_000)
    args = ap.parse_args()
    path = SHARED_DATA / "nurikabe" / "janko_nurikabe.tsv"
    if not path.is_file():
        raise SystemExit(f"error: the reference data {path} is missing")
    with open(path, newline="") as fh:
        rows = sorted(csv.DictReader(fh, delimiter="\t"),
                      key=lambda r: (int(r["rows"]) * int(r["cols"]), r["id"]))[::args.every]
    seeded(parse_nurikabe(rows[0]["puzzle"]), args.max_steps)  # compile outside the timing
    from_empty(parse_nurikabe(rows[0]["puzzle"]), args.max_steps)
    print(f"# machine: {machine()}")
    print(f"# {len(rows)} puzzles (every {args.every}th by size), cap {args.max_steps:,} steps")
    stats = {side: {b[2]: [0, 0, 0.0] for b in BANDS} for side in ("empty", "seeded")}
    for k, r in enumerate(rows):
        puzzle = parse_nurikabe(r["puzzle"])
        band = next(b[2] for b in BANDS if b[0] <= puzzle.ncells <= b[1])
        for side, fn in (("empty", from_empty), ("seeded", seeded)):
            t0 = time.perf_counter()
            count = fn(puzzle, args.max_steps)
            s = stats[side][band]
            s[2] += time.perf_counter() - t0
            if count is None:
                s[1] += 1
            elif count != 1:
                print(f"error: {r['id']}: {side} counted {count} solutions", file=sys.stderr)
                return 1
            else:
                s[0] += 1
        if (k + 1) % 20 == 0:
            print(f"  {k + 1} of {len(rows)} puzzles", file=sys.stderr, flush=True)
    print(f"{'size':<12} {'puzzles':>7} | {'empty: settled':>14} {'capped':>6} {'s':>7} | "
          f"{'seeded: settled':>15} {'capped':>6} {'s':>7}")
    for _, _, band in BANDS:
        e, s = stats["empty"][band], stats["seeded"][band]
        print(f"{band:<12} {e[0] + e[1]:>7} | {e[0]:>14} {e[1]:>6} {e[2]:>7.1f} | "
              f"{s[0]:>15} {s[1]:>6} {s[2]:>7.1f}")
    total = {side: sum(v[2] for v in stats[side].values()) for side in stats}
    capped = {side: sum(v[1] for v in stats[side].values()) for side in stats}
    print(f"total: empty {total['empty']:.1f} s ({capped['empty']} capped), seeded "
          f"{total['seeded']:.1f} s ({capped['seeded']} capped); ratio "
          f"{total['empty'] / max(total['seeded'], 1e-9):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
