"""Fill-order prediction (thesis §4.1): ranks, reproducibility across processes, caps."""

from __future__ import annotations

import numpy as np
import pytest

from fairgrid.solvers import Puzzle, parse
from fairgrid.solvers.generator import root_solution
from fairgrid.solvers.fill_order import predict_fill_order, summarize

from ..fixtures import EASY, SA_HARD


def test_prediction_ranks_every_free_cell_once():
    puzzle = parse(EASY)
    pred = predict_fill_order(puzzle, seed=1, runs=12)
    free = puzzle.empty_cells
    assert sorted(pred.rank[free].tolist()) == list(range(1, free.size + 1))
    assert (pred.rank[puzzle.givens != 0] == 0).all()
    assert np.isnan(pred.median_rank[puzzle.givens != 0]).all()
    assert (pred.median_rank[free] >= 1).all() and (pred.median_rank[free] <= free.size).all()
    assert (pred.spread[free] >= 0).all()
    assert pred.runs == 12 and pred.capped_runs == 0 and pred.median_steps > 0
    # the predicted order follows the median ranks
    by_rank = free[np.argsort(pred.rank[free])]
    assert np.all(np.diff(pred.median_rank[by_rank]) >= 0)


def test_same_seed_same_prediction_whatever_the_number_of_processes():
    puzzle = parse(EASY)
    one = predict_fill_order(puzzle, seed=7, runs=10, workers=1)
    two = predict_fill_order(puzzle, seed=7, runs=10, workers=2)
    single = predict_fill_order(puzzle, seed=7, runs=10, workers=2, batch=1)  # one run per task
    for other in (two, single):
        assert np.array_equal(one.steps, other.steps)
        assert np.array_equal(one.rank, other.rank)
        assert np.allclose(one.median_rank, other.median_rank, equal_nan=True)
    other = predict_fill_order(puzzle, seed=8, runs=10, workers=1)
    assert not np.array_equal(one.steps, other.steps)


def test_capped_runs_are_reported_and_policies_apply():
    puzzle = parse(SA_HARD)
    seen = []
    pred = predict_fill_order(puzzle, seed=0, runs=6, max_steps=20_000, progress=seen.append)
    assert sum(seen) == 6
    assert pred.capped_runs == 6 and (pred.steps == 20_000).all()
    assert pred.median_steps == 20_000
    # no run solved: the "solved" policy falls back to all runs, settled
    assert pred.capped == "solved" and pred.basis_runs == 6
    assert np.array_equal(pred.rank, pred.with_policy("settled").rank)
    free = puzzle.empty_cells
    for policy in ("solved", "settled", "raw"):
        ranks = pred.with_policy(policy).rank[free]
        assert sorted(ranks.tolist()) == list(range(1, free.size + 1))
    doc = pred.as_dict()
    assert doc["capped_runs"] == 6 and doc["median_steps_is_lower_bound"] is True
    assert doc["basis_runs"] == 6 and doc["capped_policy"] == "solved"
    assert len(doc["rank"]) == 9 and doc["rank"][0][0] is None  # r1c1 is a given


def test_solved_policy_uses_only_solved_runs_when_enough_solved():
    puzzle = parse(EASY)
    pred = predict_fill_order(puzzle, seed=3, runs=12, max_steps=100_000)  # 6 of 12 solve
    n_solved = pred.runs - pred.capped_runs
    assert 5 <= n_solved < 12  # the cap cuts some runs, not all
    assert pred.basis_runs == n_solved
    assert pred.with_policy("settled").basis_runs == 12


def test_budget_sets_the_step_cap():
    from fairgrid.solvers.fill_order import (REFERENCE_CORES, REFERENCE_STEPS_PER_S,
                                        steps_for_budget)

    assert steps_for_budget(60, 100) == 60 * REFERENCE_STEPS_PER_S * REFERENCE_CORES // 100
    pred = predict_fill_order(parse(SA_HARD), seed=0, runs=4, budget_s=0.002)
    assert pred.max_steps == steps_for_budget(0.002, 4) and pred.capped_runs == 4
    with pytest.raises(ValueError, match="budget_s"):
        steps_for_budget(0, 10)


def test_summarize_ranks_by_last_swap_step():
    # two free cells: cell 1 always settles before cell 0
    givens = root_solution(2)
    givens[[0, 1]] = 0
    puzzle = Puzzle(2, givens)
    free = puzzle.empty_cells.tolist()
    assert free == [0, 1]
    lasts = np.array([[50, 10], [40, 30], [90, 5]])
    pred = summarize(puzzle, lasts, lasts, np.array([1, 1, 1]), np.ones(3, bool),
                     schedule="thesis", max_steps=10, seed=0)
    assert pred.rank[:2].tolist() == [2, 1]
    assert pred.median_rank[:2].tolist() == [2.0, 1.0]


def test_bad_arguments():
    puzzle = parse(EASY)
    for kwargs, word in [({"runs": 0}, "runs"), ({"workers": 0}, "workers"),
                         ({"max_steps": 0}, "max_steps"), ({"schedule": "x"}, "schedule")]:
        with pytest.raises(ValueError, match=word):
            predict_fill_order(puzzle, **kwargs)


def test_capped_runs_rank_cells_holding_a_wrong_digit_last():
    from fairgrid.solvers.annealing import Model, run_kernel
    from fairgrid.solvers.backtracking import unique_solution
    from fairgrid.solvers.fill_order import settled_steps

    puzzle = parse(SA_HARD)
    free = puzzle.empty_cells
    solution = unique_solution(puzzle)
    res = run_kernel(Model.from_puzzle(puzzle), np.uint64(5), max_steps=30_000)
    assert not res.solved
    settled = settled_steps(res, free, solution, 30_000)
    wrong = res.grid[free] != solution[free]
    assert wrong.any() and (~wrong).any()
    assert (settled[wrong] == 30_001).all()
    assert np.array_equal(settled[~wrong], res.last_swap[free][~wrong])
    # without a solution (or for a solved run) the raw last-swap steps stand
    assert np.array_equal(settled_steps(res, free, None, 30_000), res.last_swap[free])


def test_capped_policy_is_checked():
    with pytest.raises(ValueError, match="capped"):
        predict_fill_order(parse(EASY), capped="drop")

