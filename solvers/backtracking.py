"""Backtracking search (Křivánek 2011, §3.3) and the uniqueness check.

Two kernels on bitmask candidate sets (bit ``d`` set = digit ``d`` still possible):

:func:`solve_backtracking` is the thesis' brute-force search, step for step. Cells are
kept in an ordered list; when the search reaches a depth for which the list has no cell
yet, it appends a random one of the cells that currently have the fewest candidates
("If we do not have yet assigned the next cell ... we choose randomly one of those which
currently have the least number of available numbers"). At a depth it suggests the
values 1..size in turn; **each suggestion is one step**, allowed or not; an allowed value
is written and the search goes one level deeper; when all values are exhausted it empties
the cell and backtracks. The ordered list is the order in which cells were first
explored, which §4.1 uses as a (weak) fill-order predictor; the step count is the
thesis' brute-force difficulty metric.

:func:`count_solutions` is the fast exact counter for the uniqueness check: depth-first,
re-choosing at every node the empty cell with the fewest candidates (first one on ties),
trying only its candidates, and stopping at ``limit`` solutions.

The thesis' fixed exploration order is hopeless from box size 4 up: a cell chosen early
keeps its place while later placements leave other cells with a single candidate, and a
sparse 16x16 puzzle that the counter proves unique in seconds exhausts a 50 M step cap.
From box size 4 :func:`solve_backtracking` therefore re-chooses the cell with the fewest
candidates at every node, as the counter does (ties drawn from the seed), and suggests
only candidates; each suggestion is still one step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ._rng import kernel_seed, next_u64, U32, below32
from .grid import Puzzle, SearchLimitError

DEFAULT_MAX_STEPS = 50_000_000

_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)
_U1 = np.uint64(1)
_U2 = np.uint64(2)
_U4 = np.uint64(4)
_U56 = np.uint64(56)


@njit(inline="always")
def popcount(x):
    """Number of set bits of a uint64 (SWAR; the same code as the C reference)."""
    x = x - ((x >> _U1) & _M1)
    x = (x & _M2) + ((x >> _U2) & _M2)
    x = (x + (x >> _U4)) & _M4
    return np.int64((x * _H01) >> _U56)


@njit(inline="always")
def _cell_tables(box_size):
    """Row, column and block of every cell (no divisions in the search loops)."""
    size = box_size * box_size
    ncells = size * size
    rr = np.empty(ncells, dtype=np.int64)
    cc = np.empty(ncells, dtype=np.int64)
    bb = np.empty(ncells, dtype=np.int64)
    for c in range(ncells):
        rr[c] = c // size
        cc[c] = c % size
        bb[c] = (rr[c] // box_size) * box_size + cc[c] // box_size
    return rr, cc, bb


@njit(inline="always")
def _place(grid, c, d, rowm, colm, boxm, rr, cc, bb):
    """Write digit ``d`` into cell ``c`` and mark it used in its row, column and block."""
    bit = _U1 << np.uint64(d)
    grid[c] = d
    rowm[rr[c]] |= bit
    colm[cc[c]] |= bit
    boxm[bb[c]] |= bit


@njit(inline="always")
def _unplace(grid, c, rowm, colm, boxm, rr, cc, bb):
    """Empty cell ``c`` and free its digit in its row, column and block."""
    bit = ~(_U1 << np.uint64(grid[c]))
    rowm[rr[c]] &= bit
    colm[cc[c]] &= bit
    boxm[bb[c]] &= bit
    grid[c] = 0


@njit(inline="always")
def _init_masks(grid, box_size):
    """Used-digit bitmasks of rows, columns and blocks, the empty cells, the cell tables."""
    size = box_size * box_size
    rr, cc, bb = _cell_tables(box_size)
    rowm = np.zeros(size, dtype=np.uint64)
    colm = np.zeros(size, dtype=np.uint64)
    boxm = np.zeros(size, dtype=np.uint64)
    empties = np.empty(size * size, dtype=np.int64)
    n = 0
    for c in range(size * size):
        if grid[c] == 0:
            empties[n] = c
            n += 1
        else:
            _place(grid, c, grid[c], rowm, colm, boxm, rr, cc, bb)
    return rowm, colm, boxm, empties, n, rr, cc, bb


# the most placements the uniqueness search tries (about 5 s on the 2-core AMD EPYC): a
# 9×9 daily takes a few hundred, the 16×16 of the tests 570,000; a grid with no
# solution that the search cannot refute early (a 16×16 whose last digit of one kind
# has nowhere to go) would run for hours
MAX_COUNT_NODES = 20_000_000


@njit(cache=True, error_model="numpy", nogil=True)
def count_kernel(grid, box_size, limit, solution, max_nodes=0):
    """Count solutions of ``grid`` (modified in place, restored) up to ``limit``, trying
    at most ``max_nodes`` placements (0: no cap).

    Writes the first solution found into ``solution``. Returns (count, nodes); count is
    -1 when the cap ended the search first. Without the GIL: a thread running it leaves
    the daemon's event loop free.
    """
    size = box_size * box_size
    full = ((_U1 << np.uint64(size + 1)) - _U1) ^ _U1
    rowm, colm, boxm, empties, n, rr, cc, bb = _init_masks(grid, box_size)
    cand = np.zeros(n + 1, dtype=np.uint64)
    count = 0
    nodes = 0
    depth = 0
    choose = True
    while True:
        if choose:
            if depth == n:
                count += 1
                if count == 1:
                    for c in range(size * size):
                        solution[c] = grid[c]
                if count >= limit:
                    break
                choose = False
                depth -= 1
                if depth < 0:
                    break
                _unplace(grid, empties[depth], rowm, colm, boxm, rr, cc, bb)
                continue
            best = depth
            bestc = 64
            bestm = np.uint64(0)
            for i in range(depth, n):
                c = empties[i]
                m = full & ~(rowm[rr[c]] | colm[cc[c]] | boxm[bb[c]])
                pc = popcount(m)
                if pc < bestc:
                    bestc, best, bestm = pc, i, m
                    if pc <= 1:
                        break
            t = empties[depth]
            empties[depth] = empties[best]
            empties[best] = t
            cand[depth] = bestm
        m = cand[depth]
        if m == 0:
            depth -= 1
            if depth < 0:
                break
            _unplace(grid, empties[depth], rowm, colm, boxm, rr, cc, bb)
            choose = False
            continue
        bit = m & (~m + _U1)
        cand[depth] = m ^ bit
        _place(grid, empties[depth], popcount(bit - _U1), rowm, colm, boxm, rr, cc, bb)
        nodes += 1
        depth += 1
        choose = True
        if max_nodes > 0 and nodes >= max_nodes:
            count = -1
            break
    # restore the puzzle
    for i in range(n):
        grid[empties[i]] = 0
    return count, nodes


@njit(cache=True, error_model="numpy")
def thesis_kernel(grid, box_size, seed, max_steps, explored):
    """The thesis' brute force (§3.3) on ``grid`` (filled in place when solved).

    ``explored`` receives the cells in the order they were first explored.
    Returns (status, steps, number explored); status 1 solved, 0 no solution, -1 capped.
    """
    size = box_size * box_size
    full = ((_U1 << np.uint64(size + 1)) - _U1) ^ _U1
    rowm, colm, boxm, empties, n, rr, cc, bb = _init_masks(grid, box_size)
    state = seed
    tried = np.zeros(n + 1, dtype=np.int64)
    depth = 0
    nexplored = 0
    steps = 0
    while True:
        if depth == n:
            return 1, steps, nexplored
        if depth == nexplored:
            bestc = 64
            ties = 0
            pick = -1
            for c in range(size * size):
                if grid[c] != 0:
                    continue
                pc = popcount(full & ~(rowm[rr[c]] | colm[cc[c]] | boxm[bb[c]]))
                if pc < bestc:
                    bestc = pc
                    ties = 1
                    pick = c
                elif pc == bestc:
                    ties += 1
                    state, bits = next_u64(state)
                    if below32(bits >> U32, ties) == 0:
                        pick = c
            explored[nexplored] = pick
            nexplored += 1
        c = explored[depth]
        r, k, b = rr[c], cc[c], bb[c]
        v = tried[depth] + 1
        if v > size:
            tried[depth] = 0
            depth -= 1
            if depth < 0:
                return 0, steps, nexplored
            _unplace(grid, explored[depth], rowm, colm, boxm, rr, cc, bb)
            continue
        if steps >= max_steps:
            return -1, steps, nexplored
        tried[depth] = v
        steps += 1
        bit = _U1 << np.uint64(v)
        if (rowm[r] | colm[k] | boxm[b]) & bit:
            continue
        _place(grid, c, v, rowm, colm, boxm, rr, cc, bb)
        depth += 1


@njit(cache=True, error_model="numpy")
def dynamic_kernel(grid, box_size, seed, max_steps, explored):
    """Backtracking that re-chooses the fewest-candidates cell at every node (ties drawn
    from ``seed``) and suggests only its candidates, one step each. Same contract as
    :func:`thesis_kernel`: ``explored`` gets the cells in the order first chosen."""
    size = box_size * box_size
    full = ((_U1 << np.uint64(size + 1)) - _U1) ^ _U1
    rowm, colm, boxm, empties, n, rr, cc, bb = _init_masks(grid, box_size)
    state = seed
    cand = np.zeros(n + 1, dtype=np.uint64)
    seen = np.zeros(size * size, dtype=np.bool_)
    nexplored = 0
    steps = 0
    depth = 0
    choose = True
    while True:
        if choose:
            if depth == n:
                return 1, steps, nexplored
            best = depth
            bestc = 64
            bestm = np.uint64(0)
            ties = 0
            for i in range(depth, n):
                c = empties[i]
                m = full & ~(rowm[rr[c]] | colm[cc[c]] | boxm[bb[c]])
                pc = popcount(m)
                if pc < bestc:
                    bestc, best, bestm = pc, i, m
                    ties = 1
                    if pc == 0:
                        break
                elif pc == bestc:
                    ties += 1
                    state, bits = next_u64(state)
                    if below32(bits >> U32, ties) == 0:
                        best, bestm = i, m
            t = empties[depth]
            empties[depth] = empties[best]
            empties[best] = t
            cand[depth] = bestm
            c = empties[depth]
            if not seen[c]:
                seen[c] = True
                explored[nexplored] = c
                nexplored += 1
        m = cand[depth]
        if m == 0:
            depth -= 1
            if depth < 0:
                return 0, steps, nexplored
            _unplace(grid, empties[depth], rowm, colm, boxm, rr, cc, bb)
            choose = False
            continue
        if steps >= max_steps:
            return -1, steps, nexplored
        steps += 1
        bit = m & (~m + _U1)
        cand[depth] = m ^ bit
        _place(grid, empties[depth], popcount(bit - _U1), rowm, colm, boxm, rr, cc, bb)
        depth += 1
        choose = True


@dataclass(frozen=True, eq=False)
class BacktrackingResult:
    """One brute-force run (thesis §3.3): outcome, steps and the exploration order."""

    solved: bool
    grid: np.ndarray = field(repr=False)
    steps: int
    explored: np.ndarray = field(repr=False)  # cells in the order first explored
    message: str

    @property
    def solution(self) -> np.ndarray | None:
        """The solved grid, or None when the search was capped or found none."""
        return self.grid if self.solved else None

    def exploration_rank(self) -> np.ndarray:
        """Per cell, its 1-based position in the exploration order; 0 if never explored."""
        rank = np.zeros(self.grid.shape[0], dtype=np.int64)
        rank[self.explored] = np.arange(1, self.explored.size + 1)
        return rank


DYNAMIC_FROM_BOX_SIZE = 4


def solve_backtracking(puzzle: Puzzle, *, rng, max_steps: int = DEFAULT_MAX_STEPS,
                       dynamic: bool | None = None) -> BacktrackingResult:
    """Solve ``puzzle`` with the thesis' brute-force search; seeded (ties) and capped.

    ``dynamic`` re-chooses the fewest-candidates cell at every node (see the module
    docstring); None (the default) does so from box size :data:`DYNAMIC_FROM_BOX_SIZE` up.
    Returns a result with ``solved=False`` and a message when the puzzle has no solution
    or the search reached ``max_steps`` suggestions.
    """
    if max_steps < 0:
        raise ValueError(f"max_steps must be >= 0, got {max_steps}")
    if dynamic is None:
        dynamic = puzzle.box_size >= DYNAMIC_FROM_BOX_SIZE
    grid = puzzle.givens.astype(np.int64)
    explored = np.full(puzzle.ncells, -1, dtype=np.int64)
    kernel = dynamic_kernel if dynamic else thesis_kernel
    status, steps, nexp = kernel(grid, puzzle.box_size, kernel_seed(rng),
                                 np.int64(max_steps), explored)
    message = {1: "solved", 0: "the puzzle has no solution",
               -1: f"not solved: step cap of {max_steps} reached"}[int(status)]
    return BacktrackingResult(status == 1, grid.astype(np.int8), int(steps),
                              explored[:nexp].copy(), message)


def count_solutions(puzzle: Puzzle, limit: int = 2,
                    max_nodes: int = MAX_COUNT_NODES) -> int:
    """The number of solutions of ``puzzle``, counted up to ``limit`` (exact below it);
    SearchLimitError when ``max_nodes`` placements (0: no cap) do not settle it.

    A tournament puzzle must give exactly 1 with the default ``limit=2``.
    """
    return _count(puzzle, limit, max_nodes)[0]


def unique_solution(puzzle: Puzzle, max_nodes: int = MAX_COUNT_NODES) -> np.ndarray | None:
    """The solution when ``puzzle`` has exactly one, else None; SearchLimitError when
    ``max_nodes`` placements do not settle it."""
    count, solution = _count(puzzle, 2, max_nodes)
    return solution if count == 1 else None


def _count(puzzle: Puzzle, limit: int, max_nodes: int) -> tuple[int, np.ndarray]:
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    grid = puzzle.givens.astype(np.int64)
    solution = np.zeros(puzzle.ncells, dtype=np.int64)
    count, nodes = count_kernel(grid, puzzle.box_size, limit, solution, max_nodes)
    if count < 0:
        raise SearchLimitError(f"the solution count was not settled after {nodes:,} "
                               "placements (the search's cap)")
    return int(count), solution.astype(np.int8)
