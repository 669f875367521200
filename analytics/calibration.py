"""Honest null distributions, per-signal tail probabilities, combination and thresholds.

The nulls are built to hold for people unlike the simulator they start from:

* **Null** (:func:`fit_null`): for each signal the normal that matches the odd-side
  decile and quartile (for ``unforced`` a Poisson mean: twice the mean, at least the
  95th percentile) of honest solves of the puzzle — simulated ones at analysis time,
  real unflagged solves (every portal's) per level once the nightly job has enough of them
  (the few cheats among them sit beyond the decile; the order's as an offset from each
  puzzle's simulated centre, :data:`~.signals.ORDER_OFFSET`, and the switch of solves
  whose notes carried the thinking apart, :data:`~.signals.NOTES_SWITCH`). Either way
  :func:`guard` widens it to at least the variation seen between people (:data:`GUARD`):
  a scale never below its floor, a centre no further from the odd side than its limit.
  A population that solves unlike the simulator then moves a signal's p-value by little.
* **Speed** is standardised where the solve is scored (:mod:`.signals`): against the
  puzzle's expected time with the player's skill where the nightly fit knows it, and
  for a player it does not know with the skill integrated over a prior as wide as real
  players (:data:`SKILL_PRIOR_SD`: an elite player 10x faster than the average sits
  about 2 sd out, not 6).
* **Tail probability** of one signal: its value standardised by the null with the odd
  direction positive (``z``) and ``p = Φ̄(z)``; for ``unforced`` the Poisson upper tail.
* **Families**: signals that measure one thing (the two order correlations; the two
  pacing measures) form a family whose p is the smallest member's times the number of
  members (Bonferroni), so a habit is not counted twice.
* **Combination**: Fisher's method over the families present gives the combined p;
  ``anomaly = −log10 p``.
* **Flag rule** (strong evidence only): combined p below the target false-positive rate
  **and** either two families that agree (the strongest below :data:`LEAD_P`, a second
  below :data:`AGREE_P`; not a pair of :data:`DEPENDENT` ones), or one family that can stand
  alone (:data:`ALONE`) below :data:`STRONG_P` — something no person does. An even pace
  stands alone only when it is that even at people's pace for the solve's speed
  (``signals.pace_allowance``): a fast person's intervals are mostly the motion of
  writing digits.
* **Per tournament**: Benjamini–Hochberg on the combined p-values (:func:`bh`).
* **Players**: :func:`player_z` — Stouffer's Z over a player's solves, each solve's z
  clipped to [−1, 6] (an ordinary solve cannot erase the others) and the sum
  divided by its sd under a correlation :data:`PLAYER_RHO` between one person's solves.

``bench/detection_eval.py`` measures the false-positive rate this gives on several
honest-player models, one of them built on a solver this project did not write.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import chdtrc, gammainc, ndtr, ndtri

from .signals import FAMILY, LOW_IS_ODD, NOTES_SWITCH

LEAD_P = 0.01
AGREE_P = 0.05
STRONG_P = 1e-6
ALONE = frozenset({"deduction", "pacing", "speed", "client", "log_match"})
# families that do not corroborate each other under the "two" rule: pacing and switch
# read the same intervals, and a fast person's placements are mostly the motion of
# writing digits, so a fast solve is an even one (bench/detection_players.py's ladder
# climbers at 6x were flagged for an even pace or a steady endgame with one of the others)
DEPENDENT = frozenset({frozenset({"pacing", "speed"}), frozenset({"switch", "speed"}),
                       frozenset({"pacing", "switch"})})
SKILL_PRIOR_SD = 1.0   # log-speed spread of skills for a player without history
SKILL_DRIFT_SD = 0.3   # how far a rated player's speed on one puzzle may stray
PLAYER_RHO = 0.2       # correlation between one person's solves (same habits, same skill)
CLIP_Z = 12.0
P_MIN = 1e-300         # p-values live in the open interval (P_MIN, 1 - P_MIN)
LOG_SIGNALS = frozenset({"pace_variation"})  # standardised on the log scale
POISSON_SIGNALS = frozenset({"unforced", "unproven", "away"})  # null (poisson mean, 1)

# (floor of the scale, limit of the centre: no further from the odd side) per signal: the least
# variation between honest people that a null may claim. Set from the spread between
# players in two honest models of different structure (bench/detection_eval.py) and
# checked on a third built on another project's solver (see docs/detection.md).
GUARD = {
    "order_sa": (0.2, None),
    "order_consensus": (0.2, None),
    "unforced": (None, 2.0),           # poisson mean at least 2 bits
    # a person right first time where nothing the player had shown proves it: a lucky
    # guess, or a technique beyond the ladder; at least a quarter of a bit on average
    # (the players bench's honest models: 5 of 300 solves held one such cell)
    "unproven": (None, 0.25),
    "pace_variation": (0.2, math.log(0.6)),
    # people slow down on the steps *they* find hard, which our measure of a step's
    # difficulty (singles on offer) only partly captures: pencilmark-model players
    # correlate at a median 0.04. Only a marked negative correlation is evidence.
    "pacing_difficulty": (0.2, 0.0),
    "switch": (0.3, 0.4),
    NOTES_SWITCH: (0.3, 0.4),  # switch's; learnt from real note-takers only (no default)
    "paste": (0.5, 0.0),
    # honest people leave the page and come back to a lucky guess too: at least half a
    # bit on average (client_signals)
    "away": (None, 0.5),
}


def skill_uncertainty(solves: int, lambda_player: float) -> float:
    """The sd of a fitted skill's error for a player with ``solves`` solves: the ridge
    fit shrinks a skill towards 0 by λ/(n + λ) of its size, so a strong player with few
    solves looks slower than they are; at least :data:`SKILL_DRIFT_SD` (a person is not
    equally fast on every puzzle)."""
    return max(SKILL_DRIFT_SD, SKILL_PRIOR_SD * lambda_player / (max(solves, 0)
                                                                 + lambda_player))


def _signal(key: str) -> str:
    """The signal a null key is of (``switch_notes`` is ``switch``'s for note-takers)."""
    return "switch" if key == NOTES_SWITCH else key


def guard(name: str, centre: float, scale: float) -> tuple[float, float]:
    """Widen one signal's null to at least the variation between people."""
    floor, limit = GUARD.get(name, (None, None))
    if name in POISSON_SIGNALS:
        return (max(centre, limit), 1.0)
    if floor is not None:
        scale = max(scale, floor)
    if limit is not None:
        centre = min(centre, limit) if LOW_IS_ODD[_signal(name)] else max(centre, limit)
    return (float(centre), float(scale))


def fit_null(samples: dict[str, list[float]]) -> dict[str, tuple[float, float]]:
    """Robust, guarded (centre, scale) of each signal over honest solves."""
    null = {}
    for name, values in samples.items():
        kind = _signal(name)
        if kind == "speed" or kind not in LOW_IS_ODD:
            continue  # speed is standardised where it is computed
        v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
        if v.size < 5:
            continue
        if name in POISSON_SIGNALS:
            # twice the mean, and never below the 95th percentile: a group of people who
            # often place what they deduced beyond singles widens the null instead of
            # being trimmed away (the few copiers above it only make it more lenient)
            null[name] = guard(name, max(2.0 * float(v.mean()),
                                         float(np.quantile(v, 0.95))), 1.0)
            continue
        if name in LOG_SIGNALS:
            v = np.log(np.maximum(v, 1e-6))
        null[name] = guard(name, *_odd_tail_normal(v, LOW_IS_ODD[kind]))
    return complete(null)


def _odd_tail_normal(v: np.ndarray, low_is_odd: bool) -> tuple[float, float]:
    """(centre, scale) of the normal that matches the odd-side quartile and decile of
    ``v``: what matters for a false positive is the odd tail, and a mixture of kinds of
    people (fast and slow, steady and erratic) inflates a MAD without saying anything
    about that tail. The two quantiles move little while copiers are a few per cent."""
    if low_is_odd:
        q10, q25 = np.quantile(v, [0.10, 0.25])
        scale = (q25 - q10) / 0.6071     # Φ⁻¹(0.25) − Φ⁻¹(0.10)
        return float(q10 + 1.2816 * scale), float(scale)
    q75, q90 = np.quantile(v, [0.75, 0.90])
    scale = (q90 - q75) / 0.6071
    return float(q90 - 1.2816 * scale), float(scale)


def complete(null: dict) -> dict[str, tuple[float, float]]:
    """``null`` with the fixed nulls every puzzle has: speed N(0, 1), paste, and the
    guard's own bounds for a signal no honest solve showed (not for note-takers'
    switch, judged only once real ones have set it); keys of no signal are dropped."""
    out = {k: guard(k, *v) for k, v in null.items()
           if _signal(k) in LOW_IS_ODD and k != "speed"}
    out["speed"] = (0.0, 1.0)
    for name, (floor, limit) in GUARD.items():
        if limit is not None and name not in out and name != NOTES_SWITCH:
            out[name] = guard(name, limit, floor or 1.0)
    return out


@dataclass(frozen=True)
class SignalScore:
    name: str
    value: float
    z: float           # standardised, odd direction positive
    p: float           # upper-tail probability under the honest null
    centre: float      # the honest median, on the value's own scale
    contribution: float  # share of the Fisher statistic (its family's, split evenly)


@dataclass(frozen=True)
class Verdict:
    anomaly: float
    p_value: float
    flagged: bool
    reasons: tuple[str, ...]     # the signals behind the flag, strongest first
    signals: tuple[SignalScore, ...]
    rule: str = ""               # which rule flagged it ("" when not flagged)
    families: tuple[tuple[str, float], ...] = ()  # (family, p), strongest first
    # an even pace was judged alone at this speed's allowance and did not reach the
    # threshold there (the pacing family's p at speed; None otherwise)
    pacing_at_speed: float | None = None


def _open(p: float) -> float:
    return min(max(p, P_MIN), 1.0 - 1e-16)


def tail(name: str, value: float, centre: float, scale: float) -> tuple[float, float]:
    """(z, p) of one signal's value under its null (see the module docstring)."""
    if name in POISSON_SIGNALS:
        # P(Poisson(λ) ≥ x) = P(Gamma(x) ≤ λ), smooth in x
        p = _open(float(gammainc(value, centre))) if value > 0 else 1.0 - 1e-16
        return float(np.clip(-ndtri(p), -CLIP_Z, CLIP_Z)), p
    v = math.log(max(value, 1e-6)) if name in LOG_SIGNALS else value
    z = (centre - v) / scale if LOW_IS_ODD[name] else (v - centre) / scale
    z = float(np.clip(z, -CLIP_Z, CLIP_Z))
    return z, _open(float(ndtr(-z)))


def judge(values: dict[str, float], null: dict[str, tuple[float, float]], *,
          fpr: float = 1e-3, agree_p: float = AGREE_P, strong_p: float = STRONG_P,
          pace_allowance: float = 1.0) -> Verdict:
    """Combine one solve's signal values into a verdict (see the module docstring);
    ``pace_allowance`` (``signals.pace_allowance``) scales ``pace_variation`` where the
    pacing family is weighed on its own."""
    parts = []
    for name, value in values.items():
        if name not in null or not math.isfinite(value):
            continue
        centre, scale = null[name]
        z, p = tail(name, float(value), centre, scale)
        shown = math.exp(centre) if name in LOG_SIGNALS else centre
        parts.append((name, float(value), z, p, shown))
    if not parts:
        return Verdict(0.0, _open(1.0), False, (), ())
    members: dict[str, list] = {}
    for part in parts:
        members.setdefault(FAMILY[part[0]], []).append(part)
    fam_p = {f: _open(min(1.0, min(x[3] for x in ms) * len(ms))) for f, ms in members.items()}
    logs = {f: -2.0 * math.log(p) for f, p in fam_p.items()}
    stat = float(sum(logs.values()))
    p_comb = _open(float(chdtrc(2 * len(fam_p), stat)))
    total = stat if stat > 0 else 1.0
    signals = tuple(SignalScore(n, v, z, p, c,
                                float(logs[FAMILY[n]] / total / len(members[FAMILY[n]])))
                    for n, v, z, p, c in parts)
    ranked = tuple(sorted(fam_p.items(), key=lambda kv: kv[1]))
    odd = [f for f, p in ranked if p < agree_p] if ranked[0][1] < LEAD_P else []
    alone_p = dict(fam_p)
    ms = members.get("pacing", [])
    if pace_allowance > 1.0 and any(x[0] == "pace_variation" for x in ms):
        at_speed = [tail(x[0], x[1] * pace_allowance, *null[x[0]])[1]
                    if x[0] == "pace_variation" else x[3] for x in ms]
        alone_p["pacing"] = _open(min(1.0, min(at_speed) * len(ms)))
    alone = [f for f, _ in ranked if alone_p[f] < strong_p and f in ALONE]
    rule = ""
    if p_comb < fpr:
        if any(fam_p[a] < LEAD_P and frozenset({a, b}) not in DEPENDENT
               for i, a in enumerate(odd) for b in odd[i + 1:]):
            rule = "two"
        elif alone:
            rule = "alone"
    flagged = bool(rule)
    reasons = ()
    if flagged:
        used = odd if rule == "two" else alone[:1]
        reasons = tuple(s.name for s in sorted(signals, key=lambda s: s.p)
                        if FAMILY[s.name] in used and s.p < agree_p)
    anomaly = max(0.0, float(-math.log10(p_comb)))
    held = (alone_p["pacing"] if not flagged and "pacing" in fam_p
            and fam_p["pacing"] < strong_p <= alone_p["pacing"] else None)
    return Verdict(anomaly, p_comb, flagged, reasons, signals, rule, ranked, held)


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


def player_z(p_values, rho: float = PLAYER_RHO) -> float:
    """A player's accumulated evidence: Stouffer's Z over the solves' combined p-values,
    each solve's z clipped to [−1, 6] (an ordinary solve cannot erase the others, an
    extreme one counts as 6) and the sum scaled by its sd when one person's solves
    correlate at ``rho`` (0 for an empty list)."""
    p = np.clip(np.asarray(p_values, dtype=float), P_MIN, 1.0 - 1e-16)
    if p.size == 0:
        return 0.0
    z = np.clip(-ndtri(p), -1.0, 6.0)
    n = p.size
    return float(z.sum() / math.sqrt(n * (1.0 + (n - 1) * rho)))


def honest_null(facts, *, rng, n: int = 120) -> dict[str, tuple[float, float]]:
    """The null of every signal for one puzzle from ``n`` simulated honest solves (the
    type's honest players, ``analytics.types``), drawn in turn from one generator."""
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(int(rng))
    samples: dict[str, list[float]] = {}
    for _ in range(n):
        _add_honest_solve(samples, facts, rng)
    return fit_null(samples)


def null_seeds(seed: int, n: int) -> list[np.random.SeedSequence]:
    """One seed for each of ``n`` simulated honest solves: solves drawn from these (by
    :func:`honest_samples`) are the same however they are split into tasks."""
    return np.random.SeedSequence(int(seed)).spawn(n)


def honest_samples(facts, seeds) -> dict[str, list[float]]:
    """Every signal's value in one simulated honest solve per seed of ``seeds``
    (:func:`null_seeds`), in order: pieces of a null that :func:`merge_samples` joins
    and :func:`fit_null` fits."""
    samples: dict[str, list[float]] = {}
    for seed in seeds:
        _add_honest_solve(samples, facts, np.random.default_rng(seed))
    return samples


def merge_samples(pieces) -> dict[str, list[float]]:
    """The samples of :func:`honest_samples` pieces, joined in order."""
    samples: dict[str, list[float]] = {}
    for piece in pieces:
        for k, v in piece.items():
            samples.setdefault(k, []).extend(v)
    return samples


def _add_honest_solve(samples: dict, facts, rng: np.random.Generator) -> None:
    from .fill_order import fill_order
    from .signals import compute
    from .types import type_model

    sim = type_model(facts.puzzle_type).honest(facts, rng)
    fill = fill_order(sim.t_ms, sim.cell, sim.digit, sim.note, facts.givens,
                      facts.solution, facts.blank)
    for k, v in compute(facts, fill, sim.duration_ms,
                        moves=(sim.t_ms, sim.cell, sim.digit, sim.note)).items():
        samples.setdefault(k, []).append(v)
