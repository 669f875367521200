"""Solution and Level Identification of Sudoku, SLIS (Mandal & Sadhu 2013, §III).

The paper's procedure, step by step, with what fairgrid chose where the text is
ambiguous (each choice is marked *Choice*):

* Steps 1–2: visit the empty cells in random order (1b "choose a cell randomly"); a cell
  may take any digit not present in its row, column or block at that moment.
* Step 3: "If more than one number is available", eq. (1)
  ``x' = x_lower + HMCR·(x_upper − x_lower)``. *Choice:* x_lower and x_upper are the
  smallest and largest available digits and the result is rounded to the nearest
  *available* digit (eq. 1 yields a real number, a cell needs an available digit).
  HMCR = 0.7 as in the paper's examples.
* Step 4: repeat until every cell is filled. *Choice:* a cell with no available digit
  (the paper does not say) gets a uniformly random digit; it now duplicates a digit of
  its row, column or block.
* Steps 5–7: a duplicated value is moved by eqs. (2a)/(2b), ``x'' = x' ± HMCR·PAR·0.5``,
  "until the selected cell will get the suitable value". *Choice:* one iteration moves
  the value one step up or down (equally likely, wrapping within 1..n²; the paper's
  increment of 0.035 would never change an integer); the cell stops at the first digit
  its row, column and block do not hold, or once it has cycled through every digit (with
  no free digit the paper's loop would never end; more cycles cannot help).
* Step 8: the valid node count V is "the maximum number of iterations" over cells.
  *Choice:* a cell filled directly counts one iteration; a repaired cell counts one
  plus its repair iterations.
* Step 9: IV = the number of invalid entries (cells that needed repair).
* Step 10, eq. (3): SR = V / (V + IV). The worked example (§IV, Step 9) weights invalid
  nodes by 2 ("the value of invalid node has been multiplied by 2"):
  SR = 57·1 / (57·1 + 23·2) = 0.55. *Choice:* fairgrid follows the worked example, so
  :func:`success_rating` reproduces it (V = 57, IV = 23 → SR 0.553, DC 0.447, level 2).
* Step 11, eq. (4): DC = 1 − SR. Step 12 / Table I: DC = 0 → level 1 (Ultra easy);
  (0, 0.5] → 2 (Easy); (0.5, 0.75] → 3 (Medium); (0.75, 0.9] → 4 (Hard); above → 5
  (Evil). *Choice:* the paper's ranges share their end points; each end point belongs to
  the lower level.

This is the paper's level, reported as the ``slis_level`` metric for comparison. The
level fairgrid shows organisers comes from the calibrated expected time
(:mod:`fairgrid.analytics.expected_time`), which is fitted to human solve times.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .grid import Puzzle, geometry

LEVEL_NAMES = ("Ultra easy", "Easy", "Medium", "Hard", "Evil")
HMCR = 0.7
PAR = 0.1
INVALID_WEIGHT = 2


def success_rating(valid: int, invalid: int, weight: int = INVALID_WEIGHT) -> float:
    """Eq. (3) as the worked example applies it: SR = V / (V + weight·IV)."""
    if valid <= 0:
        raise ValueError(f"the valid node count must be positive, got {valid}")
    return valid / (valid + weight * invalid)


def level_of(dc: float) -> int:
    """Table I: the level (1–5) of a difficulty coefficient DC in [0, 1]."""
    if dc <= 0:
        return 1
    for level, upper in ((2, 0.5), (3, 0.75), (4, 0.9)):
        if dc <= upper:
            return level
    return 5


@dataclass(frozen=True)
class SlisResult:
    valid_nodes: int
    invalid_nodes: int
    success_rating: float
    difficulty_coefficient: float
    level: int

    @property
    def level_name(self) -> str:
        return LEVEL_NAMES[self.level - 1]


def slis(puzzle: Puzzle, *, rng, hmcr: float = HMCR) -> SlisResult:
    """One seeded SLIS run on ``puzzle`` (see the module docstring)."""
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(int(rng))
    geo = geometry(puzzle.box_size)
    size = puzzle.size
    grid = puzzle.givens.astype(np.int64).copy()
    cell_units = [[u for u in range(3 * size) if c in geo.units[u]] for c in range(puzzle.ncells)]
    units = geo.units

    def held(c: int) -> set[int]:
        return {int(grid[o]) for u in cell_units[c] for o in units[u] if o != c and grid[o]}

    iterations = np.zeros(puzzle.ncells, dtype=np.int64)
    forced = []
    for c in rng.permutation(np.flatnonzero(grid == 0)):
        avail = sorted(set(range(1, size + 1)) - held(c))
        iterations[c] = 1
        if not avail:
            grid[c] = int(rng.integers(1, size + 1))
            forced.append(int(c))
            continue
        target = avail[0] + hmcr * (avail[-1] - avail[0])
        grid[c] = min(avail, key=lambda d: (abs(d - target), d))
    invalid = 0
    for c in forced:
        if grid[c] not in held(c):
            continue
        invalid += 1
        step = 1 if rng.random() < 0.5 else -1
        for _ in range(size):
            grid[c] = (grid[c] - 1 + step) % size + 1
            iterations[c] += 1
            if grid[c] not in held(c):
                break
    v = int(iterations.max(initial=1))
    sr = success_rating(v, invalid)
    dc = 1.0 - sr
    return SlisResult(v, invalid, sr, dc, level_of(dc))
