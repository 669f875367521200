"""Metrics → expected log-time: the least-squares fit, the Calibration and its levels."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fairgrid.analytics.expected_time import (LEVEL_NAMES, Calibration, design, fit,
                                              load_default, transform)

FEATURES = ("log1p:serate", "steps")
COEF = (0.8, 0.02)
INTERCEPT = 5.5


def _rows(seed=0, n=200):
    rng = np.random.default_rng(seed)
    serate = rng.uniform(1.0, 9.0, n)
    steps = rng.integers(0, 60, n).astype(float)
    return [{"serate": float(a), "steps": float(b), "unused": 1.0}
            for a, b in zip(serate, steps)]


def _truth(rows):
    return np.array([INTERCEPT + COEF[0] * math.log1p(r["serate"]) + COEF[1] * r["steps"]
                     for r in rows])


def _cal(**kw):
    base = dict(features=FEATURES, coef=COEF, intercept=INTERCEPT, residual_sd=0.2,
                level_bounds_s=(400.0, 600.0, 900.0, 1500.0), source="test", n=200,
                cv={"pearson": 0.8, "rmse_log": 0.2})
    base.update(kw)
    return Calibration(**base)


# ------------------------------------------------------------------------ features

def test_transform_and_design():
    m = {"a": 3.0, "b": -2.0}
    assert transform("a", m) == 3.0
    assert transform("log1p:a", m) == pytest.approx(math.log(4.0))
    assert transform("log1p:b", m) == 0.0  # negative values are clamped before log1p
    with pytest.raises(KeyError, match="'c'"):
        transform("c", m)
    with pytest.raises(ValueError, match="sqrt"):
        transform("sqrt:a", m)
    X = design(["a", "log1p:a"], [m, {"a": 0.0}])
    np.testing.assert_allclose(X, [[3.0, math.log(4.0)], [0.0, 0.0]])


# ----------------------------------------------------------------------------- fit

def test_fit_recovers_exact_coefficients_without_noise():
    rows = _rows()
    cal = fit(FEATURES, rows, np.exp(_truth(rows)), source="synthetic", cv={"k": 1})
    assert cal.features == FEATURES
    np.testing.assert_allclose(cal.coef, COEF, atol=1e-9)
    assert cal.intercept == pytest.approx(INTERCEPT, abs=1e-9)
    assert cal.residual_sd < 1e-9
    assert (cal.source, cal.n, cal.cv) == ("synthetic", 200, {"k": 1})
    assert all(isinstance(c, float) for c in cal.coef)


def test_fit_recovers_coefficients_and_noise_level_from_noisy_data():
    rows = _rows(seed=1, n=2000)
    rng = np.random.default_rng(2)
    seconds = np.exp(_truth(rows) + rng.normal(0, 0.3, len(rows)))
    cal = fit(FEATURES, rows, seconds)
    assert cal.coef[0] == pytest.approx(COEF[0], abs=0.05)
    assert cal.coef[1] == pytest.approx(COEF[1], abs=0.002)
    assert cal.intercept == pytest.approx(INTERCEPT, abs=0.1)
    assert cal.residual_sd == pytest.approx(0.3, rel=0.05)
    assert cal.source == "" and cal.cv == {}


def test_level_bounds_cut_the_training_predictions_into_fifths():
    rows = _rows(seed=3, n=500)
    rng = np.random.default_rng(4)
    cal = fit(FEATURES, rows, np.exp(_truth(rows) + rng.normal(0, 0.2, len(rows))))
    assert len(cal.level_bounds_s) == 4
    assert list(cal.level_bounds_s) == sorted(cal.level_bounds_s)
    levels = np.array([cal.describe(r)["level"] for r in rows])
    counts = np.bincount(levels, minlength=6)[1:]
    assert counts.sum() == 500 and np.all(np.abs(counts - 100) <= 2)


def test_weights_act_like_repeated_rows_and_zero_weight_ignores_a_row():
    rows = _rows(seed=5, n=40)
    rng = np.random.default_rng(6)
    seconds = np.exp(_truth(rows) + rng.normal(0, 0.3, 40))
    w = rng.integers(1, 4, 40)
    weighted = fit(FEATURES, rows, seconds, weights=w)
    repeated = fit(FEATURES, [r for r, k in zip(rows, w) for _ in range(k)],
                   np.repeat(seconds, w))
    np.testing.assert_allclose(weighted.coef, repeated.coef, rtol=1e-9)
    assert weighted.intercept == pytest.approx(repeated.intercept, rel=1e-12)
    assert weighted.residual_sd == pytest.approx(repeated.residual_sd, rel=1e-9)
    # a wild outlier with weight 0 changes nothing
    outlier = rows + [{"serate": 2.0, "steps": 5.0}]
    secs = np.append(seconds, 1e9)
    a = fit(FEATURES, outlier, secs, weights=np.append(np.ones(40), 0.0))
    b = fit(FEATURES, rows, seconds)
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-9)
    assert a.residual_sd == pytest.approx(b.residual_sd, rel=1e-9)


def test_fit_copies_cv():
    cv = {"pearson": 0.5}
    cal = fit(FEATURES, _rows(n=20), np.full(20, 300.0), cv=cv)
    cv["pearson"] = 0.0
    assert cal.cv == {"pearson": 0.5}


# --------------------------------------------------------------------- Calibration

def test_expected_log_time_and_time():
    cal = _cal()
    m = {"serate": math.e - 1, "steps": 10.0}
    assert cal.expected_log_time(m) == pytest.approx(5.5 + 0.8 * 1 + 0.02 * 10)
    assert cal.expected_time_s(m) == pytest.approx(math.exp(6.5))
    assert _cal(features=(), coef=()).expected_log_time({}) == INTERCEPT
    with pytest.raises(KeyError):
        cal.expected_log_time({"serate": 1.0})


def test_describe_levels_and_boundaries():
    cal = _cal(features=("x",), coef=(1.0,), intercept=0.0)
    def at(seconds):
        return cal.describe({"x": math.log(seconds)})
    d = at(300.0)
    assert d["expected_time_s"] == pytest.approx(300.0)
    assert (d["level"], d["level_name"]) == (1, "Very easy")
    assert at(500.0)["level"] == 2 and at(700.0)["level_name"] == "Medium"
    assert at(1000.0)["level_name"] == "Hard" and at(1e6)["level_name"] == "Very hard"
    # a cut point itself belongs to the harder level
    assert [cal.level(b) for b in cal.level_bounds_s] == [2, 3, 4, 5]
    assert cal.level(np.nextafter(400.0, 0)) == 1


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-5, 15, allow_nan=False), min_size=2, max_size=20))
def test_describe_level_is_monotone_in_expected_time(xs):
    cal = _cal(features=("x",), coef=(0.7,), intercept=1.0)
    described = sorted((cal.describe({"x": x}) for x in xs),
                       key=lambda d: d["expected_time_s"])
    levels = [d["level"] for d in described]
    assert levels == sorted(levels)
    for d in described:
        assert 1 <= d["level"] <= 5 and d["level_name"] == LEVEL_NAMES[d["level"] - 1]


def test_post_init_validation():
    with pytest.raises(ValueError, match="coefficient"):
        _cal(coef=(1.0,))
    with pytest.raises(ValueError, match="level_bounds_s"):
        _cal(level_bounds_s=(1.0, 2.0, 3.0))
    with pytest.raises(ValueError, match="level_bounds_s"):
        _cal(level_bounds_s=(1.0, 3.0, 2.0, 4.0))


def test_json_round_trip():
    cal = _cal()
    text = cal.to_json()
    d = json.loads(text)
    assert d["features"] == list(FEATURES) and d["cv"] == cal.cv
    back = Calibration.from_json(text)
    assert back == cal
    assert isinstance(back.features, tuple) and isinstance(back.level_bounds_s, tuple)
    assert isinstance(back.coef, tuple)
    fitted = fit(FEATURES, _rows(n=50), np.exp(_truth(_rows(n=50))), source="s", cv={"a": 1})
    assert Calibration.from_json(fitted.to_json()) == fitted


@settings(max_examples=60, deadline=None)
@given(coef=st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=0,
                     max_size=5),
       intercept=st.floats(allow_nan=False, allow_infinity=False),
       bounds=st.lists(st.floats(0, 1e7), min_size=4, max_size=4),
       source=st.text(max_size=30))
def test_json_round_trip_is_exact(coef, intercept, bounds, source):
    cal = Calibration(tuple(f"log1p:m{k}" for k in range(len(coef))), tuple(coef),
                      intercept, 0.1, tuple(sorted(bounds)), source, len(coef), {})
    assert Calibration.from_json(cal.to_json()) == cal


def test_load_default_is_a_sane_calibration():
    cal = load_default()
    assert len(cal.features) == len(cal.coef) > 0 and cal.n > 0
    assert Calibration.from_json(cal.to_json()) == cal
    # typical newspaper-puzzle metrics land between a minute and a few hours
    metrics = {f.rpartition(":")[2]: 5.0 for f in cal.features}
    assert 60 < cal.expected_time_s(metrics) < 4 * 3600


def test_period_offsets_are_separated_from_the_features():
    # three populations solving the same kind of puzzles at different speeds; the
    # feature (steps) drifts with the period, which a fit without offsets charges to it
    rows, seconds, periods = [], [], []
    rng = np.random.default_rng(3)
    for period, offset, mean_steps in (("2006", 0.5, 40.0), ("2009", 0.2, 30.0),
                                       ("2012", 0.0, 20.0)):
        for _ in range(300):
            r = {"serate": float(rng.uniform(1, 9)), "steps": float(rng.normal(mean_steps, 8))}
            rows.append(r)
            seconds.append(math.exp(_truth([r])[0] + offset))
            periods.append(period)
    seconds = np.array(seconds)
    pooled = fit(FEATURES, rows, seconds)
    assert pooled.coef[1] > COEF[1] + 0.005  # the drift leaks into the feature
    cal = fit(FEATURES, rows, seconds, periods=periods)
    np.testing.assert_allclose(cal.coef, COEF, atol=1e-9)
    assert cal.intercept == pytest.approx(INTERCEPT, abs=1e-9)  # the last period's
    first = fit(FEATURES, rows, seconds, periods=periods, reference=["2006"])
    assert first.intercept == pytest.approx(INTERCEPT + 0.5, abs=1e-9)
    both = fit(FEATURES, rows, seconds, periods=periods, reference=["2006", "2012"])
    assert both.intercept == pytest.approx(INTERCEPT + 0.25, abs=1e-9)
    with pytest.raises(ValueError, match="2020"):
        fit(FEATURES, rows, seconds, periods=periods, reference=["2020"])
    with pytest.raises(ValueError, match="one period label per row"):
        fit(FEATURES, rows, seconds, periods=periods[:-1])


def test_the_shipped_calibration_reads_only_metrics_its_families_rate():
    from fairgrid.solvers import parse
    from fairgrid.solvers.rate import families_for, rate

    from ..fixtures import MEDIUM
    cal = load_default()
    metrics = rate(parse(MEDIUM), rng=0, only=families_for(cal.metrics_needed)).metrics
    assert set(cal.metrics_needed) <= set(metrics)
    assert 60 < cal.expected_time_s(metrics) < 4 * 3600


def test_a_prior_holds_coefficients_where_data_are_few():
    rows = _rows(seed=4, n=30)
    rng = np.random.default_rng(5)
    seconds = np.exp(_truth(rows) + rng.normal(0, 0.3, len(rows)))
    prior = (0.5, 0.01)
    free = fit(FEATURES, rows, seconds)
    held = fit(FEATURES, rows, seconds, prior=prior, prior_weight=1e6)
    np.testing.assert_allclose(held.coef, prior, atol=1e-3)
    some = fit(FEATURES, rows, seconds, prior=prior, prior_weight=30)
    for k in range(2):  # between the free fit and the prior
        lo, hi = sorted((free.coef[k], prior[k]))
        assert lo - 1e-12 <= some.coef[k] <= hi + 1e-12
    many = _rows(seed=6, n=5000)
    exact = fit(FEATURES, many, np.exp(_truth(many)), prior=prior, prior_weight=30)
    np.testing.assert_allclose(exact.coef, COEF, atol=0.01)  # thousands of rows decide
    with pytest.raises(ValueError, match="prior coefficient"):
        fit(FEATURES, rows, seconds, prior=(1.0,), prior_weight=1.0)
