"""Solver metrics → expected human solve time, and fairgrid's five difficulty levels.

The model is a linear regression of **log solve time** on transformed metrics, fitted
by least squares on real human data (``experiments/expected_time_fit.py`` fits it on
the sudoku.org.uk daily puzzles and writes ``analytics/data/expected_time.json``, which
ships as the default calibration). On the log scale a coefficient reads as "each extra unit of
this metric multiplies the expected time by exp(coefficient)", which an organiser can
follow. Predictions are means of log-time: ``expected_time_s`` is the geometric-mean
time, and ``residual_sd`` says how far a typical puzzle lands from it.

The five levels cut the expected time at fixed quantiles of the training puzzles'
predicted times (20 / 40 / 60 / 80 %), so "Medium" means "the middle fifth of daily
newspaper puzzles", a meaning that survives a refit. The nightly job refits
the same model on real players' solves (every portal's).

Pure: no I/O except :func:`load_default` reading the shipped JSON.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from importlib import resources
from typing import Mapping, Sequence

import numpy as np

LEVEL_NAMES = ("Very easy", "Easy", "Medium", "Hard", "Very hard")
TRANSFORMS = ("id", "log1p")


def transform(name: str, metrics: Mapping[str, float]) -> float:
    """The value of a feature ``"metric"`` or ``"log1p:metric"`` for one puzzle."""
    transform, _, metric = name.rpartition(":")
    if metric not in metrics:
        raise KeyError(f"metric {metric!r} is needed by the calibration but was not rated")
    x = float(metrics[metric])
    if transform == "":
        return x
    if transform == "log1p":
        return math.log1p(max(x, 0.0))
    raise ValueError(f"unknown transform {transform!r} in feature {name!r}")


def design(names: Sequence[str], rows: Sequence[Mapping[str, float]]) -> np.ndarray:
    """The feature matrix of many puzzles (one row each)."""
    return np.array([[transform(n, r) for n in names] for r in rows], dtype=float)


@dataclass(frozen=True)
class Calibration:
    """A fitted metrics → log-seconds model with its level cut points and its evidence."""

    features: tuple[str, ...]
    coef: tuple[float, ...]
    intercept: float
    residual_sd: float
    level_bounds_s: tuple[float, ...]   # 4 increasing cut points on expected seconds
    source: str = ""
    n: int = 0
    cv: dict = field(default_factory=dict)  # cross-validated pearson / spearman / rmse

    def __post_init__(self) -> None:
        if len(self.coef) != len(self.features):
            raise ValueError("one coefficient per feature is needed")
        if len(self.level_bounds_s) != len(LEVEL_NAMES) - 1 or \
                list(self.level_bounds_s) != sorted(self.level_bounds_s):
            raise ValueError("level_bounds_s must be 4 increasing cut points")

    @property
    def metrics_needed(self) -> tuple[str, ...]:
        """The rated metrics the features read."""
        return tuple(dict.fromkeys(f.rpartition(":")[2] for f in self.features))

    def expected_log_time(self, metrics: Mapping[str, float]) -> float:
        """Expected log of the solve time in seconds."""
        return self.intercept + sum(c * transform(f, metrics)
                                    for f, c in zip(self.features, self.coef))

    def expected_time_s(self, metrics: Mapping[str, float]) -> float:
        return math.exp(self.expected_log_time(metrics))

    def level(self, expected_s: float) -> int:
        """fairgrid's level 1–5 of an expected time."""
        return 1 + int(np.searchsorted(np.asarray(self.level_bounds_s), expected_s,
                                       side="right"))

    def describe(self, metrics: Mapping[str, float]) -> dict:
        """Expected time, level and name of one puzzle's metrics."""
        t = self.expected_time_s(metrics)
        lvl = self.level(t)
        return {"expected_time_s": t, "level": lvl, "level_name": LEVEL_NAMES[lvl - 1]}

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)

    @classmethod
    def from_json(cls, text: str) -> "Calibration":
        d = json.loads(text)
        for key in ("features", "coef", "level_bounds_s"):
            d[key] = tuple(d[key])
        return cls(**d)


def fit(features: Sequence[str], rows: Sequence[Mapping[str, float]], seconds: np.ndarray,
        *, source: str = "", cv: dict | None = None,
        weights: np.ndarray | None = None, periods: Sequence[str] | None = None,
        reference: Sequence[str] | None = None, prior: Sequence[float] | None = None,
        prior_weight: float = 0.0) -> Calibration:
    """Least-squares fit of log(seconds) on ``features``; levels from its predictions.

    ``periods`` (one label per row, e.g. ``"2009Q3"``) fits a log-time offset per period
    beside the features: the people solving a site's puzzles change over the years (the
    sudoku.org.uk solvers of 2006 took half as long again as those of 2012 on the same
    level), and without the offsets that drift would be charged to whichever puzzle
    features happen to drift with it. The calibration's intercept is then that of the
    ``reference`` periods (their mean offset; default the last period in sort order):
    expected times are for that population.

    ``prior`` (one coefficient per feature) with ``prior_weight`` > 0 shrinks the
    coefficients towards it: the penalty on each standardised coefficient's distance
    from the prior weighs as much as ``prior_weight`` rows of data, so a refit on a few
    dozen puzzles stays near the prior and one on thousands decides for itself."""
    y = np.log(np.asarray(seconds, dtype=float))
    X = design(features, rows)
    labels: list[str] = []
    if periods is not None:
        periods = [str(p) for p in periods]
        if len(periods) != len(y):
            raise ValueError("one period label per row is needed")
        labels = sorted(set(periods))
        reference = list(reference) if reference else labels[-1:]
        unknown = set(reference) - set(labels)
        if unknown:
            raise ValueError(f"reference periods {sorted(unknown)} have no rows")
        index = {p: k for k, p in enumerate(labels)}
        P = np.zeros((len(y), len(labels)))
        P[np.arange(len(y)), [index[p] for p in periods]] = 1.0
        A = np.column_stack([P, X])  # one intercept per period
    else:
        A = np.column_stack([np.ones(len(y)), X])
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    sw = np.sqrt(w)
    k = max(len(labels), 1)
    lhs, rhs = A * sw[:, None], y * sw
    if prior is not None and prior_weight > 0:
        if len(prior) != X.shape[1]:
            raise ValueError("one prior coefficient per feature is needed")
        sd = X.std(axis=0) if len(y) > 1 else np.ones(X.shape[1])
        sd = np.where(sd > 0, sd, 1.0)
        pen = np.zeros((X.shape[1], A.shape[1]))
        pen[:, k:] = np.diag(np.sqrt(prior_weight) * sd)
        lhs = np.vstack([lhs, pen])
        rhs = np.concatenate([rhs, np.sqrt(prior_weight) * sd * np.asarray(prior, float)])
    beta, *_ = np.linalg.lstsq(lhs, rhs, rcond=None)
    resid_sd = float(np.sqrt(np.average((y - A @ beta) ** 2, weights=w)))
    coef = beta[k:]
    intercept = (float(np.mean([beta[labels.index(p)] for p in reference])) if labels
                 else float(beta[0]))
    pred = intercept + X @ coef  # every puzzle as the reference population would see it
    bounds = tuple(float(b) for b in np.exp(np.quantile(pred, [0.2, 0.4, 0.6, 0.8])))
    return Calibration(tuple(features), tuple(float(b) for b in coef), intercept,
                       resid_sd, bounds, source, len(y), dict(cv or {}))


def load_default() -> Calibration:
    """The calibration shipped with fairgrid (fitted on sudoku.org.uk human times)."""
    text = resources.files("fairgrid.analytics").joinpath("data/expected_time.json") \
        .read_text()
    return Calibration.from_json(text)
