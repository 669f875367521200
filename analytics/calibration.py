"""Honest null distributions, per-signal tail probabilities, combination and thresholds.

* **Null** (:func:`fit_null`): for each signal, a robust centre (median) and scale
  (1.4826 × MAD, never below a floor) of its value over honest solves of the same
  puzzle — simulated ones (:func:`honest_null`) until real unflagged solves take over.
* **Tail probability** of one signal: its value standardised by the null, oriented so
  that the odd direction is positive (``z``), and ``p = Φ̄(z)``, the normal upper tail.
  A robust normal approximation rather than the raw empirical CDF, because a target
  false-positive rate of 10⁻³ needs tails far beyond what 100–200 null solves resolve.
* **Combination**: Fisher's method over the signals present, ``X = −2 Σ ln p_i`` against
  χ² with 2k degrees of freedom, gives the combined p-value; ``anomaly = −log10 p``.
* **Flag rule**: combined p below the target false-positive rate **and** at least two
  signals individually below :data:`AGREE_P` — one odd signal is never enough.
* **Per tournament**: Benjamini–Hochberg on the combined p-values (:func:`bh`).
* **Players**: Stouffer's Z over a player's submissions (:func:`stouffer`), flagged at a
  much stricter z (default 4.5).

The bench script ``bench/detection_eval.py`` measures the honest false-positive rate
this produces on simulated solves and reports how far the theoretical p-values are off.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import chdtrc, ndtr
from scipy.stats import norm

from .signals import LOW_IS_ODD

AGREE_P = 0.01
SCALE_FLOOR = {"order_sa": 0.03, "order_consensus": 0.03, "deducible": 0.05,
               "speed": 0.2, "pacing_cv": 0.03, "pacing_difficulty": 0.03, "paste": 0.5}
CLIP_Z = 12.0


def fit_null(samples: dict[str, list[float]]) -> dict[str, tuple[float, float]]:
    """Robust (centre, scale) of each signal over honest solves."""
    null = {}
    for name, values in samples.items():
        v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
        if v.size < 5:
            continue
        centre = float(np.median(v))
        scale = float(1.4826 * np.median(np.abs(v - centre)))
        null[name] = (centre, max(scale, SCALE_FLOOR.get(name, 0.01)))
    if "paste" not in null:
        null["paste"] = (0.0, SCALE_FLOOR["paste"])  # honest players do not paste
    return null


@dataclass(frozen=True)
class SignalScore:
    name: str
    value: float
    z: float           # standardised, odd direction positive
    p: float           # upper-tail probability under the honest null
    centre: float      # the honest median
    contribution: float  # share of the Fisher statistic


@dataclass(frozen=True)
class Verdict:
    anomaly: float
    p_value: float
    flagged: bool
    reasons: tuple[str, ...]
    signals: tuple[SignalScore, ...]


def score(values: dict[str, float], null: dict[str, tuple[float, float]], *,
          fpr: float = 1e-3, agree_p: float = AGREE_P) -> Verdict:
    """Combine one solve's signal values into a verdict (see the module docstring)."""
    parts = []
    for name, value in values.items():
        if name not in null or not math.isfinite(value):
            continue
        centre, scale = null[name]
        z = (centre - value) / scale if LOW_IS_ODD[name] else (value - centre) / scale
        z = float(np.clip(z, -CLIP_Z, CLIP_Z))
        # ndtr(-z) and chdtrc are what norm.sf and chi2.sf compute, without the ~150 µs
        # of argument handling per call of the distribution objects
        parts.append((name, float(value), z, float(ndtr(-z)), centre))
    if not parts:
        return Verdict(0.0, 1.0, False, (), ())
    logs = np.array([-2.0 * math.log(max(p, 1e-300)) for _, _, _, p, _ in parts])
    stat = float(logs.sum())
    p_comb = float(chdtrc(2 * len(parts), stat))
    total = stat if stat > 0 else 1.0
    signals = tuple(SignalScore(n, v, z, p, c, float(l / total))
                    for (n, v, z, p, c), l in zip(parts, logs))
    odd = tuple(s.name for s in sorted(signals, key=lambda s: s.p) if s.p < agree_p)
    flagged = p_comb < fpr and len(odd) >= 2
    anomaly = float(-math.log10(max(p_comb, 1e-300)))
    return Verdict(anomaly, p_comb, flagged, odd if flagged else (), signals)


def bh(p_values, q: float = 0.05) -> np.ndarray:
    """Benjamini–Hochberg: which hypotheses are rejected at false-discovery rate ``q``."""
    p = np.asarray(p_values, dtype=float)
    if p.size == 0:
        return np.zeros(0, dtype=bool)
    order = np.argsort(p)
    ranked = p[order] * p.size / np.arange(1, p.size + 1)
    passed = np.flatnonzero(ranked <= q)
    out = np.zeros(p.size, dtype=bool)
    if passed.size:
        out[order[: passed[-1] + 1]] = True
    return out


def stouffer(p_values) -> float:
    """Stouffer's Z of independent one-sided p-values (a player's submissions)."""
    p = np.clip(np.asarray(p_values, dtype=float), 1e-300, 1.0)
    if p.size == 0:
        return 0.0
    return float(norm.isf(p).sum() / math.sqrt(p.size))


def honest_null(facts, *, rng, n: int = 120) -> dict[str, tuple[float, float]]:
    """The null of every signal for one puzzle from ``n`` simulated honest solves."""
    from fairgrid.solvers.grid import Puzzle

    from .fill_order import fill_order
    from .signals import compute
    from .simulate import simulate

    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(int(rng))
    puzzle = Puzzle(facts.order, facts.givens)
    samples: dict[str, list[float]] = {}
    for _ in range(n):
        sim = simulate(puzzle, facts.solution, "honest", rng=rng,
                       expected_log_s=facts.expected_log_s, sd_log=facts.sd_log)
        fill = fill_order(sim.t_ms, sim.cell, sim.digit, sim.note, facts.givens,
                          facts.solution)
        for k, v in compute(facts, fill, sim.duration_ms).items():
            samples.setdefault(k, []).append(v)
    return fit_null(samples)
