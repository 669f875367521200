"""The checks of a solve that need its puzzle, in one compiled pass over the moves."""

from __future__ import annotations

import numpy as np
from numba import njit

from .solve import SolveEvent, ValidationError

_OK, _BAD_CELL, _BAD_DIGIT, _ON_GIVEN = 0, 1, 2, 3


def check_and_replay(event: SolveEvent, givens: np.ndarray, solution: np.ndarray,
                     size: int, blank: int = 0) -> bool:
    """Check the moves against the puzzle (cells in the grid, values 0..``size`` (the
    type's largest move value), no move on a given;
    ValidationError names the first bad move) and say whether replaying the placements
    and erasures (notes ignored) ends in ``solution``, an empty cell counting as
    ``blank``."""
    problem, i, complete = _replay(event.cell, event.digit, event.note, givens, solution, size,
                                   blank)
    if problem == _OK:
        return complete
    c, d = int(event.cell[i]), int(event.digit[i])
    if problem == _BAD_CELL:
        raise ValidationError(f"moves[{i}].cell", f"must be 0..{givens.size - 1}, got {c}")
    if problem == _BAD_DIGIT:
        raise ValidationError(f"moves[{i}].digit", f"must be 0..{size} (0 erases), got {d}")
    # a given of Sudoku, a clue of Nurikabe: fixed cells take no moves
    raise ValidationError(f"moves[{i}].cell", f"cell {c} is a given")


@njit(cache=True, nogil=True)
def _replay(cell, digit, note, givens, solution, size, blank):
    """(problem, index of the first bad move, complete): one pass over the moves (numpy
    did it in ~15 array operations, ~35 us a webhook; this takes ~1 us)."""
    ncells = givens.size
    grid = givens.astype(np.int64)
    for i in range(cell.size):
        c = cell[i]
        if c < 0 or c >= ncells:
            return _BAD_CELL, i, False
        if digit[i] < 0 or digit[i] > size:
            return _BAD_DIGIT, i, False
        if givens[c] != 0:
            return _ON_GIVEN, i, False
        if not note[i]:
            grid[c] = digit[i]
    for c in range(ncells):  # the free cells (a Nurikabe clue is not its solution value)
        if givens[c] == 0 and (grid[c] if grid[c] != 0 else blank) != solution[c]:
            return _OK, -1, False
    return _OK, -1, True
