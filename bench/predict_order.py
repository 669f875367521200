"""Wall time of a 100-run fill-order prediction, against a plain C loop of the same runs.

For each test puzzle: the prediction on one core and on all cores, and the time the C
reference (bench/sa_ref.c) needs for the very same runs (same seeds and caps, so the same
total steps; the script checks that the step totals agree). Targets: within 1.2x of C;
easy <= 0.5 s on one core; the prediction scales with the cores.

With ``--cap-study`` it also measures how far capped predictions of the SA-hard puzzle
are from an uncapped one (Spearman correlation of the per-cell median ranks): the
evidence behind DEFAULT_ORDER_MAX_STEPS. The uncapped prediction takes ~10 minutes on
two cores and is cached in bench/_build.

    python bench/predict_order.py [--runs 100] [--cap-study]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import numpy as np
from scipy.stats import spearmanr

from _common import BUILD, PUZZLES, Timer, compile_c, machine
from fairgrid.solvers import parse
from fairgrid.solvers._rng import spawn_seeds
from fairgrid.solvers.order import DEFAULT_ORDER_MAX_STEPS, predict_order

SEED = 2026


def c_reference(exe, text: str, seeds, max_steps: int) -> tuple[float, int]:
    out = subprocess.run([str(exe), "thesis", text.replace("0", "."), str(max_steps)],
                         input="\n".join(str(int(s)) for s in seeds), capture_output=True,
                         text=True, check=True).stdout.strip().split("\n")
    return float(out[-1].split()[1]), sum(int(line.split()[0]) for line in out[:-1])


def timing(args, exe) -> None:
    cores = os.cpu_count() or 1
    print(f"{'puzzle':<9} {'cap/run':>11} {'capped':>6} {'total steps':>14} {'1 core s':>9} "
          f"{f'{cores} cores s':>10} {'C s':>7} {'1core/C':>8} {'speed-up':>8}")
    for name in ("easy", "medium", "sa-hard"):
        puzzle = parse(PUZZLES[name])
        predict_order(puzzle, runs=2, max_steps=1000)  # load the kernel
        best1 = bestn = float("inf")
        for _ in range(args.repeat):
            with Timer() as t1:
                p1 = predict_order(puzzle, seed=SEED, runs=args.runs, jobs=1,
                                   max_steps=args.max_steps)
            with Timer() as tn:
                pn = predict_order(puzzle, seed=SEED, runs=args.runs, jobs=cores,
                                   max_steps=args.max_steps)
            best1, bestn = min(best1, t1.seconds), min(bestn, tn.seconds)
            if name == "sa-hard":
                break  # long: one repetition
        assert np.array_equal(p1.rank, pn.rank), "jobs changed the prediction"
        c_s, c_steps = c_reference(exe, PUZZLES[name], spawn_seeds(SEED, args.runs),
                                   args.max_steps)
        total = int(p1.steps.sum())
        assert c_steps == total, f"C did {c_steps} steps, numba {total}"
        print(f"{name:<9} {args.max_steps:>11,} {p1.capped_runs:>6} {total:>14,} {best1:>9.2f} "
              f"{bestn:>10.2f} {c_s:>7.2f} {best1 / c_s:>8.2f} {best1 / bestn:>8.2f}")


def cap_study(args) -> None:
    puzzle = parse(PUZZLES["sa-hard"])
    cores = os.cpu_count() or 1
    ref_path = BUILD / f"uncapped_sa_hard_{SEED}_{args.runs}_{args.uncapped_steps}.npz"
    if ref_path.exists():
        data = np.load(ref_path)
        ref_median, ref_steps = data["median"], data["steps"]
        print(f"uncapped reference loaded from {ref_path}")
    else:
        from tqdm import tqdm

        with tqdm(total=args.runs, desc="uncapped", file=sys.stderr) as bar, Timer() as t:
            ref = predict_order(puzzle, seed=SEED, runs=args.runs, jobs=cores,
                                max_steps=args.uncapped_steps, progress=bar.update)
        ref_median, ref_steps = ref.median_rank, ref.steps
        BUILD.mkdir(exist_ok=True)
        np.savez(ref_path, median=ref_median, steps=ref_steps)
        print(f"uncapped reference: {t.seconds:.0f} s on {cores} cores")
    free = puzzle.empty_cells
    print(f"uncapped: runs {ref_steps.size}, still capped at {args.uncapped_steps:,}: "
          f"{int((ref_steps >= args.uncapped_steps).sum())}; steps per run median "
          f"{np.median(ref_steps):,.0f}, p10 {np.percentile(ref_steps, 10):,.0f}, "
          f"p90 {np.percentile(ref_steps, 90):,.0f}")
    # Two independent uncapped-like predictions differ too: the noise floor is the
    # correlation of two seeds' predictions at the same cap.
    print(f"{'cap/run':>12} {'capped runs':>11} {'wall s':>7} {'rho vs uncapped':>16} "
          f"{'rho seed vs seed':>16}")
    for cap in args.caps:
        with Timer() as t:
            pred = predict_order(puzzle, seed=SEED + 1, runs=args.runs, jobs=cores,
                                 max_steps=cap)
        other = predict_order(puzzle, seed=SEED + 2, runs=args.runs, jobs=cores,
                              max_steps=cap)
        rho = spearmanr(pred.median_rank[free], ref_median[free]).statistic
        rho2 = spearmanr(pred.median_rank[free], other.median_rank[free]).statistic
        print(f"{cap:>12,} {pred.capped_runs:>11} {t.seconds:>7.1f} {rho:>16.3f} {rho2:>16.3f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-steps", type=int, default=DEFAULT_ORDER_MAX_STEPS)
    ap.add_argument("--cap-study", action="store_true")
    ap.add_argument("--uncapped-steps", type=int, default=3_000_000_000)
    ap.add_argument("--caps", type=int, nargs="+",
                    default=[2_500_000, 5_000_000, 10_000_000, 20_000_000, 40_000_000])
    args = ap.parse_args()
    print(f"# machine: {machine()}")
    if args.cap_study:
        cap_study(args)
    else:
        timing(args, compile_c("sa_ref"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
