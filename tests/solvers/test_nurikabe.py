"""Nurikabe: the model, the thesis' solvers (Křivánek 2011, §4.2), the propagation model.

The fixtures are small puzzles of our own (made by the generator, each solution checked
by exhaustive enumeration when they were written; the small ones are enumerated again
here); the tests never read ../shared.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairgrid.solvers.nurikabe import (METRICS, RULES, NurikabeError, NurikabePuzzle,
                                       SearchLimitError, check, cost, cost_parts,
                                       count_solutions, deducible, deductions,
                                       format_nurikabe, format_solution, generate_nurikabe,
                                       harmony_metric, harmony_search, is_solution,
                                       parse_nurikabe, parse_solution, propagate,
                                       rate_nurikabe, sa_metric, solve_bruteforce, solve_sa,
                                       start_state, static_metrics, unique_solution)
from fairgrid.solvers.nurikabe.annealing import SAModel, run_kernel
from fairgrid.solvers.nurikabe.bruteforce import bruteforce_metric, island_order

# (puzzle, its unique solution)
SMALL = ("4x5:.2......2......1.1..", "4x5:#o####o#o####o#o#o##")
CORNERS = ("5x5:1......2.1......2.......2", "5x5:o#####oo#o######oo#o####o")
STALLS = ("5x5:...1........6............", "5x5:###o##o####ooo##o#o######")
MEDIUM = ("6x6:.......1.3....2.........2..4........",
          "6x6:#######o#oo###o#o#o#o###o##oo###oo##")
LARGER = ("7x7:1...........1..1........5.........2.2...4........",
          "7x7:o########oo#o##o#oo#####o##o#o##o#o#o#ooo########")
UNIQUE = (SMALL, CORNERS, STALLS, MEDIUM, LARGER)
# puzzles with several solutions (counted by enumeration) and one with none
SEVERAL = {"1x3:.2.": 2, "3x3:2.......2": 2, "3x3:....2....": 4}
NONE = "4x4:3..............3"


def enumerate_solutions(puzzle: NurikabePuzzle) -> list[np.ndarray]:
    """Every solution, by trying every colouring of the cells without a clue."""
    free = np.flatnonzero(puzzle.clues == 0)
    assert free.size <= 14, "too many cells to enumerate"
    found = []
    for bits in itertools.product((0, 1), repeat=free.size):
        grid = np.zeros(puzzle.ncells, np.int8)
        grid[free] = bits
        if is_solution(puzzle, grid):
            found.append(grid.reshape(puzzle.shape))
    return found


@st.composite
def generated(draw, sizes=((4, 4), (4, 5), (5, 5), (5, 6), (6, 6))):
    """A generated puzzle with a unique solution, and the solution."""
    rows, cols = draw(st.sampled_from(sizes))
    puzzle = generate_nurikabe(rows, cols, draw(st.integers(0, 2 ** 32 - 1)))
    return puzzle, unique_solution(puzzle)


# ------------------------------------------------------------------------ text format

@st.composite
def puzzles_text(draw):
    rows, cols = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    n = rows * cols
    cells = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=max(1, n // 3),
                          unique=True))
    clues = np.zeros(n, np.int16)
    for c in cells:
        clues[c] = draw(st.integers(1, min(35, n)))
    if clues.sum() > n:          # too much: every clue 1 (at most n // 3 of them)
        clues[cells] = 1
    return NurikabePuzzle(rows, cols, clues)


@given(puzzles_text())
def test_puzzle_text_round_trips(puzzle):
    text = format_nurikabe(puzzle)
    assert parse_nurikabe(text) == puzzle
    assert str(puzzle) == text
    assert hash(parse_nurikabe(text)) == hash(puzzle)


@given(st.integers(1, 6), st.integers(1, 6), st.data())
def test_solution_text_round_trips(rows, cols, data):
    grid = np.array(data.draw(st.lists(st.integers(0, 1), min_size=rows * cols,
                                       max_size=rows * cols)), np.int8).reshape(rows, cols)
    text = format_solution(grid)
    assert np.array_equal(parse_solution(text), grid)
    assert format_solution(grid.reshape(-1), shape=(rows, cols)) == text


def test_parser_reads_rows_upper_case_and_large_clues():
    text = "6x6:\n.Z....\n" + "......\n" * 4 + ".....1\n"
    puzzle = parse_nurikabe(text)
    assert puzzle.shape == (6, 6)
    assert puzzle.clues[1] == 35 and puzzle.clues[35] == 1 and puzzle.clues.sum() == 36
    assert format_nurikabe(puzzle) == "6x6:.z" + "." * 33 + "1"


@pytest.mark.parametrize("text, message", [
    ("....", "starts with 'ROWSxCOLS:'"),
    ("3y3:.........", "bad size '3y3'"),
    ("0x3:", "at least one row"),
    ("3x3:........", "has 9 cells, got 8"),
    ("3x3:....%....", r"bad character '%' at r2c2"),
    ("3x3:..0......", "clue 0 at r1c3"),
    ("3x3:.........", "at least one clue"),
    ("2x2:5...", "clues sum to 5, more than the grid's 4 cells"),
    ("\u00b2x2:1...", "bad size"),            # a superscript two: isdigit() but no int
    ("\u0664x1:1...", "bad size"),            # an Arabic-Indic four: ASCII digits only
    ("1x1501:1" + "." * 1500, "at most 1,500 cells"),
])
def test_bad_puzzle_text_is_refused_with_the_problem_named(text, message):
    with pytest.raises(NurikabeError, match=message):
        parse_nurikabe(text)


def test_bad_solutions_and_grids_are_refused():
    with pytest.raises(NurikabeError, match=r"bad character '\.' at r1c2"):
        parse_solution("2x2:#.##")
    with pytest.raises(NurikabeError, match="has 4 cells, got 3"):
        parse_solution("2x2:###")
    puzzle = parse_nurikabe(SMALL[0])
    with pytest.raises(NurikabeError, match="has 20 cells"):
        check(puzzle, np.zeros(19))
    with pytest.raises(NurikabeError, match="1 \\(river\\) and 0"):
        check(puzzle, np.full(20, 2))
    with pytest.raises(NurikabeError, match="out of range"):
        NurikabePuzzle(1, 2, np.array([36, 0]))
    assert issubclass(NurikabeError, ValueError)


# ------------------------------------------------------------------------------ rules

def test_the_fixtures_are_solutions():
    for text, sol in UNIQUE:
        assert check(parse_nurikabe(text), parse_solution(sol)) == []


@pytest.mark.parametrize("puzzle, grid, message", [
    # 3x3, clue 1 in the middle: the ring around it is river
    ("3x3:....1....", "###" "#o#" "###", None),
    ("3x3:....1....", "###" "###" "###", "clue 1 at r2c2 is shaded"),
    ("3x3:....1....", "o##" "#o#" "###", "island of 1 cell(s) at r1c1 has no clue"),
    ("3x3:....1....", "#o#" "#o#" "###", "island of clue 1 at r2c2 has 2 cells"),
    ("3x3:1...1....", "oo#" "#o#" "###", "joins the clues at r1c1, r2c2"),
    ("3x3:.2.....1.", "#o#" "#o#" "#o#", "river is split into 2 parts"),
    ("3x3:......1..", "###" "###" "o##", "2x2 pool at r1c1-r2c2"),
])
def test_check_names_each_broken_rule(puzzle, grid, message):
    p = parse_nurikabe(puzzle)
    problems = check(p, np.array([ch == "#" for ch in grid], np.int8).reshape(3, 3))
    if message is None:
        assert problems == [] and is_solution(p, parse_solution("3x3:" + grid))
    else:
        assert any(message in m for m in problems), problems
        assert not is_solution(p, parse_solution("3x3:" + grid))


@given(generated(), st.data())
@settings(max_examples=30)
def test_the_cost_kernel_matches_the_plain_parts(case, data):
    puzzle, solution = case
    bits = data.draw(st.lists(st.integers(0, 1), min_size=puzzle.ncells,
                              max_size=puzzle.ncells))
    grid = np.array(bits, np.int8)
    parts = cost_parts(puzzle, grid)
    assert cost(puzzle, grid) == sum(parts.values())
    assert cost(puzzle, solution) == 0
    # with the right number of white cells, cost 0 means a solution
    if (grid == 0).sum() == puzzle.white_total and cost(puzzle, grid) == 0:
        assert is_solution(puzzle, grid)


# ------------------------------------------------------------------------ exact search

@pytest.mark.parametrize("text, sol", UNIQUE)
def test_brute_force_finds_the_known_solution(text, sol):
    puzzle = parse_nurikabe(text)
    result = solve_bruteforce(puzzle, rng=3)
    assert result.solved and result.steps >= 1
    assert np.array_equal(result.grid, parse_solution(sol))
    assert np.array_equal(unique_solution(puzzle), parse_solution(sol))
    assert count_solutions(puzzle) == 1


def test_brute_force_expands_islands_in_ascending_size_and_is_seeded():
    puzzle = parse_nurikabe(LARGER[0])
    order = island_order(puzzle, 5)
    assert np.all(np.diff(puzzle.clues[order]) >= 0)
    a, b = solve_bruteforce(puzzle, rng=5), solve_bruteforce(puzzle, rng=5)
    assert a.steps == b.steps and np.array_equal(a.order, b.order)
    orders = {tuple(island_order(puzzle, s)) for s in range(20)}
    assert len(orders) > 1                       # ties (the 1s and 2s) are shuffled
    median, solved, runs = bruteforce_metric(puzzle, rng=1, runs=3)
    assert solved == 1.0 and median == np.median([r.steps for r in runs])


def test_counts_agree_with_enumeration():
    for text, expected in SEVERAL.items():
        puzzle = parse_nurikabe(text)
        assert len(enumerate_solutions(puzzle)) == expected
        assert count_solutions(puzzle, limit=10) == expected
        assert count_solutions(puzzle) == 2      # counted up to the default limit
        assert unique_solution(puzzle) is None
        assert solve_bruteforce(puzzle, rng=1).solved   # it stops at the first
    none = parse_nurikabe(NONE)
    assert enumerate_solutions(none) == [] and count_solutions(none) == 0
    result = solve_bruteforce(none, rng=1)
    assert not result.solved and result.message == "the puzzle has no solution"


def test_counts_from_the_propagated_state_are_exact():
    """The count starts from what the propagation rules deduce; on random clue layouts,
    with none, one or many solutions, it is what trying every colouring finds (so no
    rule claims what some solution does not have)."""
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(120):
        rows, cols = [(3, 3), (3, 4), (2, 6), (4, 3)][rng.integers(4)]
        clues = np.zeros(rows * cols, np.int64)
        for c in rng.choice(rows * cols, rng.integers(1, 4), replace=False):
            clues[c] = rng.integers(1, 5)
        if clues.sum() > rows * cols:
            continue
        puzzle = NurikabePuzzle(rows, cols, clues)
        truth = len(enumerate_solutions(puzzle))
        assert count_solutions(puzzle, limit=100) == truth, format_nurikabe(puzzle)
        seen.add(min(truth, 2))
    assert seen == {0, 1, 2}  # layouts of every kind were met


def test_adjacent_clues_have_no_solution():
    assert count_solutions(parse_nurikabe("2x3:12....")) == 0


def test_caps_stop_the_searches():
    puzzle = parse_nurikabe(LARGER[0])
    capped = solve_bruteforce(puzzle, rng=1, max_steps=2)
    assert not capped.solved and capped.steps == 2 and "step cap" in capped.message
    with pytest.raises(SearchLimitError, match="not settled after 2 steps"):
        count_solutions(puzzle, max_steps=2)


# ------------------------------------------------------------------------- annealing

@pytest.mark.parametrize("text, sol", UNIQUE)
def test_sa_solves_the_fixtures(text, sol):
    puzzle = parse_nurikabe(text)
    result = solve_sa(puzzle, rng=11)
    assert result.solved and result.cost == 0 and result.message == "solved"
    assert np.array_equal(result.grid, parse_solution(sol))
    assert (result.last_swap.reshape(-1)[puzzle.clue_cells] == -1).all()
    assert result.last_swap.max() <= result.steps


def test_sa_is_seeded_and_keeps_its_invariants_when_capped():
    puzzle = parse_nurikabe(LARGER[0])
    a, b = solve_sa(puzzle, rng=4, max_steps=500), solve_sa(puzzle, rng=4, max_steps=500)
    assert (a.steps, a.cost, a.reheats) == (b.steps, b.cost, b.reheats)
    assert np.array_equal(a.grid, b.grid) and np.array_equal(a.last_swap, b.last_swap)
    assert not a.solved and a.steps == 500 and "step cap of 500" in a.message
    assert a.cost == cost(puzzle, a.grid)        # the kernel's running cost is exact
    assert (a.grid == 0).sum() == puzzle.white_total
    assert (a.grid.reshape(-1)[puzzle.clue_cells] == 0).all()
    fast = solve_sa(puzzle, rng=4, alpha=0.99, max_steps=3000)
    assert fast.reheats > 0                      # cools below t_min and reheats
    gen = run_kernel(SAModel.from_puzzle(puzzle), 123, max_steps=300)
    again = run_kernel(SAModel.from_puzzle(puzzle), 123, max_steps=300)
    assert np.array_equal(gen.grid, again.grid)
    median, solved, runs = sa_metric(puzzle, rng=2, runs=3)
    assert solved == 1.0 and median == np.median([r.steps for r in runs])


def test_sa_rejects_bad_parameters():
    puzzle = parse_nurikabe(SMALL[0])
    with pytest.raises(ValueError, match="alpha"):
        solve_sa(puzzle, rng=1, alpha=1.5)
    with pytest.raises(ValueError, match="t_min"):
        solve_sa(puzzle, rng=1, t0=0.01)
    with pytest.raises(TypeError, match="rng is required"):
        solve_sa(puzzle, rng=None)


# --------------------------------------------------------------------- harmony search

def test_harmony_search_is_seeded_and_reports_false_optima():
    puzzle = parse_nurikabe(MEDIUM[0])
    a = harmony_search(puzzle, rng=9, max_imp=2000)
    b = harmony_search(puzzle, rng=9, max_imp=2000)
    assert (a.best_cost, a.improvisations) == (b.best_cost, b.improvisations)
    assert np.array_equal(a.grid, b.grid)
    assert a.best_cost == cost(puzzle, a.grid)
    assert (a.grid.reshape(-1)[puzzle.clue_cells] == 0).all()
    # a clueless white cell costs nothing: a zero that is no solution
    ring = parse_nurikabe("3x3:....1....")
    corner = parse_solution("3x3:o###o####")
    assert cost(ring, corner) == 0 and not is_solution(ring, corner)
    runs = [harmony_search(ring, rng=s, hms=10, max_imp=500) for s in range(8)]
    for r in runs:
        assert r.solved == is_solution(ring, r.grid)
        assert r.false_optimum == (r.best_cost == 0 and not r.solved)
    assert any(r.best_cost == 0 for r in runs)
    median, _ = harmony_metric(puzzle, rng=1, runs=3, max_imp=1000)
    assert median > 0
    # a trivial puzzle (no false optimum: a free white cell would cut the river) is solved
    trivial = harmony_search(parse_nurikabe("2x2:1..."), rng=2)
    assert trivial.solved and np.array_equal(trivial.grid, parse_solution("2x2:o###"))


def test_harmony_rejects_bad_parameters():
    with pytest.raises(ValueError, match="hmcr"):
        harmony_search(parse_nurikabe(SMALL[0]), rng=1, hmcr=2)


# ------------------------------------------------------------------ propagation model

def test_propagation_solves_the_easy_fixtures_step_by_step():
    for text, sol in (SMALL, CORNERS, MEDIUM, LARGER):
        puzzle, solution = parse_nurikabe(text), parse_solution(sol)
        result = propagate(puzzle)
        assert result.solved and not result.stalled and result.hints == 0
        assert np.array_equal(result.state, solution)
        decided = [c for s in result.steps for c in s.cells]
        assert sorted(decided) == np.flatnonzero(puzzle.clues == 0).tolist()
        assert all(solution.reshape(-1)[c] == s.colour for s in result.steps
                   for c in s.cells)
    first = propagate(parse_nurikabe(CORNERS[0])).steps[0]
    assert first.rule == "complete island" and first.cells == (1, 5)  # the 1 at r1c1


def test_propagation_says_where_it_stalls_and_hints_finish():
    puzzle, solution = parse_nurikabe(STALLS[0]), parse_solution(STALLS[1])
    alone = propagate(puzzle)
    assert alone.stalled and not alone.solved and alone.unknown > 0
    known = alone.state != -1
    assert np.array_equal(alone.state[known], solution[known])
    helped = propagate(puzzle, solution=solution)
    assert helped.solved and helped.hints >= 1 and helped.hardest == RULES.index("hint")
    assert np.array_equal(helped.state, solution)


def test_deducible_at_this_moment():
    puzzle, solution = parse_nurikabe(CORNERS[0]), parse_solution(CORNERS[1])
    state = start_state(puzzle)
    assert deducible(puzzle, state, 1) and deducible(puzzle, state, 5)  # next to the 1
    forced = deductions(puzzle, state)
    assert forced.rule.reshape(-1)[1] == RULES.index("complete island")
    # r3c3, next to the 2 at r2c3, may still belong to it: not forced at the start
    assert not deducible(puzzle, state, 12)
    known = forced.colour != -1
    assert np.array_equal(forced.colour[known], solution[known])
    with pytest.raises(NurikabeError, match="cannot be river"):
        deducible(puzzle, np.ones(25, np.int8), 3)
    with pytest.raises(NurikabeError, match="outside"):
        deducible(puzzle, state, 25)


@given(generated(), st.data())
@settings(max_examples=40)
def test_the_rules_never_decide_against_the_solution(case, data):
    puzzle, solution = case
    flat = solution.reshape(-1)
    # from the start, alone and with hints
    alone = propagate(puzzle)
    known = alone.state != -1
    assert np.array_equal(alone.state[known], solution[known])
    helped = propagate(puzzle, solution=solution)
    assert helped.solved and np.array_equal(helped.state, solution)
    # and from any partial state a player could reach without a mistake
    shown = data.draw(st.lists(st.booleans(), min_size=puzzle.ncells,
                               max_size=puzzle.ncells))
    state = np.where(np.array(shown), flat, -1).astype(np.int8)
    forced = deductions(puzzle, state).colour.reshape(-1)
    hit = forced != -1
    assert np.array_equal(forced[hit], flat[hit])
    assert not hit[state != -1].any()            # only unknown cells are decided


# ------------------------------------------------------- generator, metrics, rating

@given(st.sampled_from([(3, 3), (4, 5), (5, 5), (6, 6)]), st.integers(0, 2 ** 32 - 1))
@settings(max_examples=20)
def test_generated_puzzles_are_unique_and_seeded(shape, seed):
    puzzle = generate_nurikabe(*shape, seed)
    assert puzzle.shape == shape
    assert puzzle == generate_nurikabe(*shape, seed)
    assert (generate_nurikabe(*shape, np.random.default_rng(seed))
            == generate_nurikabe(*shape, np.random.default_rng(seed)))
    assert count_solutions(puzzle) == 1
    assert check(puzzle, unique_solution(puzzle)) == []


def test_generated_small_puzzles_agree_with_enumeration():
    for seed in range(6):
        puzzle = generate_nurikabe(3, 4, seed)
        found = enumerate_solutions(puzzle)
        assert len(found) == 1 and np.array_equal(found[0], unique_solution(puzzle))


def test_static_metrics_by_hand():
    m = static_metrics(parse_nurikabe("3x4:3......2...."))
    # the 3 at r1c1 reaches 2 cells out, the 2 at r2c4 one cell (r1c4, r2c3, r3c4), all
    # of them 3 or more from the 3: nothing shared; the clues are 4 apart
    assert m == {"cells": 12.0, "n_islands": 2.0, "island_area": 5.0,
                 "island_area_fraction": 5 / 12, "island_distance": 4.0,
                 "multi_island_cells": 0.0}
    shared = static_metrics(parse_nurikabe("3x4:3..3........"))
    # 3s at r1c1 and r1c4 reach 2 cells out: r1c2 and r1c3 lie within reach of both
    # (distances 1 and 2); r2c2 and r2c3 are 3 from one of them
    assert shared["multi_island_cells"] == 2.0 and shared["island_distance"] == 3.0


def test_rate_gives_every_metric_finite_and_seeded():
    puzzle = parse_nurikabe(MEDIUM[0])
    a = rate_nurikabe(puzzle, 7, runs=2, sa_max_steps=50_000, bf_max_steps=10_000,
                      hs_max_imp=500)
    b = rate_nurikabe(puzzle, 7, runs=2, sa_max_steps=50_000, bf_max_steps=10_000,
                      hs_max_imp=500, solution=parse_solution(MEDIUM[1]))
    assert tuple(a) == METRICS and a == b
    assert all(isinstance(v, float) and math.isfinite(v) for v in a.values())
    assert a["prop_unknown"] == 0 and a["prop_hints"] == 0 and a["bf_solved_fraction"] == 1
    with pytest.raises(NurikabeError, match="no unique solution"):
        rate_nurikabe(parse_nurikabe("3x3:2.......2"), 1, runs=1, bf_max_steps=1)


def test_a_count_on_a_large_grid_stops_at_its_work_budget(monkeypatch):
    """The cap of a count shrinks with the grid (a step costs in proportion to the
    cells): the fixed cap on small grids, fewer steps past COUNT_WORK cell-steps."""
    from fairgrid.solvers.nurikabe import bruteforce
    from fairgrid.solvers.nurikabe.bruteforce import count_cap

    small, large = parse_nurikabe("3x3:1......5."), parse_nurikabe("20x20:z" + "." * 399)
    assert count_cap(small) == bruteforce.DEFAULT_MAX_STEPS
    assert count_cap(large) == bruteforce.COUNT_WORK // 400 < bruteforce.DEFAULT_MAX_STEPS
    monkeypatch.setattr(bruteforce, "COUNT_WORK", 400 * 20_000)  # a cap quick to reach
    for count in (count_solutions, unique_solution):
        with pytest.raises(SearchLimitError, match="after 20000 steps"):
            count(large)
