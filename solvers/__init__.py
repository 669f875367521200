"""Pure, seeded Sudoku solvers: the model, simulated annealing, backtracking.

Nothing here does I/O or reads a clock for its results; every random choice comes from the
``rng`` the caller passes in. See :mod:`fairgrid.solvers.grid` for the vocabulary.
"""

from .grid import (Geometry, Puzzle, PuzzleError, candidates, format_grid, format_line,
                   format_numbers, geometry, is_valid_solution, load_puzzle, parse, solves)

__all__ = ["Geometry", "Puzzle", "PuzzleError", "candidates", "format_grid", "format_line",
           "format_numbers", "geometry", "is_valid_solution", "load_puzzle", "parse", "solves"]
