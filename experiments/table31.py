"""Thesis Table 3.1 on sudoku.org.uk: every metric's correlation with human times.

    python experiments/table31.py [--workers N]

1. Rates every puzzle of ../shared/data/sudoku_org_uk_times_train.tsv with every metric
   (cached in experiments/_build; ~25 min on 2 cores the first time).
2. Prints each metric's Pearson and Spearman correlation with the mean human time next to
   the thesis' Table 3.1 (which used 731 puzzles of 2006-2009 and median times).

The expected-time model is fitted by ``experiments/expected_time_fit.py``.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from scipy.stats import pearsonr, spearmanr

from _common import org_uk_metrics  # noqa: E402

THESIS = {"backtrack_steps": ("brute force", 0.25), "harmony_cost": ("harmony search", 0.22),
          "sa_steps": ("simulated annealing", 0.39),
          "relaxation_count": ("constraint relaxation", 0.46),
          "serate": ("serate metric", 0.80), "refutation_sum": ("refutation sum", 0.83)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", "--jobs", type=int, default=None)
    args = ap.parse_args()

    rows, X, names = org_uk_metrics(workers=args.workers)
    minutes = np.array([float(r["mean_time_min"]) for r in rows])

    print(f"{len(rows)} sudoku.org.uk puzzles ({rows[-1]['date']} .. {rows[0]['date']}); "
          "correlation with mean human time\n")
    print(f"{'metric':<22} {'pearson':>8} {'spearman':>9} {'log-log r':>10}   thesis (org)")
    for j, name in enumerate(names):
        x = X[:, j]
        if np.ptp(x) == 0:
            continue
        pr = pearsonr(x, minutes)[0]
        sr = spearmanr(x, minutes)[0]
        lr = pearsonr(np.log1p(x - x.min()), np.log(minutes))[0]
        thesis = THESIS.get(name)
        t = f"{thesis[0]} {thesis[1]:.2f}" if thesis else ""
        print(f"{name:<22} {pr:8.3f} {sr:9.3f} {lr:10.3f}   {t}")

    print("\nthe expected-time model on these metrics: experiments/expected_time_fit.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
