"""Harmony search for Sudoku (Geem 2007; Křivánek 2011, §3.2).

A harmony is a filled grid: the givens, and any digit 1..n² in every other cell. The
harmony memory holds ``hms`` of them, generated at random. Each **improvisation** builds a
new grid cell by cell (Geem eqs. 4–6, thesis §3.2 "Execution"):

* with probability ``1 − hmcr`` a uniformly random digit (random selection);
* otherwise the cell's digit from a uniformly chosen memory harmony (memory
  consideration), which is then moved to a neighbouring value, +1 or −1 with
  probability ``par / 2`` each (pitch adjustment). It "cannot move over the upper limit
  or below the lower limit" (thesis): a move that would leave 1..n² is not made.

The new harmony replaces the worst in memory when its fitness is strictly lower
(Geem §2). Two fitness functions:

* ``"sum45"`` — Geem eq. 1: Σ |unit sum − n²(n²+1)/2| over rows, columns and blocks. Its
  zeros include grids that are not solutions (the all-fives grid; thesis Fig. 3.5): such a
  zero is reported as a **false optimum**, never as a solution.
* ``"missing"`` — the thesis' replacement: digits missing from each row, column and block,
  summed; zero exactly for solutions.

A run stops at a valid solution or after ``max_imp`` improvisations. The thesis' metric
(Table 3.1) is the best fitness in memory after 10,000 improvisations (HMS 50, HMCR 0.7,
PAR 0.1), median over runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ._rng import U32, below32, next_u64, seed_of, spawn_seeds, unit_float
from .grid import Puzzle, geometry, solves

FITNESSES = ("missing", "sum45")
DEFAULTS = {"hms": 50, "hmcr": 0.7, "par": 0.1, "max_imp": 10_000}


@njit(inline="always")
def _fitness(grid, units, size, objective, seen):
    total = 0
    if objective == 1:
        target = size * (size + 1) // 2
        for u in range(units.shape[0]):
            s = 0
            for k in range(size):
                s += grid[units[u, k]]
            total += abs(s - target)
    else:
        for u in range(units.shape[0]):
            seen[:] = 0
            distinct = 0
            for k in range(size):
                d = grid[units[u, k]]
                if seen[d] == 0:
                    seen[d] = 1
                    distinct += 1
            total += size - distinct
    return total


@njit(inline="always")
def remember(memory, fit, new, f, best):
    """Geem's memory update: a new harmony better than the worst in memory replaces it;
    returns the index of the best (shared by the Nurikabe kernel)."""
    worst = np.argmax(fit)
    if f < fit[worst]:
        memory[worst, :] = new
        fit[worst] = f
        if f < fit[best]:
            best = worst
    return best


@njit(cache=True, error_model="numpy")
def harmony_kernel(givens, units, size, hms, hmcr, par, max_imp, objective, seed, best_out):
    """One run; returns (best fitness, improvisations made, index of the best in memory)."""
    ncells = givens.shape[0]
    state = np.uint64(seed)
    free = np.flatnonzero(givens == 0)
    memory = np.empty((hms, ncells), dtype=np.int64)
    fit = np.empty(hms, dtype=np.int64)
    seen = np.zeros(size + 1, dtype=np.int64)
    for h in range(hms):
        for c in range(ncells):
            memory[h, c] = givens[c]
        for c in free:
            state, bits = next_u64(state)
            memory[h, c] = 1 + below32(bits >> U32, size)
        fit[h] = _fitness(memory[h], units, size, objective, seen)
    new = givens.astype(np.int64)
    imp = 0
    best = np.argmin(fit)
    while imp < max_imp and fit[best] > 0:
        for c in free:
            state, bits = next_u64(state)
            if unit_float(bits) < hmcr:
                state, bits = next_u64(state)
                v = memory[below32(bits >> U32, hms), c]
                state, bits = next_u64(state)
                u = unit_float(bits)
                if u < par * 0.5:
                    if v < size:
                        v += 1
                elif u < par:
                    if v > 1:
                        v -= 1
                new[c] = v
            else:
                state, bits = next_u64(state)
                new[c] = 1 + below32(bits >> U32, size)
        f = _fitness(new, units, size, objective, seen)
        best = remember(memory, fit, new, f, best)
        imp += 1
    best_out[:] = memory[best]
    return fit[best], imp


@dataclass(frozen=True, eq=False)
class HarmonyResult:
    """One harmony-search run. ``solved`` only for a valid grid; a zero of the sum-45
    fitness that is not a valid grid is a ``false_optimum``."""

    best_cost: int
    improvisations: int
    solved: bool
    false_optimum: bool
    grid: np.ndarray = field(repr=False)
    fitness: str = "missing"


def harmony_search(puzzle: Puzzle, *, rng, fitness: str = "missing", hms: int = 50,
                   hmcr: float = 0.7, par: float = 0.1, max_imp: int = 10_000
                   ) -> HarmonyResult:
    """One seeded harmony-search run on ``puzzle`` (see the module docstring)."""
    if fitness not in FITNESSES:
        raise ValueError(f"fitness must be one of {FITNESSES}, got {fitness!r}")
    if hms < 1 or max_imp < 0 or not (0 <= hmcr <= 1) or not (0 <= par <= 1):
        raise ValueError("need hms >= 1, max_imp >= 0 and hmcr, par in [0, 1]")
    seed = seed_of(rng)
    return _run(puzzle, seed, fitness, hms, hmcr, par, max_imp)


def _run(puzzle, seed, fitness, hms, hmcr, par, max_imp) -> HarmonyResult:
    geo = geometry(puzzle.box_size)
    grid = np.empty(puzzle.ncells, dtype=np.int64)
    cost, imp = harmony_kernel(puzzle.givens.astype(np.int64), geo.units.astype(np.int64),
                               puzzle.size, hms, float(hmcr), float(par), max_imp,
                               FITNESSES.index(fitness), np.uint64(seed), grid)
    return result_of(puzzle, int(cost), int(imp), grid, fitness)


def result_of(puzzle: Puzzle, cost: int, improvisations: int, grid: np.ndarray,
              fitness: str) -> HarmonyResult:
    """Classify a run's best harmony: a solution only if it is a valid grid keeping the
    givens; a zero cost that is not one is a false optimum."""
    valid = cost == 0 and solves(puzzle, grid)
    return HarmonyResult(cost, improvisations, bool(valid), bool(cost == 0 and not valid),
                         np.asarray(grid).astype(np.int8), fitness)


def harmony_metric(puzzle: Puzzle, *, rng, runs: int = 5, fitness: str = "missing",
                   **params) -> tuple[float, list[HarmonyResult]]:
    """The thesis' metric: median best cost after ``max_imp`` improvisations over ``runs``."""
    if runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs}")
    p = {**DEFAULTS, **params}
    results = [_run(puzzle, int(s), fitness, p["hms"], p["hmcr"], p["par"], p["max_imp"])
               for s in spawn_seeds(seed_of(rng), runs)]
    return float(np.median([r.best_cost for r in results])), results
