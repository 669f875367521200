"""One submission → its score and the evidence an organiser reads (pure; JSON-ready).

:func:`score_solve` runs the whole chain: fill order → replay → signals → calibration →
verdict, and returns a dict with ``anomaly``, ``p_value``, ``flagged``, ``reasons`` and
``signals`` (value, percentile among honest solves, contribution, a one-sentence
explanation each), the predicted and actual order as 2-D grids, the per-placement
timeline with step difficulty, and the mistake counts.
"""

from __future__ import annotations

import math

import numpy as np

from .calibration import score
from .fill_order import fill_order
from .signals import PuzzleFacts, compute, replay_solve

TECHNIQUE_NAMES = ("naked single", "hidden single", "not deducible")


def _mmss(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m}:{s:02d}"


def explain(name: str, value: float, centre: float, facts: PuzzleFacts, extra: dict) -> str:
    """A one-sentence reading of one signal."""
    if name == "order_sa":
        return (f"filled {extra['filled']} cells in an order whose rank correlation with the "
                f"SA-predicted order is {value:.2f}; honest players' median is {centre:.2f}")
    if name == "order_consensus":
        return (f"rank correlation with the order most players used on this puzzle is "
                f"{value:.2f}; honest players' median is {centre:.2f}")
    if name == "deducible":
        return (f"{extra['deducible']} of {extra['filled']} placements ({value:.0%}) were a "
                f"naked or hidden single on the board at that moment; honest players' "
                f"median is {centre:.0%}")
    if name == "speed":
        actual = extra["duration_s"]
        expected = math.exp(facts.expected_log_s - extra["skill"])
        ratio = expected / actual if actual > 0 else float("inf")
        word = f"{ratio:.1f}x faster than" if ratio >= 1 else f"{1 / ratio:.1f}x slower than"
        return (f"solved in {_mmss(actual)}, {word} the expected {_mmss(expected)} for this "
                f"puzzle and player")
    if name == "pacing_cv":
        return (f"the intervals between placements vary with a coefficient of variation of "
                f"{value:.2f} (honest median {centre:.2f}; below 0.25 is very even pacing)")
    if name == "pacing_difficulty":
        return (f"delays correlate with step difficulty at {value:.2f} (honest median "
                f"{centre:.2f}): people slow down where fewer cells are deducible")
    if name == "paste":
        return f"the portal's client reported {int(value)} paste events"
    return f"{name} = {value:.3g}"


def _grid(values, size):
    return [values[r * size:(r + 1) * size] for r in range(size)]


def score_solve(facts: PuzzleFacts, null: dict, t_ms, cell, digit, note, *,
                skill: float = 0.0, client: dict | None = None, fpr: float = 1e-3) -> dict:
    """Score one solve and assemble its evidence (see the module docstring)."""
    fill = fill_order(t_ms, cell, digit, note, facts.givens, facts.solution)
    rep = replay_solve(facts, fill)
    t_ms = np.asarray(t_ms)
    duration_ms = int(t_ms[-1]) if t_ms.size else 0
    values = compute(facts, fill, duration_ms, skill=skill, client=client, replayed=rep)
    verdict = score(values, null, fpr=fpr)
    extra = {"filled": fill.filled, "deducible": int(np.sum(rep.technique != 2)),
             "duration_s": duration_ms / 1000.0, "skill": skill}
    size = facts.order * facts.order
    predicted = [None if not np.isfinite(v) else int(round(v))
                 for v in np.asarray(facts.predicted_rank, dtype=float)]
    actual = [None if r < 0 else int(r) for r in fill.rank]
    return {
        "anomaly": round(verdict.anomaly, 4),
        "p_value": verdict.p_value,
        "flagged": verdict.flagged,
        "reasons": list(verdict.reasons),
        "signals": [{"name": s.name, "value": round(s.value, 4),
                     "percentile": round(100 * (1 - s.p), 2), "z": round(s.z, 3),
                     "contribution": round(s.contribution, 4),
                     "explanation": explain(s.name, s.value, s.centre, facts, extra)}
                    for s in verdict.signals],
        "counts": {"filled": fill.filled, "mistakes": fill.mistakes,
                   "erasures": fill.erasures, "overwrites": fill.overwrites,
                   "notes": fill.notes, "complete": fill.complete},
        "givens": [int(g) for g in facts.givens],
        "predicted_order": _grid(predicted, size),
        "actual_order": _grid(actual, size),
        "timeline": [{"t_ms": int(t), "cell": int(c), "technique": TECHNIQUE_NAMES[int(k)],
                      "singles_on_offer": int(o), "difficulty": round(float(d), 3)}
                     for t, c, k, o, d in zip(rep.times_ms, rep.cells, rep.technique,
                                              rep.options, rep.difficulty)],
    }
