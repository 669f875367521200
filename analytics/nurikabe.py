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


def simulate_nurikabe(givens, shape, solution, kind: str, *, rng, expected_log_s: float,
                      sd_log: float = 0.3, skill: float | None = None):
    """A seeded simulated Nurikabe solve log (``analytics.simulate.SimulatedSolve``):
    ``honest`` follows the propagation model's order (hints where it stalls), each
    person deviating from it by :data:`HONEST_ORDER_NOISE` of the solve, with a think
    time per step that grows with the rule's rank and cells of one step placed in quick
    succession; ``row`` and ``random`` copy the solution quickly at an even pace.
    ``solution`` is in move values (1 river, 2 island); the total time is drawn around
    ``expected_log_s`` shifted by ``-skill``."""
    import numpy as np

    from fairgrid.solvers.nurikabe import RULES, propagate
    from fairgrid.solvers.nurikabe.model import NurikabePuzzle

    from .simulate import SimulatedSolve, _flat_times, _times

    if kind not in ("honest", "row", "random"):
        raise ValueError(f"kind must be honest, row or random, got {kind!r}")
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(int(rng))
    puzzle = NurikabePuzzle(shape[0], shape[1], np.asarray(givens, dtype=np.int64))
    solution = np.asarray(solution, dtype=np.int64).reshape(-1)
    if skill is None:
        skill = float(rng.normal(0, 0.4))
    total_ms = 1000 * np.exp(expected_log_s - skill + rng.normal(0, sd_log))
    free = np.flatnonzero(np.asarray(givens).reshape(-1) == 0)
    if kind == "honest":
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
        cells = free if kind == "row" else rng.permutation(free)
        times = _flat_times(cells.size, fast_ms, rng, 0.3)
    return SimulatedSolve(kind, skill, times.astype(np.int64), cells.astype(np.int64),
                          solution[cells].astype(np.int64), np.zeros(cells.size, dtype=bool))
