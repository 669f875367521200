"""Solver metrics → expected human solve time, and fairgrid's five difficulty levels.

The model is a linear regression of **log solve time** on a few transformed metrics,
fitted by least squares on real human data (``experiments/table31.py`` fits it on the
sudoku.org.uk daily puzzles and writes ``analytics/data/expected_time.json``, which ships
as the default calibration). On the log scale a coefficient reads as "each extra unit of
this metric multiplies the expected time by exp(coefficient)", which an organiser can
follow. Predictions are means of log-time: ``expected_time_s`` is the geometric-mean
time, and ``residual_sd`` says how far a typical puzzle lands from it.

The five levels cut the expected time at fixed quantiles of the training puzzles'
predicted times (20 / 40 / 60 / 80 %), so "Medium" means "the middle fifth of daily
newspaper puzzles", a meaning that survives a refit. The nightly job refits
the same model on the portal's own human data.

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
    kind, _, metric = name.rpartition(":")
    if metric not in metrics:
        raise KeyError(f"metric {metric!r} is needed by the calibration but was not rated")
    x = float(metrics[metric])
    if kind == "":
        return x
    if kind == "log1p":
        return math.log1p(max(x, 0.0))
    raise ValueError(f"unknown transform {kind!r} in feature {name!r}")


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
        weights: np.ndarray | None = None) -> Calibration:
    """Least-squares fit of log(seconds) on ``features``; levels from its predictions."""
    y = np.log(np.asarray(seconds, dtype=float))
    X = design(features, rows)
    A = np.column_stack([np.ones(len(y)), X])
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    sw = np.sqrt(w)
    beta, *_ = np.linalg.lstsq(A * sw[:, None], y * sw, rcond=None)
    pred = A @ beta
    resid_sd = float(np.sqrt(np.average((y - pred) ** 2, weights=w)))
    bounds = tuple(float(b) for b in np.exp(np.quantile(pred, [0.2, 0.4, 0.6, 0.8])))
    return Calibration(tuple(features), tuple(float(b) for b in beta[1:]), float(beta[0]),
                       resid_sd, bounds, source, len(y), dict(cv or {}))


def load_default() -> Calibration:
    """The calibration shipped with fairgrid (fitted on sudoku.org.uk human times)."""
    text = resources.files("fairgrid.analytics").joinpath("data/expected_time.json") \
        .read_text()
    return Calibration.from_json(text)
