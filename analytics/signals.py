"""Evidence from one solve: the signals, each a number with a direction.

======================  ===========================================================  ======
signal                  value                                                         odd if
======================  ===========================================================  ======
``order_sa``            Spearman ρ of the fill order with the SA-predicted median     low
                        order (Křivánek 2011, §4.1)
``order_consensus``     Spearman ρ with the human consensus order (median rank per    low
                        cell over unflagged solves; only once the nightly job keeps
                        one)
``deducible``           share of placements that were a naked or hidden single on     low
                        the board the player had at that moment (humans place what
                        has become deducible; a copier places whatever is next)
``speed``               log of the solve time minus the puzzle's expected log-time    low
                        and the player's skill (in the calibration's residual sds)
``pacing_cv``           coefficient of variation of the intervals between             low
                        placements (Lichess treats move-time CV < 0.25 as flat)
``pacing_difficulty``   Spearman ρ between each placement's delay and its             low
                        difficulty (fewer singles on offer, not deducible = harder):
                        humans slow down on hard steps, replay bots do not
``paste``               client-reported paste events (only when the portal sends      high
                        ``client``)
======================  ===========================================================  ======

Mistakes and erasures are reported with the evidence but not scored: they are common
among honest players and absent from most, so their absence proves little.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairgrid.solvers.propagation import NOT_DEDUCIBLE, replay

from .fill_order import FillOrder

SIGNALS = ("order_sa", "order_consensus", "deducible", "speed", "pacing_cv",
           "pacing_difficulty", "paste")
LOW_IS_ODD = {"order_sa": True, "order_consensus": True, "deducible": True, "speed": True,
              "pacing_cv": True, "pacing_difficulty": True, "paste": False}
MIN_CELLS = 8  # fewer filled cells than this: order and pacing signals are not computed


def average_ranks(x: np.ndarray) -> np.ndarray:
    """``scipy.stats.rankdata(x)`` (ties share their average rank, 1-based) for ``x``
    without NaN, in plain numpy: scipy's version costs ~50 µs of checks per call, and
    scoring ranks four arrays per solve."""
    x = np.asarray(x)
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    new = np.empty(x.size, dtype=bool)
    new[:1] = True
    np.not_equal(xs[1:], xs[:-1], out=new[1:])
    bounds = np.flatnonzero(np.append(new, True))  # each tie group's start, then the end
    average = (bounds[:-1] + bounds[1:] + 1) / 2.0
    ranks = np.empty(x.size, dtype=float)
    ranks[order] = average[np.cumsum(new) - 1]
    return ranks


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's ρ (average ranks for ties); NaN when either side is constant or has a
    NaN (as scipy's)."""
    if a.size < 3 or np.isnan(a).any() or np.isnan(b).any():
        return float("nan")
    ra, rb = average_ranks(a), average_ranks(b)
    sa, sb = ra.std(), rb.std()
    if sa == 0 or sb == 0:
        return float("nan")
    return float(np.mean((ra - ra.mean()) * (rb - rb.mean())) / (sa * sb))


@dataclass(frozen=True, eq=False)
class PuzzleFacts:
    """What scoring needs to know about a puzzle (all from its analysis)."""

    givens: np.ndarray
    order: int
    solution: np.ndarray
    predicted_rank: np.ndarray          # SA median rank per cell (NaN for givens)
    expected_log_s: float               # expected log solve time, seconds
    sd_log: float                       # residual sd of log-time around it
    consensus_rank: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class Replayed:
    """Per-placement evidence of a solve, in fill order."""

    cells: np.ndarray
    times_ms: np.ndarray
    technique: np.ndarray     # 0 naked single, 1 hidden single, 2 not deducible
    options: np.ndarray       # singles on offer at that moment
    intervals_ms: np.ndarray  # time since the previous placement (first: since start)
    difficulty: np.ndarray    # the step difficulty used by pacing_difficulty


def replay_solve(facts: PuzzleFacts, fill: FillOrder) -> Replayed:
    tech, options = replay(facts.givens, facts.order, fill.cells, facts.solution)
    times = fill.times_ms.astype(float)
    intervals = np.diff(np.concatenate([[0.0], times]))
    difficulty = 1.0 / np.maximum(options, 1) + (tech == NOT_DEDUCIBLE)
    return Replayed(fill.cells, fill.times_ms, tech, options, intervals, difficulty)


def compute(facts: PuzzleFacts, fill: FillOrder, duration_ms: int, *, skill: float = 0.0,
            client: dict | None = None, replayed: Replayed | None = None
            ) -> dict[str, float]:
    """The raw value of every signal that applies to this solve (NaN-free dict)."""
    out: dict[str, float] = {}
    rep = replayed or replay_solve(facts, fill)
    cells = fill.cells
    if cells.size >= MIN_CELLS:
        mine = fill.rank[cells].astype(float)
        rho = spearman(mine, facts.predicted_rank[cells])
        if np.isfinite(rho):
            out["order_sa"] = rho
        if facts.consensus_rank is not None:
            rho = spearman(mine, np.asarray(facts.consensus_rank, dtype=float)[cells])
            if np.isfinite(rho):
                out["order_consensus"] = rho
        out["deducible"] = float(np.mean(rep.technique != NOT_DEDUCIBLE))
        iv = rep.intervals_ms[1:]  # the first interval includes reading the puzzle
        if iv.size >= 3 and iv.mean() > 0:
            out["pacing_cv"] = float(iv.std() / iv.mean())
            rho = spearman(iv, rep.difficulty[1:])
            if np.isfinite(rho):
                out["pacing_difficulty"] = rho
    if duration_ms > 0 and fill.complete:
        out["speed"] = float((np.log(duration_ms / 1000.0) - facts.expected_log_s + skill)
                             / facts.sd_log)
    if client and isinstance(client.get("paste_count"), (int, float)):
        out["paste"] = float(client["paste_count"])
    return out
