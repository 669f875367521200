"""Harmony search for Nurikabe (Geem 2007; Křivánek 2011, §4.2 "Harmony Search").

A harmony is any black/white colouring of the grid with the clue cells white ("all
possible colorings", thesis); its fitness is the four-part SA cost of :mod:`.cost`. The
search is the Sudoku one of :mod:`fairgrid.solvers.harmony` with the values 0 (island)
and 1 (river) in place of digits: ``hms`` random colourings in memory; each improvisation
builds a new one cell by cell, with probability ``1 - hmcr`` a random colour, otherwise
the cell's colour in a uniformly chosen memory harmony, then moved +1 or -1 with
probability ``par / 2`` each where that stays within 0..1 (so pitch adjustment makes the
cell black or white with probability ``par / 2`` each); the new harmony replaces the worst
one in memory when its cost is strictly lower.

Choices made where the thesis is silent: the initial memory colours every non-clue cell
black or white with probability 1/2; HMS 50, HMCR 0.7 and PAR 0.1 are the thesis'
Sudoku values (§3.2, Table 3.1). The thesis' metric is the best cost in memory after
10,000 improvisations, median over runs.

The cost does not count white cells out of reach of every clue (the SA representation
fixes the number of white cells, which makes them impossible there), so over free
colourings a zero may be no solution: such a result is a **false optimum**, never a
solution (as the Sudoku sum-45 fitness's zeros).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from .._rng import U32, below32, next_u64, seed_of, spawn_seeds, unit_float
from ..harmony import remember
from .cost import grid_cost, kernel_args
from .model import NurikabePuzzle, is_solution

DEFAULTS = {"hms": 50, "hmcr": 0.7, "par": 0.1, "max_imp": 10_000}


@njit(cache=True, error_model="numpy")
def harmony_kernel(clue, clue_cells, nbr, blocks, hms, hmcr, par, max_imp, seed, best_out):
    """One run; returns (best cost, improvisations made); the best colouring in best_out."""
    n = clue.shape[0]
    state = np.uint64(seed)
    seen = np.zeros(n, np.int8)
    stack = np.zeros(n, np.uint64)
    found = np.zeros(max(1, clue_cells.shape[0]), np.int64)
    free = np.flatnonzero(clue == 0)
    memory = np.zeros((hms, n), dtype=np.int8)
    fit = np.empty(hms, dtype=np.int64)
    for h in range(hms):
        for c in free:
            state, bits = next_u64(state)
            memory[h, c] = below32(bits >> U32, 2)
        fit[h] = grid_cost(memory[h], clue, clue_cells, nbr, blocks, seen, stack, found)
    new = np.zeros(n, dtype=np.int8)
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
                    if v < 1:
                        v += 1
                elif u < par:
                    if v > 0:
                        v -= 1
                new[c] = v
            else:
                state, bits = next_u64(state)
                new[c] = below32(bits >> U32, 2)
        f = grid_cost(new, clue, clue_cells, nbr, blocks, seen, stack, found)
        best = remember(memory, fit, new, f, best)
        imp += 1
    best_out[:] = memory[best]
    return fit[best], imp


@dataclass(frozen=True, eq=False)
class NurikabeHSResult:
    """One harmony-search run: the best cost in memory, and its colouring (rows, cols).
    ``solved`` only for a real solution; a zero cost that is none is a ``false_optimum``."""

    best_cost: int
    improvisations: int
    solved: bool
    false_optimum: bool
    grid: np.ndarray = field(repr=False)


def _check(hms, hmcr, par, max_imp) -> None:
    if hms < 1 or max_imp < 0 or not (0 <= hmcr <= 1) or not (0 <= par <= 1):
        raise ValueError("need hms >= 1, max_imp >= 0 and hmcr, par in [0, 1]")


def _run(puzzle, seed, hms, hmcr, par, max_imp) -> NurikabeHSResult:
    grid = np.empty(puzzle.ncells, dtype=np.int8)
    cost, imp = harmony_kernel(*kernel_args(puzzle), int(hms), float(hmcr), float(par),
                               int(max_imp), np.uint64(seed), grid)
    valid = cost == 0 and is_solution(puzzle, grid)
    return NurikabeHSResult(int(cost), int(imp), bool(valid), bool(cost == 0 and not valid),
                            grid.reshape(puzzle.shape))


def harmony_search(puzzle: NurikabePuzzle, *, rng, hms: int = 50, hmcr: float = 0.7,
                   par: float = 0.1, max_imp: int = 10_000) -> NurikabeHSResult:
    """One seeded harmony-search run on ``puzzle`` (thesis §4.2): same seed, same result."""
    _check(hms, hmcr, par, max_imp)
    return _run(puzzle, seed_of(rng), hms, hmcr, par, max_imp)


def harmony_metric(puzzle: NurikabePuzzle, *, rng, runs: int = 5, **params
                   ) -> tuple[float, list[NurikabeHSResult]]:
    """The thesis' metric: median best cost after ``max_imp`` (10,000) improvisations."""
    if runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs}")
    p = {**DEFAULTS, **params}
    _check(p["hms"], p["hmcr"], p["par"], p["max_imp"])
    results = [_run(puzzle, int(s), p["hms"], p["hmcr"], p["par"], p["max_imp"])
               for s in spawn_seeds(seed_of(rng), runs)]
    return float(np.median([r.best_cost for r in results])), results
