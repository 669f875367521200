"""The human-like constraint-propagation model (thesis §2.3)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

from fairgrid.solvers import parse
from fairgrid.solvers.grid import PuzzleError, geometry
from fairgrid.solvers.propagation import (GUESS, HIDDEN, NAKED, REFUTATION, human_model,
                                          run_once, solution_of)

from ..fixtures import EASY, EASY_SOLUTION, HUMAN_HARD, MEDIUM, SA_HARD, unique_puzzles


def _replay_checks(puzzle, solution, run):
    """Every empty cell filled once, with its correct digit, and singles were singles.

    After the first refutation the model's candidate sets also lack the refuted
    candidates, which the board alone does not show: singles are checked up to there.
    """
    empty = np.flatnonzero(puzzle.givens == 0)
    assert sorted(run.cells.tolist()) == empty.tolist()
    assert np.array_equal(run.digits, solution[run.cells])
    geo = geometry(puzzle.box_size)
    board = puzzle.givens.astype(int).copy()
    for c, d, tech in zip(run.cells, run.digits, run.technique):
        if tech >= REFUTATION:
            break
        if tech == NAKED:
            cand = set(range(1, puzzle.size + 1)) - set(board[geo.peers[c]].tolist())
            assert cand == {d}, f"cell {c} was no naked single"
        elif tech == HIDDEN:
            rows = [u for u in geo.units if c in u]
            ok = any(all(board[o] != 0 or d in board[geo.peers[o]] for o in u if o != c)
                     for u in rows)
            assert ok, f"cell {c} digit {d} was no hidden single"
        board[c] = d


@given(unique_puzzles())
def test_the_model_only_places_correct_digits_and_fills_every_cell(case):
    puzzle, solution = case
    solution = np.asarray(solution, dtype=np.int64)
    for seed in (1, 2):
        run = run_once(puzzle, solution, np.uint64(seed))
        _replay_checks(puzzle, solution, run)
        assert np.all(run.score[run.technique <= HIDDEN] == 0)
        assert np.all(run.score[run.technique >= REFUTATION] > 0)


@pytest.mark.parametrize("text", [EASY, MEDIUM, SA_HARD, HUMAN_HARD])
def test_replays_of_the_fixture_puzzles_are_legal(text):
    puzzle = parse(text)
    solution = solution_of(puzzle)
    _replay_checks(puzzle, solution, run_once(puzzle, solution, np.uint64(7)))


def test_same_seed_same_result_other_seed_other_order():
    puzzle = parse(SA_HARD)
    a, b, c = (human_model(puzzle, rng=s, runs=5) for s in (3, 3, 4))
    assert a.metrics() == b.metrics()
    assert all(np.array_equal(x.cells, y.cells) for x, y in zip(a.runs, b.runs))
    assert not all(np.array_equal(x.cells, y.cells) for x, y in zip(a.runs, c.runs))


def test_a_singles_only_puzzle_has_zero_refutation_metrics():
    result = human_model(parse(EASY), rng=1, runs=10)
    assert result.serate == 0 and result.refutation_sum == 0
    assert result.guesses == 0
    assert result.mean_options > 1


def test_metrics_order_easy_below_hard():
    easy = human_model(parse(MEDIUM), rng=1)
    hard = human_model(parse(SA_HARD), rng=1)
    hardest = human_model(parse(HUMAN_HARD), rng=1, runs=5)
    assert easy.refutation_sum < hard.refutation_sum < hardest.refutation_sum
    assert easy.serate < hardest.serate and hard.serate <= hardest.serate
    assert easy.mean_options > hard.mean_options


def test_median_fill_rank_covers_the_empty_cells():
    puzzle = parse(MEDIUM)
    result = human_model(puzzle, rng=2, runs=6)
    rank = result.median_fill_rank(puzzle.ncells)
    assert np.all(np.isnan(rank[puzzle.givens > 0]))
    assert np.all(rank[puzzle.givens == 0] >= 0)


def test_puzzles_without_a_unique_solution_are_refused():
    two = "." * 81
    with pytest.raises(PuzzleError, match="unique solution"):
        human_model(parse(two), rng=1)
    wrong = np.array([int(ch) for ch in EASY_SOLUTION])
    wrong[[0, 1]] = wrong[[1, 0]]
    with pytest.raises(PuzzleError, match="does not match"):
        human_model(parse(EASY), rng=1, solution=wrong)
    with pytest.raises(ValueError, match="runs"):
        human_model(parse(EASY), rng=1, runs=0)
