"""Nurikabe: expected solve time before any human data (pure).

No public per-puzzle human times exist for Nurikabe (sudoku.org.uk's have no Nurikabe
twin), so nothing here is fitted. The prior: a person decides each cell without a clue in
about :data:`SECONDS_PER_CELL`, and each stall of the human-like propagation model, where
the model has to be shown a cell, costs about :data:`SECONDS_PER_STALL` of harder
reasoning. Its spread :data:`PRIOR_SD_LOG` is
wide on purpose (a factor of e either way is one sd): a portal's nightly job replaces it
with difficulties fitted to its own players, as it does for Sudoku.
"""

from __future__ import annotations

import math
from typing import Mapping

SECONDS_PER_CELL = 3.0
SECONDS_PER_STALL = 30.0
PRIOR_SD_LOG = 1.0
# levels 1-5 cut the prior expected time at its 20/40/60/80 % quantiles over the public
# collection (553 janko.at puzzles; experiments/nurikabe.py prints them), as Sudoku's cut
# its calibration's: level 3 is the collection's middle fifth
LEVEL_BOUNDS_S = (261.0, 327.0, 496.0, 702.0)
# no human Nurikabe orders are known: before a portal's own solves set the order null
# (the nightly job's per-level offset from each puzzle's simulated centre, and its
# spread), its spread is at least this, wide enough for
# people who go island by island rather than deduction by deduction (ρ near 0 against
# the model's order; bench/nurikabe_detection.py): order alone is weak evidence then
COLD_ORDER_SCALE = 0.4


def level(expected_s: float, mu: float = 0.0) -> int:
    """The level 1-5 of an expected time; ``mu`` shifts the cut points by a portal's
    fitted offset (log-seconds), as the nightly job does."""
    return 1 + sum(math.log(b) + mu <= math.log(expected_s) for b in LEVEL_BOUNDS_S)


def expected_log_time(metrics: Mapping[str, float]) -> float:
    """Prior expected log solve time (seconds) from ``rate_nurikabe``'s metrics."""
    free = float(metrics["cells"]) - float(metrics["n_islands"])  # every clue is a cell
    seconds = SECONDS_PER_CELL * max(free, 1.0) + SECONDS_PER_STALL * float(metrics["prop_hints"])
    return math.log(seconds)


# ---------------------------------------------------------------- simulated solve logs

HONEST_ORDER_NOISE = 0.15  # sd of a person's deviation from the model's order, in solves
LOCAL_SHARE = 0.5          # honest people who work locally (see simulate_nurikabe)
LOCAL_JITTER = 1.5         # cells of distance a local worker's choice may stray by
HINT_WEIGHT = 8.0          # think weight of a cell no rule gave (a stall), vs 1 for rule 0


def _local_route(puzzle, river, rng):
    """A local worker's route: at each moment a cell the rules force, the one nearest
    (Manhattan, with jitter) to the last cell decided; where no rule forces any, the
    nearest undecided cell, from the solution (a stall). (cells, think weights)."""
    import numpy as np

    from fairgrid.solvers.nurikabe import deductions, start_state

    rr, cc = np.divmod(np.arange(puzzle.ncells), puzzle.cols)
    state = start_state(puzzle)
    last = int(rng.integers(puzzle.ncells))
    cells, weights = [], []
    while True:
        unknown = state == -1
        if not unknown.any():
            return cells, weights
        found = deductions(puzzle, state)
        forced = found.colour.reshape(-1)
        rule = found.rule.reshape(-1)
        cand = np.flatnonzero((forced != -1) & unknown)
        stall = cand.size == 0
        if stall:
            cand = np.flatnonzero(unknown)
        dist = (np.abs(rr[cand] - rr[last]) + np.abs(cc[cand] - cc[last])
                + rng.random(cand.size) * LOCAL_JITTER)
        c = int(cand[np.argmin(dist)])
        cells.append(c)
        weights.append(HINT_WEIGHT if stall else float(np.exp(0.25 * max(rule[c], 0))))
        state[c] = river[c]
        last = c


def simulate_nurikabe(givens, shape, solution, behaviour: str, *, rng, expected_log_s: float,
                      sd_log: float = 0.3, skill: float | None = None):
    """A seeded simulated Nurikabe solve log (``analytics.simulate.SimulatedSolve``).
    ``honest``: people of two kinds. Global workers follow the propagation model's order
    (simplest rule first over the whole grid; hints where it stalls), each deviating
    from it by :data:`HONEST_ORDER_NOISE` of the solve, cells of one step placed in quick
    succession. Local workers (:data:`LOCAL_SHARE` of people) decide at each moment a
    cell the rules force next to where they last worked (:func:`_local_route`), so they
    go region by region, an order that agrees with the global one from ρ 0.2 to 0.9.
    Think time per cell grows with the rule's rank, a stall costs most. ``row`` and
    ``random`` copy the solution quickly at an even pace.
    ``solution`` is in move values (1 river, 2 island); the total time is drawn around
    ``expected_log_s`` shifted by ``-skill``."""
    import numpy as np

    from fairgrid.solvers.nurikabe import RULES, propagate
    from fairgrid.solvers.nurikabe.model import NurikabePuzzle

    from .simulate import SimulatedSolve, _flat_times, _times

    if behaviour not in ("honest", "row", "random"):
        raise ValueError(f"behaviour must be honest, row or random, got {behaviour!r}")
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(int(rng))
    puzzle = NurikabePuzzle(shape[0], shape[1], np.asarray(givens, dtype=np.int64))
    solution = np.asarray(solution, dtype=np.int64).reshape(-1)
    if skill is None:
        skill = float(rng.normal(0, 0.4))
    total_ms = 1000 * np.exp(expected_log_s - skill + rng.normal(0, sd_log))
    free = np.flatnonzero(np.asarray(givens).reshape(-1) == 0)
    if behaviour == "honest" and rng.random() < LOCAL_SHARE:
        cells, weights = _local_route(puzzle, (solution == 1).astype(np.int8), rng)
        cells = np.array(cells, dtype=np.int64)
        weights = np.array(weights) * np.exp(rng.normal(0, 0.55, cells.size))
        times = _times(weights, total_ms)
    elif behaviour == "honest":
        run = propagate(puzzle, solution=(solution == 1).astype(np.int8))
        cells, weights = [], []
        for step in run.steps:
            think = np.exp(0.25 * RULES.index(step.rule) + rng.normal(0, 0.55))
            for k, c in enumerate(step.cells):
                cells.append(c)
                weights.append(think if k == 0 else 0.15 * think)
        cells = np.array(cells, dtype=np.int64)
        rank = np.arange(cells.size) + rng.normal(0, HONEST_ORDER_NOISE * cells.size,
                                                  cells.size)
        order = np.argsort(rank, kind="stable")
        cells = cells[order]
        times = _times(np.array(weights)[order], total_ms)
    else:
        fast_ms = total_ms * float(np.exp(rng.normal(np.log(0.3), 0.3)))
        cells = free if behaviour == "row" else rng.permutation(free)
        times = _flat_times(cells.size, fast_ms, rng, 0.3)
    return SimulatedSolve(behaviour, skill, times.astype(np.int64), cells.astype(np.int64),
                          solution[cells].astype(np.int64), np.zeros(cells.size, dtype=bool))
