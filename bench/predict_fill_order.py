"""Wall time of a 100-run fill-order prediction, against a plain C loop of the same runs.

For each test puzzle: the prediction on one core and on all cores, and the time the C
reference (bench/sa_ref.c) needs for the very same runs (same seeds and caps, so the same
total steps; the script checks that the step totals agree). Targets: within 1.2x of C;
easy <= 0.5 s on one core; the prediction scales with the cores.

With ``--cap-study`` it measures instead how far capped predictions of the SA-hard
puzzle are from uncapped ones (Spearman correlation of the per-cell median ranks), for
both policies for capped runs: the evidence behind DEFAULT_FILL_MAX_STEPS. It compares
with the uncapped prediction from the same seeds (the capped runs are prefixes of its
runs) and from other seeds, and prints the noise floor: how well two uncapped predictions
with different seeds agree. Each uncapped prediction takes ~9 minutes on two cores and
is cached in bench/_build.

    python bench/predict_fill_order.py [--runs 100] [--cap-study]
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
from fairgrid.solvers.fill_order import (CAPPED_POLICIES, DEFAULT_FILL_MAX_STEPS,
                                    REFERENCE_CORES, REFERENCE_STEPS_PER_S, predict_fill_order)

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
        predict_fill_order(puzzle, runs=2, max_steps=1000)  # load the kernel
        best1 = bestn = float("inf")
        for _ in range(args.repeat):
            with Timer() as t1:
                p1 = predict_fill_order(puzzle, seed=SEED, runs=args.runs, workers=1,
                                   max_steps=args.max_steps)
            with Timer() as tn:
                pn = predict_fill_order(puzzle, seed=SEED, runs=args.runs, workers=cores,
                                   max_steps=args.max_steps)
            best1, bestn = min(best1, t1.seconds), min(bestn, tn.seconds)
            if name == "sa-hard":
                break  # long: one repetition
        assert np.array_equal(p1.rank, pn.rank), "workers changed the prediction"
        c_s, c_steps = c_reference(exe, PUZZLES[name], spawn_seeds(SEED, args.runs),
                                   args.max_steps)
        total = int(p1.steps.sum())
        assert c_steps == total, f"C did {c_steps} steps, numba {total}"
        print(f"{name:<9} {args.max_steps:>11,} {p1.capped_runs:>6} {total:>14,} {best1:>9.2f} "
              f"{bestn:>10.2f} {c_s:>7.2f} {best1 / c_s:>8.2f} {best1 / bestn:>8.2f}")


def _uncapped(puzzle, seed: int, args):
    """An uncapped prediction's median ranks and steps, cached in bench/_build."""
    path = BUILD / f"uncapped_sa_hard_{seed}_{args.runs}_{args.uncapped_steps}.npz"
    if path.exists():
        data = np.load(path)
        return data["median"], data["steps"]
    from tqdm import tqdm

    cores = os.cpu_count() or 1
    with tqdm(total=args.runs, desc=f"uncapped seed {seed}", file=sys.stderr) as bar, \
            Timer() as t:
        ref = predict_fill_order(puzzle, seed=seed, runs=args.runs, workers=cores,
                            max_steps=args.uncapped_steps, progress=bar.update)
    BUILD.mkdir(exist_ok=True)
    np.savez(path, median=ref.median_rank, steps=ref.steps)
    print(f"uncapped prediction, seed {seed}: {t.seconds:.0f} s on {cores} cores")
    return ref.median_rank, ref.steps


def cap_study(args) -> None:
    puzzle = parse(PUZZLES["sa-hard"])
    cores = os.cpu_count() or 1
    free = puzzle.empty_cells
    med_a, steps_a = _uncapped(puzzle, SEED, args)
    med_b, steps_b = _uncapped(puzzle, SEED + 1, args)
    steps = np.concatenate([steps_a, steps_b])
    print(f"uncapped runs: {steps.size}, none capped at {args.uncapped_steps:,}: "
          f"{bool((steps < args.uncapped_steps).all())}; steps per run median "
          f"{np.median(steps):,.0f}, p10 {np.percentile(steps, 10):,.0f}, "
          f"p90 {np.percentile(steps, 90):,.0f}, max {steps.max():,.0f}")
    floor = spearmanr(med_a[free], med_b[free]).statistic
    print(f"noise floor: two uncapped predictions (seeds {SEED}, {SEED + 1}): rho = {floor:.3f}")
    print(f"{'cap/run':>12} {'budget s':>8} {'wall s':>7} {'solved':>6} {'policy':>8} "
          f"{'basis':>5} {'rho same seeds':>15} {'rho other seeds':>16}")
    for cap in args.caps:
        with Timer() as t:
            pred = predict_fill_order(puzzle, seed=SEED, runs=args.runs, workers=cores,
                                 max_steps=cap)
        budget = cap * args.runs / (REFERENCE_STEPS_PER_S * REFERENCE_CORES)
        for policy in CAPPED_POLICIES:
            p = pred.with_policy(policy)
            rho_a = spearmanr(p.median_rank[free], med_a[free]).statistic
            rho_b = spearmanr(p.median_rank[free], med_b[free]).statistic
            print(f"{cap:>12,} {budget:>8.0f} {t.seconds:>7.1f} {p.runs - p.capped_runs:>6} "
                  f"{policy:>8} {p.basis_runs:>5} {rho_a:>15.3f} {rho_b:>16.3f}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-steps", type=int, default=DEFAULT_FILL_MAX_STEPS)
    ap.add_argument("--cap-study", action="store_true")
    ap.add_argument("--uncapped-steps", type=int, default=3_000_000_000)
    ap.add_argument("--caps", type=int, nargs="+",
                    default=[5_000_000, 12_000_000, 24_000_000, 48_000_000, 96_000_000])
    args = ap.parse_args()
    print(f"# machine: {machine()}")
    if args.cap_study:
        cap_study(args)
    else:
        timing(args, compile_c("sa_ref"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
