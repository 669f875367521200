"""Nurikabe SA steps per second: fairgrid's numba kernel against a plain C loop of the same
cost function and step (``bench/nurikabe_sa_ref.c``).

Both sides run the same puzzles (three janko.at puzzles from ../shared/data/nurikabe: 7×7,
10×10 and 13×13) with the same seeds, schedule and step cap; the script first checks that
they followed the same trajectory (same steps, reheats, final cost and a checksum of the
final grid and last-swap steps, for every run), then prints steps/s of each and the
ratio numba/C (best of ``--repeat`` timings per side). Target: near 1.

    python bench/nurikabe_sa.py [--steps 500000] [--runs 4] [--repeat 3]
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys

import numpy as np

from _common import SHARED_DATA, Timer, compile_c, machine
from fairgrid.solvers._rng import spawn_seeds
from fairgrid.solvers.nurikabe import parse_nurikabe
from fairgrid.solvers.nurikabe.annealing import (DEFAULT_ALPHA, DEFAULT_T0, DEFAULT_T_MIN,
                                                 SAModel, run_kernel)

PUZZLE_IDS = ("janko-0403", "janko-0222", "janko-0298")
MASK = (1 << 64) - 1


def checksum(result) -> int:
    total = 0
    for g, l in zip(result.grid.reshape(-1).tolist(), result.last_swap.reshape(-1).tolist()):
        total = (total * 1000003 + g * 131 + (l + 1)) & MASK
    return total


def load_puzzles() -> dict[str, str]:
    path = SHARED_DATA / "nurikabe" / "janko_nurikabe.tsv"
    if not path.is_file():
        raise SystemExit(f"error: the reference data {path} is missing")
    with open(path, newline="") as fh:
        rows = {r["id"]: r["puzzle"] for r in csv.DictReader(fh, delimiter="\t")}
    return {i: rows[i] for i in PUZZLE_IDS}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=500_000, help="step cap per run")
    ap.add_argument("--runs", type=int, default=4, help="runs per puzzle")
    ap.add_argument("--repeat", type=int, default=3, help="timings per side; best is kept")
    ap.add_argument("--alpha", type=float, default=DEFAULT_ALPHA)
    args = ap.parse_args()
    exe = compile_c("nurikabe_sa_ref")
    print(f"# machine: {machine()}")
    print(f"# schedule: t0={DEFAULT_T0} alpha={args.alpha} t_min={DEFAULT_T_MIN}, "
          f"cap {args.steps:,} steps, {args.runs} runs a puzzle")
    print(f"{'puzzle':<11} {'size':>6} {'solved':>6} {'steps':>11} {'numba M/s':>10} "
          f"{'C M/s':>7} {'ratio':>6}")
    ratios = []
    for pid, text in load_puzzles().items():
        puzzle = parse_nurikabe(text)
        model = SAModel.from_puzzle(puzzle)
        seeds = spawn_seeds(2026, args.runs)
        run_kernel(model, seeds[0], max_steps=100)                  # compile or load
        best_py = best_c = float("inf")
        cmd = [str(exe), text, repr(DEFAULT_T0), repr(args.alpha), repr(DEFAULT_T_MIN),
               str(args.steps)]
        for _ in range(args.repeat):
            with Timer() as t:
                results = [run_kernel(model, s, alpha=args.alpha, max_steps=args.steps)
                           for s in seeds]
            best_py = min(best_py, t.seconds)
            out = subprocess.run(cmd, input="\n".join(str(int(s)) for s in seeds),
                                 capture_output=True, text=True, check=True).stdout.split("\n")
            best_c = min(best_c, float(out[args.runs].split()[1]))
        for r, line in zip(results, out[:args.runs]):
            got = tuple(int(x) for x in line.split())
            want = (r.steps, r.reheats, r.cost, checksum(r))
            if got != want:
                print(f"MISMATCH on {pid}: C {got} vs numba {want}", file=sys.stderr)
                return 1
        total = sum(r.steps for r in results)
        ratio = best_c / best_py
        ratios.append(ratio)
        solved = sum(r.solved for r in results)
        print(f"{pid:<11} {puzzle.rows:>2}x{puzzle.cols:<3} {solved:>4}/{args.runs} "
              f"{total:>11,} {total / best_py / 1e6:>10.2f} "
              f"{total / best_c / 1e6:>7.2f} {ratio:>6.2f}")
    print(f"geometric mean ratio numba/C: {float(np.exp(np.mean(np.log(ratios)))):.2f} "
          "(trajectories identical on every run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
