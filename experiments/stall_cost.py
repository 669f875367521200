"""What a stall costs real solvers: sudoku.org.uk mean times against the stalls in a daily.

    python experiments/stall_cost.py [--puzzles 600] [--seed 0]

A *stall* is a moment with no single on the board: a technique has to be found before
the next digit. For a random sample of the site's dailies, plays the technique model's
order (``solve_with_techniques``) and counts the placements made at a stall, then fits
the site's mean human time as minutes per placement made from a single plus minutes per
placement made at a stall (least squares, no intercept); then again with a single's cost
growing as fewer singles are on offer (a + b / singles on offer: a puzzle with stalls is
harder between them too); and prints the median time by number of stalls. This is what
real people did, averaged over each puzzle's solvers: the player verdict's tempo
(``analytics.player_verdict``) never claims that fewer than one person in ten slows down
less than 5x at a stall, and these times show the average solver above that.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from _common import org_uk_rows

LEVELS = ("Gentle", "Moderate", "Tough", "Diabolical")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--puzzles", type=int, default=600, help="dailies sampled")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from fairgrid.solvers import parse
    from fairgrid.solvers import techniques as tq
    from fairgrid.solvers.puzzle_types import puzzle_type
    from tqdm import tqdm

    rows = org_uk_rows()
    rng = np.random.default_rng(args.seed)
    pick = rng.choice(len(rows), min(args.puzzles, len(rows)), replace=False)
    counts, minutes, levels = [], [], []
    for i in tqdm(pick.tolist(), desc="puzzles", file=sys.stderr):
        r = rows[i]
        sol = np.array([int(ch) for ch in r["solution"]], dtype=np.int64)
        givens = np.array([int(ch) for ch in r["puzzle"]], dtype=np.int64)
        order = tq.solve_with_techniques(parse(r["puzzle"]), sol).placements()
        cells = np.array([c for c, _, _ in order], dtype=np.int64)
        # a stall as the player verdict reads one: no single on offer
        _, options, _ = puzzle_type("sudoku").replay(givens, (9, 9), cells, sol)
        stall = options == 0
        counts.append((int(np.count_nonzero(~stall)), int(np.count_nonzero(stall)),
                       float((1.0 / np.maximum(options[~stall], 1)).sum())))
        minutes.append(float(r["mean_time_min"]))
        levels.append(r["level"])
    x, y, levels = np.array(counts, float), np.array(minutes), np.array(levels)
    print(f"{'level':12s} {'puzzles':>8s} {'stalls (mean)':>14s} {'mean time (min)':>16s}")
    for level in LEVELS:
        m = levels == level
        if m.any():
            print(f"{level:12s} {int(m.sum()):8d} {x[m, 1].mean():14.2f} {y[m].mean():16.1f}")
    (single, stall), *_ = np.linalg.lstsq(x[:, :2], y, rcond=None)
    print(f"\nminutes per placement from a single {single:.2f}, per placement at a stall "
          f"{stall:.2f}: a stall costs {stall / single:.1f}x a single")
    (a, b, stall), *_ = np.linalg.lstsq(x[:, [0, 2, 1]], y, rcond=None)
    mean_single = float((a * x[:, 0] + b * x[:, 2]).sum() / x[:, 0].sum())
    print(f"a single costing a + b / singles on offer (a {a:.2f}, b {b:.2f}; "
          f"{mean_single:.2f} on average): a stall {stall:.2f}, "
          f"{stall / mean_single:.1f}x an average single")
    print(f"\n{'stalls':>6s} {'puzzles':>8s} {'median time (min)':>18s}")
    for k in range(int(x[:, 1].max()) + 1):
        m = x[:, 1] == k
        if m.sum() >= 5:
            print(f"{k:6d} {int(m.sum()):8d} {np.median(y[m]):18.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
