"""Simulated annealing for Sudoku (Lewis 2007; Křivánek 2011, §3.1).

Representation (Lewis 2007, §2.1): every block holds a permutation of its missing digits,
the givens stay fixed, so the block rule always holds. A move swaps two non-given cells
of one block. Cost (Lewis §2.2; thesis Fig. 3.1): for every row and every column, the
number of digits 1..size it misses, summed; a solution has cost 0. A swap touches at most
two rows and two columns, so the kernels keep per-row and per-column digit counts and
evaluate each move's delta in O(1) (delta evaluation, Lewis §2.2).

Two schedules, each with its own paper's move sampling:

``"thesis"`` (Křivánek 2011, §3.1)
    Pick a random block (among those with at least two free cells), then two distinct
    free cells in it. Start at ``t0 = 40`` ("allowing around 80 % of swaps that increase
    cost"), cool ``t <- alpha*t`` after every step with ``alpha = 0.99995`` (the best
    cooling rate of Fig. 3.3), and reheat to ``t0`` when ``t < t_min``. The thesis gives
    no value for ``t_min``; we use 0.05, where a +1 move is accepted with probability
    e^-20 (the search is greedy but still walks plateaus of equal cost), which the
    thesis' own advice ("set a bit on the safe side") allows.

``"lewis"`` (Lewis 2007, §2.3)
    Pick a random non-given cell (among cells whose block has another free cell), then a
    random other free cell of its block, so blocks with few free cells are not
    over-sampled. ``t0`` is the standard deviation of the cost over 200 random moves made
    before the search; homogeneous Markov chains of ``ml = (free cells)**2`` steps at a
    fixed temperature; ``t <- 0.99*t`` between chains; after 20 chains without
    improvement, reheat: ``t <- t0`` and a fresh random initial solution. Lewis does not
    define "improvement"; a chain improves when its best cost is below the previous
    chain's best. (Measuring against the best cost since the last reheat instead makes
    the search reheat every ~40 chains, before it is ever cold, and it then fails even
    on easy puzzles that Lewis reports solved in half a second.)

A step is one proposed move (accepted or not); that is what the thesis' SA metric counts.
Every run ends either solved (cost 0) or at its step cap (``max_steps``), never hangs.
For the fill-order prediction (thesis §4.1) the kernels record, for every cell, the step
at which it was last swapped; see :mod:`fairgrid.solvers.fill_order`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ._rng import (MASK21, MASK32, U1, U21, U22, U32, U43, below21, below32, kernel_seed,
                   next_u64, unit_float)
from .grid import Puzzle

SCHEDULES = ("thesis", "lewis")
# Křivánek 2011, §3.1: t0 = 40, cooling rate 0.99995 (Fig. 3.3); t_min is our choice.
THESIS_T0 = 40.0
THESIS_ALPHA = 0.99995
THESIS_T_MIN = 0.05
# Lewis 2007, §2.3 and §3.1: alpha = 0.99, reheat after 20 chains without improvement.
LEWIS_ALPHA = 0.99
LEWIS_STALL_CHAINS = 20
LEWIS_T0_SAMPLE = 200
DEFAULT_MAX_STEPS = 200_000_000


@dataclass(frozen=True, eq=False)
class Model:
    """The index arrays the kernels work on, built once per puzzle.

    Index arrays are ``uint64``: numba skips its negative-index wraparound check for
    unsigned indices, which is worth ~10 % in the step loop.
    """

    size: int
    givens: np.ndarray  # uint64 (ncells,)
    row: np.ndarray  # uint64 (ncells,)
    col: np.ndarray  # uint64 (ncells,)
    blk_free: np.ndarray  # uint64 (size*size,): block b's free cells at b*size .. b*size+k-1
    blk_nfree: np.ndarray  # uint64 (size,)
    blk_missing: np.ndarray  # uint64 (size*size,): the digits each block misses, same layout
    mblocks: np.ndarray  # uint64: blocks with >= 2 free cells (the thesis picks among them)
    mcells: np.ndarray  # uint64: free cells in those blocks (Lewis picks among them)
    cell_block: np.ndarray  # uint64 (ncells,)
    cell_pos: np.ndarray  # uint64 (ncells,): position of a free cell in its block's list
    nfree: int

    @classmethod
    def from_puzzle(cls, puzzle: Puzzle) -> "Model":
        geo = puzzle.geometry
        size = geo.size
        givens = puzzle.givens.astype(np.int64)
        blk_free = np.zeros((size, size), dtype=np.int64)
        blk_missing = np.zeros((size, size), dtype=np.int64)
        blk_nfree = np.zeros(size, dtype=np.int64)
        cell_pos = np.zeros(geo.ncells, dtype=np.int64)
        for b in range(size):
            cells = geo.units[2 * size + b]
            free = cells[givens[cells] == 0]
            missing = np.setdiff1d(np.arange(1, size + 1), givens[cells])
            blk_nfree[b] = free.size
            blk_free[b, :free.size] = free
            blk_missing[b, :missing.size] = missing
            cell_pos[free] = np.arange(free.size)
        mblocks = np.flatnonzero(blk_nfree >= 2)
        mcells = np.sort(np.concatenate([blk_free[b, :blk_nfree[b]] for b in mblocks])
                         if mblocks.size else np.empty(0, np.int64))
        u = lambda a: np.ascontiguousarray(a, dtype=np.uint64).reshape(-1)  # noqa: E731
        return cls(size, u(givens), u(geo.row), u(geo.col), u(blk_free), u(blk_nfree),
                   u(blk_missing), u(mblocks), u(mcells), u(geo.block), u(cell_pos),
                   int((givens == 0).sum()))


@dataclass(frozen=True, eq=False)
class AnnealingResult:
    """One SA run: whether it solved the puzzle, its final grid and its evidence.

    ``last_swap[cell]`` is the step at which the cell was last swapped (0 when it never
    was, -1 for givens); the fill-order prediction ranks cells by it (thesis §4.1).
    """

    solved: bool
    grid: np.ndarray = field(repr=False)
    steps: int
    reheats: int
    cost: int
    last_swap: np.ndarray = field(repr=False)
    schedule: str
    message: str

    @property
    def solution(self) -> np.ndarray | None:
        """The solved grid, or None when the run hit its step cap."""
        return self.grid if self.solved else None


# ------------------------------------------------------------------------------- kernels
# All index arithmetic below stays in uint64 (numba turns uint64 mixed with int64 into
# float64, so constants are uint64 too): see Model.

@njit(inline="always")
def _line_delta(counts, s1, la, lb, da, db):
    """Missing-digit change of lines ``la`` and ``lb`` when ``da`` in la trades with ``db``.

    ``counts`` are flat ``(size, size+1)`` digit counts of rows or columns; a line that
    loses its only ``da`` gains a missing digit, one that had no ``db`` loses one.
    """
    d = 0
    if la != lb:
        if counts[la * s1 + da] == 1:
            d += 1
        if counts[la * s1 + db] == 0:
            d -= 1
        if counts[lb * s1 + db] == 1:
            d += 1
        if counts[lb * s1 + da] == 0:
            d -= 1
    return d


@njit(inline="always")
def _swap_delta(rowc, colc, s1, ra, ca, da, rb, cb, db):
    """Cost change of swapping digit ``da`` at (ra, ca) with ``db`` at (rb, cb)."""
    return _line_delta(rowc, s1, ra, rb, da, db) + _line_delta(colc, s1, ca, cb, da, db)


@njit(inline="always")
def _apply_swap(grid, rowc, colc, s1, a, b, ra, ca, da, rb, cb, db):
    """Swap the digits of cells a and b and update the counts."""
    grid[a] = db
    grid[b] = da
    rowc[ra * s1 + da] -= 1
    rowc[ra * s1 + db] += 1
    rowc[rb * s1 + db] -= 1
    rowc[rb * s1 + da] += 1
    colc[ca * s1 + da] -= 1
    colc[ca * s1 + db] += 1
    colc[cb * s1 + db] -= 1
    colc[cb * s1 + da] += 1


@njit(inline="always")
def _delta_of(grid, row, col, rowc, colc, s1, a, c):
    """Cost change of swapping the digits of cells a and c."""
    return _swap_delta(rowc, colc, s1, row[a], col[a], grid[a], row[c], col[c], grid[c])


@njit(inline="always")
def _swap(grid, row, col, rowc, colc, s1, a, c):
    """Swap the digits of cells a and c, updating the counts."""
    _apply_swap(grid, rowc, colc, s1, a, c, row[a], col[a], grid[a], row[c], col[c], grid[c])


@njit(inline="always")
def _counts(grid, row, col, size):
    """Per-row and per-column digit counts, flat (size, size+1)."""
    s1 = np.uint64(size + 1)
    rowc = np.zeros(size * (size + 1), dtype=np.int32)
    colc = np.zeros(size * (size + 1), dtype=np.int32)
    for c in range(grid.shape[0]):
        rowc[row[c] * s1 + grid[c]] += 1
        colc[col[c] * s1 + grid[c]] += 1
    return rowc, colc


@njit(inline="always")
def _full_cost(rowc, colc, size):
    """The cost from the counts: digits missing from each row and column."""
    s1 = size + 1
    cost = 0
    for u in range(size):
        for d in range(1, s1):
            cost += (rowc[u * s1 + d] == 0) + (colc[u * s1 + d] == 0)
    return cost


@njit(cache=True, error_model="numpy")
def apply_swaps(grid, row, col, size, swaps):
    """Apply (a, b) swaps with delta evaluation; return the cost after each (for tests)."""
    rowc, colc = _counts(grid, row, col, size)
    s1 = np.uint64(size + 1)
    cost = _full_cost(rowc, colc, size)
    out = np.empty(swaps.shape[0], dtype=np.int64)
    for k in range(swaps.shape[0]):
        a, b = swaps[k, 0], swaps[k, 1]
        cost += _delta_of(grid, row, col, rowc, colc, s1, a, b)
        _swap(grid, row, col, rowc, colc, s1, a, b)
        out[k] = cost
    return out


@njit(inline="always")
def _fill_blocks(grid, givens, blk_free, blk_nfree, blk_missing, state):
    """A random initial solution: each block's missing digits, shuffled (Fisher-Yates)."""
    size = blk_nfree.shape[0]
    for c in range(givens.shape[0]):
        grid[c] = givens[c]
    for b in range(size):
        base = b * size
        k = np.int64(blk_nfree[b])
        for i in range(k):
            grid[blk_free[base + i]] = blk_missing[base + i]
        for i in range(k - 1, 0, -1):
            state, r = next_u64(state)
            j = below32(r >> U32, i + 1)
            ci = blk_free[base + i]
            cj = blk_free[base + j]
            t = grid[ci]
            grid[ci] = grid[cj]
            grid[cj] = t
    return state


@njit(inline="always")
def _start(grid, last, givens, row, col, blk_free, blk_nfree, blk_missing, seed):
    """A random initial solution with its counts and cost; last-swap steps reset."""
    size = blk_nfree.shape[0]
    state = _fill_blocks(grid, givens, blk_free, blk_nfree, blk_missing, seed)
    rowc, colc = _counts(grid, row, col, size)
    _reset_last(givens, last, 0)
    return state, rowc, colc, _full_cost(rowc, colc, size)


@njit(inline="always")
def _reset_last(givens, last, value):
    for c in range(last.shape[0]):
        last[c] = value if givens[c] == 0 else -1


@njit(inline="always")
def _metropolis(u, x):
    """``u < exp(-x)`` for x > 0, calling exp only when two exact bounds do not decide.

    ``1 - x < exp(-x) < 1 / (1 + x + x*x/2)`` for x > 0. The gaps between the bounds and
    exp(-x) are at least ~x**2/2 and ~x**3/6 relative; with x >= 1/40 here they exceed
    the rounding error of the bounds by ten orders of magnitude, so the decision is the
    one ``u < exp(-x)`` makes, at a fraction of the cost (exp is most of a step).
    """
    if u < 1.0 - x:
        return True
    if u * (1.0 + x + 0.5 * x * x) >= 1.0:
        return False
    return u < math.exp(-x)


@njit(cache=True, error_model="numpy")
def sa_thesis_kernel(givens, row, col, blk_free, blk_nfree, blk_missing, mblocks, seed,
                     t0, alpha, t_min, max_steps, grid, last):
    """Thesis schedule (Křivánek 2011, §3.1); fills ``grid`` and ``last``.

    Returns (steps, reheats, final cost).
    """
    size = blk_nfree.shape[0]
    su = np.uint64(size)
    s1 = np.uint64(size + 1)
    state, rowc, colc, cost = _start(grid, last, givens, row, col, blk_free, blk_nfree,
                                     blk_missing, seed)
    nmb = mblocks.shape[0]
    t = t0
    steps = 0
    reheats = 0
    if nmb == 0:
        return steps, reheats, cost
    while cost > 0 and steps < max_steps:
        steps += 1
        state, r = next_u64(state)
        b = mblocks[below21(r >> U43, nmb)]
        k = blk_nfree[b]
        i = ((((r >> U22) & MASK21) * k) >> U21)
        j = ((((r >> U1) & MASK21) * (k - U1)) >> U21)
        if j >= i:
            j += U1
        a = blk_free[b * su + i]
        c = blk_free[b * su + j]
        delta = _delta_of(grid, row, col, rowc, colc, s1, a, c)
        accept = delta <= 0
        if not accept:
            state, r = next_u64(state)
            accept = _metropolis(unit_float(r), delta / t)
        if accept:
            _swap(grid, row, col, rowc, colc, s1, a, c)
            cost += delta
            last[a] = steps
            last[c] = steps
        t *= alpha
        if t < t_min:
            t = t0
            reheats += 1
    return steps, reheats, cost


@njit(inline="always")
def _lewis_pick(r, mcells, cell_block, cell_pos, blk_free, blk_nfree, su):
    """Lewis 2007, §2.1: a random movable cell, then another free cell of its block."""
    a = mcells[((r >> U32) * np.uint64(mcells.shape[0])) >> U32]
    b = cell_block[a]
    j = ((r & MASK32) * (blk_nfree[b] - U1)) >> U32
    if j >= cell_pos[a]:
        j += U1
    return a, blk_free[b * su + j]


@njit(cache=True, error_model="numpy")
def sa_lewis_kernel(givens, row, col, blk_free, blk_nfree, blk_missing, mcells, cell_block,
                    cell_pos, seed, alpha, stall_chains, t0_sample, max_steps, grid, last):
    """Lewis's schedule (Lewis 2007, §2.3); fills ``grid`` and ``last``.

    Returns (steps, reheats, final cost, t0).
    """
    size = blk_nfree.shape[0]
    su = np.uint64(size)
    s1 = np.uint64(size + 1)
    state, rowc, colc, cost = _start(grid, last, givens, row, col, blk_free, blk_nfree,
                                     blk_missing, seed)
    nfree = 0
    for c in range(givens.shape[0]):
        nfree += givens[c] == 0
    if mcells.shape[0] == 0:
        return 0, 0, cost, 0.0
    # t0: standard deviation of the cost over a small sample of random moves (§2.3).
    total = 0.0
    total2 = 0.0
    for _ in range(t0_sample):
        state, r = next_u64(state)
        a, c = _lewis_pick(r, mcells, cell_block, cell_pos, blk_free, blk_nfree, su)
        cost += _delta_of(grid, row, col, rowc, colc, s1, a, c)
        _swap(grid, row, col, rowc, colc, s1, a, c)
        total += cost
        total2 += cost * cost
    mean = total / t0_sample
    var = total2 / t0_sample - mean * mean
    t0 = math.sqrt(var) if var > 1e-12 else 1.0
    ml = nfree * nfree  # Markov chain length, Lewis eq. (4)
    accept_p = np.empty(9, dtype=np.float64)
    t = t0
    steps = 0
    reheats = 0
    prev_best = cost
    stall = 0
    while cost > 0 and steps < max_steps:
        for d in range(1, 9):
            accept_p[d] = math.exp(-d / t)
        chain_best = cost
        for _ in range(ml):
            steps += 1
            state, r = next_u64(state)
            a, c = _lewis_pick(r, mcells, cell_block, cell_pos, blk_free, blk_nfree, su)
            delta = _delta_of(grid, row, col, rowc, colc, s1, a, c)
            accept = delta <= 0
            if not accept:
                state, r = next_u64(state)
                accept = unit_float(r) < accept_p[delta]
            if accept:
                _swap(grid, row, col, rowc, colc, s1, a, c)
                cost += delta
                last[a] = steps
                last[c] = steps
                if cost < chain_best:
                    chain_best = cost
                if cost == 0:
                    break
            if steps >= max_steps:
                break
        if cost == 0 or steps >= max_steps:
            break
        t *= alpha
        # A chain improves when its best cost beats the previous chain's best.
        stall = 0 if chain_best < prev_best else stall + 1
        prev_best = chain_best
        if stall >= stall_chains:
            # Reheat (§2.3): t back to t0 and a fresh initial solution; every free cell
            # counts as placed at this step.
            state = _fill_blocks(grid, givens, blk_free, blk_nfree, blk_missing, state)
            rowc, colc = _counts(grid, row, col, size)
            cost = _full_cost(rowc, colc, size)
            prev_best = cost
            stall = 0
            t = t0
            reheats += 1
            _reset_last(givens, last, steps)
    return steps, reheats, cost, t0


# ------------------------------------------------------------------------------- public API

def cost(grid, box_size: int) -> int:
    """The SA cost of a filled grid: digits missing from each row and column, summed."""
    size = box_size * box_size
    g = np.asarray(grid).reshape(size, size)
    full = set(range(1, size + 1))
    return int(sum(len(full - set(r.tolist())) for r in g)
               + sum(len(full - set(c.tolist())) for c in g.T))


def run_kernel(model: Model, seed: np.uint64, *, schedule: str = "thesis",
               max_steps: int = DEFAULT_MAX_STEPS, t0: float = THESIS_T0,
               alpha: float | None = None, t_min: float = THESIS_T_MIN) -> AnnealingResult:
    """One SA run on a prepared model with an explicit kernel seed (used by the pool)."""
    grid = np.empty(model.givens.shape[0], dtype=np.uint64)
    last = np.empty(model.givens.shape[0], dtype=np.int64)
    if schedule == "thesis":
        a = THESIS_ALPHA if alpha is None else alpha
        steps, reheats, final = sa_thesis_kernel(
            model.givens, model.row, model.col, model.blk_free, model.blk_nfree,
            model.blk_missing, model.mblocks, np.uint64(seed), float(t0), float(a),
            float(t_min), np.int64(max_steps), grid, last)
    elif schedule == "lewis":
        a = LEWIS_ALPHA if alpha is None else alpha
        steps, reheats, final, _t0 = sa_lewis_kernel(
            model.givens, model.row, model.col, model.blk_free, model.blk_nfree,
            model.blk_missing, model.mcells, model.cell_block, model.cell_pos,
            np.uint64(seed), float(a), LEWIS_STALL_CHAINS, LEWIS_T0_SAMPLE,
            np.int64(max_steps), grid, last)
    else:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    solved = final == 0
    message = ("solved" if solved else
               f"not solved: step cap of {max_steps} reached with cost {final}")
    return AnnealingResult(bool(solved), grid.astype(np.int8), int(steps), int(reheats),
                           int(final), last, schedule, message)


def solve_sa(puzzle: Puzzle, *, rng, schedule: str = "thesis",
             max_steps: int = DEFAULT_MAX_STEPS, **params) -> AnnealingResult:
    """Solve ``puzzle`` with simulated annealing; seeded and reproducible.

    Parameters
    ----------
    puzzle : Puzzle
    rng : numpy.random.Generator or int
        The only source of randomness: the same seed gives the same result.
    schedule : {"thesis", "lewis"}
        Cooling schedule and move sampling (see the module docstring).
    max_steps : int
        Step cap; a run that reaches it returns ``solved=False``, never hangs.
    **params
        Thesis schedule only: ``t0``, ``alpha``, ``t_min``; Lewis: ``alpha``.

    Returns
    -------
    AnnealingResult
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    if max_steps < 0:
        raise ValueError(f"max_steps must be >= 0, got {max_steps}")
    return run_kernel(Model.from_puzzle(puzzle), kernel_seed(rng), schedule=schedule,
                      max_steps=max_steps, **params)
