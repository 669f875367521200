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
solve's portal ``q`` (``group``), the model gains an offset per portal,
``log t_ij = μ + g_q + p_j + δ_j − s_i + ε``, with a ridge ``λ_g Σ g_q²`` of
:data:`OFFSET_PLAYERS` players' worth (``λ_g = OFFSET_PLAYERS · λ_s``): a portal of many
players' common pace is ``g_q`` (their skills are shrunk towards it, not towards every
portal's centre), so a portal of hundreds of slow or quick players (a beginners'
portal, or a hostile portal's sock puppets) cannot move, through the skills' shrinkage,
``μ`` and the difficulties another portal's players are priced on; a portal of a
handful of players (one, or a few who all copy) keeps their pace in their skills, as
one fit for all does. ``μ`` is the centre the offsets are shrunk towards (with a
single portal there is no ``g``: the fit without portals). A puzzle several portals
solved also gets each portal's own difficulty (:func:`portal_difficulties`), which that
portal's solves are priced on: one portal whose players are slow on a few shared
puzzles moves the fitted difficulty, but not what another portal's players are judged
against. A portal's price of a puzzle is its difficulty (its own, or the fitted one)
plus ``g_q``.
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
    # per portal code: g_q, its players' common pace over the fit's μ (log seconds;
    # empty without portals), its solves in the fit, and its solves' own pace over μ
    # unshrunk (g_q less the mean skill and plus the mean residual of its solves)
    group_offset: np.ndarray = field(default_factory=lambda: np.zeros(0))
    group_solves: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    group_pace: np.ndarray = field(default_factory=lambda: np.zeros(0))


# a portal's common pace is shrunk towards every portal's as this many players' skills
# are: with a handful of players (a one-player portal, a small portal whose players all
# copy) it is their skills, which are theirs, not their portal's; with hundreds it is
# the portal's own
OFFSET_PLAYERS = 50


def fit_ratings(log_t: np.ndarray, puzzle: np.ndarray, player: np.ndarray,
                prior: np.ndarray, n_players: int, *, lambda_puzzle: float = 5.0,
                lambda_player: float = 3.0, group: np.ndarray | None = None,
                lambda_group: float = 5.0, prior_sd: np.ndarray | float = 0.0,
                tol: float = 1e-8) -> Fit:
    """Fit μ, δ and s (see the module docstring). ``puzzle``/``player`` are 0-based
    indices per solve; ``prior`` holds p_j for every puzzle index; ``group`` (optional)
    each solve's portal index, for each portal's own difficulty of a puzzle several
    portals solved (:func:`portal_difficulties`, with ``prior_sd``: how sure p_j is)."""
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
    # the portals' codes, 0..n_groups-1 (none with one portal: g is 0)
    codes, g_code = (np.unique(np.asarray(group, dtype=np.int64), return_inverse=True)
                     if group is not None else (np.zeros(1, np.int64), None))
    n_groups = codes.size if codes.size > 1 else 0
    # unknowns: [μ' (1), δ (n_puzzles), s (n_players), g (n_groups)];
    # observation: μ' + δ_j − s_i + g_q
    width = 1 + n_puzzles + n_players + n_groups
    cols = [np.zeros(n, np.int64), 1 + puzzle, 1 + n_puzzles + player]
    data = [np.ones(n), np.ones(n), -np.ones(n)]
    if n_groups:
        cols.append(1 + n_puzzles + n_players + g_code.ravel())
        data.append(np.ones(n))
    obs = sparse.csr_matrix((np.concatenate(data), (np.tile(rows, len(cols)),
                                                    np.concatenate(cols))), shape=(n, width))
    weights = np.concatenate([np.full(n_puzzles, np.sqrt(lambda_puzzle)),
                              np.full(n_players, np.sqrt(lambda_player)),
                              np.full(n_groups, np.sqrt(OFFSET_PLAYERS * lambda_player))])
    reg = sparse.csr_matrix((weights, (np.arange(weights.size), 1 + np.arange(weights.size))),
                            shape=(weights.size, width))
    A = sparse.vstack([obs, reg]).tocsr()
    b = np.concatenate([y, np.zeros(weights.size)])
    sol = lsqr(A, b, atol=tol, btol=tol, iter_lim=5000)
    x, iterations = sol[0], int(sol[2])
    delta = x[1:1 + n_puzzles]
    skill = x[1 + n_puzzles:1 + n_puzzles + n_players]
    g = x[1 + n_puzzles + n_players:]
    resid = y - (x[0] + delta[puzzle] - skill[player])
    groups = {}   # the Fit's group_* fields, indexed by portal code (none: one portal)
    if n_groups:
        code = g_code.ravel()
        resid = resid - g[code]
        solves = np.bincount(code, minlength=n_groups)
        own = np.bincount(code, weights=resid - skill[player], minlength=n_groups) / solves
        for name, value in (("group_offset", g), ("group_solves", solves),
                            ("group_pace", g + own)):
            groups[name] = np.zeros(int(codes.max()) + 1, dtype=value.dtype)
            groups[name][codes] = value
    mu = mu0 + float(x[0])
    difficulty = mu + prior + delta
    pairs = (() if group is None else
             portal_difficulties(resid, puzzle, np.asarray(group, dtype=np.int64),
                                 difficulty, mu + prior - np.asarray(prior_sd, dtype=float),
                                 lambda_group))
    return Fit(mu, difficulty, delta, skill, float(np.sqrt(np.mean(resid ** 2))),
               np.bincount(puzzle, minlength=n_puzzles),
               np.bincount(player, minlength=n_players), iterations, *pairs, **groups)


def portal_difficulties(resid: np.ndarray, puzzle: np.ndarray, group: np.ndarray,
                        difficulty: np.ndarray, base: np.ndarray, lambda_group: float
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(puzzle, portal, difficulty, solves) of each portal's own difficulty of each
    puzzle solved on more than one portal: the fitted difficulty moved by the portal's
    mean residual on it (less the median of those over the portal's puzzles: a
    portal-wide speed is its players'), shrunk by ``lambda_group`` solves' worth of the
    fit, and held between the fitted difficulty and ``base`` (μ + p_j less its sd:
    the quickest the puzzle's metrics make plausible): a portal's players quicker on a
    puzzle than every portal and its metrics say (a solution leaked there) keep the
    shared yardstick, and another portal's slow players move this one's by no more than
    the metrics' error."""
    span = int(group.max()) + 1
    keys, pair = np.unique(puzzle * span + group, return_inverse=True)
    pair = pair.ravel()
    pair_puzzle, pair_group = keys // span, keys % span
    several = np.bincount(pair_puzzle, minlength=difficulty.size)[pair_puzzle] > 1
    solves = np.bincount(pair, minlength=keys.size)
    mean = np.bincount(pair, weights=resid, minlength=keys.size) / solves
    # what a portal's players share on every puzzle (the part of a portal-wide speed
    # the skills' shrinkage left in the residuals) is theirs, not the puzzles': the
    # median over the portal's puzzles, which a few odd ones do not move
    centre = np.zeros(span)
    for q in np.unique(pair_group).tolist():
        centre[q] = np.median(mean[pair_group == q])
    moved = (mean - centre[pair_group]) * solves / (solves + lambda_group)
    shared = difficulty[pair_puzzle]
    low = np.minimum(shared, base[pair_puzzle])
    high = np.maximum(shared, base[pair_puzzle])
    own = np.clip(shared + moved, low, high)
    return (pair_puzzle[several], pair_group[several], own[several], solves[several])


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
