"""A puzzle as ingestion checks it: text → (givens, order, solution), unique or refused."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from fairgrid.solvers import PuzzleError, format_line, parse
from fairgrid.solvers.backtracking import count_solutions, unique_solution

from .solve import ValidationError


@dataclass(frozen=True, eq=False)
class PuzzleInfo:
    """A registered puzzle as the webhook needs it (parsed once, cached)."""

    id: str
    givens: str  # one-line format
    order: int
    solution: str

    @functools.cached_property
    def givens_array(self) -> np.ndarray:
        return parse(self.givens).givens

    @functools.cached_property
    def solution_array(self) -> np.ndarray:
        return parse(self.solution).givens.astype(np.int64)

    @functools.cached_property
    def matching_texts(self) -> set[str]:
        """Givens texts already found to be this puzzle (saves re-parsing per webhook)."""
        return {self.givens}


def check_puzzle(text: str, field: str = "givens") -> tuple[str, int, str]:
    """Parse and check a puzzle: (givens line, order, solution line); ValidationError(422)."""
    try:
        puzzle = parse(text)
    except PuzzleError as exc:
        raise ValidationError(field, str(exc)) from None
    solution = unique_solution(puzzle)
    if solution is None:
        n = count_solutions(puzzle, limit=2)
        raise ValidationError(field, "the puzzle has no solution" if n == 0
                              else "the puzzle has more than one solution")
    return format_line(puzzle.givens), puzzle.order, format_line(solution)
