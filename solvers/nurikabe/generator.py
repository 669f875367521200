"""A small seeded generator of Nurikabe puzzles with a unique solution (no paper; a
helper for tests and the command line).

1. **Layout**: start from an all-river grid and, while a 2×2 pool is left, whiten a cell
   of a random pool, trying its cells in random order; a cell qualifies when it keeps
   the river one area, touches at most one island and keeps that island within
   ``max_clue`` cells. With probability ``grow`` the cells next to an island are tried
   first (without it the islands stay tiny). A pool none of whose cells qualifies
   discards the layout.
2. **Clues**: every island gets its size as a clue in one of its cells, chosen at
   random.
3. **Uniqueness**: the exact search (:func:`.bruteforce.count_solutions`) must find one
   solution; otherwise the clues are placed anew (a few times) and then a new layout is
   drawn, up to ``max_tries`` layouts.

Same ``rng`` seed, same puzzle.
"""

from __future__ import annotations

import numpy as np

from .._rng import seed_of
from .bruteforce import SearchLimitError, count_solutions
from .model import MAX_CLUE, NurikabeError, NurikabePuzzle, _components, tables

CLUE_TRIES = 4


def _river_connected(grid: np.ndarray, t) -> bool:
    _, parts = _components(grid == 1, t)
    return parts <= 1


def _layout(rows: int, cols: int, rng: np.random.Generator, max_clue: int, grow: float
            ) -> np.ndarray | None:
    """A river/island layout obeying every rule but the clues, or None."""
    t = tables(rows, cols)
    grid = np.ones(rows * cols, dtype=np.int8)
    while True:
        pools = [b for b in t.blocks if grid[b].all()]
        if not pools:
            return grid
        block = rng.permutation(pools[rng.integers(len(pools))])
        if rng.random() < grow:
            block = sorted(block, key=lambda c: not any(x >= 0 and grid[x] == 0
                                                        for x in t.nbr[c]))
        for c in block:
            label, _ = _components(grid == 0, t)
            touching = {int(label[x]) for x in t.nbr[c] if x >= 0 and grid[x] == 0}
            if len(touching) > 1:
                continue
            size = 1 + sum(int((label == i).sum()) for i in touching)
            if size > max_clue:
                continue
            grid[c] = 0
            if _river_connected(grid, t):
                break
            grid[c] = 1
        else:
            return None


def generate_nurikabe(rows: int, cols: int, rng, *, max_clue: int = 9, grow: float = 0.7,
                      max_tries: int = 200, max_steps: int = 1_000_000) -> NurikabePuzzle:
    """A seeded random rows×cols puzzle with exactly one solution (module docstring);
    NurikabeError when ``max_tries`` layouts give none."""
    if rows < 2 or cols < 2:
        raise NurikabeError(f"the generator needs at least 2x2, got {rows}x{cols}")
    if not 1 <= max_clue <= MAX_CLUE:
        raise NurikabeError(f"max_clue must be 1..{MAX_CLUE}, got {max_clue}")
    gen = np.random.default_rng(seed_of(rng))
    t = tables(rows, cols)
    for _ in range(max_tries):
        grid = _layout(rows, cols, gen, max_clue, grow)
        if grid is None:
            continue
        label, count = _components(grid == 0, t)
        if count == 0:
            continue
        islands = [np.flatnonzero(label == i) for i in range(count)]
        for _ in range(CLUE_TRIES):
            clues = np.zeros(rows * cols, dtype=np.int16)
            for cells in islands:
                clues[cells[gen.integers(cells.size)]] = cells.size
            puzzle = NurikabePuzzle(rows, cols, clues)
            try:
                if count_solutions(puzzle, 2, max_steps=max_steps) == 1:
                    return puzzle
            except SearchLimitError:
                break
    raise NurikabeError(f"no unique {rows}x{cols} puzzle in {max_tries} layouts")
