"""Backtracking (thesis §3.3) and the uniqueness check."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from fairgrid.solvers import Puzzle, parse, solves
from fairgrid.solvers.backtracking import (count_solutions, solve_backtracking,
                                           unique_solution)
from fairgrid.solvers.generator import random_puzzle

from ..fixtures import EASY, EASY_SOLUTION, HUMAN_HARD, MEDIUM, SA_HARD, SIXTEEN, puzzles

SOLUTION = np.array([int(ch) for ch in EASY_SOLUTION], dtype=np.int8)
NO_SOLUTION = "12345678." + "........9" + "." * 63  # r1c9 has no candidate left


def test_there_are_288_four_by_four_grids():
    assert count_solutions(Puzzle(2, np.zeros(16, np.int8)), limit=1000) == 288


@pytest.mark.parametrize("text", [EASY, MEDIUM, SA_HARD, HUMAN_HARD])
def test_test_puzzles_are_unique(text):
    puzzle = parse(text)
    assert count_solutions(puzzle) == 1
    assert solves(puzzle, unique_solution(puzzle))


def test_count_stops_at_the_limit_and_finds_none_when_there_is_none():
    empty = Puzzle(3, np.zeros(81, np.int8))
    assert count_solutions(empty, limit=2) == 2
    assert count_solutions(empty, limit=7) == 7
    assert unique_solution(empty) is None
    assert count_solutions(parse(NO_SOLUTION)) == 0
    with pytest.raises(ValueError, match="limit"):
        count_solutions(empty, limit=0)


def test_count_leaves_no_trace_on_the_puzzle():
    puzzle = parse(MEDIUM)
    before = puzzle.givens.copy()
    count_solutions(puzzle)
    assert np.array_equal(puzzle.givens, before)


def test_one_empty_cell_takes_as_many_steps_as_its_digit():
    # thesis §3.3: every suggested value 1..9 is a step, allowed or not
    for cell in (0, 40, 80):
        givens = SOLUTION.copy()
        givens[cell] = 0
        res = solve_backtracking(Puzzle(3, givens), rng=0)
        assert res.solved and res.steps == SOLUTION[cell]
        assert res.explored.tolist() == [cell]


def test_two_forced_cells_cost_the_sum_of_their_digits_in_either_order():
    givens = SOLUTION.copy()
    givens[[0, 80]] = 0
    for seed in range(6):
        res = solve_backtracking(Puzzle(3, givens), rng=seed)
        assert res.steps == SOLUTION[0] + SOLUTION[80]
        assert sorted(res.explored.tolist()) == [0, 80]


@given(puzzles(box_sizes=(2, 3), p_min=0.35, p_max=0.9), st.integers(0, 2 ** 32 - 1))
def test_backtracking_solutions_are_valid_and_explore_every_empty_cell(puzzle, seed):
    res = solve_backtracking(puzzle, rng=np.random.default_rng(seed), max_steps=5_000_000)
    if not res.solved:
        assert res.steps == 5_000_000 and "step cap" in res.message
        return
    assert solves(puzzle, res.solution)
    assert sorted(res.explored.tolist()) == puzzle.empty_cells.tolist()
    assert res.steps >= puzzle.empty_cells.size
    rank = res.exploration_rank()
    assert sorted(rank[puzzle.empty_cells].tolist()) == list(range(1, puzzle.empty_cells.size + 1))
    assert count_solutions(puzzle, limit=1) == 1


def test_first_explored_cell_has_fewest_candidates():
    from fairgrid.solvers import candidates

    puzzle = parse(MEDIUM)
    counts = candidates(puzzle.givens).sum(axis=1)
    fewest = counts[puzzle.empty_cells].min()
    firsts = {int(solve_backtracking(puzzle, rng=s).explored[0]) for s in range(20)}
    assert all(counts[c] == fewest for c in firsts)
    # ties are broken at random: on an empty grid every cell ties
    empty = Puzzle(3, np.zeros(81, np.int8))
    firsts = {int(solve_backtracking(empty, rng=s, max_steps=100).explored[0])
              for s in range(20)}
    assert len(firsts) > 10


def test_seeds_reproduce_and_differ():
    puzzle = parse(SA_HARD)
    a = solve_backtracking(puzzle, rng=np.random.default_rng(9))
    b = solve_backtracking(puzzle, rng=np.random.default_rng(9))
    assert a.steps == b.steps and np.array_equal(a.explored, b.explored)
    steps = {solve_backtracking(puzzle, rng=s).steps for s in range(5)}
    assert len(steps) > 1


def test_no_solution_and_cap_are_clean_results():
    res = solve_backtracking(parse(NO_SOLUTION), rng=0)
    assert not res.solved and res.message == "the puzzle has no solution"
    res = solve_backtracking(parse(HUMAN_HARD), rng=0, max_steps=500)
    assert not res.solved and res.steps == 500 and "step cap of 500" in res.message
    assert res.solution is None


def test_order_four_puzzle_solves():
    puzzle = random_puzzle(4, 0.6, rng=np.random.default_rng(2))
    res = solve_backtracking(puzzle, rng=0)
    assert res.solved and solves(puzzle, res.grid)


def test_sixteen_by_sixteen_needs_the_dynamic_order_and_it_is_seeded():
    puzzle = parse(SIXTEEN)
    fixed = solve_backtracking(puzzle, rng=0, max_steps=2_000_000, dynamic=False)
    assert not fixed.solved and "step cap" in fixed.message
    res = solve_backtracking(puzzle, rng=0, max_steps=2_000_000)  # dynamic from box size 4
    assert res.solved and solves(puzzle, res.solution)
    assert sorted(res.explored.tolist()) == puzzle.empty_cells.tolist()
    again = solve_backtracking(puzzle, rng=0, max_steps=2_000_000)
    assert again.steps == res.steps and np.array_equal(again.explored, res.explored)


@given(puzzles(box_sizes=(2, 3), p_min=0.35, p_max=0.9), st.integers(0, 2 ** 32 - 1))
def test_the_dynamic_order_solves_what_the_counter_solves(puzzle, seed):
    res = solve_backtracking(puzzle, rng=np.random.default_rng(seed), dynamic=True)
    assert res.solved == (count_solutions(puzzle, limit=1) == 1)
    if res.solved:
        assert solves(puzzle, res.solution)
        assert sorted(res.explored.tolist()) == puzzle.empty_cells.tolist()


def test_the_uniqueness_search_stops_at_its_cap_and_says_so():
    """A count the cap ends is neither "unique" nor "none": SearchLimitError, which the
    daemon turns into a 422; and the kernel leaves the GIL, so the daemon's event loop
    serves on while a thread runs it."""
    from fairgrid.solvers.backtracking import count_kernel, count_solutions
    from fairgrid.solvers.grid import SearchLimitError

    puzzle = parse(HUMAN_HARD)
    with pytest.raises(SearchLimitError, match="not settled after 5 placements"):
        count_solutions(puzzle, 2, max_nodes=5)
    assert count_solutions(puzzle, 2) == 1      # the default cap settles it
    assert count_kernel.targetoptions.get("nogil") is True
