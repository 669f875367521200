"""What the hint at the stall weighs when the hints are the cells a hint button would give.

    python experiments/hint_cells.py [--per-level 4] [--plays 16] [--seed 5] [--jobs 2]

``bench/players.py``'s ``hint_at_stall`` types 1–3 solution cells at each stall; the
benchmarks' hint-takers pick them at random among the empty cells. A hint button (or a
player who asks a solver for "the next cell") gives cells that are easy to fill: here,
each time one of those with the fewest candidates on the board. Per Tough and Diabolical
sudoku.org.uk daily (analysed as the daemon does), ``--plays`` hinted solves of each
kind are scored at cold start; printed is the ``hints`` kind's per-solve sum of ratios
(each capped as the player verdict caps it), which a season adds up (a season flags by
it from about 7.8 nats).
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from _common import ROOT, org_uk_dailies

sys.path.insert(0, str(ROOT / "bench"))

PICKS = ("random", "fewest")


def _one(task) -> tuple[str, dict[str, list[float]]]:
    import players as models
    from fairgrid.analytics import puzzle_model
    from fairgrid.analytics.evidence import score_solve
    from fairgrid.analytics.player_verdict import HINTS, RATIO_KINDS, STRONG_LLR
    from fairgrid.solvers import parse
    from fairgrid.solvers.fill_order import predict_fill_order

    level, text, solution, plays, seed = task
    # the puzzle analysed as the daemon's pool does, with the benchmarks' SA budget
    pred = predict_fill_order(parse(text), seed=seed, runs=50, budget_s=10, workers=1)
    median = [None if np.isnan(v) else float(v) for v in pred.median_rank]
    model = puzzle_model.build(text, solution, median, seed)
    inputs = puzzle_model.scoring_inputs(text, 3, solution, median, model)
    sol = np.array([int(ch) for ch in solution])
    out: dict[str, list[float]] = {}
    for pick in PICKS:
        rng = np.random.default_rng(seed)     # the same people and puzzles for each kind
        got = []
        for k in range(plays):
            total_s = float(np.exp(model.expected_log_s + rng.normal(0, 0.35)))
            log = models.hint_at_stall(text, sol, rng, total_s, pick=pick,
                                       base=("pencil_marker", "sweeper")[k % 2])
            if not log.cheated.any():
                continue        # no stall met: nothing hinted
            ev = score_solve(inputs.facts_without_skill, inputs.null, *log.arrays)
            got.append(min(sum(ev.llr.get(x, 0.0) for x in RATIO_KINDS[HINTS]),
                           STRONG_LLR))
        out[pick] = got
    return level, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-level", type=int, default=4, help="dailies per level")
    ap.add_argument("--plays", type=int, default=16, help="hinted solves per puzzle and kind")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=None)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    tasks = [(level, r["puzzle"], r["solution"], args.plays, int(rng.integers(2**31)))
             for level, r in org_uk_dailies(rng, ("Tough", "Diabolical"), args.per_level)]
    every = {p: [] for p in PICKS}
    with ProcessPoolExecutor(args.jobs) as pool:
        for level, out in pool.map(_one, tasks):
            print(f"{level:10s} " + "  ".join(
                f"{p}: {len(v)} hinted, mean {np.mean(v):+.2f}" if v else f"{p}: none"
                for p, v in out.items()), file=sys.stderr, flush=True)
            for p, v in out.items():
                every[p] += v
    print("| hinted cells | hinted solves | hints ratio a solve (mean) | median | above 0 |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for p, v in every.items():
        v = np.asarray(v)
        print(f"| {p} | {v.size} | {v.mean():+.2f} | {np.median(v):+.2f} | "
              f"{100 * np.mean(v > 0):.0f} % |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
