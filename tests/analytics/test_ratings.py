"""The nightly ratings fit (``log t = μ + p_j + δ_j − s_i``) and its correlations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fairgrid.analytics.ratings import correlations, fit_ratings


def _synthetic(seed=0, n_puzzles=30, n_players=40, solves_per_pair=0.6, sd=0.05,
               mu=0.4):
    """Solves drawn from the model itself: known μ, p, δ (mean 0) and s (mean 0)."""
    rng = np.random.default_rng(seed)
    prior = rng.uniform(5.5, 7.5, n_puzzles)
    delta = rng.normal(0, 0.3, n_puzzles)
    delta -= delta.mean()
    skill = rng.normal(0, 0.4, n_players)
    skill -= skill.mean()
    pairs = np.argwhere(rng.random((n_players, n_puzzles)) < solves_per_pair)
    player, puzzle = pairs[:, 0], pairs[:, 1]
    log_t = mu + prior[puzzle] + delta[puzzle] - skill[player] + rng.normal(0, sd, len(pairs))
    return log_t, puzzle, player, prior, mu, delta, skill


def _dense_ridge(log_t, puzzle, player, prior, n_players, lam_d, lam_s):
    """The same objective, solved densely and independently of the module's LSQR."""
    n, n_puzzles = log_t.size, prior.size
    A = np.zeros((n + n_puzzles + n_players, 1 + n_puzzles + n_players))
    A[np.arange(n), 0] = 1.0
    A[np.arange(n), 1 + puzzle] = 1.0
    A[np.arange(n), 1 + n_puzzles + player] = -1.0
    A[n + np.arange(n_puzzles), 1 + np.arange(n_puzzles)] = math.sqrt(lam_d)
    A[n + n_puzzles + np.arange(n_players), 1 + n_puzzles + np.arange(n_players)] = \
        math.sqrt(lam_s)
    b = np.concatenate([log_t - prior[puzzle], np.zeros(n_puzzles + n_players)])
    x = np.linalg.lstsq(A, b, rcond=None)[0]
    return x[0], x[1:1 + n_puzzles], x[1 + n_puzzles:]


# ---------------------------------------------------------------------------- fit

def test_recovers_known_difficulties_and_skills():
    log_t, puzzle, player, prior, mu, delta, skill = _synthetic()
    fit = fit_ratings(log_t, puzzle, player, prior, skill.size,
                      lambda_puzzle=0.01, lambda_player=0.01)
    # d_j − s_i is what the data pin down; with both true means 0 the fit's own
    # convention (Σ s = 0, Σ δ = 0) lines up with the truth
    np.testing.assert_allclose(fit.difficulty, mu + prior + delta, atol=0.03)
    np.testing.assert_allclose(fit.skill, skill, atol=0.03)
    np.testing.assert_allclose(fit.delta, delta, atol=0.03)
    assert fit.mu == pytest.approx(mu, abs=0.02)
    assert fit.residual_sd == pytest.approx(0.05, rel=0.15)
    assert np.corrcoef(fit.skill, skill)[0, 1] > 0.99


def test_matches_a_dense_solve_of_the_same_ridge_objective():
    log_t, puzzle, player, prior, *_ , skill = _synthetic(seed=3, n_puzzles=12, n_players=15,
                                                          solves_per_pair=0.3, sd=0.3)
    fit = fit_ratings(log_t, puzzle, player, prior, skill.size,
                      lambda_puzzle=5.0, lambda_player=3.0)
    mu, delta, s = _dense_ridge(log_t, puzzle, player, prior, skill.size, 5.0, 3.0)
    assert fit.mu == pytest.approx(mu, abs=1e-6)
    np.testing.assert_allclose(fit.delta, delta, atol=1e-6)
    np.testing.assert_allclose(fit.skill, s, atol=1e-6)
    np.testing.assert_allclose(fit.difficulty, fit.mu + prior + fit.delta, atol=1e-12)


def test_identifiability_convention_sum_of_skills_and_deltas_is_zero():
    # μ is unpenalised, so the ridge optimum centres both penalised blocks at 0
    log_t, puzzle, player, prior, *_ = _synthetic(seed=5, sd=0.4, solves_per_pair=0.2)
    fit = fit_ratings(log_t, puzzle, player, prior, 40)
    assert abs(fit.skill.sum()) < 1e-6
    assert abs(fit.delta.sum()) < 1e-6


def test_counts_residual_sd_and_players_without_solves():
    log_t, puzzle, player, prior, *_ = _synthetic(seed=7, n_players=10, sd=0.3)
    fit = fit_ratings(log_t, puzzle, player, prior, 13)  # players 10–12 never solved
    np.testing.assert_array_equal(fit.puzzle_solves, np.bincount(puzzle, minlength=30))
    np.testing.assert_array_equal(fit.player_solves[:10], np.bincount(player, minlength=10))
    np.testing.assert_array_equal(fit.player_solves[10:], 0)
    assert fit.skill.shape == (13,) and np.all(np.abs(fit.skill[10:]) < 1e-12)
    resid = log_t - (fit.difficulty[puzzle] - fit.skill[player])
    assert fit.residual_sd == pytest.approx(np.sqrt(np.mean(resid ** 2)), rel=1e-9)
    assert fit.iterations > 0


def test_puzzle_with_few_solves_stays_near_its_prior():
    """λ_d is "solves' worth of prior weight": with the players' skills pinned by their
    other solves, a puzzle that n solves put +1 above its prior moves ≈ n/(n+λ_d)."""
    rng = np.random.default_rng(11)
    prior = np.full(22, 6.0)
    # 20 players × 20 puzzles, all on prior ...
    puzzle = np.repeat(np.arange(20), 20)
    player = np.tile(np.arange(20), 20)
    log_t = 6.0 + rng.normal(0, 0.01, puzzle.size)
    # ... then puzzle 20 gets one solve 1 log-unit slow, puzzle 21 twenty of them
    puzzle = np.concatenate([puzzle, [20], np.full(20, 21)])
    player = np.concatenate([player, [0], np.arange(20)])
    log_t = np.concatenate([log_t, [7.0], np.full(20, 7.0)])
    moved = {}
    for lam in (5.0, 50.0):
        fit = fit_ratings(log_t, puzzle, player, prior, 20, lambda_puzzle=lam,
                          lambda_player=3.0)
        base = fit.difficulty[:20].mean()
        one, many = fit.difficulty[20] - base, fit.difficulty[21] - base
        assert one == pytest.approx(1 / (1 + lam), abs=0.04)
        assert many == pytest.approx(20 / (20 + lam), abs=0.03)
        moved[lam] = (one, many)
    assert moved[50.0][0] < moved[5.0][0] and moved[50.0][1] < moved[5.0][1]


def test_new_player_skill_is_shrunk_towards_zero():
    rng = np.random.default_rng(2)
    prior = np.full(10, 6.0)
    puzzle = np.repeat(np.arange(10), 10)
    player = np.tile(np.arange(10), 10)
    log_t = 6.0 + rng.normal(0, 0.01, 100)
    # player 10 solves once, twice as fast as expected (log 2 faster)
    puzzle, player = np.append(puzzle, 0), np.append(player, 10)
    log_t = np.append(log_t, 6.0 - math.log(2))
    weak = fit_ratings(log_t, puzzle, player, prior, 11, lambda_player=3.0)
    strong = fit_ratings(log_t, puzzle, player, prior, 11, lambda_player=30.0)
    assert 0 < weak.skill[10] < math.log(2) / 2
    assert 0 < strong.skill[10] < weak.skill[10]


def test_empty_input_returns_the_prior():
    prior = np.array([5.0, 6.5, 7.0])
    fit = fit_ratings(np.zeros(0), np.zeros(0, int), np.zeros(0, int), prior, 4)
    assert fit.mu == 0.0 and fit.iterations == 0 and fit.residual_sd == 0.0
    np.testing.assert_array_equal(fit.difficulty, prior)
    assert fit.difficulty is not prior
    np.testing.assert_array_equal(fit.skill, np.zeros(4))
    np.testing.assert_array_equal(fit.puzzle_solves, np.zeros(3))
    np.testing.assert_array_equal(fit.player_solves, np.zeros(4))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 31), shift=st.floats(-3, 3), prior_shift=st.floats(-3, 3))
def test_constant_shifts_move_mu_only(seed, shift, prior_shift):
    """Slower portal (log_t + c): μ and d move by c, δ and s unchanged; a prior that is
    off by a constant is absorbed by μ and leaves d unchanged."""
    log_t, puzzle, player, prior, *_ = _synthetic(seed=seed, n_puzzles=8, n_players=9,
                                                  solves_per_pair=0.5, sd=0.3)
    if log_t.size == 0:
        return
    base = fit_ratings(log_t, puzzle, player, prior, 9)
    moved = fit_ratings(log_t + shift, puzzle, player, prior, 9)
    assert moved.mu == pytest.approx(base.mu + shift, abs=1e-6)
    np.testing.assert_allclose(moved.difficulty, base.difficulty + shift, atol=1e-6)
    np.testing.assert_allclose(moved.skill, base.skill, atol=1e-6)
    np.testing.assert_allclose(moved.delta, base.delta, atol=1e-6)
    off = fit_ratings(log_t, puzzle, player, prior + prior_shift, 9)
    assert off.mu == pytest.approx(base.mu - prior_shift, abs=1e-6)
    np.testing.assert_allclose(off.difficulty, base.difficulty, atol=1e-6)


# -------------------------------------------------------------------- correlations

def test_correlations_against_hand_computed_values():
    # Pearson is of the metric against the median *time* exp(median_log_t):
    # v = (1, 2, 3), t = (1, 2, 4): Σdv·dt = 3, Σdv² = 2, Σdt² = 42/9 → r = 9/√84
    out = correlations({"m": np.array([1.0, 2.0, 3.0])}, np.log([1.0, 2.0, 4.0]))
    assert out["m"]["pearson"] == pytest.approx(9 / math.sqrt(84), rel=1e-12)
    assert out["m"]["spearman"] == pytest.approx(1.0)
    # a decreasing metric with one swap: ranks (4,3,1,2) against (1,2,3,4):
    # Σd² = 9+1+4+4 = 18 → ρ = 1 − 6·18/(4·15) = −0.8
    out = correlations({"m": np.array([40.0, 30.0, 10.0, 20.0])},
                       np.log([10.0, 20.0, 30.0, 40.0]))
    assert out["m"]["spearman"] == pytest.approx(-0.8)
    # v = (40, 30, 10, 20), t = (10, 20, 30, 40): dv = (15, 5, −15, −5), dt = (−15, −5, 5, 15)
    # Σdv·dt = −225 −25 −75 −75 = −400, Σdv² = Σdt² = 500 → r = −0.8
    assert out["m"]["pearson"] == pytest.approx(-0.8)


def test_correlations_match_scipy_and_drop_non_finite_metric_values():
    from scipy.stats import pearsonr, spearmanr
    rng = np.random.default_rng(4)
    med = rng.normal(6, 0.5, 25)
    v = med * 2 + rng.normal(0, 0.5, 25)
    w = v.copy()
    w[[3, 10]] = np.nan
    w[7] = np.inf
    out = correlations({"v": v, "w": w}, med)
    assert out["v"]["pearson"] == pytest.approx(pearsonr(v, np.exp(med))[0], rel=1e-12)
    assert out["v"]["spearman"] == pytest.approx(spearmanr(v, med)[0], rel=1e-12)
    keep = np.isfinite(w)
    assert out["w"]["pearson"] == pytest.approx(pearsonr(w[keep], np.exp(med[keep]))[0])
    assert out["w"]["spearman"] == pytest.approx(spearmanr(w[keep], med[keep])[0])


def test_correlations_skip_constant_and_too_short_metrics():
    med = np.log([100.0, 200.0, 300.0, 400.0])
    out = correlations({"const": np.full(4, 2.0),
                        "short": np.array([1.0, np.nan, np.nan, 2.0]),
                        "three": np.array([1.0, np.nan, 3.0, 2.0]),
                        "ok": np.array([1.0, 2.0, 3.0, 4.0])}, med)
    assert set(out) == {"three", "ok"}
    assert out["ok"]["pearson"] == pytest.approx(1.0) and out["ok"]["spearman"] == 1.0
    assert correlations({"a": np.array([1.0, 2.0, 3.0])}, np.full(3, 5.0)) == {}
    assert correlations({}, med) == {}


def test_complete_metrics_rates_only_what_is_missing():
    from fairgrid.analytics.puzzle_model import complete_metrics
    from fairgrid.solvers import parse
    from fairgrid.solvers.rate import rate

    from ..fixtures import MEDIUM
    old = rate(parse(MEDIUM), rng=0, only=("human",)).metrics  # analysed before tq_*
    assert "tq_hardest" not in old
    done = complete_metrics(MEDIUM, old, ("serate", "tq_hardest", "tq_scan"))
    assert done["serate"] == old["serate"]  # kept, not re-rated
    fresh = rate(parse(MEDIUM), rng=5, only=("techniques",)).metrics
    assert done["tq_hardest"] == fresh["tq_hardest"] and done["tq_scan"] == fresh["tq_scan"]
    assert complete_metrics(MEDIUM, done, ("serate",)) == done


# ------------------------------------------------------------------------- portals

def _two_portals(seed=0, slow=math.log(3), hostile=200):
    """Portal 0's players solve every puzzle at their skill; portal 1's (``hostile`` of
    them) solve puzzles 0–4 ``exp(slow)`` times slower and ten others as usual."""
    rng = np.random.default_rng(seed)
    n_puzzles, honest = 60, 300
    prior = rng.normal(6.5, 0.5, n_puzzles)
    truth = prior - 1.0 + rng.normal(0, 0.25, n_puzzles)
    rows = []
    for i in range(honest):
        s = rng.normal(0, 0.4)
        rows += [(j, i, truth[j] - s + rng.normal(0, 0.2), 0)
                 for j in rng.choice(n_puzzles, 15, replace=False)]
    for b in range(hostile):
        i = honest + b
        rows += [(j, i, truth[j] + slow + rng.normal(0, 0.2), 1) for j in range(5)]
        rows += [(j, i, truth[j] + rng.normal(0, 0.2), 1)
                 for j in rng.choice(np.arange(5, n_puzzles), 10, replace=False)]
    r = np.array(rows)
    return (r[:, 2], r[:, 0].astype(int), r[:, 1].astype(int), prior, honest + hostile,
            r[:, 3].astype(int), truth)


def _own(fit, portal):
    """Each puzzle's difficulty as ``portal`` prices it."""
    own = fit.difficulty.copy()
    mine = fit.pair_group == portal
    own[fit.pair_puzzle[mine]] = fit.pair_difficulty[mine]
    return own


def test_one_portals_slow_players_do_not_move_the_difficulty_another_portal_prices_on():
    log_t, puzzle, player, prior, n_players, group, truth = _two_portals()
    pooled = fit_ratings(log_t, puzzle, player, prior, n_players)
    fit = fit_ratings(log_t, puzzle, player, prior, n_players, group=group, prior_sd=0.25)

    def moved(d):   # the five puzzles' mean shift against the others', from the truth
        return np.mean(d[:5] - truth[:5]) - np.mean(d[5:] - truth[5:])

    # one pooled fit makes them 1.6 times harder for everyone (their solves outnumber)
    assert moved(pooled.difficulty) > math.log(1.5)
    # portal 0 prices them on its own players' times, held no lower than the metrics'
    # prediction less its sd allows
    assert abs(moved(_own(fit, 0))) < math.log(1.15)
    # portal 1 prices them no lower than the shared difficulty
    assert np.all(_own(fit, 1)[:5] >= fit.difficulty[:5] - 1e-12)
    # every puzzle both portals solved has a row for each, and only those
    both = np.flatnonzero(np.bincount(puzzle[group == 0], minlength=prior.size)
                          * np.bincount(puzzle[group == 1], minlength=prior.size))
    assert sorted(fit.pair_puzzle[fit.pair_group == 0]) == list(both)
    assert sorted(fit.pair_puzzle[fit.pair_group == 1]) == list(both)
    assert fit.pair_solves.sum() == np.isin(puzzle, both).sum()


def test_a_portal_wide_speed_is_its_players_skill_not_its_own_difficulty():
    """A portal whose players are all twice as quick keeps the shared difficulties:
    its speed is its players' (the portal's offset, over which their skills spread), so
    a puzzle it has not solved yet prices them right."""
    log_t, puzzle, player, prior, n_players, group, _ = _two_portals(slow=0.0)
    log_t = np.where(group == 1, log_t - math.log(2), log_t)
    fit = fit_ratings(log_t, puzzle, player, prior, n_players, group=group, prior_sd=0.25)
    for portal in (0, 1):   # no more than the noise of a few dozen solves a puzzle
        assert np.mean(np.abs(_own(fit, portal) - fit.difficulty)) < 0.03, portal

    def pace(q):   # a portal's players' mean log-speed over the fit's centre
        return fit.skill[np.unique(player[group == q])].mean() - fit.group_offset[q]
    assert pace(1) - pace(0) > math.log(2) * 0.8


def test_a_portal_of_many_slow_players_does_not_move_another_portals_prices():
    """Portal 1's 200 players are ten times slower on every puzzle they solve: their
    common pace is mostly their portal's offset, not a shift of the centre every skill
    is shrunk towards, so what portal 0's players are priced at (difficulty plus the
    portal's offset, less their skill) is about what it was without portal 1."""
    log_t, puzzle, player, prior, n_players, group, _ = _two_portals(slow=0.0)
    log_t = np.where(group == 1, log_t + math.log(10), log_t)
    alone = group == 0
    honest = np.unique(player[alone])
    solo = fit_ratings(log_t[alone], puzzle[alone], player[alone], prior, n_players,
                       group=group[alone], prior_sd=0.25)
    fit = fit_ratings(log_t, puzzle, player, prior, n_players, group=group, prior_sd=0.25)
    before = solo.difficulty.mean() - solo.skill[honest].mean()
    after = (_own(fit, 0).mean() + fit.group_offset[0] - fit.skill[honest].mean())
    assert abs(after - before) < math.log(1.05)
    # without the offsets the same solves price portal 0's players 1.16 times slower
    pooled = fit_ratings(log_t, puzzle, player, prior, n_players)
    assert pooled.difficulty.mean() - pooled.skill[honest].mean() - before > math.log(1.1)
    # a portal of a handful of players keeps their pace in their skills (one fit for
    # all's pricing, about): its offset is shrunk towards the others'
    few = np.unique(player[group == 1])[:3]
    keep = (group == 0) | np.isin(player, few)
    small = fit_ratings(log_t[keep], puzzle[keep], player[keep], prior, n_players,
                        group=group[keep], prior_sd=0.25)
    assert abs(small.group_offset[1] - small.group_offset[0]) < 0.1 * math.log(10)


def test_a_solution_leaked_on_one_portal_does_not_lower_its_yardstick():
    """A portal whose players are five times quicker on a few puzzles than every other
    portal and the puzzles' metrics say is priced on the shared difficulty there: a
    leak does not hide itself by making the puzzle easy for that portal."""
    log_t, puzzle, player, prior, n_players, group, _ = _two_portals(slow=-math.log(5),
                                                                     hostile=100)
    fit = fit_ratings(log_t, puzzle, player, prior, n_players, group=group, prior_sd=0.25)
    np.testing.assert_allclose(_own(fit, 1)[:5], fit.difficulty[:5])


def test_portals_that_agree_get_the_pooled_fit():
    """Where the portals' players solve alike, each portal's own difficulty is the
    pooled fit's."""
    log_t, puzzle, player, prior, n_players, group, _ = _two_portals(slow=0.0)
    pooled = fit_ratings(log_t, puzzle, player, prior, n_players)
    fit = fit_ratings(log_t, puzzle, player, prior, n_players, group=group, prior_sd=0.25)
    for portal in (0, 1):
        np.testing.assert_allclose(_own(fit, portal), pooled.difficulty, atol=0.05)


def test_one_portal_is_the_fit_without_portals():
    log_t, puzzle, player, prior, mu, delta, skill = _synthetic(seed=3)
    plain = fit_ratings(log_t, puzzle, player, prior, skill.size)
    one = fit_ratings(log_t, puzzle, player, prior, skill.size,
                      group=np.full(log_t.size, 4))
    np.testing.assert_array_equal(one.difficulty, plain.difficulty)
    np.testing.assert_array_equal(one.skill, plain.skill)
    assert one.pair_puzzle.size == 0
