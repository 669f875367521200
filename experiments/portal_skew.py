"""How far one portal's slow players on a few shared puzzles move what another portal's
players are judged against: the pooled fit against each portal's own difficulty.

    python experiments/portal_skew.py [--seed 0]

A synthetic population of 400 puzzles whose difficulty departs from the metrics'
prediction by sd 0.25, 2,000 players on one portal solving 20 each; then a second
portal's players, three or ten times slower on ten shared puzzles and ordinary on ten
others. For each case it prints how much harder the first portal's price of the ten
puzzles came out (against the other puzzles, from the truth): with one pooled fit, and
with each portal's own difficulty (``analytics.ratings.portal_difficulties``).
"""

from __future__ import annotations

import argparse

import numpy as np

from fairgrid.analytics.ratings import fit_ratings

CASES = [(200, 3.0), (1000, 3.0), (1000, 10.0), (5, 10.0)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    n_puzzles, honest, per = 400, 2000, 20
    prior = rng.normal(6.5, 0.5, n_puzzles)
    true_d = prior + rng.normal(0, 0.25, n_puzzles) - 1.2
    skill = rng.normal(0, 0.4, honest)
    rows = [(j, i, true_d[j] - skill[i] + rng.normal(0, 0.3), 0)
            for i in range(honest) for j in rng.choice(n_puzzles, per, replace=False)]
    targets = np.arange(10)
    print("second portal's players      | one pooled fit | per-portal difficulty")
    for n_slow, factor in CASES:
        extra = []
        for b in range(n_slow):
            i = honest + b
            extra += [(j, i, true_d[j] + np.log(factor) + rng.normal(0, 0.3), 1)
                      for j in targets]
            extra += [(j, i, true_d[j] + rng.normal(0, 0.3), 1)
                      for j in rng.choice(np.arange(10, n_puzzles), 10, replace=False)]
        r = np.array(rows + extra)
        puzzle, player, group = r[:, 0].astype(int), r[:, 1].astype(int), r[:, 3].astype(int)
        fit = fit_ratings(r[:, 2], puzzle, player, prior, honest + n_slow, group=group,
                          prior_sd=0.25)
        own = fit.difficulty.copy()
        first = fit.pair_group == 0
        own[fit.pair_puzzle[first]] = fit.pair_difficulty[first]

        def harder(d):
            return np.exp(np.mean(d[targets] - true_d[targets])
                          - np.mean(d[10:] - true_d[10:]))

        print(f"{n_slow:5d}, {factor:4.0f} times slower       | {harder(fit.difficulty):13.2f}x"
              f" | {harder(own):20.2f}x")


if __name__ == "__main__":
    main()
