"""The honest null (fit_null and its guard), the combination rule, Benjamini–Hochberg and
the player's accumulated evidence.

``score``'s end-to-end checks live in test_scoring.py; these pin the arithmetic and the
properties the nulls must have to hold for people unlike the simulator.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fairgrid.analytics.calibration import (GUARD, bh, complete, fit_null, guard,
                                            honest_null, judge, player_z, tail)
from fairgrid.analytics.signals import PACE_ALLOWANCE, pace_allowance

# ------------------------------------------------------------------------ fit_null


def test_fit_null_matches_the_odd_side_decile_and_quartile():
    rng = np.random.default_rng(0)
    v = rng.normal(0.6, 0.25, 20_000)
    centre, scale = fit_null({"order_sa": list(v)})["order_sa"]
    assert centre == pytest.approx(0.6, abs=0.02) and scale == pytest.approx(0.25, abs=0.02)
    # high-odd signals read the upper side
    centre, scale = fit_null({"switch": list(rng.normal(0.5, 0.4, 20_000))})["switch"]
    assert centre == pytest.approx(0.5, abs=0.03) and scale == pytest.approx(0.4, abs=0.03)


def test_fit_null_ignores_a_few_cheats_and_a_mixture_does_not_widen_the_odd_tail():
    rng = np.random.default_rng(1)
    honest = rng.normal(0.6, 0.3, 2_000)
    cheats = np.full(60, -0.5)  # 3 % copiers far in the odd tail
    centre, scale = fit_null({"order_sa": list(np.r_[honest, cheats])})["order_sa"]
    assert centre == pytest.approx(0.6, abs=0.06) and scale == pytest.approx(0.3, abs=0.05)
    # two kinds of people: the odd tail is the lower group's, not the mixture's MAD
    mix = np.r_[rng.normal(-0.4, 0.25, 3_000), rng.normal(0.1, 0.25, 3_000)]
    centre, scale = fit_null({"pace_variation": list(np.exp(mix))})["pace_variation"]
    assert scale < 1.4826 * np.median(np.abs(mix - np.median(mix)))


def test_guard_keeps_every_null_at_least_as_wide_as_people_differ():
    # a simulator that makes everyone alike cannot produce a narrow null
    same = [0.9] * 50
    null = fit_null({"order_sa": same, "pacing_difficulty": same, "switch": [0.0] * 50,
                     "pace_variation": [2.0] * 50, "unforced": [0.0] * 50})
    assert null["order_sa"] == (0.9, GUARD["order_sa"][0])
    assert null["pacing_difficulty"] == (GUARD["pacing_difficulty"][1], 0.2)
    assert null["switch"] == (0.4, 0.3)
    assert null["pace_variation"] == pytest.approx((math.log(0.6), 0.2))
    assert null["unforced"] == (2.0, 1.0)
    # a wider measured spread is kept; guard is idempotent
    assert guard("order_sa", 0.5, 0.4) == (0.5, 0.4)
    assert guard("order_sa", *guard("order_sa", 0.5, 0.01)) == guard("order_sa", 0.5, 0.01)


def test_fit_null_drops_non_finite_values_needs_five_and_completes_the_rest():
    null = fit_null({"order_sa": [0.1, 0.2, np.nan, 0.3, np.inf, -np.inf],
                     "pacing_difficulty": []})
    assert "order_sa" not in null  # four finite values only
    # every puzzle has speed, paste and the guard's bounds for signals never seen
    assert null["speed"] == (0.0, 1.0) and null["paste"] == (0.0, 0.5)
    assert null["pacing_difficulty"] == (0.0, 0.2)
    assert complete({"deducible": (1.0, 0.05)}).get("deducible") is None  # retired names


def test_unforced_is_a_poisson_tail():
    # P(Poisson(2) >= 5) = 1 - e^-2 (1 + 2 + 2 + 4/3 + 2/3) = 0.052653
    z, p = tail("unforced", 5.0, 2.0, 1.0)
    assert p == pytest.approx(0.052653, rel=1e-4) and z > 0
    assert tail("unforced", 0.0, 2.0, 1.0)[1] > 0.999
    assert tail("unforced", 30.0, 2.0, 1.0)[1] < 1e-15


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-0.9, 0.95), min_size=5, max_size=60), st.floats(-0.3, 0.3))
def test_fit_null_moves_with_the_population(values, shift):
    base = fit_null({"order_sa": values})["order_sa"]
    moved = fit_null({"order_sa": [v + shift for v in values]})["order_sa"]
    assert moved[0] == pytest.approx(base[0] + shift, abs=1e-9)
    assert moved[1] == pytest.approx(base[1], abs=1e-9)
    assert base[1] >= GUARD["order_sa"][0]


# --------------------------------------------------------------- the decision rule


def _null():
    return complete({"order_sa": (0.5, 0.2), "pace_variation": (math.log(0.6), 0.2),
                     "pacing_difficulty": (0.0, 0.2), "switch": (0.4, 0.3)})


def test_one_kind_of_evidence_needs_to_be_beyond_what_people_do():
    null = _null()
    # order far off and nothing else: one family, not beyond 1e-6 and not allowed alone
    v = judge({"order_sa": -1.0, "pace_variation": 0.8}, null)
    assert not v.flagged
    # both pacing signals odd: still one family (a steady person is steady twice)
    v = judge({"pace_variation": 0.3, "pacing_difficulty": -0.6}, null)
    assert not v.flagged and [f for f, _ in v.families] == ["pacing"]
    # a metronome: beyond anything people do, flagged by pacing alone
    v = judge({"pace_variation": 0.05, "pacing_difficulty": 0.0}, null)
    assert v.flagged and v.rule == "alone" and "pace_variation" in v.reasons
    # two independent families each below 1 in 100
    v = judge({"order_sa": -0.2, "unforced": 12.0, "pace_variation": 0.8}, null)
    assert v.flagged and v.rule == "two" and set(v.reasons) == {"order_sa", "unforced"}


def test_a_family_counts_once_in_the_combination():
    null = _null()
    one = judge({"pace_variation": 0.3}, null)
    two = judge({"pace_variation": 0.3, "pacing_difficulty": 1.0}, null)
    # the second member is unremarkable, so the family's p is the first's times two
    assert two.p_value == pytest.approx(min(1.0, 2 * one.p_value), rel=1e-9)


def test_p_values_stay_in_the_open_interval():
    null = _null()
    for values in ({}, {"unforced": 0.0}, {"order_sa": 1.0, "switch": 0.0},
                   {"order_sa": -1.0, "unforced": 80.0, "pace_variation": 1e-9}):
        v = judge(values, null)
        assert 0.0 < v.p_value < 1.0 and math.isfinite(v.anomaly)
        assert all(0.0 < s.p < 1.0 and math.isfinite(s.z) for s in v.signals)


# ------------------------------------------------------------------------------ bh


def test_bh_hand_worked_step_up():
    # m = 4, q = 0.05: thresholds k·q/m = 0.0125, 0.025, 0.0375, 0.05
    # sorted p = 0.001 ✓, 0.03 ✗ (> 0.025), 0.035 ✓ (≤ 0.0375), 0.2 ✗
    # step-up: the largest passing rank is 3, so the three smallest are all rejected
    p = [0.2, 0.035, 0.001, 0.03]
    assert list(bh(p, q=0.05)) == [False, True, True, True]
    # step-down (Holm-like) would have stopped at 0.03; a looser q adds the last one
    assert list(bh(p, q=0.2)) == [True, True, True, True]
    # q = 0.005: 0.001 ≤ 0.00125 passes alone; q = 0.003: 0.001 > 0.00075, none
    assert list(bh(p, q=0.005)) == [False, False, True, False]
    assert list(bh(p, q=0.003)) == [False, False, False, False]


def test_bh_classic_example():
    # Benjamini & Hochberg (1995), 15 p-values, q = 0.05: the four smallest are rejected
    p = [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240,
         0.4262, 0.5719, 0.6528, 0.7590, 1.0]
    assert int(bh(p, 0.05).sum()) == 4 and bh(p, 0.05)[:4].all()


def test_bh_ties_and_edges():
    assert list(bh([0.04, 0.04, 0.04], q=0.04)) == [True, True, True]
    assert list(bh([1.0, 1.0], q=1.0)) == [True, True]
    assert bh(np.array([0.5]), q=0.05).dtype == bool
    assert list(bh([0.05], q=0.05)) == [True]


def _bh_reference(p, q):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    k_max = 0
    for rank, i in enumerate(order, start=1):
        if p[i] <= q * rank / m:
            k_max = rank
    out = [False] * m
    for i in order[:k_max]:
        out[i] = True
    return out


_p = st.floats(0, 1, allow_nan=False) | st.sampled_from([0.0, 1e-6, 0.01, 0.02, 0.05, 1.0])


@settings(max_examples=200, deadline=None)
@given(st.lists(_p, min_size=1, max_size=30), st.sampled_from([0.01, 0.05, 0.1, 0.2]))
def test_bh_matches_reference_and_scipy(p, q):
    from scipy.stats import false_discovery_control
    got = bh(p, q)
    assert list(got) == _bh_reference(p, q) or _near_a_threshold(p, q)
    if not _near_a_threshold(p, q):
        adjusted = false_discovery_control(np.asarray(p), method="bh")
        assert list(got) == list(adjusted <= q)
    # rejections are closed downwards in p and grow with q
    arr = np.asarray(p)
    if got.any():
        assert np.all(got[arr <= arr[got].max()])
    assert np.all(bh(p, min(1.0, 2 * q)) >= got)
    # permuting the inputs permutes the answer
    perm = np.random.default_rng(len(p)).permutation(len(p))
    np.testing.assert_array_equal(bh(arr[perm], q), got[perm])


def _near_a_threshold(p, q):
    m = len(p)
    s = np.sort(np.asarray(p))
    return bool(np.any(np.isclose(s * m / np.arange(1, m + 1), q, rtol=1e-12, atol=0)))


# ------------------------------------------------------------------------ players


def test_player_z_by_hand():
    # one solve: z itself, clipped to [−1, 6]
    assert player_z([0.025]) == pytest.approx(1.959964, rel=1e-6)
    assert player_z([1e-40]) == 6.0 and player_z([0.999999]) == -1.0
    assert player_z([]) == 0.0
    # four solves at z = 3.0902 with rho 0.2: 4 * 3.0902 / sqrt(4 * 1.6)
    assert player_z([1e-3] * 4) == pytest.approx(4 * 3.0902 / math.sqrt(6.4), rel=1e-4)
    assert player_z([1e-3] * 4, rho=0.0) == pytest.approx(2 * 3.0902, rel=1e-4)


def test_player_z_stays_finite_and_one_solve_cannot_erase_the_rest():
    # an empty or abandoned submission scores p = 1 - 1e-16, not 1.0
    abandoned = judge({}, complete({})).p_value
    assert abandoned < 1.0
    strong = player_z([1e-9] * 5)
    with_one = player_z([1e-9] * 5 + [abandoned])
    assert math.isfinite(with_one) and with_one > 4.5
    assert strong - with_one < 2.5


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 200), st.floats(0.0, 0.6))
def test_a_correlated_season_of_uniform_p_is_rarely_extreme(n, rho):
    # honest p-values, correlated within the player at rho: the adjusted z's upper tail
    # stays at or below the normal's
    rng = np.random.default_rng(n)
    shared = rng.normal(size=(400, 1))
    z = np.sqrt(rho) * shared + np.sqrt(1 - rho) * rng.normal(size=(400, n))
    from scipy.special import ndtr
    zs = np.array([player_z(ndtr(-row), rho=max(rho, 0.2)) for row in z])
    assert np.mean(zs >= 3.09) <= 0.01


# --------------------------------------------------------------------- honest_null


def _facts():
    from fairgrid.analytics.signals import PuzzleFacts
    from fairgrid.solvers import parse
    from fairgrid.solvers.propagation import human_model, solution_of

    from ..fixtures import MEDIUM

    puzzle = parse(MEDIUM)
    sol = solution_of(puzzle)
    pred = human_model(puzzle, rng=0, runs=10).median_fill_rank(puzzle.ncells)
    return PuzzleFacts(puzzle.givens, 3, sol, pred, float(np.log(600)), 0.35)


def test_honest_null_is_seeded_and_covers_the_signals():
    from fairgrid.analytics.signals import SIGNALS
    facts = _facts()
    a = honest_null(facts, rng=5, n=12)
    b = honest_null(facts, rng=np.random.default_rng(5), n=12)
    c = honest_null(facts, rng=6, n=12)
    assert a == b and a != c
    assert set(a) <= set(SIGNALS)
    assert {"order_sa", "unforced", "pace_variation", "speed", "paste"} <= set(a)
    for name, (centre, scale) in a.items():
        assert math.isfinite(centre) and math.isfinite(scale) and scale > 0
        assert (centre, scale) == guard(name, centre, scale) or name == "speed"
    # honest solves follow an order close to the model's
    assert a["order_sa"][0] > 0.3


def test_pace_and_speed_do_not_corroborate_each_other_a_fast_person_is_even():
    null = _null()
    even = {"pace_variation": 0.25}                     # about 1 in 100,000
    assert not judge({**even, "speed": -2.0}, null).flagged  # and 1 in 40 fast
    assert not judge({"switch": 1.6, "speed": -2.0}, null).flagged
    assert not judge({"switch": 1.6, "pace_variation": 0.4}, null).flagged  # one pace
    # an order unlike people's does corroborate it
    v = judge({**even, "order_sa": 0.1}, null)
    assert v.flagged and v.rule == "two"
    assert set(v.reasons) == {"pace_variation", "order_sa"}


def test_an_even_pace_stands_alone_only_beyond_what_people_keep_at_that_speed():
    null = _null()
    six = pace_allowance(math.log(600.0), 100_000.0)   # 100 s where 600 s are expected
    assert six == pytest.approx(6 ** PACE_ALLOWANCE)
    # the most even of the ladder model's honest people at 6x: flagged by evenness alone
    # were it measured against the expected pace, not at their speed
    fast_person = {"pace_variation": 0.21}
    assert judge(fast_person, null).rule == "alone"
    v = judge(fast_person, null, pace_allowance=six)
    assert not v.flagged
    # the allowance is for standing alone: the family's p and the combination are the same
    assert v.p_value == judge(fast_person, null).p_value
    # a copy typed at a steady 1.5-3 s a cell is beyond people at any speed
    assert judge({"pace_variation": 0.12}, null,
                 pace_allowance=pace_allowance(6.0, 50 * 2250.0)).rule == "alone"
    # and with an order unlike people's, evenness still corroborates at any speed
    assert judge({**fast_person, "order_sa": 0.1}, null, pace_allowance=six).rule == "two"
    # the family's Bonferroni stays: with pacing_difficulty beside it, twice the p
    both = judge({**fast_person, "pacing_difficulty": 0.0}, null, pace_allowance=six)
    assert not both.flagged and both.pacing_at_speed == pytest.approx(
        2 * tail("pace_variation", 0.21 * six, *null["pace_variation"])[1])
    assert v.pacing_at_speed is not None and judge(fast_person, null).pacing_at_speed is None
    # a pace_variation that is not a number is left out, allowance or not
    odd = {"pace_variation": float("nan"), "pacing_difficulty": -1.2, "speed": -1.0}
    assert judge(odd, null, pace_allowance=six).rule == judge(odd, null).rule == "alone"
    # no allowance at the expected pace or slower, and none beyond ten times faster
    assert pace_allowance(6.0, 1000 * math.exp(6.5)) == 1.0
    assert pace_allowance(6.0, 0.0) == pace_allowance(float("nan"), 1000.0) == 1.0
    assert pace_allowance(6.0, 1.0) == pytest.approx(10 ** PACE_ALLOWANCE)
