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
average player.

**Portals.** Players belong to a portal; puzzles may be shared by several. Given each
solve's portal (``group``), δ becomes one ``δ_jq`` per puzzle and portal that solved it,
and the ridge acts on their mean ``δ_j = Σ_q w_jq δ_jq`` (``λ_d``) and on each portal's
distance from it (``λ_g Σ_q (δ_jq − δ_j)²``). A portal weighs ``w ∝ n/(n + λ_g)`` for
its ``n`` solves of the puzzle: at most one vote, however many players it has. Each
portal then prices its own players' solves on its own ``d_jq = μ + p_j + δ_jq``: one
portal whose players are slow on a few shared puzzles (by design or by chance) moves its
own difficulties and only part of the shared one, never another portal's much. A puzzle
solved on one portal only has one ``δ_jq = δ_j`` and the fit of the model without
portals.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
    # per (puzzle, portal) that solved it, for puzzles solved on more than one portal
    # (every other puzzle's portal prices on ``difficulty``)
    pair_puzzle: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    pair_group: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    pair_difficulty: np.ndarray = field(default_factory=lambda: np.zeros(0))
    pair_solves: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


def fit_ratings(log_t: np.ndarray, puzzle: np.ndarray, player: np.ndarray,
                prior: np.ndarray, n_players: int, *, lambda_puzzle: float = 5.0,
                lambda_player: float = 3.0, group: np.ndarray | None = None,
                lambda_group: float = 5.0, tol: float = 1e-8) -> Fit:
    """Fit μ, δ and s (see the module docstring). ``puzzle``/``player`` are 0-based
    indices per solve; ``prior`` holds p_j for every puzzle index; ``group`` (optional)
    each solve's portal index."""
    log_t = np.asarray(log_t, dtype=float)
    puzzle = np.asarray(puzzle, dtype=np.int64)
    player = np.asarray(player, dtype=np.int64)
    prior = np.asarray(prior, dtype=float)
    n, n_puzzles = log_t.size, prior.size
    if n == 0:
        return Fit(0.0, prior.copy(), np.zeros(n_puzzles), np.zeros(n_players), 0.0,
                   np.zeros(n_puzzles, int), np.zeros(n_players, int), 0)
    group = (np.zeros(n, np.int64) if group is None
             else np.asarray(group, dtype=np.int64))
    y = log_t - prior[puzzle]
    mu0 = float(np.mean(y))
    y = y - mu0
    # one unknown δ_jq per (puzzle, portal) that solved it, sorted by puzzle
    span = int(group.max()) + 1
    keys, pair = np.unique(puzzle * span + group, return_inverse=True)
    pair = pair.ravel()
    n_pairs = keys.size
    pair_puzzle, pair_group = keys // span, keys % span
    pair_solves = np.bincount(pair, minlength=n_pairs)
    portals = np.bincount(pair_puzzle, minlength=n_puzzles)
    # each portal's vote in its puzzle's mean δ_j: n/(n + λ_g), normalised; 1 when alone
    vote = pair_solves / (pair_solves + lambda_group)
    weight = vote / np.bincount(pair_puzzle, weights=vote, minlength=n_puzzles)[pair_puzzle]
    rows = np.arange(n)
    # unknowns: [μ' (1), δ per pair (n_pairs), s (n_players)]; observation: μ' + δ_jq − s_i
    width = 1 + n_pairs + n_players
    cols = np.concatenate([np.zeros(n, np.int64), 1 + pair, 1 + n_pairs + player])
    data = np.concatenate([np.ones(n), np.ones(n), -np.ones(n)])
    obs = sparse.csr_matrix((data, (np.tile(rows, 3), cols)), shape=(n, width))
    solved = np.flatnonzero(portals)
    row_of = np.full(n_puzzles, -1, np.int64)
    row_of[solved] = np.arange(solved.size)
    # √λ_d · δ_j, δ_j = Σ_q w_jq δ_jq, one row per puzzle solved
    mean_rows = sparse.csr_matrix(
        (np.sqrt(lambda_puzzle) * weight, (row_of[pair_puzzle], 1 + np.arange(n_pairs))),
        shape=(solved.size, width))
    # √λ_g · (δ_jq − δ_j), one row per pair of a puzzle several portals solved: its
    # entries span the pairs of the puzzle (contiguous, as pairs are sorted by puzzle)
    shared = np.flatnonzero(portals[pair_puzzle] > 1)
    first = np.searchsorted(pair_puzzle, pair_puzzle[shared])
    span_of = portals[pair_puzzle[shared]]
    r_idx = np.repeat(np.arange(shared.size), span_of)
    m = np.repeat(first, span_of) + (np.arange(span_of.sum())
                                     - np.repeat(np.cumsum(span_of) - span_of, span_of))
    vals = np.sqrt(lambda_group) * ((m == shared[r_idx]) - weight[m])
    spread_rows = sparse.csr_matrix((vals, (r_idx, 1 + m)), shape=(shared.size, width))
    skill_rows = sparse.csr_matrix(
        (np.full(n_players, np.sqrt(lambda_player)),
         (np.arange(n_players), 1 + n_pairs + np.arange(n_players))),
        shape=(n_players, width))
    A = sparse.vstack([obs, mean_rows, spread_rows, skill_rows]).tocsr()
    b = np.concatenate([y, np.zeros(A.shape[0] - n)])
    sol = lsqr(A, b, atol=tol, btol=tol, iter_lim=5000)
    x, iterations = sol[0], int(sol[2])
    mu = mu0 + float(x[0])
    pair_delta = x[1:1 + n_pairs]
    delta = np.bincount(pair_puzzle, weights=weight * pair_delta, minlength=n_puzzles)
    skill = x[1 + n_pairs:]
    resid = y - (x[0] + pair_delta[pair] - skill[player])
    several = portals[pair_puzzle] > 1
    return Fit(mu, mu + prior + delta, delta, skill, float(np.sqrt(np.mean(resid ** 2))),
               np.bincount(puzzle, minlength=n_puzzles),
               np.bincount(player, minlength=n_players), iterations,
               pair_puzzle[several], pair_group[several],
               mu + prior[pair_puzzle[several]] + pair_delta[several],
               pair_solves[several])


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
