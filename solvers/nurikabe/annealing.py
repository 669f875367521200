"""Simulated annealing for Nurikabe (Křivánek 2011, §4.2 "Simulated Annealing").

Representation (thesis): every colouring with the right number of black and white cells,
that is ``sum(clues)`` white cells, the clue cells always among them. A move swaps one
white and one black non-clue cell (the thesis' neighbourhood). The cost is the four-part
cost of :mod:`.cost` (island size, joined clues, river components, pools); it is 0
exactly for solutions. A **step** is one proposed swap, accepted or not; the thesis'
metric is the number of steps to reach cost 0, median over runs.

The schedule is the thesis' Sudoku schedule (§3.1), which §4.2 keeps ("principles of the
algorithms remain the same"): ``t <- alpha*t`` after every step, reheat to ``t0`` when
``t < t_min``, Metropolis acceptance of a cost increase ``d`` with probability
``exp(-d/t)``. Choices made where the thesis is silent:

* ``alpha``: the thesis tried 0.99, 0.999 and 0.9999 (Table 4.3) and reports no best; the
  default is 0.999, the middle one (:data:`ALPHAS` lists all three).
* ``t0 = 40``: the thesis' Sudoku rule is a start "allowing around 80 % of swaps that
  increase cost". Measured on random starting colourings of the 553 janko.at puzzles
  (3,933 cost-raising swaps, 3 starts a puzzle, seed 0), a cost-raising swap raises the
  cost by 13.5 on average (median 5, 90th percentile 36: splitting an island moves the
  size term a lot), and at ``t0 = 40`` 79 % of them are accepted (80 % at 43.5). That is
  the Sudoku value again, so it is kept.
* ``t_min = 0.05``, as for Sudoku (a +1 move is then accepted with probability e^-20).
* Moves are drawn as one 64-bit word: its high 32 bits pick the white cell, its low 32
  bits the black one (multiply-shift, :mod:`fairgrid.solvers._rng`); a second word is
  drawn only when a cost increase needs the Metropolis test.
* The starting colouring is a uniform one: the non-clue cells shuffled (Fisher-Yates) and
  the first ``sum(clues) - #clues`` of them white.
* The cost is evaluated in full after every move (two flood fills and the 2×2 blocks:
  O(cells)); river connectivity has no cheap delta. The C twin does the same.

Every run ends solved (cost 0) or at its step cap ``max_steps``, never hangs.
``last_swap[cell]`` is the step at which a cell was last swapped (0 never, -1 clue),
as for Sudoku's fill-order prediction (thesis §4.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from .._rng import (MASK32, U32, below32, kernel_seed, next_u64, seed_of, shuffle_prefix,
                    spawn_seeds, unit_float)
from .cost import grid_cost, kernel_args
from .model import NurikabePuzzle

ALPHAS = (0.99, 0.999, 0.9999)  # the cooling rates of Table 4.3
DEFAULT_ALPHA = 0.999
DEFAULT_T0 = 40.0
DEFAULT_T_MIN = 0.05
DEFAULT_MAX_STEPS = 2_000_000


@dataclass(frozen=True, eq=False)
class NurikabeSAResult:
    """One SA run: solved or not, its final colouring (rows, cols) and its evidence."""

    solved: bool
    grid: np.ndarray = field(repr=False)
    steps: int
    reheats: int
    cost: int
    last_swap: np.ndarray = field(repr=False)
    alpha: float
    message: str

    @property
    def solution(self) -> np.ndarray | None:
        """The solved grid, or None when the run hit its step cap."""
        return self.grid if self.solved else None


@njit(cache=True, error_model="numpy")
def sa_kernel(clue, clue_cells, free, n_white_free, nbr, blocks, seed, t0, alpha, t_min,
              max_steps, grid, last):
    """One SA run (module docstring); fills ``grid`` and ``last``.

    ``free`` lists the non-clue cells (uint64, like every index array of
    :func:`.cost.kernel_args`). Returns (steps, reheats, final cost).
    """
    n = clue.shape[0]
    nfree = free.shape[0]
    seen = np.zeros(n, np.int8)
    stack = np.zeros(n, np.uint64)
    found = np.zeros(max(1, clue_cells.shape[0]), np.int64)
    # pos[:nw] are the white non-clue cells, pos[nw:] the black ones
    pos = free.copy()
    state = shuffle_prefix(pos, nfree, np.uint64(seed))
    nw = n_white_free
    nb = nfree - nw
    for c in range(n):
        grid[c] = 1
        last[c] = 0
    for i in range(clue_cells.shape[0]):
        grid[clue_cells[i]] = 0
        last[clue_cells[i]] = -1
    for i in range(nw):
        grid[pos[i]] = 0
    cost = grid_cost(grid, clue, clue_cells, nbr, blocks, seen, stack, found)
    t = t0
    steps = 0
    reheats = 0
    if nw == 0 or nb == 0:
        return steps, reheats, cost
    while cost > 0 and steps < max_steps:
        steps += 1
        state, r = next_u64(state)
        i = below32(r >> U32, nw)
        j = nw + below32(r & MASK32, nb)
        a = pos[i]
        b = pos[j]
        grid[a] = 1
        grid[b] = 0
        new = grid_cost(grid, clue, clue_cells, nbr, blocks, seen, stack, found)
        delta = new - cost
        accept = delta <= 0
        if not accept:
            state, r = next_u64(state)
            accept = unit_float(r) < math.exp(-delta / t)
        if accept:
            pos[i] = b
            pos[j] = a
            cost = new
            last[a] = steps
            last[b] = steps
        else:
            grid[a] = 0
            grid[b] = 1
        t *= alpha
        if t < t_min:
            t = t0
            reheats += 1
    return steps, reheats, cost


@dataclass(frozen=True, eq=False)
class SAModel:
    """The arrays :func:`sa_kernel` takes, built once per puzzle."""

    puzzle: NurikabePuzzle
    clue: np.ndarray
    clue_cells: np.ndarray
    free: np.ndarray
    n_white_free: int
    nbr: np.ndarray
    blocks: np.ndarray

    @classmethod
    def from_puzzle(cls, puzzle: NurikabePuzzle) -> "SAModel":
        clue, clue_cells, nbr, blocks = kernel_args(puzzle)
        free = np.flatnonzero(clue == 0).astype(np.uint64)
        return cls(puzzle, clue, clue_cells, free, puzzle.white_total - clue_cells.size,
                   nbr, blocks)


def run_kernel(model: SAModel, seed, *, alpha: float = DEFAULT_ALPHA,
               t0: float = DEFAULT_T0, t_min: float = DEFAULT_T_MIN,
               max_steps: int = DEFAULT_MAX_STEPS) -> NurikabeSAResult:
    """One SA run on a prepared model with an explicit kernel seed (benches, pools)."""
    n = model.clue.shape[0]
    grid = np.empty(n, dtype=np.int8)
    last = np.empty(n, dtype=np.int64)
    steps, reheats, final = sa_kernel(model.clue, model.clue_cells, model.free,
                                      model.n_white_free, model.nbr, model.blocks,
                                      np.uint64(seed), float(t0), float(alpha), float(t_min),
                                      np.int64(max_steps), grid, last)
    solved = final == 0
    message = ("solved" if solved else
               f"not solved: step cap of {max_steps} reached with cost {final}")
    shape = model.puzzle.shape
    return NurikabeSAResult(bool(solved), grid.reshape(shape), int(steps), int(reheats),
                            int(final), last.reshape(shape), float(alpha), message)


def _check_params(alpha: float, t0: float, t_min: float, max_steps: int) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0 < t_min < t0:
        raise ValueError(f"need 0 < t_min < t0, got t_min={t_min}, t0={t0}")
    if max_steps < 0:
        raise ValueError(f"max_steps must be >= 0, got {max_steps}")


def solve_sa(puzzle: NurikabePuzzle, *, rng, alpha: float = DEFAULT_ALPHA,
             t0: float = DEFAULT_T0, t_min: float = DEFAULT_T_MIN,
             max_steps: int = DEFAULT_MAX_STEPS) -> NurikabeSAResult:
    """One seeded SA run on ``puzzle`` (thesis §4.2): same ``rng`` seed, same result.

    ``rng`` is an int seed or a numpy Generator; a run stops at cost 0 or ``max_steps``.
    """
    _check_params(alpha, t0, t_min, max_steps)
    return run_kernel(SAModel.from_puzzle(puzzle), kernel_seed(rng), alpha=alpha, t0=t0,
                      t_min=t_min, max_steps=max_steps)


def sa_metric(puzzle: NurikabePuzzle, *, rng, runs: int = 10, **params
              ) -> tuple[float, float, list[NurikabeSAResult]]:
    """The thesis' SA metric: (median steps over ``runs`` runs, solved fraction, runs).

    A run stopped by its cap counts with its cap, so the median is a lower bound when
    fewer than half the runs solved.
    """
    if runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs}")
    p = {"alpha": DEFAULT_ALPHA, "t0": DEFAULT_T0, "t_min": DEFAULT_T_MIN,
         "max_steps": DEFAULT_MAX_STEPS, **params}
    _check_params(p["alpha"], p["t0"], p["t_min"], p["max_steps"])
    model = SAModel.from_puzzle(puzzle)
    results = [run_kernel(model, s, **p) for s in spawn_seeds(seed_of(rng), runs)]
    return (float(np.median([r.steps for r in results])),
            float(np.mean([r.solved for r in results])), results)
