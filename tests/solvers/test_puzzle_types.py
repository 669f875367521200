"""The puzzle-type seam: Sudoku behind it unchanged, Nurikabe through the same calls."""

from __future__ import annotations

import numpy as np
import pytest

from fairgrid.solvers import parse
from fairgrid.solvers.nurikabe import generate_nurikabe
from fairgrid.solvers.propagation import replay, run_once, solution_of
from fairgrid.solvers.puzzle_types import NOT_DEDUCIBLE, TYPES, puzzle_type

from ..fixtures import MEDIUM

SMALL = "4x5:.2......2......1.1.."


def test_the_known_types_and_a_clear_error_for_others():
    assert TYPES == ("sudoku", "nurikabe")
    with pytest.raises(ValueError, match="unknown puzzle type 'kakuro'.*sudoku, nurikabe"):
        puzzle_type("kakuro")


def test_sudoku_behind_the_seam_gives_what_its_modules_give():
    t = puzzle_type("sudoku")
    p = t.parse(MEDIUM)
    assert p == parse(MEDIUM) and t.format(p) == MEDIUM.replace("0", ".")
    assert t.shape(p) == (9, 9) and t.max_value(p) == 9
    sol = t.solution(p)
    assert np.array_equal(sol, solution_of(p)) and t.check(p, sol) == []
    bad = sol.copy()
    bad[np.flatnonzero(p.givens == 0)[0]] = 0
    assert t.check(p, bad)
    run = run_once(p, sol, np.uint64(3))
    mine = t.replay(t.givens(p), t.shape(p), run.cells, sol)
    theirs = replay(p.givens, 3, run.cells, sol)
    for a, b in zip(mine, theirs):
        assert np.array_equal(a, b)
    assert t.solution(parse("." * 81)) is None
    assert "tq_hardest" in t.rate(p, 0)


def test_nurikabe_through_the_seam():
    t = puzzle_type("nurikabe")
    p = t.parse(SMALL)
    assert t.format(p) == SMALL and t.shape(p) == (4, 5) and t.max_value(p) == 2
    sol = t.solution(p)
    assert set(np.unique(sol)) == {1, 2}
    clues = np.flatnonzero(t.givens(p))
    assert (sol[clues] == 2).all() and t.check(p, sol) == []
    wrong = sol.copy()
    wrong[np.flatnonzero(t.givens(p) == 0)[0]] ^= 3  # river <-> island
    assert t.check(p, wrong)
    assert t.check(p, np.zeros_like(sol)) == ["every cell must be river (1) or island (2)"]
    # the model's own order is deducible at every step; reversed, the first is not
    rank = t.model_ranks(p, sol)
    order = np.argsort(np.where(rank < 0, np.inf, rank))[:int((rank >= 0).sum())]
    tech, options, _ = t.replay(t.givens(p), t.shape(p), order, sol)
    assert (tech != NOT_DEDUCIBLE).all() and (options > 0).all()
    tech, _, _ = t.replay(t.givens(p), t.shape(p), order[::-1], sol)
    assert tech[0] == NOT_DEDUCIBLE
    assert t.solution(t.parse("2x2:2...")) is None  # two solutions


def test_a_generated_nurikabe_replays_its_model_ranks_without_a_guess():
    t = puzzle_type("nurikabe")
    p = generate_nurikabe(6, 6, np.random.default_rng(2))
    sol = t.solution(p)
    rank = t.model_ranks(p, sol)
    free = np.flatnonzero(t.givens(p) == 0)
    assert sorted(rank[free].tolist()) == list(range(free.size))
