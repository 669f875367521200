"""The four-part cost of a Nurikabe colouring (Křivánek 2011, §4.2 "Simulated Annealing").

For a full colouring (``1`` river, ``0`` island) the cost adds:

1. **island size** — for every clue, |size of the island holding it − the clue| (a clue
   on a river cell has an island of size 0);
2. **joined clues** — for every pair of clues in one island, 1;
3. **river components** — the number of river components beyond the first;
4. **pools** — the number of 2×2 river blocks.

With exactly ``sum(clues)`` white cells (the SA representation) the cost is 0 exactly for
solutions: the clues' islands then hold every white cell. Over free colourings (harmony
search) white cells out of reach of every clue cost nothing, so a zero there may be a
*false optimum* (:mod:`.harmony` reports it as such), as the thesis' Sudoku sum-45
fitness had.

:func:`grid_cost` is the kernel both metaheuristics call after every move, a full
evaluation in O(cells): two flood fills and one pass over the 2×2 blocks. The C twin in
``bench/nurikabe_sa_ref.c`` computes it line for line. Its index arrays are ``uint64``
(numba skips the negative-index wraparound check for unsigned indices: ~12 % faster
here, as in :mod:`fairgrid.solvers.annealing`); a missing neighbour is the sentinel
``cells`` (out of range, tested before the grid is read).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .model import RIVER, ISLAND, NurikabePuzzle, _components, as_grid, tables


@njit(cache=True, error_model="numpy")
def grid_cost(grid, clue, clue_cells, nbr4, blocks, seen, stack, found):
    """The four-part cost of the flat colouring ``grid`` (:func:`kernel_args` gives the
    tables; ``nbr4[4*cell + d]`` is a neighbour or ``cells``); ``seen``, ``stack``
    (cells, uint64) and ``found`` (clues) are scratch arrays."""
    n = grid.shape[0]
    nu = np.uint64(n)
    four = np.uint64(4)
    for c in range(n):
        seen[c] = 0
    cost = 0
    for ci in range(clue_cells.shape[0]):
        s = clue_cells[ci]
        if grid[s] != 0:
            cost += clue[s]          # a shaded clue: its island has no cell
            continue
        if seen[s] != 0:
            continue                 # already counted with an earlier clue of its island
        seen[s] = 1
        stack[0] = s
        top = 1
        size = 0
        m = 0
        while top > 0:
            top -= 1
            c = stack[top]
            size += 1
            if clue[c] != 0:
                found[m] = clue[c]
                m += 1
            base = c * four
            for d in range(4):
                x = nbr4[base + np.uint64(d)]
                if x < nu and grid[x] == 0 and seen[x] == 0:
                    seen[x] = 1
                    stack[top] = x
                    top += 1
        for i in range(m):
            cost += abs(size - found[i])
        cost += m * (m - 1) // 2
    parts = 0
    for s in range(n):
        if grid[s] == 1 and seen[s] == 0:
            parts += 1
            seen[s] = 1
            stack[0] = s
            top = 1
            while top > 0:
                top -= 1
                c = stack[top]
                base = c * four
                for d in range(4):
                    x = nbr4[base + np.uint64(d)]
                    if x < nu and grid[x] == 1 and seen[x] == 0:
                        seen[x] = 1
                        stack[top] = x
                        top += 1
    if parts > 1:
        cost += parts - 1
    for b in range(blocks.shape[0]):
        if (grid[blocks[b, 0]] + grid[blocks[b, 1]] + grid[blocks[b, 2]]
                + grid[blocks[b, 3]]) == 4:
            cost += 1
    return cost


def scratch(puzzle: NurikabePuzzle) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fresh scratch arrays for :func:`grid_cost` (seen, stack, found)."""
    n = puzzle.ncells
    return (np.zeros(n, np.int8), np.zeros(n, np.uint64),
            np.zeros(max(1, puzzle.clue_cells.size), np.int64))


def kernel_args(puzzle: NurikabePuzzle) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                 np.ndarray]:
    """(clue, clue_cells, nbr4, blocks) as the cost kernel takes them (module docstring)."""
    t = tables(puzzle.rows, puzzle.cols)
    nbr4 = np.where(t.nbr < 0, puzzle.ncells, t.nbr).astype(np.uint64).reshape(-1)
    return (puzzle.clues.astype(np.int64), puzzle.clue_cells.astype(np.uint64), nbr4,
            t.blocks.astype(np.uint64))


def cost(puzzle: NurikabePuzzle, grid) -> int:
    """The four-part cost of a full colouring (module docstring), from the kernel."""
    g = as_grid(puzzle, grid)
    return int(grid_cost(g, *kernel_args(puzzle), *scratch(puzzle)))


def cost_parts(puzzle: NurikabePuzzle, grid) -> dict[str, int]:
    """The four parts of the cost, computed apart in plain Python (the tests' reference)."""
    g = as_grid(puzzle, grid)
    t = tables(puzzle.rows, puzzle.cols)
    label, _ = _components(g == ISLAND, t)
    size_error = joined = 0
    for isl in {int(label[c]) for c in puzzle.clue_cells if g[c] == ISLAND}:
        cells = np.flatnonzero(label == isl)
        ks = puzzle.clues[cells][puzzle.clues[cells] > 0]
        size_error += int(np.abs(cells.size - ks).sum())
        joined += ks.size * (ks.size - 1) // 2
    size_error += int(sum(puzzle.clues[c] for c in puzzle.clue_cells if g[c] == RIVER))
    _, parts = _components(g == RIVER, t)
    pools = int(sum(g[b].all() for b in t.blocks))
    return {"island_size": size_error, "joined_clues": joined,
            "river_components": max(parts - 1, 0), "pools": pools}
