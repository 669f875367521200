"""Brute force by island expansion (Křivánek 2011, §4.2 "Brute Force search"), and the
exact solution count built on it.

The search expands the islands one after another, in ascending order of their clues
("the fastest way ... ascending order of the sizes"), islands of equal size in a random
order (the thesis' choice; seeded here). For the island at hand it generates every shape:
every connected set of cells of the clue's size that holds the clue cell and only
undecided cells, each shape once (Redelmeier's enumeration: grow from a list of untried
cells, a cell taken out of the list is never offered again on that branch). A finished
shape is walled in by river, and the four prunings of the thesis are checked:

1. two clues joined by an island — a cell next to another island is never offered to a
   shape, so no shape can join two clues (the check is built into the generation);
2. an island smaller than its clue that cannot grow any further — for every island not
   expanded yet, the undecided cells it can still reach (never next to another island)
   must number at least its clue minus one;
3. two parts of the river that cannot be connected — every river cell must be reachable
   from every other through river and undecided cells;
4. a pool — no 2×2 block of river cells.

If all hold, the next island is expanded, otherwise the search backtracks. When every
island is placed the undecided cells become river and the river's connectivity and the
absence of pools are checked: a solution.

Choices made where the thesis is silent:

* a **step** (the thesis' metric) is one finished island shape, that is one node of the
  search tree over islands, pruned or not; growing a shape cell by cell is not counted;
* the metric is the number of steps until the first solution, median over runs; a run
  stops at ``max_steps`` (``solved=False``);
* shapes of one island are tried in the order the enumeration finds them (neighbours
  up, left, right, down; the most recently offered cell first), the same in every run.

Every solution is reached by exactly one path (each island has exactly one shape in
it), so with a fixed island order the search counts solutions exactly:
:func:`count_solutions` and :func:`unique_solution` use it, islands of equal size in
ascending cell order, from what the propagation rules deduce (true of every solution:
river cells are never offered, cells known to be island must end in one).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from .. import grid
from .._rng import seed_of, spawn_seeds
from .model import NurikabeError, NurikabePuzzle, tables

DEFAULT_MAX_STEPS = 10_000_000
# a count's cap on a large grid: a step costs time in proportion to the cells (3 to 7 ns
# a cell on the 2-core EPYC), so the cap is this many cell-steps (about 15 s at most)
# where it is lower than DEFAULT_MAX_STEPS. Every puzzle of the public collection the
# fixed cap settled stays settled (the most work one takes is 2.17e9 cell-steps); on
# a 31×45 the cap is 1.6 million steps.
COUNT_WORK = 2_200_000_000
STOP_LIMIT, STOP_CAP = 1, 2


class SearchLimitError(NurikabeError, grid.SearchLimitError):
    """The exact search met its step cap before it could answer."""


@njit(inline="always")
def _available(x, lv, st, owner, nbr):
    """Whether undecided cell ``x`` may join island ``lv`` (it touches no other island)."""
    if st[x] != -1:
        return False
    for d in range(4):
        y = nbr[x, d]
        if y >= 0 and owner[y] >= 0 and owner[y] != lv:
            return False
    return True


@njit(inline="always")
def _offer(c, lv, hi, st, owner, seen, ustack, nbr):
    """Append the untried neighbours of ``c`` for island ``lv`` at ``ustack[hi:]``."""
    for d in range(4):
        x = nbr[c, d]
        if x >= 0 and seen[lv, x] == 0 and _available(x, lv, st, owner, nbr):
            seen[lv, x] = 1
            ustack[hi] = x
            hi += 1
    return hi


@njit(cache=True, nogil=True)
def _prunings_hold(lv, w0, st, owner, icell, ik, wall, nwall, nbr, cell_blocks, blocks,
                   queue, mark, ctr):
    """The thesis' prunings 2-4 after island ``lv`` was walled (walls at wall[w0:nwall])."""
    for q in range(w0, nwall):
        w = wall[q]
        for e in range(4):
            b = cell_blocks[w, e]
            if b >= 0 and (st[blocks[b, 0]] == 1 and st[blocks[b, 1]] == 1
                           and st[blocks[b, 2]] == 1 and st[blocks[b, 3]] == 1):
                return False                                    # 4. a pool
    if nwall > 0:                                               # 3. a split river
        ctr[3] += 1
        stamp = ctr[3]
        mark[wall[0]] = stamp
        queue[0] = wall[0]
        top = 1
        while top > 0:
            top -= 1
            c = queue[top]
            for d in range(4):
                x = nbr[c, d]
                if x >= 0 and st[x] != 0 and mark[x] != stamp:
                    mark[x] = stamp
                    queue[top] = x
                    top += 1
        for q in range(nwall):
            if mark[wall[q]] != stamp:
                return False
    for j in range(lv + 1, icell.shape[0]):                     # 2. an island that
        ctr[3] += 1                                             #    cannot grow
        stamp = ctr[3]
        need = ik[j]
        mark[icell[j]] = stamp
        queue[0] = icell[j]
        top = 1
        got = 1
        while top > 0 and got < need:
            top -= 1
            c = queue[top]
            for d in range(4):
                x = nbr[c, d]
                if x >= 0 and mark[x] != stamp and _available(x, j, st, owner, nbr):
                    mark[x] = stamp
                    queue[top] = x
                    top += 1
                    got += 1
        if got < need:
            return False
    return True


@njit(cache=True, nogil=True)
def _final(st, nbr, blocks, nblack, queue, mark, ctr, limit, sol, isle):
    """Every island placed: the undecided cells become river; count a solution if no
    cell known to be island (``isle``) is left out and the river is one area without
    pools. Returns STOP_LIMIT when ``limit`` is reached."""
    for c in range(st.shape[0]):
        if isle[c] and st[c] != 0:
            return 0
    for b in range(blocks.shape[0]):
        if (st[blocks[b, 0]] != 0 and st[blocks[b, 1]] != 0 and st[blocks[b, 2]] != 0
                and st[blocks[b, 3]] != 0):
            return 0
    n = st.shape[0]
    if nblack > 0:
        start = -1
        for c in range(n):
            if st[c] != 0:
                start = c
                break
        ctr[3] += 1
        stamp = ctr[3]
        mark[start] = stamp
        queue[0] = start
        top = 1
        got = 1
        while top > 0:
            top -= 1
            c = queue[top]
            for d in range(4):
                x = nbr[c, d]
                if x >= 0 and st[x] != 0 and mark[x] != stamp:
                    mark[x] = stamp
                    queue[top] = x
                    top += 1
                    got += 1
        if got != nblack:
            return 0
    ctr[1] += 1
    if ctr[1] == 1:
        for c in range(n):
            sol[c] = 0 if st[c] == 0 else 1
    return STOP_LIMIT if ctr[1] >= limit else 0


# frame fields of the explicit search stack (one frame per cell added to an island)
F_LV, F_SIZE, F_LO, F_HI, F_TOP, F_C, F_KEEP, F_NHI, F_W0, F_PHASE = range(10)


@njit(inline="always")
def _frame(frames, depth, lv, size, lo, hi):
    """A fresh frame growing island ``lv`` from ``size`` cells, untried ``ustack[lo:hi]``."""
    frames[depth, F_LV] = lv
    frames[depth, F_SIZE] = size
    frames[depth, F_LO] = lo
    frames[depth, F_HI] = hi
    frames[depth, F_TOP] = hi
    frames[depth, F_C] = -1
    frames[depth, F_KEEP] = 0
    frames[depth, F_NHI] = 0
    frames[depth, F_W0] = 0
    frames[depth, F_PHASE] = 0


@njit(cache=True, nogil=True)
def island_search(icell, ik, nbr, blocks, cell_blocks, limit, max_steps, sol, known):
    """The search over islands ``icell`` (clue cells, in expansion order) with clues
    ``ik``; returns (solutions found up to ``limit``, steps, stop code). ``known`` holds
    what every solution has (1 river, 0 island, -1 unknown; all -1 for the thesis'
    search): river cells are never offered to an island, and a branch that walls a
    known island cell, or ends without it in an island, is cut.

    An explicit stack of frames replaces recursion (numba cannot cache recursive
    functions). A frame grows island ``lv`` from ``size`` cells, its untried cells at
    ``ustack[lo:top]``; a child frame's list starts at the parent's ``hi``. A frame whose
    island is complete walls it, counts a step, checks the prunings and starts the next
    island (phase 1 -> 2) or, after the last one, the final check.
    """
    n = nbr.shape[0]
    nisl = icell.shape[0]
    st = np.full(n, -1, np.int8)
    isle = np.zeros(n, np.int8)  # known island cells
    for c in range(n):
        if known[c] == 1:
            st[c] = 1
        elif known[c] == 0:
            isle[c] = 1
    owner = np.full(n, -1, np.int64)
    for i in range(nisl):
        st[icell[i]] = 0
        owner[icell[i]] = i
    base = np.zeros(nisl + 1, np.int64)
    kmax = 1
    for i in range(nisl):
        base[i + 1] = base[i] + ik[i]
        kmax = max(kmax, ik[i])
    white = base[nisl]
    nblack = n - white
    poly = np.zeros(max(1, white), np.int64)
    seen = np.zeros((nisl, n), np.int8)
    ustack = np.zeros((2 * kmax + 3) * (white + 1) + 16, np.int64)
    frames = np.zeros((white + 2, 10), np.int64)
    wall = np.zeros(n, np.int64)
    queue = np.zeros(n, np.int64)
    mark = np.zeros(n, np.int64)
    ctr = np.zeros(4, np.int64)   # steps, solutions, wall-stack height, flood stamp
    for c in range(n):            # two clue cells side by side: no solution
        if st[c] == 0:
            for d in range(4):
                x = nbr[c, d]
                if x >= 0 and st[x] == 0:
                    return 0, 0, 0
    if not _prunings_hold(-1, 0, st, owner, icell, ik, wall, 0, nbr, cell_blocks, blocks,
                          queue, mark, ctr):
        return 0, 0, 0
    c0 = icell[0]
    poly[0] = c0
    seen[0, c0] = 1
    hi = _offer(c0, 0, 0, st, owner, seen, ustack, nbr)
    depth = 0
    _frame(frames, 0, 0, 1, 0, hi)
    while depth >= 0:
        lv = frames[depth, F_LV]
        size = frames[depth, F_SIZE]
        if size < ik[lv]:                                   # grow island lv by a cell
            c = frames[depth, F_C]
            if c >= 0:                                      # undo the previous child
                for q in range(frames[depth, F_KEEP], frames[depth, F_NHI]):
                    seen[lv, ustack[q]] = 0
                st[c] = -1
                owner[c] = -1
                frames[depth, F_C] = -1
            lo = frames[depth, F_LO]
            top = frames[depth, F_TOP]
            if top == lo:
                depth -= 1
                continue
            top -= 1
            frames[depth, F_TOP] = top
            c = ustack[top]
            st[c] = 0
            owner[c] = lv
            poly[base[lv] + size] = c
            hi = frames[depth, F_HI]
            keep = hi + (top - lo)
            for q in range(lo, top):
                ustack[hi + q - lo] = ustack[q]
            nhi = _offer(c, lv, keep, st, owner, seen, ustack, nbr)
            frames[depth, F_C] = c
            frames[depth, F_KEEP] = keep
            frames[depth, F_NHI] = nhi
            depth += 1
            _frame(frames, depth, lv, size + 1, hi, nhi)
            continue
        hi = frames[depth, F_HI]
        if frames[depth, F_PHASE] == 0:                     # island lv complete
            frames[depth, F_PHASE] = 1
            w0 = ctr[2]
            frames[depth, F_W0] = w0
            for q in range(base[lv], base[lv] + ik[lv]):
                p = poly[q]
                for d in range(4):
                    x = nbr[p, d]
                    if x >= 0 and st[x] == -1:
                        st[x] = 1
                        wall[ctr[2]] = x
                        ctr[2] += 1
            if ctr[0] >= max_steps:
                return ctr[1], ctr[0], STOP_CAP
            ctr[0] += 1
            walled_white = False
            for q in range(w0, ctr[2]):
                if isle[wall[q]]:
                    walled_white = True
            if not walled_white and _prunings_hold(lv, w0, st, owner, icell, ik, wall,
                                                   ctr[2], nbr, cell_blocks, blocks, queue,
                                                   mark, ctr):
                if lv + 1 == nisl:
                    if _final(st, nbr, blocks, nblack, queue, mark, ctr, limit, sol,
                              isle):
                        return ctr[1], ctr[0], STOP_LIMIT
                else:
                    nl = lv + 1
                    c0 = icell[nl]
                    poly[base[nl]] = c0
                    seen[nl, c0] = 1
                    nhi = _offer(c0, nl, hi, st, owner, seen, ustack, nbr)
                    frames[depth, F_NHI] = nhi
                    frames[depth, F_PHASE] = 2
                    depth += 1
                    _frame(frames, depth, nl, 1, hi, nhi)
                    continue
        elif frames[depth, F_PHASE] == 2:                   # back from island lv + 1
            nl = lv + 1
            for q in range(hi, frames[depth, F_NHI]):
                seen[nl, ustack[q]] = 0
            seen[nl, icell[nl]] = 0
        w0 = frames[depth, F_W0]
        for q in range(w0, ctr[2]):
            st[wall[q]] = -1
        ctr[2] = w0
        depth -= 1
    return ctr[1], ctr[0], 0


# ------------------------------------------------------------------------------ public API

@dataclass(frozen=True, eq=False)
class BruteForceResult:
    """One brute-force run: the first solution found (if any) and the steps it took."""

    solved: bool
    grid: np.ndarray | None = field(repr=False)
    steps: int
    order: np.ndarray = field(repr=False)  # clue cells in expansion order
    message: str


def island_order(puzzle: NurikabePuzzle, rng=None) -> np.ndarray:
    """Clue cells by ascending clue; ties in random order (seeded), or by cell without rng."""
    cells = puzzle.clue_cells
    keys = (np.arange(cells.size) if rng is None else
            np.random.default_rng(seed_of(rng)).permutation(cells.size))
    return cells[np.lexsort((keys, puzzle.clues[cells]))].astype(np.int64)


def _run(puzzle: NurikabePuzzle, order: np.ndarray, limit: int, max_steps: int,
         known: np.ndarray | None = None) -> tuple[int, int, int, np.ndarray]:
    t = tables(puzzle.rows, puzzle.cols)
    sol = np.zeros(puzzle.ncells, np.int8)
    known = np.full(puzzle.ncells, -1, np.int8) if known is None else known
    count, steps, stop = island_search(order, puzzle.clues[order].astype(np.int64), t.nbr,
                                       t.blocks, t.cell_blocks, np.int64(limit),
                                       np.int64(max_steps), sol, known.astype(np.int8))
    return int(count), int(steps), int(stop), sol.reshape(puzzle.shape)


def solve_bruteforce(puzzle: NurikabePuzzle, *, rng, max_steps: int = DEFAULT_MAX_STEPS
                     ) -> BruteForceResult:
    """One seeded run of the thesis' brute force (§4.2) until its first solution or
    ``max_steps`` steps; the seed orders islands of equal size."""
    if max_steps < 0:
        raise ValueError(f"max_steps must be >= 0, got {max_steps}")
    order = island_order(puzzle, rng)
    count, steps, stop, sol = _run(puzzle, order, 1, max_steps)
    if count:
        message = "solved"
    elif stop == STOP_CAP:
        message = f"not solved: step cap of {max_steps} reached"
    else:
        message = "the puzzle has no solution"
    return BruteForceResult(count > 0, sol if count else None, steps, order, message)


def bruteforce_metric(puzzle: NurikabePuzzle, *, rng, runs: int = 5,
                      max_steps: int = DEFAULT_MAX_STEPS
                      ) -> tuple[float, float, list[BruteForceResult]]:
    """The thesis' metric: (median steps over ``runs`` runs, solved fraction, runs)."""
    if runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs}")
    results = [solve_bruteforce(puzzle, rng=int(s), max_steps=max_steps)
               for s in spawn_seeds(seed_of(rng), runs)]
    return (float(np.median([r.steps for r in results])),
            float(np.mean([r.solved for r in results])), results)


def count_cap(puzzle: NurikabePuzzle) -> int:
    """The step cap of a count on ``puzzle``: :data:`DEFAULT_MAX_STEPS`, lower on a
    grid large enough that :data:`COUNT_WORK` cell-steps come first."""
    return min(DEFAULT_MAX_STEPS, COUNT_WORK // (puzzle.rows * puzzle.cols))


def count_solutions(puzzle: NurikabePuzzle, limit: int = 2,
                    max_steps: int | None = None) -> int:
    """The number of solutions of ``puzzle`` counted up to ``limit`` (exact below it);
    SearchLimitError when ``max_steps`` steps (default :func:`count_cap`) do not
    settle it."""
    return _count(puzzle, limit, count_cap(puzzle) if max_steps is None else max_steps)[0]


def unique_solution(puzzle: NurikabePuzzle, max_steps: int | None = None
                    ) -> np.ndarray | None:
    """The (rows, cols) solution when ``puzzle`` has exactly one, else None;
    SearchLimitError when ``max_steps`` steps (default :func:`count_cap`) do not
    settle it."""
    count, sol = _count(puzzle, 2, count_cap(puzzle) if max_steps is None else max_steps)
    return sol if count == 1 else None


def _count(puzzle: NurikabePuzzle, limit: int, max_steps: int) -> tuple[int, np.ndarray]:
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    # what the propagation rules deduce holds in every solution (each rule is a
    # consequence of the rules of the puzzle): the search starts from it, which cuts
    # the counts of published puzzles from minutes to milliseconds
    from .propagation import propagate
    known = propagate(puzzle).state.reshape(-1)
    count, steps, stop, sol = _run(puzzle, island_order(puzzle), limit, max_steps, known)
    if stop == STOP_CAP:
        raise SearchLimitError(f"the solution count is not settled after {steps} steps "
                               f"({count} found so far); raise max_steps")
    return count, sol
