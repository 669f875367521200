"""Uniqueness checks per second: count_solutions(limit=2) against a plain C DFS.

Runs fairgrid's numba kernel (through the public count_solutions, so per-call overhead
counts) and bench/bt_ref.c, the same search in C, on ../shared/data/sudoku17_royle.txt
and top1465.txt; checks both sides visit the same number of nodes, then prints puzzles/s
and the ratio. Target: >= 0.5x the C reference.

    python bench/backtrack_throughput.py [--limit-puzzles N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys

import numpy as np

from _common import SHARED_DATA, Timer, compile_c, machine
from fairgrid.solvers import Puzzle
from fairgrid.solvers.backtracking import count_kernel, count_solutions


def load(path, limit):
    lines = [ln.strip() for ln in path.read_text().splitlines() if len(ln.strip()) >= 81]
    return [ln[:81] for ln in lines[:limit]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit-puzzles", type=int, default=None, help="first N of each file")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    exe = compile_c("bt_ref")
    print(f"# machine: {machine()}")
    print(f"{'file':<22} {'puzzles':>8} {'nodes':>12} {'numba p/s':>10} {'C p/s':>9} {'ratio':>6}")
    for name in ("sudoku17_royle.txt", "top1465.txt"):
        path = SHARED_DATA / name
        if not path.exists():
            print(f"{name}: not found under {SHARED_DATA}", file=sys.stderr)
            return 1
        lines = load(path, args.limit_puzzles)
        puzzles = [Puzzle(3, np.array([int(ch) if ch.isdigit() else 0 for ch in ln], np.int8))
                   for ln in lines]
        # node count check through the kernel itself
        nodes = 0
        for p in puzzles:
            g = p.givens.astype(np.int64)
            nodes += count_kernel(g, 3, 2, np.zeros(81, np.int64))[1]
        best_py = best_c = float("inf")
        for _ in range(args.repeat):
            with Timer() as t:
                counts = [count_solutions(p) for p in puzzles]
            best_py = min(best_py, t.seconds)
            out = subprocess.run([str(exe), "2"], input="\n".join(lines), capture_output=True,
                                 text=True, check=True).stdout.split()
            best_c = min(best_c, float(out[3]))
        if int(out[2]) != nodes or int(out[1]) != sum(counts):
            print(f"MISMATCH: C nodes {out[2]} solutions {out[1]}, numba {nodes} {sum(counts)}",
                  file=sys.stderr)
            return 1
        n = len(puzzles)
        print(f"{name:<22} {n:>8} {nodes:>12,} {n / best_py:>10,.0f} {n / best_c:>9,.0f} "
              f"{best_c / best_py:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
