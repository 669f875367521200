"""Instance generator (Lewis 2007, §3.2): shuffled root solutions with cells removed.

A *root solution* of box size n (Lewis §1: order n) is the grid whose cell (r, c) holds
``((r % n) * n + r // n + c) % size + 1``. Four shuffles keep any solution valid (§3.2):
permuting the bands (rows of blocks), the stacks (columns of blocks), the rows within a
band and the columns within a stack; relabelling the digits is a fifth (Lewis mentions and
leaves it out; we include it, as an option, because it changes what a player sees).
Removal (§3.2): every cell is removed independently with probability ``1 - p``, so the
result need not have a unique solution; :func:`tournament_puzzle` removes cells only
while the solution stays unique.
"""

from __future__ import annotations

import numpy as np

from .backtracking import count_solutions
from .grid import Puzzle, SearchLimitError, geometry


def root_solution(box_size: int) -> np.ndarray:
    """Lewis's root solution of ``box_size``: a valid filled grid (flat int8 array)."""
    geo = geometry(box_size)
    size = geo.size
    r, c = geo.row.astype(np.int64), geo.col.astype(np.int64)
    return (((r % box_size) * box_size + r // box_size + c) % size + 1).astype(np.int8)


def shuffle_solution(grid: np.ndarray, box_size: int, *, rng: np.random.Generator,
                     relabel: bool = True) -> np.ndarray:
    """Apply Lewis's four validity-preserving shuffles (and a digit relabelling)."""
    size = box_size * box_size
    g = np.asarray(grid).reshape(size, size)
    bands = rng.permutation(box_size)
    rows = np.concatenate([b * box_size + rng.permutation(box_size) for b in bands])
    stacks = rng.permutation(box_size)
    cols = np.concatenate([s * box_size + rng.permutation(box_size) for s in stacks])
    out = g[rows][:, cols].reshape(-1)
    if relabel:
        labels = np.concatenate([[0], rng.permutation(size) + 1]).astype(np.int8)
        out = labels[out]
    return out.astype(np.int8)


def random_solution(box_size: int, *, rng: np.random.Generator) -> np.ndarray:
    """A random valid filled grid: the root solution, shuffled."""
    return shuffle_solution(root_solution(box_size), box_size, rng=rng)


def remove_cells(solution: np.ndarray, box_size: int, p: float, *, rng: np.random.Generator
                 ) -> Puzzle:
    """Keep each cell with probability ``p`` (Lewis §3.2); the rest become blanks."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p}")
    keep = rng.random(np.asarray(solution).size) < p
    return Puzzle(box_size, np.where(keep, solution, 0))


def random_puzzle(box_size: int, p: float, *, rng: np.random.Generator) -> Puzzle:
    """A Lewis instance: a random solution with each cell kept with probability ``p``."""
    return remove_cells(random_solution(box_size, rng=rng), box_size, p, rng=rng)


def tournament_puzzle(box_size: int, *, rng: np.random.Generator,
                      min_givens: int = 0) -> tuple[Puzzle, np.ndarray]:
    """A puzzle with a unique solution: remove cells in random order while it stays unique.

    Returns (puzzle, its solution). Stops early at ``min_givens`` givens.
    """
    solution = random_solution(box_size, rng=rng)
    givens = solution.copy()
    for cell in rng.permutation(solution.size):
        if np.count_nonzero(givens) <= min_givens:
            break
        keep = givens[cell]
        givens[cell] = 0
        if not _unique(Puzzle(box_size, givens)):
            givens[cell] = keep
    return Puzzle(box_size, givens), solution


def _unique(puzzle: Puzzle) -> bool:
    """Whether ``puzzle`` is proved to have one solution; one the counter's cap leaves
    unsettled is not (the digit stays: every puzzle made is proved unique)."""
    try:
        return count_solutions(puzzle, limit=2) == 1
    except SearchLimitError:
        return False
