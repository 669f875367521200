"""How far one portal's players move what another portal's players are judged against:
one pooled fit against the fit with portals (each portal's offset and its own difficulty
of a shared puzzle).

    python experiments/portal_skew.py [--seed 0]

A synthetic population of 400 puzzles whose difficulty departs from the metrics'
prediction by sd 0.25, 2,000 players on one portal solving 20 each. Then, first, a
second portal's players three or ten times slower on ten shared puzzles and ordinary on
ten others: how much harder the first portal's price of the ten puzzles came out
(against the other puzzles, from the truth). Second, a second portal's players (sock
puppets, or a beginners' or a club's portal) ten times slower, or five times quicker,
on every puzzle they solve (20 each): how far the first portal's players' price moved
(the mean over its solves of the expected log-time less the player's skill, against
the fit of the first portal alone), on the puzzles both portals solved and on a puzzle
the fit did not see.
"""

from __future__ import annotations

import argparse

import numpy as np

from fairgrid.analytics.ratings import fit_ratings

CASES = [(200, 3.0), (1000, 3.0), (1000, 10.0), (5, 10.0)]
PACE_CASES = [(200, 10.0), (2000, 10.0), (2000, 0.2), (10, 10.0)]


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
    print("second portal's players      | one pooled fit | with portals")
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
        pooled = fit_ratings(r[:, 2], puzzle, player, prior, honest + n_slow)
        fit = fit_ratings(r[:, 2], puzzle, player, prior, honest + n_slow, group=group,
                          prior_sd=0.25)

        def harder(d):
            return np.exp(np.mean(d[targets] - true_d[targets])
                          - np.mean(d[10:] - true_d[10:]))

        print(f"{n_slow:5d}, {factor:4.0f} times slower       | "
              f"{harder(pooled.difficulty):13.2f}x | {harder(_own(fit, 0)):12.2f}x")

    r0 = np.array(rows)
    alone = fit_ratings(r0[:, 2], r0[:, 0].astype(int), r0[:, 1].astype(int), prior, honest)
    print()
    print("second portal's players, every puzzle | shared, pooled | with portals "
          "| new puzzle, pooled | with portals")
    for n_odd, factor in PACE_CASES:
        extra = []
        for b in range(n_odd):
            pace = np.log(factor) + rng.normal(0, 0.3)
            extra += [(j, honest + b, true_d[j] + pace + rng.normal(0, 0.3), 1)
                      for j in rng.choice(n_puzzles, per, replace=False)]
        r = np.array(rows + extra)
        puzzle, player, group = r[:, 0].astype(int), r[:, 1].astype(int), r[:, 3].astype(int)
        mine = group == 0
        pooled = fit_ratings(r[:, 2], puzzle, player, prior, honest + n_odd)
        fit = fit_ratings(r[:, 2], puzzle, player, prior, honest + n_odd, group=group,
                          prior_sd=0.25)

        p_shared, p_new = _prices(pooled, alone, puzzle[mine], player[mine], prior, honest)
        w_shared, w_new = _prices(fit, alone, puzzle[mine], player[mine], prior, honest,
                                  _own(fit, 0), fit.group_offset[0])
        what = (f"{factor:g} times slower" if factor > 1 else f"{1 / factor:g} times quicker")
        print(f"{n_odd:5d}, {what:22s}      | {p_shared:13.2f}x | {w_shared:11.2f}x "
              f"| {p_new:17.2f}x | {w_new:11.2f}x")


def _own(fit, portal):
    """Each puzzle's difficulty as ``portal`` prices it, before its offset."""
    own = fit.difficulty.copy()
    first = fit.pair_group == portal
    own[fit.pair_puzzle[first]] = fit.pair_difficulty[first]
    return own


def _prices(fit, alone, puzzle, player, prior, honest, own=None, g=0.0):
    """How many times the first portal's players' expected time moved against the fit
    of that portal alone: on its own solves (the difficulty it is priced on plus its
    offset, less the player's skill) and on a puzzle the fit did not see (the puzzle's
    prior plus μ and the offset, less the mean skill)."""
    own = fit.difficulty if own is None else own
    shared = (np.mean(own[puzzle] + g - fit.skill[player])
              - np.mean(alone.difficulty[puzzle] - alone.skill[player]))
    new = (fit.mu + g - np.mean(fit.skill[:honest])) - (alone.mu - np.mean(alone.skill))
    return np.exp(shared), np.exp(new)

if __name__ == "__main__":
    main()
