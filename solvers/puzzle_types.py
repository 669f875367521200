"""The puzzle-type seam: what the rest of fairgrid needs to know of a kind of puzzle.

Scoring reads a solve as moves ``(t_ms, cell, value)`` on a grid of cells, a puzzle as
its fixed cells (``givens``, 0 where a move may go) and its unique ``solution`` in the
same values as moves. A type says how its text reads and writes, which values a move may
carry, what a correct final grid is, how it is rated, the order its human-like model
decides the cells in, and "was this placement deducible at that moment" (the replay).
Everything else (fill order, order and pacing signals, nulls, the verdict, the nightly
fit) is the same code for every type.

======================  ============================  ====================================
                        ``sudoku``                    ``nurikabe``
======================  ============================  ====================================
text                    81 characters, grids, ...     ``ROWSxCOLS:cells`` (docs/puzzles.md)
move values             digits 1..size, 0 erases      1 river (shade), 2 island (dot),
                                                      0 clears
givens                  the given digits              the clue numbers (clue cells are
                                                      island and take no moves)
deducible at a moment   a naked or hidden single      a cell the propagation rules force
                        (``propagation.replay``)      (``nurikabe.deductions``)
rating                  ``rate.rate``                 ``nurikabe.rate_nurikabe``
======================  ============================  ====================================

:func:`puzzle_type` looks one up by name; :data:`TYPES` lists them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .grid import PuzzleError, SearchLimitError

NOT_DEDUCIBLE = 2  # the replay's technique code of a placement no rule gave
SUDOKU, NURIKABE = "sudoku", "nurikabe"
# the type of a puzzle that names none (bodies and rows from before types were Sudoku's);
# its level nulls and rating-run figures keep the unprefixed names stored before types
DEFAULT_TYPE = SUDOKU


@dataclass(frozen=True)
class TypeWords:
    """How the evidence an organiser reads speaks of a type."""

    unforced_name: str     # the "unforced" signal, as a name
    unforced_what: str     # ...and as what a flagged solve did
    techniques: tuple[str, str, str]  # the replay's codes 0, 1, NOT_DEDUCIBLE in words
    order_note: str        # how to read the predicted and actual fill orders
    model: str             # what predicts the fill order, in a few words


@dataclass(frozen=True)
class PuzzleType:
    """One kind of puzzle (see the module doc). Each callable is pure."""

    name: str
    values: str                                         # what a move's value means
    parse: Callable[[str], Any]                         # ValueError naming the problem
    format: Callable[[Any], str]                        # the canonical one-line text
    shape: Callable[[Any], tuple[int, int]]             # (rows, cols)
    max_value: Callable[[Any], int]                     # move values are 0..max_value
    givens: Callable[[Any], np.ndarray]                 # per cell, 0 where moves go
    solution: Callable[[Any], np.ndarray | None]        # unique solution in move values
    count: Callable[[Any, int], int]                    # solutions, counted up to a limit
    check: Callable[[Any, np.ndarray], list[str]]       # what a final grid breaks ([] ok)
    # the quick metrics, seeded (``solution``: the known one, in move values, saves a search)
    rate: Callable[..., dict[str, float]]
    model_ranks: Callable[[Any, np.ndarray], np.ndarray]  # human-like model's rank/cell
    # (givens, shape, placed cells in order, solution) -> per placement: technique (0/1
    # deducible, NOT_DEDUCIBLE not), deductions on offer, values the board still allowed
    replay: Callable[[np.ndarray, tuple[int, int], np.ndarray, np.ndarray],
                     tuple[np.ndarray, np.ndarray, np.ndarray]]
    words: TypeWords
    box_size: Callable[[Any], int]                     # Sudoku's block side; 0 without blocks
    # a grid of move values (a solution) as the text the service stores
    values_text: Callable[[np.ndarray], str]
    # how a board draws each move value (None: the value itself, as a digit or letter)
    symbols: tuple[str, ...] | None = None
    blank: int = 0  # what a free cell left empty counts as in a finished grid
    # its predicted fill order is the median of SA runs (thesis §4.1; costly, spread over
    # the pool); otherwise its human-like model's order (one deterministic run)
    sa_fill_order: bool = False
    # the technique ladder (solvers.techniques, solvers.deduction) knows its steps
    technique_ladder: bool = False
    # its grid is a square of blocks (Sudoku's): boards draw their borders
    blocks: bool = False

    @property
    def is_default(self) -> bool:
        """Whether this is :data:`DEFAULT_TYPE`, whose stored keys carry no type name."""
        return self.name == DEFAULT_TYPE


# ------------------------------------------------------------------------------ sudoku

def _sudoku() -> PuzzleType:
    from . import grid
    from .backtracking import count_solutions
    from .propagation import human_model, replay, solution_of
    from .rate import rate

    def solution(p):
        try:
            return solution_of(p).astype(np.int64)
        except SearchLimitError:
            raise               # not known to have no unique solution: said apart
        except PuzzleError:
            return None

    def check(p, g):
        g = np.asarray(g).reshape(-1)
        return [] if grid.solves(p, g) else ["not a valid completion of the givens"]

    def quick(p, seed, solution=None):  # what the shipped calibration reads
        return rate(p, rng=seed, only=("human", "techniques")).metrics

    def order(p, sol):
        rank = human_model(p, rng=0, runs=10, solution=sol).median_fill_rank(p.ncells)
        return np.where(np.isnan(rank), -1, rank)

    def replay_(givens, shape, cells, sol):
        box_size = grid.box_size_for_cells(int(np.asarray(givens).size))
        return replay(givens, box_size, cells, sol)

    from .techniques import NAKED_SINGLE

    return PuzzleType(
        SUDOKU, "digits 1..size; 0 erases", grid.parse,
        lambda p: grid.format_line(p.givens, p.box_size), lambda p: (p.size, p.size),
        lambda p: p.size, lambda p: p.givens.astype(np.int64), solution, count_solutions,
        check, quick, order, replay_,
        TypeWords("digits the board did not yet force",
                  "digits placed that the board did not yet force",
                  (NAKED_SINGLE, "hidden single", "not deducible"),
                  "1 = filled first; predicted ranks are the median over simulated "
                  "annealing runs, cells with equal medians share a rank", "SA"),
        lambda p: p.box_size, grid.format_line, sa_fill_order=True, technique_ladder=True,
        blocks=True)


# ---------------------------------------------------------------------------- nurikabe

RIVER, ISLAND = 1, 2  # Nurikabe move values (0 clears a cell)


def _nurikabe() -> PuzzleType:
    from . import nurikabe as nk
    from .nurikabe.model import NurikabePuzzle

    def solution(p):
        grid = nk.unique_solution(p)
        return None if grid is None else np.where(grid.reshape(-1) == 1, RIVER, ISLAND)

    def check(p, g):
        values = np.asarray(g).reshape(-1)
        if not np.isin(values, (RIVER, ISLAND)).all():
            return ["every cell must be river (1) or island (2)"]
        return nk.check(p, (values == RIVER).astype(np.int8))

    def rate(p, seed, solution=None):
        river = (None if solution is None else
                 (np.asarray(solution).reshape(p.shape) == RIVER).astype(np.int8))
        return nk.rate_nurikabe(p, seed, runs=3, solution=river)

    def order(p, sol):
        river = (np.asarray(sol).reshape(-1) == RIVER).astype(np.int8)
        return nk.propagate(p, solution=river).order().astype(float)

    def replay_(givens, shape, cells, sol):
        p = NurikabePuzzle(shape[0], shape[1], np.asarray(givens, dtype=np.int64))
        state = nk.start_state(p)
        sol = np.asarray(sol).reshape(-1)
        cells = np.asarray(cells, dtype=np.int64)
        tech = np.empty(cells.size, dtype=np.int64)
        options = np.empty(cells.size, dtype=np.int64)
        cands = np.empty(cells.size, dtype=np.int64)
        for k, c in enumerate(cells):
            forced = nk.deductions(p, state).colour.reshape(-1)
            offer = forced != -1
            tech[k] = 1 if offer[c] else NOT_DEDUCIBLE
            options[k] = int(offer.sum())
            cands[k] = 1 if offer[c] else 2
            state[c] = 1 if sol[c] == RIVER else 0
        return tech, options, cands

    return PuzzleType(
        NURIKABE, "1 river (shade), 2 island (dot); 0 clears", nk.parse_nurikabe,
        nk.format_nurikabe, lambda p: (p.rows, p.cols), lambda p: ISLAND,
        lambda p: p.clues.astype(np.int64), solution, nk.count_solutions, check,
        rate, order, replay_,
        TypeWords("cells the rules did not yet force",
                  "cells decided before the rules forced them",
                  ("forced by a rule", "forced by a rule", "not deducible"),
                  "1 = filled first; predicted ranks are the order in which the "
                  "propagation model (the simple rules people use) decides the cells",
                  "propagation model"),
        lambda p: 0, values_text, symbols=("", "\u25a0", "\u00b7"), blank=ISLAND)  # river ■, island ·


def values_text(values) -> str:
    """Per-cell values (a solution in move values) as text: one base-36 symbol a cell."""
    return "".join(np.base_repr(int(v), 36).lower() if v else "." for v in
                   np.asarray(values).reshape(-1))


_FACTORIES = {SUDOKU: _sudoku, NURIKABE: _nurikabe}
TYPES = tuple(_FACTORIES)
_made: dict[str, PuzzleType] = {}


def puzzle_type(name: str) -> PuzzleType:
    """The type called ``name``; ValueError listing the known ones."""
    if name not in _FACTORIES:
        raise ValueError(f"unknown puzzle type {name!r}; known: {', '.join(TYPES)}")
    if name not in _made:
        _made[name] = _FACTORIES[name]()
    return _made[name]
