"""The nightly job's arithmetic after the fit: per-puzzle medians, the recalibrated
metrics → log-time model with every metric's correlation to human times (thesis Table
3.1, live), fairgrid levels of fitted difficulties, and honest nulls per level learnt
from real solves."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable, Mapping, Sequence

import numpy as np

from .calibration import fit_null
from .expected_time import Calibration, fit
from .fill_order import fill_order
from .ratings import correlations
from .signals import (NOTES_SWITCH, ORDER_OFFSET, PuzzleFacts, compute, notes_carried,
                      replay_solve)

LEVEL_NULL_SIGNALS = ("order_sa", "unforced", "unproven", "pace_variation",
                      "pacing_difficulty", "switch", NOTES_SWITCH)
LEVEL_NULL_MIN = 100  # solves a level needs before its learnt null is used
# values of a level's signal one portal always adds to every portal's null, whatever the
# others have: its share is at most half beyond it
POOL_FLOOR = 5 * LEVEL_NULL_MIN
# the calibration in force counts as this many puzzles' worth of evidence in a refit:
# a portal with a few dozen rated puzzles moves its coefficients a little (the offset
# mu carries what differs most between populations), one with thousands decides them
PRIOR_PUZZLES = 50
RECALIBRATION_MIN = 10  # puzzles with enough solves before a refit


def puzzle_medians(log_t: np.ndarray, puzzle: np.ndarray, n_puzzles: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(solves, median log-time) per puzzle index; NaN median where there is no solve."""
    puzzle = np.asarray(puzzle, dtype=np.int64)
    counts = np.bincount(puzzle, minlength=n_puzzles) if n_puzzles else np.zeros(0, int)
    medians = np.full(n_puzzles, np.nan)
    if puzzle.size:
        order = np.argsort(puzzle, kind="stable")
        bounds = np.searchsorted(puzzle[order], np.arange(n_puzzles + 1))
        for k in np.flatnonzero(counts):
            medians[k] = np.median(log_t[order[bounds[k]:bounds[k + 1]]])
    return counts, medians


@dataclass(frozen=True, eq=False)
class Recalibration:
    calibration: Calibration        # the model in force afterwards (the old one if unfit)
    refitted: bool
    puzzles: int                    # puzzles it was fitted on
    correlations: dict              # metric -> {pearson, spearman} against median times


def recalibrate(cal: Calibration, metrics: Sequence[Mapping[str, float]],
                difficulty: np.ndarray, counts: np.ndarray, medians: np.ndarray, *,
                min_solves: int, source: str, prior: Calibration | None = None
                ) -> Recalibration:
    """Refit ``cal``'s features on the fitted difficulties of puzzles with at least
    ``min_solves`` solves, when there are :data:`RECALIBRATION_MIN` of them, shrunk
    towards ``prior``'s coefficients (the shipped calibration; ``cal``'s when it reads
    other features or none is given) by :data:`PRIOR_PUZZLES`: shrinking towards last
    night's refit instead would drift, night by night, to the unshrunk fit. Also every
    metric's correlation with their median human time."""
    enough = np.flatnonzero(counts >= min_solves)
    if enough.size < RECALIBRATION_MIN:
        return Recalibration(cal, False, 0, {})
    rows = [metrics[k] for k in enough]
    base = prior if prior is not None and prior.features == cal.features else cal
    new_cal = fit(cal.features, rows, np.exp(difficulty[enough]),
                  source=f"{source}: {enough.size} puzzles",
                  prior=base.coef, prior_weight=PRIOR_PUZZLES)
    # the levels keep their meaning (a fifth of the dailies the shipped calibration was
    # fitted on): its cut points moved to the refit's scale by how far the refit's
    # predictions of these puzzles sit from the base's. Cut points from this bank's own
    # quintiles would make whatever it holds spread over every level
    shift = float(np.mean([new_cal.expected_log_time(r) - base.expected_log_time(r)
                           for r in rows]))
    new_cal = replace(new_cal, level_bounds_s=tuple(
        float(b * np.exp(shift)) for b in base.level_bounds_s))
    names = sorted(set().union(*(r.keys() for r in rows)))
    corr = correlations({n: np.array([r.get(n, np.nan) for r in rows]) for n in names},
                        medians[enough])
    corr["fitted_difficulty"] = correlations({"d": difficulty[enough]},
                                             medians[enough]).get("d", {})
    return Recalibration(new_cal, True, int(enough.size), corr)


def levels(cal: Calibration, difficulty: np.ndarray, mu: float) -> np.ndarray:
    """fairgrid's level (1-5) of each fitted difficulty: the calibration's cut points,
    shifted by the players' fitted offset ``mu``."""
    bounds_log = np.log(np.asarray(cal.level_bounds_s)) + mu
    return 1 + np.searchsorted(bounds_log, difficulty, side="right")


def level_nulls(solves: Iterable[tuple[str, PuzzleFacts, float | None, np.ndarray,
                                       np.ndarray, np.ndarray, np.ndarray]]) -> dict:
    """Honest nulls per level from real solves, each (level, facts, order centre, t_ms,
    cell, digit, note), the order centre being the puzzle's simulated ``order_sa`` centre
    (None: it has none): {level: {signal: [centre, scale]}} for levels with at least
    :data:`LEVEL_NULL_MIN` values of a signal (per signal). The order null is learnt as
    :data:`~.signals.ORDER_OFFSET`, the real solves' ρ less their puzzle's centre
    (``puzzle_model.scoring_inputs`` adds it back to each puzzle's own), and the switch
    of solves whose notes carried the thinking as :data:`~.signals.NOTES_SWITCH`."""
    return fit_level_nulls(level_values(solves))


def level_values(solves) -> dict:
    """The signals of real solves by level, ``order_sa`` less its puzzle's simulated
    centre, ``switch`` of solves whose notes carried the thinking as
    :data:`~.signals.NOTES_SWITCH`: {level: {signal: [values]}} (the part of
    :func:`level_nulls` that scales with the solves; chunks of it can run apart and be
    joined with :func:`join_level_values` in their order)."""
    samples: dict = {}
    for level, facts, order_centre, t_ms, cell, digit, note in solves:
        fill = fill_order(t_ms, cell, digit, note, facts.givens, facts.solution,
                          facts.blank)
        rep = replay_solve(facts, fill, (t_ms, cell, digit, note))
        values = compute(facts, fill, int(t_ms[-1]), replayed=rep)
        if "switch" in values and notes_carried(rep):  # like with like (NOTES_SWITCH)
            values[NOTES_SWITCH] = values.pop("switch")
        if "order_sa" in values:
            if order_centre is None:
                del values["order_sa"]
            else:
                values["order_sa"] -= order_centre
        band = samples.setdefault(level, {})
        for name in LEVEL_NULL_SIGNALS:
            if name in values:
                band.setdefault(name, []).append(values[name])
    return samples


def join_level_values(parts) -> dict:
    """:func:`level_values` of consecutive chunks, joined as if computed at once."""
    samples: dict = {}
    for part in parts:
        for level, band in part.items():
            into = samples.setdefault(level, {})
            for name, values in band.items():
                into.setdefault(name, []).extend(values)
    return samples


def pool_level_values(by_portal: Mapping[str, dict], floor: int = POOL_FLOOR) -> dict:
    """:func:`level_values` of every portal (``by_portal``: portal -> {level: {signal:
    values}}, each portal's in its sample's random order) as one population, a portal's
    values of a level's signal counting at most as many as every other portal's
    together, or ``floor`` (its first): one portal's many solves in a style of their own
    do not make the null every portal's players are judged by, and a portal with a few
    solves does not take half of it, nor cut a level below what a null needs."""
    parts: dict[tuple, list] = {}
    for portal in sorted(by_portal):
        for level, band in by_portal[portal].items():
            for name, values in band.items():
                parts.setdefault((level, name), []).append(values)
    out: dict = {}
    for (level, name), lists in parts.items():
        total = sum(len(v) for v in lists)
        out.setdefault(level, {})[name] = [
            x for v in lists
            for x in (v if len(v) == total else v[:max(total - len(v), floor)])]
    return out


def fit_level_nulls(samples: dict) -> dict:
    """{level: {signal: [centre, scale]}} from :func:`level_values`."""
    out = {}
    for level, values in samples.items():
        # each signal on its own count: a signal that needs long solves (switch) must not
        # keep a level from its other learnt nulls
        enough = {k: v for k, v in values.items() if len(v) >= LEVEL_NULL_MIN}
        if enough:
            null = fit_null(enough)
            out[level] = {ORDER_OFFSET if k == "order_sa" else k: list(null[k])
                          for k in enough if k in null}
    return out
