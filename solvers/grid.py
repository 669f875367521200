"""The Sudoku model: one vocabulary for every solver, analytic and API.

Vocabulary (used everywhere in fairgrid)
----------------------------------------
box size ``n``
    The block side: 2, 3, 4 or 5.  The grid has ``size = n*n`` rows, columns and
    blocks, and ``ncells = size*size`` cells (Lewis 2007 calls ``n`` the order; here
    *order* is only the fill order).
cell
    A 0-based row-major index ``0 .. ncells-1``; ``row = cell // size``,
    ``col = cell % size``.
digit
    ``1 .. size``; ``0`` means an empty cell.
unit
    A row, a column or a block: ``size`` cells that must hold every digit once.
    Units are numbered rows ``0..size-1``, columns ``size..2*size-1``, blocks
    ``2*size..3*size-1``; blocks are numbered row-major.
peers
    The other cells sharing a unit with a cell (20 for a 9x9 grid).
givens
    The digits the puzzle fixes.  A :class:`Puzzle` holds them as a read-only
    ``int8`` array of length ``ncells`` with ``0`` for blanks.

Text formats (:func:`parse` reads all of them, :func:`format_line` and
:func:`format_grid` write them)
---------------------------------------------------------------------------
* One line of characters, ``.`` or ``0`` for a blank: 16, 81, 256 or 625 of them.
  Digits above 9 are letters: ``A`` = 10, ``B`` = 11, ... ``G`` = 16 for 16x16 and
  up to ``P`` = 25 for 25x25 (case-insensitive).
* A grid of lines in the same alphabet, with any of the separators space, ``|``,
  ``+``, ``-`` (lines made only of separators are ignored).
* Comma separated numbers (``0`` or ``.`` for blanks), in any line layout; also
  numbers separated by white space (every token one or two characters, at least one
  of them a number 10 or more).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

BOX_SIZES = (2, 3, 4, 5)
_BLANKS = frozenset(".0_")
_CHAR_SEPARATORS = frozenset(" \t\r|+-")
_ALPHABET = "123456789ABCDEFGHIJKLMNOP"


class PuzzleError(ValueError):
    """A puzzle text or grid is malformed; the message names the problem."""


class SearchLimitError(PuzzleError):
    """An exact search (how many solutions a puzzle has) met its step cap before it could
    answer: the puzzle is neither known to be unique nor known not to be."""


@dataclass(frozen=True)
class Geometry:
    """Index tables of one box size: rows, columns, blocks, units and peers of every cell."""

    box_size: int
    size: int
    ncells: int
    row: np.ndarray  # cell -> row
    col: np.ndarray  # cell -> column
    block: np.ndarray  # cell -> block
    units: np.ndarray  # (3*size, size): unit -> its cells
    peers: np.ndarray  # (ncells, npeers): cell -> its peers, ascending

    @property
    def order(self) -> int:
        """The box size under its name before (read-only; kept for one release)."""
        return self.box_size

    def unit_name(self, unit: int) -> str:
        """A human name for a unit: 'row 3', 'column 5' or 'block 9' (1-based)."""
        name = ("row", "column", "block")[unit // self.size]
        return f"{name} {unit % self.size + 1}"

    def cell_name(self, cell: int) -> str:
        """``r<row>c<col>``, 1-based, as players write it."""
        return f"r{self.row[cell] + 1}c{self.col[cell] + 1}"


@functools.lru_cache(maxsize=None)
def geometry(box_size: int) -> Geometry:
    """The index tables of a box size (cached); raises PuzzleError for an unsupported one."""
    if box_size not in BOX_SIZES:
        raise PuzzleError(f"box size must be one of {BOX_SIZES}, got {box_size}")
    size = box_size * box_size
    ncells = size * size
    cells = np.arange(ncells)
    row, col = cells // size, cells % size
    block = (row // box_size) * box_size + col // box_size
    units = np.empty((3 * size, size), dtype=np.int32)
    for u in range(size):
        units[u] = np.flatnonzero(row == u)
        units[size + u] = np.flatnonzero(col == u)
        units[2 * size + u] = np.flatnonzero(block == u)
    npeers = 3 * (size - 1) - 2 * (box_size - 1)
    peers = np.empty((ncells, npeers), dtype=np.int32)
    for c in range(ncells):
        mask = (row == row[c]) | (col == col[c]) | (block == block[c])
        mask[c] = False
        peers[c] = np.flatnonzero(mask)
    for arr in (row, col, block, units, peers):
        arr.setflags(write=False)
    return Geometry(box_size, size, ncells, row.astype(np.int32), col.astype(np.int32),
                    block.astype(np.int32), units, peers)


def _frozen(values: np.ndarray) -> np.ndarray:
    arr = np.array(values, dtype=np.int8, copy=True)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class Puzzle:
    """A Sudoku puzzle: its box size and its givens (``0`` = blank), validated on creation.

    Build one with :func:`parse` (text) or :meth:`from_grid` (an array); both raise
    :class:`PuzzleError` when the givens are malformed or already clash.
    """

    box_size: int
    givens: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        geo = geometry(self.box_size)
        givens = np.asarray(self.givens)
        if givens.shape != (geo.ncells,):
            raise PuzzleError(f"a puzzle of box size {self.box_size} has {geo.ncells} cells, "
                              f"got an array of shape {givens.shape}")
        if givens.min() < 0 or givens.max() > geo.size:
            bad = int(np.flatnonzero((givens < 0) | (givens > geo.size))[0])
            raise PuzzleError(f"cell {bad} ({geo.cell_name(bad)}) holds {int(givens[bad])}; "
                              f"digits are 1..{geo.size}, 0 for a blank")
        object.__setattr__(self, "givens", _frozen(givens))
        clash = find_clash(self.givens, self.box_size)
        if clash is not None:
            a, b, unit = clash
            raise PuzzleError(
                f"givens clash: cells {a} ({geo.cell_name(a)}) and {b} ({geo.cell_name(b)}) "
                f"both hold {int(self.givens[a])} in {geo.unit_name(unit)}")

    @classmethod
    def from_grid(cls, grid, box_size: int | None = None) -> "Puzzle":
        """A puzzle from a flat or square array of digits (0 = blank); box size inferred."""
        arr = np.asarray(grid).reshape(-1)
        if box_size is None:
            box_size = box_size_for_cells(arr.size)
        return cls(box_size, arr)

    @property
    def geometry(self) -> Geometry:
        return geometry(self.box_size)

    @property
    def order(self) -> int:
        """The box size under its name before (read-only; kept for one release)."""
        return self.box_size

    @property
    def size(self) -> int:
        return self.box_size * self.box_size

    @property
    def ncells(self) -> int:
        return self.size * self.size

    @property
    def empty_cells(self) -> np.ndarray:
        """The cells without a given, ascending."""
        return np.flatnonzero(self.givens == 0)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Puzzle) and other.box_size == self.box_size
                and np.array_equal(other.givens, self.givens))

    def __hash__(self) -> int:
        return hash((self.box_size, self.givens.tobytes()))

    def __str__(self) -> str:
        return format_line(self.givens, self.box_size)


def box_size_for_cells(ncells: int) -> int:
    """The box size whose grid has ``ncells`` cells, or PuzzleError naming the count found."""
    for box_size in BOX_SIZES:
        if box_size ** 4 == ncells:
            return box_size
    expected = ", ".join(str(o ** 4) for o in BOX_SIZES[:-1]) + f" or {BOX_SIZES[-1] ** 4}"
    raise PuzzleError(f"expected {expected} cells, found {ncells}")


def find_clash(grid: np.ndarray, box_size: int) -> tuple[int, int, int] | None:
    """The first two cells of a unit holding the same digit, as (cell, cell, unit), or None."""
    geo = geometry(box_size)
    values = np.asarray(grid)[geo.units]  # (units, size)
    for u in range(values.shape[0]):
        seen: dict[int, int] = {}
        for k in range(geo.size):
            d = int(values[u, k])
            if d == 0:
                continue
            if d in seen:
                return int(geo.units[u, seen[d]]), int(geo.units[u, k]), u
            seen[d] = k
    return None


# ---------------------------------------------------------------------------- parsing

_NUMBER_TOKEN = re.compile(r"[^\s,|]+")


def parse(text: str) -> Puzzle:
    """Parse a puzzle in any format of the module docstring; PuzzleError on bad input.

    The box size follows from the number of cells found (16, 81, 256 or 625).
    """
    if not isinstance(text, str):
        raise PuzzleError(f"a puzzle must be text, got {type(text).__name__}")
    if not text.strip():
        raise PuzzleError("the puzzle is empty")
    tokens = [t for t in _NUMBER_TOKEN.findall(text) if set(t) - set("-+")]
    numeric_tokens = "," in text or (
        len(tokens) > 1 and all(len(t) <= 2 for t in tokens)
        and any(len(t) == 2 and t.isascii() and t.isdigit() for t in tokens))
    if numeric_tokens:
        return _parse_numbers(text)
    return _parse_chars(text)


def _parse_chars(text: str) -> Puzzle:
    """One symbol per cell; separators and separator-only lines skipped."""
    symbols: list[tuple[str, int, int]] = []  # (char, line, column), 1-based positions
    for lineno, line in enumerate(text.splitlines(), start=1):
        for colno, ch in enumerate(line, start=1):
            if ch not in _CHAR_SEPARATORS:
                symbols.append((ch, lineno, colno))
    box_size = box_size_for_cells(len(symbols))
    size = box_size * box_size
    givens = np.zeros(len(symbols), dtype=np.int8)
    for cell, (ch, lineno, colno) in enumerate(symbols):
        if ch in _BLANKS:
            continue
        digit = _ALPHABET.find(ch.upper()) + 1
        if not 1 <= digit <= size:
            where = f"line {lineno}, column {colno}" if "\n" in text.strip() else f"position {colno}"
            raise PuzzleError(
                f"illegal character {ch!r} at {where} (cell {cell}); a {size}x{size} puzzle "
                f"uses {_ALPHABET[0]}-{_ALPHABET[size - 1]} and '.' or '0' for blanks")
        givens[cell] = digit
    return Puzzle(box_size, givens)


def _parse_numbers(text: str) -> Puzzle:
    """Comma or white-space separated numbers, one per cell."""
    tokens = [t for t in re.split(r"[\s,|]+", text.strip()) if t and set(t) - set("-+")]
    box_size = box_size_for_cells(len(tokens))
    size = box_size * box_size
    givens = np.zeros(len(tokens), dtype=np.int8)
    for cell, tok in enumerate(tokens):
        if tok in _BLANKS:
            continue
        # ASCII digits only: str.isdigit() admits '²' (which int() refuses) and '٣'
        if not (tok.isascii() and tok.isdigit()) or not 0 <= int(tok) <= size:
            raise PuzzleError(f"illegal value {tok!r} at cell {cell} (number {cell + 1}); "
                              f"a {size}x{size} puzzle uses 1..{size} and 0 or '.' for blanks")
        givens[cell] = int(tok)
    return Puzzle(box_size, givens)


# ---------------------------------------------------------------------------- formatting

def symbol(digit: int) -> str:
    """A digit as the one-line format writes it: 1-9, then letters (A = 10); 0 is "."."""
    return "." if digit == 0 else _ALPHABET[digit - 1]


def format_line(grid, box_size: int | None = None) -> str:
    """The one-line format: one symbol a cell, '.' for a blank."""
    arr = np.asarray(grid).reshape(-1)
    if box_size is None:
        box_size_for_cells(arr.size)  # raises PuzzleError for a size that is no grid
    return "".join(symbol(int(d)) for d in arr)


def layout_grid(texts: list[str], box_size: int, width: int = 1) -> str:
    """Lay out one text per cell as a grid: right-aligned to ``width``, ``|`` between
    blocks and a rule between bands."""
    size = box_size * box_size
    cells = [t.rjust(width) for t in texts]
    rows = [" | ".join(" ".join(cells[r * size + b * box_size:r * size + (b + 1) * box_size])
                       for b in range(box_size)) for r in range(size)]
    rule = "-+-".join("-" * (box_size * (width + 1) - 1) for _ in range(box_size))
    out = []
    for r, line in enumerate(rows):
        if r and r % box_size == 0:
            out.append(rule)
        out.append(line)
    return "\n".join(out)


def format_grid(grid, box_size: int | None = None) -> str:
    """A readable grid with ``|`` between blocks and a rule between bands."""
    arr = np.asarray(grid).reshape(-1)
    box_size = box_size_for_cells(arr.size) if box_size is None else box_size
    return layout_grid([symbol(int(d)) for d in arr], box_size)


def format_numbers(grid, box_size: int | None = None) -> str:
    """Comma separated numbers, one row a line (the format for big grids in JSON/CSV)."""
    arr = np.asarray(grid).reshape(-1)
    box_size = box_size_for_cells(arr.size) if box_size is None else box_size
    size = box_size * box_size
    return "\n".join(",".join(str(int(d)) for d in arr[r * size:(r + 1) * size])
                     for r in range(size))


# ---------------------------------------------------------------------------- checks

def candidates(grid, box_size: int | None = None) -> np.ndarray:
    """Candidate digits of every cell as a bool array (ncells, size+1); filled cells have none.

    ``cands[cell, d]`` is True when ``d`` can go in the empty ``cell`` without repeating a
    digit of its row, column or block. Column 0 is always False.
    """
    arr = np.asarray(grid).reshape(-1)
    box_size = box_size_for_cells(arr.size) if box_size is None else box_size
    geo = geometry(box_size)
    present = np.zeros((3 * geo.size, geo.size + 1), dtype=bool)
    unit_values = arr[geo.units]
    np.put_along_axis(present, unit_values.astype(np.intp), True, axis=1)
    present[:, 0] = True
    used = (present[geo.row] | present[geo.size + geo.col] | present[2 * geo.size + geo.block])
    cands = ~used
    cands[arr != 0] = False
    return cands


def is_valid_solution(grid, box_size: int | None = None) -> bool:
    """True when every cell is filled and every unit holds each digit exactly once."""
    arr = np.asarray(grid).reshape(-1)
    try:
        box_size = box_size_for_cells(arr.size) if box_size is None else box_size
    except PuzzleError:
        return False
    geo = geometry(box_size)
    if arr.size != geo.ncells:
        return False
    values = np.sort(arr[geo.units], axis=1)
    return bool(np.array_equal(values, np.broadcast_to(np.arange(1, geo.size + 1), values.shape)))


def solves(puzzle: Puzzle, grid) -> bool:
    """True when ``grid`` is a valid filled grid that keeps every given of ``puzzle``."""
    arr = np.asarray(grid).reshape(-1)
    if arr.size != puzzle.ncells or not is_valid_solution(arr, puzzle.box_size):
        return False
    mask = puzzle.givens != 0
    return bool(np.array_equal(arr[mask], puzzle.givens[mask]))


# the most a file of one puzzle may hold (a 25x25 grid with separators is a few KB), and
# a file of puzzles one a line: read whole, a larger file costs gigabytes to parse
MAX_PUZZLE_FILE = 1 << 20
MAX_PUZZLES_FILE = 256 << 20


def read_puzzle_file(path: Path, arg: str, limit: int = MAX_PUZZLE_FILE) -> str:
    """The text of a puzzle file; PuzzleError naming ``arg`` when it is larger than
    ``limit`` bytes, not UTF-8 or cannot be read."""
    try:
        size = path.stat().st_size
        if size > limit:
            raise PuzzleError(f"{arg}: {size:,} bytes, more than the {limit:,} a puzzle "
                              f"file may hold")
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise PuzzleError(f"{arg}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise PuzzleError(f"{arg}: cannot read: {exc.strerror}") from None


def load_puzzle(arg: str) -> Puzzle:
    """A puzzle from a command-line argument: a file path if one exists, else puzzle text.

    Raises PuzzleError naming the problem (also for an unreadable file, or a path that
    does not exist).
    """
    path = Path(arg)
    looks_like_path = os.sep in arg or path.suffix.lower() in {".txt", ".sdk", ".sdm"}
    try:
        is_file = path.is_file()
    except (OSError, ValueError):
        is_file = False
    if is_file:
        text = read_puzzle_file(path, arg)
        try:
            return parse(text)
        except PuzzleError as exc:
            raise PuzzleError(f"{arg}: {exc}") from None
    try:
        is_dir = path.is_dir()
    except (OSError, ValueError):
        is_dir = False
    if is_dir:
        raise PuzzleError(f"{arg}: is a folder, not a puzzle file")
    if looks_like_path:
        raise PuzzleError(f"{arg}: no such file (and not a puzzle)")
    return parse(arg)
