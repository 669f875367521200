"""Steepest-ascent hill climbing with random restarts (Jones, Roach & Perkins 2007).

* **State** (§3, §4.2): every block holds each digit once — its givens plus its missing
  digits in its empty cells; a move swaps two non-given values within one block.
* **Objective** (§4.3): f = w1·f1 + w2·f2 with w1 = 1, w2 = −1. f1 counts the distinct
  digits of every row and of every column (2·n⁴ for a solution); f2 counts clashes
  between a non-given value and a given in its row or column.
* **Initial state** (§4.4, Fig. 3): the greedy placement fills each block in turn, giving
  each empty cell the first of the block's remaining digits that clashes with no given
  in its row and column (the first remaining digit if every one clashes). Then
  *post-swapping*: each value clashing with a given is swapped with another non-given
  value of its block, tried in random order, that creates no new clash with a given.
  The paper's greedy step is deterministic; for restarts to differ, fairgrid shuffles
  the order in which a block's missing digits are offered (a choice the paper leaves
  open).
* **Search** (§4.1): every iteration evaluates the whole neighbourhood (all swaps of two
  non-given values within a block) and moves to the best successor (a uniformly random
  one among equals, so sideways moves do not cycle between two states).
* **Plateaus** (§4.5): the paper keeps a priority queue and restarts "once the first 10,
  highest scoring solutions all shared the same score, and none of those solutions had
  successors with better scores". fairgrid reads this for steepest ascent as: when no
  successor is strictly better, the climber may step sideways to the best equal one;
  when the last 10 states visited share one score and none had a better successor, it is
  a plateau (or a local maximum, the same test with one state) and the search restarts
  from a new initial state.

Metrics (the paper's Figs. 5–6): iterations (moves made, over all restarts) and
restarts, to a solution or to the iteration cap.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ._rng import U32, below32, next_u64, seed_of, shuffle_prefix, spawn_seeds
from .grid import Puzzle, geometry, is_valid_solution

PLATEAU = 10
DEFAULT_MAX_ITERATIONS = 20_000


@njit(inline="always")
def _score(grid, givens, rowc, colc, grow, gcol, rr, cc, size):
    """f1 − f2 from scratch, filling the row/column digit counts."""
    rowc[:] = 0
    colc[:] = 0
    for c in range(grid.shape[0]):
        rowc[rr[c], grid[c]] += 1
        colc[cc[c], grid[c]] += 1
    f1 = 0
    for i in range(size):
        for d in range(1, size + 1):
            if rowc[i, d] > 0:
                f1 += 1
            if colc[i, d] > 0:
                f1 += 1
    f2 = 0
    for c in range(grid.shape[0]):
        if givens[c] == 0:
            f2 += grow[rr[c], grid[c]] + gcol[cc[c], grid[c]]
    return f1 - f2


@njit(inline="always")
def _line_gain(counts, line_a, line_b, da, db):
    """Change of distinct digits in lines a and b when a's ``da`` and b's ``db`` swap."""
    if line_a == line_b:
        return 0
    g = 0
    # line a loses da, gains db; line b loses db, gains da
    if counts[line_a, da] == 1:
        g -= 1
    if counts[line_a, db] == 0:
        g += 1
    if counts[line_b, db] == 1:
        g -= 1
    if counts[line_b, da] == 0:
        g += 1
    return g


@njit(inline="always")
def _swap_gain(grid, a, b, rowc, colc, grow, gcol, rr, cc):
    da = grid[a]
    db = grid[b]
    g = _line_gain(rowc, rr[a], rr[b], da, db) + _line_gain(colc, cc[a], cc[b], da, db)
    f2 = (grow[rr[a], db] + gcol[cc[a], db] + grow[rr[b], da] + gcol[cc[b], da]
          - grow[rr[a], da] - gcol[cc[a], da] - grow[rr[b], db] - gcol[cc[b], db])
    return g - f2


@njit(inline="always")
def _do_swap(grid, a, b, rowc, colc, rr, cc):
    da = grid[a]
    db = grid[b]
    rowc[rr[a], da] -= 1
    colc[cc[a], da] -= 1
    rowc[rr[b], db] -= 1
    colc[cc[b], db] -= 1
    grid[a] = db
    grid[b] = da
    rowc[rr[a], db] += 1
    colc[cc[a], db] += 1
    rowc[rr[b], da] += 1
    colc[cc[b], da] += 1


@njit(inline="always")
def _initial(grid, givens, blk_cells, grow, gcol, rr, cc, size, state):
    """Greedy placement per block, then post-swapping (§4.4)."""
    avail = np.empty(size, dtype=np.int64)
    for b in range(size):
        n = 0
        present = np.zeros(size + 1, dtype=np.int64)
        for k in range(size):
            c = blk_cells[b, k]
            grid[c] = givens[c]
            present[givens[c]] = 1
        for d in range(1, size + 1):
            if present[d] == 0:
                avail[n] = d
                n += 1
        state = shuffle_prefix(avail, n, state)
        for k in range(size):
            c = blk_cells[b, k]
            if givens[c] != 0:
                continue
            pick = 0
            for j in range(n):
                d = avail[j]
                if grow[rr[c], d] == 0 and gcol[cc[c], d] == 0:
                    pick = j
                    break
            grid[c] = avail[pick]
            avail[pick] = avail[n - 1]
            n -= 1
    # post-swapping
    others = np.empty(size, dtype=np.int64)
    for b in range(size):
        for k in range(size):
            a = blk_cells[b, k]
            if givens[a] != 0:
                continue
            if grow[rr[a], grid[a]] + gcol[cc[a], grid[a]] == 0:
                continue
            m = 0
            for j in range(size):
                o = blk_cells[b, j]
                if o != a and givens[o] == 0:
                    others[m] = o
                    m += 1
            state = shuffle_prefix(others, m, state)
            for j in range(m):
                o = others[j]
                if (grow[rr[a], grid[o]] + gcol[cc[a], grid[o]] == 0
                        and grow[rr[o], grid[a]] + gcol[cc[o], grid[a]] == 0):
                    grid[a], grid[o] = grid[o], grid[a]
                    break
    return state


@njit(cache=True, error_model="numpy")
def hill_kernel(givens, blk_cells, size, seed, max_iterations, plateau, grid):
    """Climb with restarts; returns (solved, iterations, restarts, best score seen)."""
    ncells = givens.shape[0]
    rr = np.empty(ncells, dtype=np.int64)
    cc = np.empty(ncells, dtype=np.int64)
    for c in range(ncells):
        rr[c] = c // size
        cc[c] = c % size
    grow = np.zeros((size, size + 1), dtype=np.int64)
    gcol = np.zeros((size, size + 1), dtype=np.int64)
    for c in range(ncells):
        if givens[c] != 0:
            grow[rr[c], givens[c]] = 1
            gcol[cc[c], givens[c]] = 1
    rowc = np.zeros((size, size + 1), dtype=np.int64)
    colc = np.zeros((size, size + 1), dtype=np.int64)
    goal = 2 * size * size
    state = np.uint64(seed)
    iterations = 0
    restarts = 0
    best_seen = -ncells
    while True:
        state = _initial(grid, givens, blk_cells, grow, gcol, rr, cc, size, state)
        score = _score(grid, givens, rowc, colc, grow, gcol, rr, cc, size)
        flat = 0
        while True:
            if score > best_seen:
                best_seen = score
            if score == goal:
                return True, iterations, restarts, best_seen
            if iterations >= max_iterations:
                return False, iterations, restarts, best_seen
            gain = -ncells
            ties = 0
            ba = -1
            bb = -1
            for b in range(size):
                for i in range(size):
                    a = blk_cells[b, i]
                    if givens[a] != 0:
                        continue
                    for j in range(i + 1, size):
                        o = blk_cells[b, j]
                        if givens[o] != 0:
                            continue
                        g = _swap_gain(grid, a, o, rowc, colc, grow, gcol, rr, cc)
                        if g > gain:
                            gain = g
                            ba = a
                            bb = o
                            ties = 1
                        elif g == gain:
                            ties += 1  # reservoir sampling: a uniform best successor
                            state, bits = next_u64(state)
                            if below32(bits >> U32, ties) == 0:
                                ba = a
                                bb = o
            if ba < 0 or gain < 0:
                break  # a local maximum: restart
            if gain == 0:
                flat += 1
                if flat >= plateau:
                    break
            else:
                flat = 0
            _do_swap(grid, ba, bb, rowc, colc, rr, cc)
            score += gain
            iterations += 1
        restarts += 1


@dataclass(frozen=True, eq=False)
class HillClimbingResult:
    solved: bool
    iterations: int
    restarts: int
    best_score: int
    grid: np.ndarray = field(repr=False)


def hill_climb(puzzle: Puzzle, *, rng, max_iterations: int = DEFAULT_MAX_ITERATIONS,
               plateau: int = PLATEAU) -> HillClimbingResult:
    """One seeded climb (with restarts) on ``puzzle``; see the module docstring."""
    if max_iterations < 0 or plateau < 1:
        raise ValueError("need max_iterations >= 0 and plateau >= 1")
    seed = seed_of(rng)
    return _run(puzzle, seed, max_iterations, plateau)


def _run(puzzle, seed, max_iterations, plateau) -> HillClimbingResult:
    geo = geometry(puzzle.box_size)
    blk_cells = geo.units[2 * puzzle.size:].astype(np.int64)
    grid = np.empty(puzzle.ncells, dtype=np.int64)
    solved, it, restarts, best = hill_kernel(puzzle.givens.astype(np.int64), blk_cells,
                                             puzzle.size, np.uint64(seed),
                                             np.int64(max_iterations), plateau, grid)
    solved = bool(solved) and is_valid_solution(grid, puzzle.box_size)
    return HillClimbingResult(solved, int(it), int(restarts), int(best), grid.astype(np.int8))


def hill_metric(puzzle: Puzzle, *, rng, runs: int = 5,
                max_iterations: int = DEFAULT_MAX_ITERATIONS
                ) -> tuple[float, float, list[HillClimbingResult]]:
    """Median iterations and median restarts over ``runs`` seeded climbs."""
    if runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs}")
    seed = seed_of(rng)
    results = [_run(puzzle, int(s), max_iterations, PLATEAU) for s in spawn_seeds(seed, runs)]
    return (float(np.median([r.iterations for r in results])),
            float(np.median([r.restarts for r in results])), results)
