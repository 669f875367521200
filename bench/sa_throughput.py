"""SA steps per second: fairgrid's numba kernel against a plain C loop of the same step.

Both sides run the same puzzles with the same seeds and step caps; the script first checks
that they followed the same trajectory (same steps, reheats and final grid/last-swap
checksum for every run), then prints steps/s of each and the ratio. Target: >= 0.9.

    python bench/sa_throughput.py [--steps 20000000] [--runs 4]
"""

from __future__ import annotations

import argparse
import subprocess
import sys

import numpy as np

from _common import PUZZLES, Timer, compile_c, machine
from fairgrid.solvers import parse
from fairgrid.solvers._rng import spawn_seeds
from fairgrid.solvers.annealing import Model, run_kernel

MASK = (1 << 64) - 1


def checksum(result) -> int:
    total = 0
    for g, l in zip(result.grid.tolist(), result.last_swap.tolist()):
        total = (total * 1000003 + g * 131 + (l + 1)) & MASK
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20_000_000, help="step cap per run")
    ap.add_argument("--runs", type=int, default=4, help="runs per puzzle and schedule")
    ap.add_argument("--repeat", type=int, default=3, help="timings per side; best is kept")
    args = ap.parse_args()
    exe = compile_c("sa_ref")
    print(f"# machine: {machine()}")
    print(f"{'puzzle':<11} {'schedule':<7} {'steps':>12} {'numba M/s':>10} {'C M/s':>8} {'ratio':>6}")
    ratios = []
    for schedule in ("thesis", "lewis"):
        for name in ("easy", "medium", "sa-hard"):
            puzzle = parse(PUZZLES[name])
            model = Model.from_puzzle(puzzle)
            seeds = spawn_seeds(2026, args.runs)
            run_kernel(model, seeds[0], schedule=schedule, max_steps=1000)  # compile/load
            best_py = best_c = float("inf")
            for _ in range(args.repeat):
                with Timer() as t:
                    results = [run_kernel(model, s, schedule=schedule, max_steps=args.steps)
                               for s in seeds]
                best_py = min(best_py, t.seconds)
                out = subprocess.run([str(exe), schedule, PUZZLES[name].replace("0", "."),
                                      str(args.steps)],
                                     input="\n".join(str(int(s)) for s in seeds),
                                     capture_output=True, text=True, check=True).stdout.split("\n")
                best_c = min(best_c, float(out[args.runs].split()[1]))
            for r, line in zip(results, out[:args.runs]):
                steps, reheats, cost, csum = (int(x) for x in line.split())
                if (steps, reheats, cost, csum) != (r.steps, r.reheats, r.cost, checksum(r)):
                    print(f"MISMATCH on {name}/{schedule}: C {line!r} vs numba "
                          f"{(r.steps, r.reheats, r.cost, checksum(r))}", file=sys.stderr)
                    return 1
            total = sum(r.steps for r in results)
            ratio = best_c / best_py
            ratios.append(ratio)
            print(f"{name:<11} {schedule:<7} {total:>12,} {total / best_py / 1e6:>10.1f} "
                  f"{total / best_c / 1e6:>8.1f} {ratio:>6.2f}")
    print(f"geometric mean ratio numba/C: {float(np.exp(np.mean(np.log(ratios)))):.2f} "
          f"(trajectories identical on every run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
