"""Fill-order prediction (thesis §4.1): ranks, reproducibility across processes, caps."""

from __future__ import annotations

import numpy as np
import pytest

from fairgrid.solvers import Puzzle, parse
from fairgrid.solvers.generator import root_solution
from fairgrid.solvers.order import predict_order, summarize

from ..fixtures import EASY, SA_HARD


def test_prediction_ranks_every_free_cell_once():
    puzzle = parse(EASY)
    pred = predict_order(puzzle, seed=1, runs=12)
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
    one = predict_order(puzzle, seed=7, runs=10, jobs=1)
    two = predict_order(puzzle, seed=7, runs=10, jobs=2)
    assert np.array_equal(one.steps, two.steps)
    assert np.array_equal(one.rank, two.rank)
    assert np.allclose(one.median_rank, two.median_rank, equal_nan=True)
    other = predict_order(puzzle, seed=8, runs=10, jobs=1)
    assert not np.array_equal(one.steps, other.steps)


def test_capped_runs_are_kept_and_reported():
    puzzle = parse(SA_HARD)
    seen = []
    pred = predict_order(puzzle, seed=0, runs=6, max_steps=20_000, progress=seen.append)
    assert sum(seen) == 6
    assert pred.capped_runs == 6 and (pred.steps == 20_000).all()
    assert pred.median_steps == 20_000
    free = puzzle.empty_cells
    assert sorted(pred.rank[free].tolist()) == list(range(1, free.size + 1))
    doc = pred.as_dict()
    assert doc["capped_runs"] == 6 and doc["median_steps_is_lower_bound"] is True
    assert len(doc["rank"]) == 9 and doc["rank"][0][0] is None  # r1c1 is a given


def test_summarize_ranks_by_last_swap_step():
    # two free cells: cell 1 always settles before cell 0
    givens = root_solution(2)
    givens[[0, 1]] = 0
    puzzle = Puzzle(2, givens)
    free = puzzle.empty_cells.tolist()
    assert free == [0, 1]
    lasts = np.array([[50, 10], [40, 30], [90, 5]])
    pred = summarize(puzzle, lasts, np.array([1, 1, 1]), np.ones(3, bool),
                     schedule="thesis", max_steps=10, seed=0)
    assert pred.rank[:2].tolist() == [2, 1]
    assert pred.median_rank[:2].tolist() == [2.0, 1.0]


def test_bad_arguments():
    puzzle = parse(EASY)
    for kwargs, word in [({"runs": 0}, "runs"), ({"jobs": 0}, "jobs"),
                         ({"max_steps": 0}, "max_steps"), ({"schedule": "x"}, "schedule")]:
        with pytest.raises(ValueError, match=word):
            predict_order(puzzle, **kwargs)
