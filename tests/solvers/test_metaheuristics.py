"""Harmony search, hill climbing, constraint relaxation, SLIS levels and rate()."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from fairgrid.solvers import parse, solves
from fairgrid.solvers.backtracking import count_solutions
from fairgrid.solvers.grid import Puzzle, PuzzleError
from fairgrid.solvers.harmony import _fitness, harmony_metric, harmony_search, result_of
from fairgrid.solvers.hill_climbing import hill_climb, hill_metric
from fairgrid.solvers.levels import LEVEL_NAMES, level_of, slis, success_rating
from fairgrid.solvers.rate import METRICS, rate, rate_many
from fairgrid.solvers.relaxation import constraint_pairs, relaxation_metric, relaxed_count

from ..fixtures import EASY, EASY_SOLUTION, HUMAN_HARD, MEDIUM, SA_HARD, puzzles

GEEM = ("050306007000085024098420603901003206030000010507260908405090380010570002800104070")
ALL_FIVES = np.full(81, 5)
FIG_3_5 = np.array([int(ch) for ch in (
    "835465923" "265319874" "493827651" "577743219" "942186735"
    "317592486" "774651348" "654238197" "138974562")])


# ------------------------------------------------------------------------ harmony search

def test_sum45_fitness_has_false_zeros_the_missing_fitness_does_not():
    from fairgrid.solvers.grid import geometry
    units = geometry(3).units.astype(np.int64)
    seen = np.zeros(10, dtype=np.int64)
    solution = np.array([int(ch) for ch in EASY_SOLUTION])
    for grid in (ALL_FIVES, FIG_3_5):
        assert _fitness(grid, units, 9, 1, seen) == 0     # sum45 sees nothing wrong
        assert _fitness(grid, units, 9, 0, seen) > 0      # missing digits do
    assert _fitness(solution, units, 9, 0, seen) == 0
    assert _fitness(solution, units, 9, 1, seen) == 0


def test_a_sum45_zero_that_is_no_grid_is_reported_as_a_false_optimum():
    puzzle = parse("5" + "." * 80)
    false = result_of(puzzle, 0, 10, ALL_FIVES, "sum45")
    assert false.false_optimum and not false.solved
    solution = np.array([int(ch) for ch in EASY_SOLUTION])
    true = result_of(parse(EASY), 0, 10, solution, "sum45")
    assert true.solved and not true.false_optimum
    # a valid grid that drops a given is no solution of this puzzle either
    assert result_of(parse("1" + "." * 80), 0, 1, solution, "sum45").false_optimum


@given(puzzles(box_sizes=(2,), p_min=0.5))
@settings(max_examples=25)
def test_harmony_claims_success_only_for_valid_grids(puzzle):
    for fitness in ("missing", "sum45"):
        r = harmony_search(puzzle, rng=1, fitness=fitness, hms=10, max_imp=300)
        assert r.solved == (solves(puzzle, r.grid))
        assert np.array_equal(r.grid[puzzle.givens > 0], puzzle.givens[puzzle.givens > 0])
        if fitness == "missing":
            assert r.solved == (r.best_cost == 0)


def test_harmony_solves_geems_easy_puzzle_and_reproduces_seeds():
    puzzle = parse(GEEM)
    a = harmony_search(puzzle, rng=7, max_imp=20_000)
    b = harmony_search(puzzle, rng=7, max_imp=20_000)
    assert (a.best_cost, a.improvisations) == (b.best_cost, b.improvisations)
    assert np.array_equal(a.grid, b.grid)
    median, runs = harmony_metric(puzzle, rng=3, runs=3, max_imp=2000)
    hard, _ = harmony_metric(parse(HUMAN_HARD), rng=3, runs=3, max_imp=2000)
    assert median < hard


def test_harmony_rejects_bad_parameters():
    with pytest.raises(ValueError, match="fitness"):
        harmony_search(parse(EASY), rng=1, fitness="other")
    with pytest.raises(ValueError, match="hmcr"):
        harmony_search(parse(EASY), rng=1, hmcr=1.5)


# ---------------------------------------------------------------------- hill climbing

@given(puzzles(box_sizes=(2, 3), p_min=0.6))
@settings(max_examples=20)
def test_hill_climbing_claims_success_only_for_valid_grids(puzzle):
    r = hill_climb(puzzle, rng=2, max_iterations=3000)
    assert r.solved == solves(puzzle, r.grid)
    # blocks always hold every digit once (the state space of §3)
    from fairgrid.solvers.grid import geometry
    geo = geometry(puzzle.box_size)
    for cells in geo.units[2 * puzzle.size:]:
        assert sorted(r.grid[cells].tolist()) == list(range(1, puzzle.size + 1))


def test_hill_climbing_is_seeded_and_orders_easy_below_hard():
    a = hill_climb(parse(EASY), rng=5)
    b = hill_climb(parse(EASY), rng=5)
    assert a.solved and (a.iterations, a.restarts) == (b.iterations, b.restarts)
    easy, _, _ = hill_metric(parse(EASY), rng=1, runs=3)
    hard, _, _ = hill_metric(parse(SA_HARD), rng=1, runs=3, max_iterations=5000)
    assert easy < hard


# ------------------------------------------------------------------ constraint relaxation

def test_no_removal_counts_the_puzzles_own_solutions():
    assert relaxed_count(parse(EASY), np.empty((0, 2))) == 1
    four = parse("1" + "." * 15)
    assert relaxed_count(four, np.empty((0, 2))) == count_solutions(four, 1000)


def test_removing_a_constraint_can_only_add_solutions():
    puzzle = parse(MEDIUM)
    pairs = constraint_pairs(puzzle)
    assert np.all((puzzle.givens[pairs[:, 0]] == 0) | (puzzle.givens[pairs[:, 1]] == 0))
    rng = np.random.default_rng(0)
    removed = pairs[rng.choice(len(pairs), 45, replace=False)]
    assert relaxed_count(puzzle, removed[:10]) <= relaxed_count(puzzle, removed)
    assert relaxed_count(puzzle, removed[:10]) >= 1


def test_relaxation_metric_orders_easy_below_hard_and_reproduces():
    easy = relaxation_metric(parse(EASY), rng=1, removals=8)
    again = relaxation_metric(parse(EASY), rng=1, removals=8)
    hard = relaxation_metric(parse(MEDIUM), rng=1, removals=8)
    assert easy == again
    assert easy.mean_count < hard.mean_count


# ------------------------------------------------------------------------------- SLIS

def test_slis_reproduces_the_papers_worked_example():
    sr = success_rating(57, 23)
    assert round(sr, 2) == 0.55
    assert round(1 - sr, 2) == 0.45
    assert level_of(1 - sr) == 2 and LEVEL_NAMES[1] == "Easy"


def test_slis_level_table():
    assert [level_of(x) for x in (0.0, 0.3, 0.5, 0.6, 0.75, 0.8, 0.9, 0.95)] == \
        [1, 2, 2, 3, 3, 4, 4, 5]


def test_slis_is_seeded():
    a, b = slis(parse(MEDIUM), rng=4), slis(parse(MEDIUM), rng=4)
    assert a == b and 1 <= a.level <= 5 and 0 <= a.difficulty_coefficient <= 1


# ------------------------------------------------------------------------------- rate()

def test_rate_returns_every_metric_and_orders_easy_below_hard():
    easy = rate(parse(EASY), rng=1, runs=0.3, budget_s=0.2)
    hard = rate(parse(SA_HARD), rng=1, runs=0.3, budget_s=0.2)
    assert set(easy.metrics) == set(METRICS)
    for name in ("refutation_sum", "sa_steps", "backtrack_steps", "relaxation_log10"):
        assert easy.metrics[name] < hard.metrics[name], name
    assert rate(parse(EASY), rng=1, runs=0.3, budget_s=0.2).metrics == easy.metrics


def test_rate_many_keeps_input_order_reports_errors_and_ignores_jobs():
    items = [MEDIUM, "." * 81, EASY]
    one = list(rate_many(items, seed=3, runs=0.2, budget_s=0.1, workers=1, only=("human",)))
    two = list(rate_many(items, seed=3, runs=0.2, budget_s=0.1, workers=2, only=("human",)))
    assert one[1][0] is None and "unique" in one[1][1]
    assert [r.metrics if r else e for r, e in one] == [r.metrics if r else e for r, e in two]
    assert one[2][0].metrics["givens"] == 32


def test_rate_refuses_bad_arguments():
    with pytest.raises(ValueError, match="families"):
        rate(parse(EASY), rng=1, only=("nope",))
    with pytest.raises(PuzzleError):
        rate(parse("." * 81), rng=1)
