"""The Nurikabe model (Křivánek 2011, §4.2 "Nurikabe Puzzle"): puzzle, text format, rules.

Vocabulary, used by every module of :mod:`fairgrid.solvers.nurikabe`:

* a **cell** is an index ``0 .. rows*cols-1``, row-major; players name it ``r<row>c<col>``
  (1-based), as for Sudoku;
* a **clue** is a number 1..35 in a cell; ``clues[cell]`` is 0 where there is none;
* a **grid** is a full colouring, ``1`` = **river** (black), ``0`` = **island** (white);
* a **state** is a partial colouring: ``-1`` = unknown, ``0`` white, ``1`` black;
* an **island** is a 4-connected white area, the **river** the black cells, a **pool** a
  2×2 block of river cells.

The rules (thesis §4.2): a clue cell is white; each island holds exactly one clue and
that many cells; the river is one 4-connected area; there is no pool.

Text format (issue 25; the shared data set's README): ``ROWSxCOLS:`` then the
cells row-major, ``.`` for an empty cell and one base-36 digit (``1``-``9``, ``a``-``z``
for 10-35; upper case is read too) for a clue; whitespace inside the cells is ignored, so
a grid may be written one row a line. Solutions use ``#`` for river and ``o`` for island.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

UNKNOWN, WHITE, BLACK = -1, 0, 1
RIVER, ISLAND = BLACK, WHITE
MAX_CLUE = 35
# the most cells a grid may have: the public collection's largest has 1,395, and a
# puzzle's analysis grows with the square of its cells (about a minute at 1,000)
MAX_CELLS = 1_500
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


class NurikabeError(ValueError):
    """A Nurikabe puzzle, solution or grid is malformed; the message names the problem."""


def cell_name(cols: int, cell: int) -> str:
    """``r<row>c<col>``, 1-based, as players write it."""
    return f"r{cell // cols + 1}c{cell % cols + 1}"


@dataclass(frozen=True, eq=False)
class NurikabePuzzle:
    """A Nurikabe puzzle: its size and its clues (flat, row-major, ``0`` = no clue).

    Validated on creation (:class:`NurikabeError` names the problem): at least one clue,
    clues 1..35, and clues that fit in the grid. Build one with :func:`parse_nurikabe`
    or :meth:`from_grid`.
    """

    rows: int
    cols: int
    clues: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        if int(self.rows) < 1 or int(self.cols) < 1:
            raise NurikabeError(f"a grid needs at least one row and one column, "
                                f"got {self.rows}x{self.cols}")
        object.__setattr__(self, "rows", int(self.rows))
        object.__setattr__(self, "cols", int(self.cols))
        clues = np.asarray(self.clues)
        n = self.rows * self.cols
        if clues.shape not in ((n,), (self.rows, self.cols)):
            raise NurikabeError(f"a {self.rows}x{self.cols} puzzle has {n} cells, got clues "
                                f"of shape {clues.shape}")
        clues = clues.reshape(-1)
        if clues.size and (clues.min() < 0 or clues.max() > MAX_CLUE):
            bad = int(np.flatnonzero((clues < 0) | (clues > MAX_CLUE))[0])
            raise NurikabeError(f"clue {int(clues[bad])} at {cell_name(self.cols, bad)} is "
                                f"out of range: clues are 1..{MAX_CLUE}, 0 for no clue")
        if not clues.any():
            raise NurikabeError("a Nurikabe puzzle needs at least one clue")
        total = int(clues.sum())
        if total > n:
            raise NurikabeError(f"the clues sum to {total}, more than the grid's {n} cells")
        arr = clues.astype(np.int16)
        arr.setflags(write=False)
        object.__setattr__(self, "clues", arr)

    @classmethod
    def from_grid(cls, clues) -> "NurikabePuzzle":
        """A puzzle from a 2-D array of clues (0 = no clue)."""
        arr = np.asarray(clues)
        if arr.ndim != 2:
            raise NurikabeError(f"from_grid needs a 2-D array of clues, got shape {arr.shape}")
        return cls(arr.shape[0], arr.shape[1], arr.reshape(-1))

    @property
    def ncells(self) -> int:
        return self.rows * self.cols

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    @property
    def clue_cells(self) -> np.ndarray:
        """The cells holding a clue, ascending."""
        return np.flatnonzero(self.clues)

    @property
    def white_total(self) -> int:
        """White cells of every solution: the sum of the clues."""
        return int(self.clues.sum())

    @property
    def black_total(self) -> int:
        """River cells of every solution."""
        return self.ncells - self.white_total

    def cell_name(self, cell: int) -> str:
        return cell_name(self.cols, cell)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, NurikabePuzzle) and other.shape == self.shape
                and np.array_equal(other.clues, self.clues))

    def __hash__(self) -> int:
        return hash((self.rows, self.cols, self.clues.tobytes()))

    def __str__(self) -> str:
        return format_nurikabe(self)


# ----------------------------------------------------------------------------- text format

def _split_header(text: str, what: str) -> tuple[int, int, str]:
    """``ROWSxCOLS:cells`` -> (rows, cols, cells without whitespace)."""
    if not isinstance(text, str):
        raise NurikabeError(f"a {what} is text, got {type(text).__name__}")
    head, sep, body = text.strip().partition(":")
    if not sep:
        raise NurikabeError(f"a {what} starts with 'ROWSxCOLS:' (e.g. '5x5:'), "
                            f"got {text.strip()[:20]!r}")
    parts = head.strip().lower().split("x")
    # ASCII digits only: str.isdigit() takes "²" (int() then fails) and "٤" (read as 4)
    if len(parts) != 2 or not all(re.fullmatch(r"[0-9]{1,6}", p.strip()) for p in parts):
        raise NurikabeError(f"bad size {head.strip()!r}: write ROWSxCOLS, e.g. '10x10'")
    rows, cols = (int(p) for p in parts)
    if rows < 1 or cols < 1:
        raise NurikabeError(f"a grid needs at least one row and one column, got {rows}x{cols}")
    if rows * cols > MAX_CELLS:
        raise NurikabeError(f"a grid has at most {MAX_CELLS:,} cells, got {rows}x{cols}")
    cells = "".join(body.split())
    if len(cells) != rows * cols:
        raise NurikabeError(f"a {rows}x{cols} {what} has {rows * cols} cells, "
                            f"got {len(cells)}")
    return rows, cols, cells


def parse_nurikabe(text: str) -> NurikabePuzzle:
    """The puzzle written in ``text`` (module docstring), or NurikabeError naming the fault."""
    rows, cols, cells = _split_header(text, "puzzle")
    clues = np.zeros(rows * cols, dtype=np.int16)
    for cell, ch in enumerate(cells):
        if ch == ".":
            continue
        value = _DIGITS.find(ch.lower()) if ch.isascii() and ch.isalnum() else -1
        if value == 0:
            raise NurikabeError(f"clue 0 at {cell_name(cols, cell)}: clues are 1-9 and a-z "
                                "(10-35); write '.' for an empty cell")
        if value < 0:
            raise NurikabeError(f"bad character {ch!r} at {cell_name(cols, cell)}: use '.' "
                                "for an empty cell and 1-9, a-z for clues")
        clues[cell] = value
    return NurikabePuzzle(rows, cols, clues)


def format_nurikabe(puzzle: NurikabePuzzle) -> str:
    """The one-line text of ``puzzle``; :func:`parse_nurikabe` reads it back."""
    body = "".join("." if v == 0 else _DIGITS[v] for v in puzzle.clues.tolist())
    return f"{puzzle.rows}x{puzzle.cols}:{body}"


def parse_solution(text: str) -> np.ndarray:
    """The grid in ``text`` (``#`` river, ``o`` island) as a (rows, cols) int8 array."""
    rows, cols, cells = _split_header(text, "solution")
    bad = next((i for i, ch in enumerate(cells) if ch not in "#o"), None)
    if bad is not None:
        raise NurikabeError(f"bad character {cells[bad]!r} at {cell_name(cols, bad)}: a "
                            "solution uses '#' for river and 'o' for island")
    river = np.frombuffer(cells.encode(), dtype=np.uint8) == ord("#")
    return river.astype(np.int8).reshape(rows, cols)


def format_solution(grid, shape: tuple[int, int] | None = None) -> str:
    """The one-line text of a (rows, cols) grid (or a flat one with ``shape``)."""
    arr = np.asarray(grid)
    if shape is not None:
        arr = arr.reshape(shape)
    if arr.ndim != 2:
        raise NurikabeError(f"format_solution needs a 2-D grid or a shape, got {arr.shape}")
    if not np.isin(arr, (0, 1)).all():
        raise NurikabeError("a grid holds 1 (river) and 0 (island) only")
    return f"{arr.shape[0]}x{arr.shape[1]}:" + "".join("#" if v else "o"
                                                        for v in arr.reshape(-1).tolist())


# ------------------------------------------------------------------------------ geometry

@dataclass(frozen=True, eq=False)
class Tables:
    """Index tables of a rows×cols grid, built once and shared (read-only).

    ``nbr[cell]`` lists the 4-neighbours, padded with -1; ``blocks[b]`` the four cells of
    the 2×2 block whose top-left cell is ``b``'s; ``cell_blocks[cell]`` the (up to four)
    blocks holding ``cell``, padded with -1.
    """

    rows: int
    cols: int
    nbr: np.ndarray
    blocks: np.ndarray
    cell_blocks: np.ndarray


@lru_cache(maxsize=64)
def tables(rows: int, cols: int) -> Tables:
    """The index tables of a rows×cols grid."""
    n = rows * cols
    nbr = np.full((n, 4), -1, dtype=np.int64)
    for c in range(n):
        r, k = divmod(c, cols)
        found = [x for ok, x in ((r > 0, c - cols), (k > 0, c - 1), (k < cols - 1, c + 1),
                                 (r < rows - 1, c + cols)) if ok]
        nbr[c, :len(found)] = found
    tl = [r * cols + k for r in range(rows - 1) for k in range(cols - 1)]
    blocks = np.array([[c, c + 1, c + cols, c + cols + 1] for c in tl],
                      dtype=np.int64).reshape(-1, 4)
    cell_blocks = np.full((n, 4), -1, dtype=np.int64)
    fill = np.zeros(n, dtype=np.int64)
    for b, cells in enumerate(blocks):
        for c in cells:
            cell_blocks[c, fill[c]] = b
            fill[c] += 1
    for arr in (nbr, blocks, cell_blocks):
        arr.setflags(write=False)
    return Tables(rows, cols, nbr, blocks, cell_blocks)


# --------------------------------------------------------------------------------- rules

def as_grid(puzzle: NurikabePuzzle, grid) -> np.ndarray:
    """``grid`` as a flat int8 array of the puzzle's size, or NurikabeError."""
    arr = np.asarray(grid)
    if arr.shape not in ((puzzle.ncells,), puzzle.shape):
        raise NurikabeError(f"a {puzzle.rows}x{puzzle.cols} grid has {puzzle.ncells} cells, "
                            f"got shape {arr.shape}")
    arr = arr.reshape(-1)
    if not np.isin(arr, (0, 1)).all():
        raise NurikabeError("a grid holds 1 (river) and 0 (island) only")
    return arr.astype(np.int8)


def _components(mask: np.ndarray, t: Tables) -> tuple[np.ndarray, int]:
    """4-connected components of the cells where ``mask`` holds: labels (-1 off), count."""
    label = np.full(mask.size, -1, dtype=np.int64)
    count = 0
    for start in np.flatnonzero(mask):
        if label[start] >= 0:
            continue
        label[start] = count
        stack = [int(start)]
        while stack:
            c = stack.pop()
            for x in t.nbr[c]:
                if x >= 0 and mask[x] and label[x] < 0:
                    label[x] = count
                    stack.append(int(x))
        count += 1
    return label, count


def check(puzzle: NurikabePuzzle, grid) -> list[str]:
    """Every rule ``grid`` breaks, in words (thesis §4.2 rules); empty for a solution."""
    g = as_grid(puzzle, grid)
    t = tables(puzzle.rows, puzzle.cols)
    name = puzzle.cell_name
    problems = [f"clue {int(puzzle.clues[c])} at {name(c)} is shaded (river)"
                for c in puzzle.clue_cells if g[c] == RIVER]
    label, count = _components(g == ISLAND, t)
    for isl in range(count):
        cells = np.flatnonzero(label == isl)
        clue_cells = cells[puzzle.clues[cells] > 0]
        where = name(int(cells[0]))
        if clue_cells.size == 0:
            problems.append(f"the island of {cells.size} cell(s) at {where} has no clue")
        elif clue_cells.size > 1:
            joined = ", ".join(name(int(c)) for c in clue_cells)
            problems.append(f"the island at {where} joins the clues at {joined}")
        elif cells.size != puzzle.clues[clue_cells[0]]:
            c = int(clue_cells[0])
            problems.append(f"the island of clue {int(puzzle.clues[c])} at {name(c)} has "
                            f"{cells.size} cells")
    _, parts = _components(g == RIVER, t)
    if parts > 1:
        problems.append(f"the river is split into {parts} parts")
    for b in t.blocks:
        if g[b].all():
            problems.append(f"a 2x2 pool at {name(int(b[0]))}-{name(int(b[3]))}")
    return problems


def is_solution(puzzle: NurikabePuzzle, grid) -> bool:
    """Whether ``grid`` follows every rule for ``puzzle`` (:func:`check` finds nothing)."""
    return not check(puzzle, grid)
