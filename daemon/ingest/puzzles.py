"""A puzzle as ingestion checks it: text → (givens, order, solution), unique or refused.

Every type keeps its canonical text (``solvers.puzzle_types``: Sudoku's one-line format,
Nurikabe's ``ROWSxCOLS:``) as ``givens`` and its solution as one base-36 symbol a cell in
move values; ``order`` is Sudoku's block side, 0 for a type without blocks.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from fairgrid.analytics.puzzle_model import cells_of
from fairgrid.solvers import PuzzleError, format_line, parse
from fairgrid.solvers.backtracking import count_solutions, unique_solution
from fairgrid.solvers.puzzle_types import TYPES, puzzle_type, values_text

from .solve import ValidationError

SUDOKU = "sudoku"


@dataclass(frozen=True, eq=False)
class PuzzleInfo:
    """A registered puzzle as the webhook needs it (parsed once, cached)."""

    id: str
    givens: str  # the type's canonical text
    order: int
    solution: str
    puzzle_type: str = SUDOKU

    @functools.cached_property
    def givens_array(self) -> np.ndarray:
        if self.puzzle_type == SUDOKU:
            return parse(self.givens).givens
        kind = puzzle_type(self.puzzle_type)
        return kind.givens(kind.parse(self.givens))

    @functools.cached_property
    def solution_array(self) -> np.ndarray:
        return cells_of(self.solution)

    @functools.cached_property
    def max_value(self) -> int:
        """The largest value a move may carry (0 erases or clears)."""
        if self.puzzle_type == SUDOKU:
            return self.order * self.order
        kind = puzzle_type(self.puzzle_type)
        return kind.max_value(kind.parse(self.givens))

    @functools.cached_property
    def blank(self) -> int:
        """What a free cell left empty counts as in a finished grid."""
        return 0 if self.puzzle_type == SUDOKU else puzzle_type(self.puzzle_type).blank

    @functools.cached_property
    def matching_texts(self) -> set[str]:
        """Givens texts already found to be this puzzle (saves re-parsing per webhook)."""
        return {self.givens}


def check_type(value, field: str = "puzzle_type") -> str:
    """A ``puzzle_type`` field's value (None: Sudoku); ValidationError naming the known."""
    if value is None:
        return SUDOKU
    if not isinstance(value, str) or value not in TYPES:
        raise ValidationError(field, f"must be one of {', '.join(TYPES)}, got {value!r}")
    return value


def canonical_text(text: str, field: str, kind: str) -> str:
    """The canonical text of puzzle ``text`` of type ``kind`` (parsed, not solved: a
    known puzzle sent in another layout is recognised without a search);
    ValidationError(422) when it does not parse."""
    try:
        if kind == SUDOKU:
            return format_line(parse(text).givens)
        t = puzzle_type(kind)
        return t.format(t.parse(text))
    except ValueError as exc:
        raise ValidationError(field, str(exc)) from None


def check_puzzle(text: str, field: str = "givens",
                 kind: str = SUDOKU) -> tuple[str, int, str]:
    """Parse and check a puzzle of type ``kind``: (canonical text, order, solution text);
    ValidationError(422) when it does not parse or has no unique solution."""
    if kind != SUDOKU:
        return _check_other(text, field, kind)
    try:
        puzzle = parse(text)
    except PuzzleError as exc:
        hint = " (Nurikabe text? set puzzle_type)" if ":" in text[:8] else ""
        raise ValidationError(field, f"{exc}{hint}") from None
    solution = unique_solution(puzzle)
    if solution is None:
        n = count_solutions(puzzle, limit=2)
        raise ValidationError(field, "the puzzle has no solution" if n == 0
                              else "the puzzle has more than one solution")
    return format_line(puzzle.givens), puzzle.order, format_line(solution)


def _check_other(text: str, field: str, kind: str) -> tuple[str, int, str]:
    from fairgrid.solvers.nurikabe import SearchLimitError

    t = puzzle_type(kind)
    try:
        puzzle = t.parse(text)
        solution = t.solution(puzzle)
        n = 1 if solution is not None else t.count(puzzle, 2)
    except SearchLimitError:
        raise ValidationError(field, f"the uniqueness check could not settle whether this "
                              f"{kind} puzzle has exactly one solution (its exact search "
                              f"met its step cap); fairgrid cannot take it") from None
    except ValueError as exc:  # a parse error
        raise ValidationError(field, str(exc)) from None
    if solution is None:
        raise ValidationError(field, "the puzzle has no solution" if n == 0
                              else "the puzzle has more than one solution")
    return t.format(puzzle), 0, values_text(solution)
