"""A puzzle as ingestion checks it: text → (givens, box_size, solution), unique or refused.

Every type keeps its canonical text (``solvers.puzzle_types``: Sudoku's one-line format,
Nurikabe's ``ROWSxCOLS:``) as ``givens`` and its solution as one base-36 symbol a cell in
move values; ``box_size`` is Sudoku's block side, 0 for a type without blocks.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
from dataclasses import dataclass

import numpy as np

from fairgrid.analytics.puzzle_model import cells_of
from fairgrid.analytics.signals import MIN_CELLS
from fairgrid.solvers.puzzle_types import DEFAULT_TYPE, TYPES, PuzzleType, puzzle_type

from .solve import ValidationError


@dataclass(frozen=True, eq=False)
class PuzzleInfo:
    """A registered puzzle as the webhook needs it (parsed once, cached)."""

    id: str
    givens: str  # the type's canonical text
    box_size: int
    solution: str
    puzzle_type: str = DEFAULT_TYPE

    @functools.cached_property
    def ptype(self) -> PuzzleType:
        return puzzle_type(self.puzzle_type)

    @functools.cached_property
    def _parsed(self):
        return self.ptype.parse(self.givens)

    @functools.cached_property
    def givens_array(self) -> np.ndarray:
        return self.ptype.givens(self._parsed)

    @functools.cached_property
    def solution_array(self) -> np.ndarray:
        return cells_of(self.solution)

    @functools.cached_property
    def max_value(self) -> int:
        """The largest value a move may carry (0 erases or clears)."""
        return self.ptype.max_value(self._parsed)

    @property
    def blank(self) -> int:
        """What a free cell left empty counts as in a finished grid."""
        return self.ptype.blank

    @functools.cached_property
    def matching_texts(self) -> set[str]:
        """Givens texts already found to be this puzzle (saves re-parsing per webhook)."""
        return {self.givens}


def check_type(value, field: str = "puzzle_type") -> str:
    """A ``puzzle_type`` field's value (None: Sudoku); ValidationError naming the known."""
    if value is None:
        return DEFAULT_TYPE
    if not isinstance(value, str) or value not in TYPES:
        raise ValidationError(field, f"must be one of {', '.join(TYPES)}, got {value!r}")
    return value


def canonical_text(text: str, field: str, type_name: str) -> str:
    """The canonical text of puzzle ``text`` of type ``type_name`` (parsed, not solved: a
    known puzzle sent in another layout is recognised without a search);
    ValidationError(422) when it does not parse."""
    t = puzzle_type(type_name)
    try:
        return t.format(t.parse(text))
    except ValueError as exc:
        raise ValidationError(field, str(exc)) from None


# the fewest cells a puzzle may leave to fill: the order and pace of fewer placements
# say nothing (analytics.signals.MIN_CELLS)
MIN_OPEN_CELLS = MIN_CELLS

# Puzzle checks run on threads of their own: a uniqueness search can take seconds (up to
# its cap), and on the loop's default pool it would hold up every store read queued
# behind it, whichever portal's
_CHECKS = concurrent.futures.ThreadPoolExecutor(max_workers=2,
                                                thread_name_prefix="fg-puzzle-check")


async def check_puzzle_off_loop(text: str, field: str = "givens",
                                type_name: str = DEFAULT_TYPE) -> tuple[str, int, str]:
    """:func:`check_puzzle` on the puzzle-check threads (its searches release the GIL,
    so the event loop keeps serving meanwhile)."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_CHECKS, check_puzzle, text, field, type_name)


def check_puzzle(text: str, field: str = "givens",
                 type_name: str = DEFAULT_TYPE) -> tuple[str, int, str]:
    """Parse and check a puzzle of type ``type_name``: (canonical text, box_size, solution text);
    ValidationError(422) when it does not parse, has no unique solution (or its search
    cannot settle that), or leaves fewer than :data:`MIN_OPEN_CELLS` cells to fill."""
    from fairgrid.solvers.grid import SearchLimitError  # Nurikabe's is one too

    t = puzzle_type(type_name)
    try:
        puzzle = t.parse(text)
    except ValueError as exc:
        raise ValidationError(field, f"{exc}{_other_type_hint(text, type_name)}") from None
    try:
        solution = t.solution(puzzle)
        n = 1 if solution is not None else t.count(puzzle, 2)
    except SearchLimitError:
        raise ValidationError(field, f"the uniqueness check could not settle whether this "
                              f"{type_name} puzzle has exactly one solution (its exact search "
                              f"met its step cap); fairgrid cannot take it") from None
    if solution is None:
        raise ValidationError(field, "the puzzle has no solution" if n == 0
                              else "the puzzle has more than one solution")
    # the cells a solve must mark: a free cell whose solution is what an empty cell
    # counts as (a Nurikabe island) needs no move, and an empty log would finish it
    open_cells = int(np.count_nonzero((np.asarray(t.givens(puzzle)).reshape(-1) == 0)
                                      & (np.asarray(solution).reshape(-1) != t.blank)))
    if open_cells < MIN_OPEN_CELLS:
        # a solve of it would be judged on almost nothing, and its analysis cannot
        # place an order on it
        raise ValidationError(field, f"the puzzle leaves {open_cells} cell"
                              f"{'' if open_cells == 1 else 's'} to fill; fairgrid takes "
                              f"puzzles with at least {MIN_OPEN_CELLS}")
    return t.format(puzzle), t.box_size(puzzle), t.values_text(solution)


def _other_type_hint(text: str, type_name: str) -> str:
    """A hint naming the type that reads ``text``, when another one does ('': none)."""
    for other in TYPES:
        if other != type_name:
            try:
                puzzle_type(other).parse(text)
            except ValueError:
                continue
            return f" ({other} text? set puzzle_type)"
    return ""
