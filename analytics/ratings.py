"""The nightly fit: puzzle difficulty and player skill from human solve times.

Model: ``log t_ij = μ + p_j + δ_j − s_i + ε`` for player ``i`` on puzzle ``j``,
where ``p_j`` is the metric-based prior (the calibrated expected log-time of the puzzle),
``μ`` the offset between the players fitted and the calibration's population, ``δ_j``
what the humans teach us about puzzle ``j`` beyond its metrics, and ``s_i`` the player's
skill (log-speed advantage; positive = faster). Ridge penalties ``λ_d Σ δ_j²`` and
``λ_s Σ s_i²`` make it a regularised least-squares problem, solved sparse with LSQR: a
puzzle with few solves keeps a small ``δ_j``, so its difficulty stays near its prior
(shrinkage by solve count, with ``λ_d`` solves' worth of prior weight); a new player's
skill stays near 0.

The fitted difficulty ``d_j = μ + p_j + δ_j`` is the expected log solve time of an
average player of this portal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import lsqr


@dataclass(frozen=True, eq=False)
class Fit:
    mu: float
    difficulty: np.ndarray      # d_j per puzzle (log seconds, average player)
    delta: np.ndarray           # d_j − μ − p_j
    skill: np.ndarray           # s_i per player
    residual_sd: float
    puzzle_solves: np.ndarray
    player_solves: np.ndarray
    iterations: int


def fit_ratings(log_t: np.ndarray, puzzle: np.ndarray, player: np.ndarray,
                prior: np.ndarray, n_players: int, *, lambda_puzzle: float = 5.0,
                lambda_player: float = 3.0, tol: float = 1e-8) -> Fit:
    """Fit μ, δ and s (see the module docstring). ``puzzle``/``player`` are 0-based
    indices per solve; ``prior`` holds p_j for every puzzle index."""
    log_t = np.asarray(log_t, dtype=float)
    puzzle = np.asarray(puzzle, dtype=np.int64)
    player = np.asarray(player, dtype=np.int64)
    prior = np.asarray(prior, dtype=float)
    n, n_puzzles = log_t.size, prior.size
    if n == 0:
        return Fit(0.0, prior.copy(), np.zeros(n_puzzles), np.zeros(n_players), 0.0,
                   np.zeros(n_puzzles, int), np.zeros(n_players, int), 0)
    y = log_t - prior[puzzle]
    mu0 = float(np.mean(y))
    y = y - mu0
    rows = np.arange(n)
    # unknowns: [μ' (1), δ (n_puzzles), s (n_players)]; observation: μ' + δ_j − s_i
    cols = np.concatenate([np.zeros(n, np.int64), 1 + puzzle, 1 + n_puzzles + player])
    data = np.concatenate([np.ones(n), np.ones(n), -np.ones(n)])
    obs = sparse.csr_matrix((data, (np.tile(rows, 3), cols)),
                            shape=(n, 1 + n_puzzles + n_players))
    weights = np.concatenate([np.full(n_puzzles, np.sqrt(lambda_puzzle)),
                              np.full(n_players, np.sqrt(lambda_player))])
    reg = sparse.csr_matrix((weights, (np.arange(weights.size), 1 + np.arange(weights.size))),
                            shape=(weights.size, 1 + n_puzzles + n_players))
    A = sparse.vstack([obs, reg]).tocsr()
    b = np.concatenate([y, np.zeros(n_puzzles + n_players)])
    sol = lsqr(A, b, atol=tol, btol=tol, iter_lim=5000)
    x, iterations = sol[0], int(sol[2])
    mu = mu0 + float(x[0])
    delta = x[1:1 + n_puzzles]
    skill = x[1 + n_puzzles:]
    resid = y - (x[0] + delta[puzzle] - skill[player])
    return Fit(mu, mu + prior + delta, delta, skill, float(np.sqrt(np.mean(resid ** 2))),
               np.bincount(puzzle, minlength=n_puzzles),
               np.bincount(player, minlength=n_players), iterations)


def correlations(metrics: dict[str, np.ndarray], median_log_t: np.ndarray
                 ) -> dict[str, dict[str, float]]:
    """Pearson and Spearman of every metric against the puzzles' median human time."""
    # imported here: scipy.stats costs the daemon's start half a second to import
    from scipy.stats import pearsonr, spearmanr
    t = np.exp(np.asarray(median_log_t, dtype=float))
    out = {}
    for name, values in metrics.items():
        v = np.asarray(values, dtype=float)
        ok = np.isfinite(v)
        if ok.sum() < 3 or np.ptp(v[ok]) == 0 or np.ptp(t[ok]) == 0:
            continue
        out[name] = {"pearson": float(pearsonr(v[ok], t[ok])[0]),
                     "spearman": float(spearmanr(v[ok], t[ok])[0])}
    return out
