"""The human technique model: each technique on a constructed candidate grid where it
is the only way forward, soundness on real puzzles, and the features."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from fairgrid.solvers import parse
from fairgrid.solvers.grid import PuzzleError
from fairgrid.solvers.propagation import solution_of
from fairgrid.solvers.rate import families_for, rate
from fairgrid.solvers.techniques import (CLASSES, FEATURES, LADDER, SINGLES, Board, Step,
                                         claiming, hidden_pair, hidden_quad, hidden_triple,
                                         jellyfish, naked_pair, naked_quad, naked_triple,
                                         pointing, take_single,
                                         simple_colouring, singles, solve_with_techniques,
                                         swordfish, technique_features, technique_needed,
                                         x_wing, xy_chain, xy_wing, xyz_wing)

from ..fixtures import EASY, HUMAN_HARD, MEDIUM, SIXTEEN, unique_puzzles


def cell(r: int, c: int) -> int:
    return 9 * r + c


def board(**restrict) -> Board:
    """An empty 9×9 candidate grid (every digit everywhere) with some cells narrowed:
    ``r0c4="13"`` leaves r0c4 the candidates 1 and 3."""
    b = Board(3)
    for name, digits in restrict.items():
        r, c = int(name[1]), int(name[3])
        b.cand[cell(r, c)] = sum(1 << (int(d) - 1) for d in digits)
    return b


def without(b: Board, digit: int, cells) -> Board:
    for c in cells:
        b.eliminate(c, digit)
    return b


def only_way(b: Board, technique) -> set[tuple[int, int]]:
    """The technique's eliminations, after checking that no single and no technique
    before it on the ladder makes progress on ``b``."""
    assert singles(b) == []
    for earlier in LADDER[:LADDER.index(technique)]:
        assert earlier(b) is None, f"{earlier.__name__} already progresses"
    step = technique(b)
    assert step is not None
    return set(step.eliminations)


def test_pointing_a_block_digit_on_one_line_leaves_the_rest_of_the_line():
    b = without(board(), 1, [cell(r, c) for r in (1, 2) for c in range(3)] + [cell(0, 2)])
    gone = only_way(b, pointing)
    assert gone == {(cell(0, c), 1) for c in range(3, 9)}


def test_claiming_a_line_digit_in_one_block_leaves_the_rest_of_the_block():
    b = without(board(), 1, [cell(0, c) for c in range(3, 9)])
    gone = only_way(b, claiming)
    assert gone == {(cell(r, c), 1) for r in (1, 2) for c in range(3)}


def test_naked_pair_clears_its_two_digits_from_the_unit():
    b = board(r0c0="12", r0c4="12")
    gone = only_way(b, naked_pair)
    assert gone == {(cell(0, c), d) for c in range(9) if c not in (0, 4) for d in (1, 2)}


def test_x_wing_clears_the_digit_from_its_two_columns():
    b = without(board(), 1, [cell(r, c) for r in (0, 4) for c in range(9) if c not in (0, 4)])
    gone = only_way(b, x_wing)
    assert gone == {(cell(r, c), 1) for r in range(9) if r not in (0, 4) for c in (0, 4)}


def test_hidden_pair_clears_the_other_digits_of_its_cells():
    b = without(without(board(), 1, [cell(0, c) for c in range(9) if c not in (0, 4)]), 2,
                [cell(0, c) for c in range(9) if c not in (0, 4)])
    gone = only_way(b, hidden_pair)
    assert gone == {(c, d) for c in (cell(0, 0), cell(0, 4)) for d in range(3, 10)}


def test_naked_triple_of_pairs_clears_three_digits():
    b = board(r0c0="12", r0c4="23", r0c8="13")
    gone = only_way(b, naked_triple)
    assert gone == {(cell(0, c), d) for c in range(9) if c not in (0, 4, 8) for d in (1, 2, 3)}


def test_swordfish_clears_the_digit_from_its_three_columns():
    keep = {0: (0, 4), 4: (4, 8), 8: (0, 8)}
    b = without(board(), 1, [cell(r, c) for r, cs in keep.items() for c in range(9)
                             if c not in cs])
    gone = only_way(b, swordfish)
    assert gone == {(cell(r, c), 1) for r in range(9) if r not in keep for c in (0, 4, 8)}


def test_naked_quad_clears_four_digits():
    b = board(r0c0="12", r0c2="23", r0c4="34", r0c8="14")
    gone = only_way(b, naked_quad)
    assert gone == {(cell(0, c), d) for c in range(9) if c not in (0, 2, 4, 8)
                    for d in (1, 2, 3, 4)}


def test_hidden_quad_clears_the_other_digits_of_its_cells():
    # each digit's two places in different blocks, or claiming would come first
    places = {1: (0, 3), 2: (3, 6), 3: (6, 4), 4: (4, 0)}
    b = board()
    for d, cs in places.items():
        without(b, d, [cell(0, c) for c in range(9) if c not in cs])
    gone = only_way(b, hidden_quad)
    assert gone == {(cell(0, c), d) for c in (0, 3, 4, 6) for d in range(5, 10)}


def test_jellyfish_clears_the_digit_from_its_four_columns():
    # rows 0 and 1 share a band; their columns reach every block of it (else pointing)
    keep = {0: (0, 3), 1: (3, 6), 3: (6, 4), 6: (4, 0)}
    b = without(board(), 1, [cell(r, c) for r, cs in keep.items() for c in range(9)
                             if c not in cs])
    gone = only_way(b, jellyfish)
    assert gone == {(cell(r, c), 1) for r in range(9) if r not in keep
                    for c in (0, 3, 4, 6)}


def test_fish_on_columns_and_locked_candidates_from_columns():
    # an x-wing on columns 0 and 4 clears rows 0 and 4
    b = without(board(), 1, [cell(r, c) for c in (0, 4) for r in range(9) if r not in (0, 4)])
    assert set(only_way(b, x_wing)) == {(cell(r, c), 1) for r in (0, 4)
                                         for c in range(9) if c not in (0, 4)}
    # pointing into a column: digit 1 of block 0 only in column 0
    b = without(board(), 1, [cell(r, c) for r in range(3) for c in (1, 2)] + [cell(2, 0)])
    assert set(only_way(b, pointing)) == {(cell(r, 0), 1) for r in range(3, 9)}
    # claiming from a column: digit 1 of column 0 only in block 0
    b = without(board(), 1, [cell(r, 0) for r in range(3, 9)])
    assert set(only_way(b, claiming)) == {(cell(r, c), 1) for r in range(3) for c in (1, 2)}


def test_every_technique_at_every_stuck_point_of_a_hard_puzzle_is_sound():
    # not only the first that progresses: each rung of the ladder, wherever it applies
    puzzle = parse(HUMAN_HARD)
    solution = solution_of(puzzle)
    b = Board.of(puzzle)
    checked = 0
    while not b.solved:
        step = take_single(b)
        if step is None:
            for technique in LADDER:
                found = technique(b)
                if found is not None:
                    checked += 1
                    assert all(solution[c] != d for c, d in found.eliminations), found
            step = next((s for s in (t(b) for t in LADDER) if s is not None), None)
            if step is None:
                c = next(c for c, m in enumerate(b.cand) if m)
                step = Step("guess", placements=((c, int(solution[c])),))
        b.apply(step)
    assert checked >= 20


def test_hidden_triple_clears_the_other_digits_of_its_cells():
    places = {1: (0, 4), 2: (4, 8), 3: (0, 8)}
    b = board()
    for d, cs in places.items():
        without(b, d, [cell(0, c) for c in range(9) if c not in cs])
    gone = only_way(b, hidden_triple)
    assert gone == {(cell(0, c), d) for c in (0, 4, 8) for d in range(4, 10)}


def test_xy_wing_clears_z_where_both_pincers_are_seen():
    b = board(r0c0="12", r0c4="13", r4c0="23")
    gone = only_way(b, xy_wing)
    assert gone == {(cell(4, 4), 3)}


def test_xyz_wing_clears_z_where_all_three_are_seen():
    b = board(r0c0="123", r0c1="13", r4c0="23")
    gone = only_way(b, xyz_wing)
    assert gone == {(cell(1, 0), 3), (cell(2, 0), 3)}


def test_simple_colouring_trap_clears_cells_seeing_both_colours():
    # digit 1: conjugate in row 0 (r0c0, r0c4), column 4 (r0c4, r4c4), row 4 (r4c4, r4c1)
    b = without(board(), 1, [cell(0, c) for c in range(9) if c not in (0, 4)]
                + [cell(r, 4) for r in range(9) if r not in (0, 4)]
                + [cell(4, c) for c in range(9) if c not in (1, 4)])
    gone = only_way(b, simple_colouring)
    assert (cell(1, 1), 1) in gone
    colour0, colour1 = {cell(0, 0), cell(4, 4)}, {cell(0, 4), cell(4, 1)}
    for c, d in gone:
        assert d == 1 and b.peers[c] & colour0 and b.peers[c] & colour1


def test_simple_colouring_wrap_removes_a_colour_seen_twice_in_a_unit():
    # digit 1 conjugate in row 0, column 4, row 4 and column 1: r0c0 - r0c4 - r4c4 -
    # r4c1 - r1c1; r0c0 and r1c1 get one colour and share block 0, so that colour is false
    b = without(board(), 1, [cell(0, c) for c in range(9) if c not in (0, 4)]
                + [cell(r, 4) for r in range(9) if r not in (0, 4)]
                + [cell(4, c) for c in range(9) if c not in (1, 4)]
                + [cell(r, 1) for r in range(9) if r not in (1, 4)])
    gone = only_way(b, simple_colouring)
    assert gone == {(cell(0, 0), 1), (cell(4, 4), 1), (cell(1, 1), 1)}


def test_xy_chain_of_four_cells_clears_the_shared_end_digit():
    b = board(r0c0="12", r0c4="23", r4c4="34", r4c1="14")
    gone = only_way(b, xy_chain)
    a, d = cell(0, 0), cell(4, 1)
    assert (cell(1, 1), 1) in gone and (cell(4, 0), 1) in gone
    assert all(digit == 1 and c in b.peers[a] & b.peers[d] for c, digit in gone)


def test_forcing_refutes_only_wrong_candidates_on_a_hard_puzzle():
    puzzle = parse(HUMAN_HARD)
    solution = solution_of(puzzle)
    steps = [s for s in solve_with_techniques(puzzle, solution).steps
             if s.technique == "forcing"]
    assert steps
    for step in steps:
        (c, d), = step.eliminations
        assert solution[c] != d and 7.5 <= step.weight <= 9.0


def _sound(puzzle, solution, run):
    """Every placement is the solution's digit, no elimination removes it, every empty
    cell is placed once."""
    placed = []
    for step in run.steps:
        for c, d in step.placements:
            assert solution[c] == d, step
            placed.append(c)
        for c, d in step.eliminations:
            assert solution[c] != d, step
    assert sorted(placed) == np.flatnonzero(puzzle.givens == 0).tolist()


@pytest.mark.parametrize("text", [EASY, MEDIUM, HUMAN_HARD, SIXTEEN])
def test_runs_are_sound_and_deterministic(text):
    puzzle = parse(text)
    solution = solution_of(puzzle)
    run = solve_with_techniques(puzzle, solution)
    _sound(puzzle, solution, run)
    assert run == solve_with_techniques(puzzle, solution)


@settings(max_examples=25, deadline=None)
@given(unique_puzzles(box_sizes=(3,)))
def test_runs_on_generated_puzzles_are_sound(made):
    puzzle, solution = made
    _sound(puzzle, np.asarray(solution).reshape(-1),
           solve_with_techniques(puzzle, np.asarray(solution).reshape(-1)))


def test_an_easy_puzzle_needs_only_singles_and_its_features_say_so():
    run = solve_with_techniques(parse(EASY))
    assert {s.technique for s in run.steps} <= set(SINGLES)
    f = technique_features(run)
    assert set(f) == set(FEATURES)
    assert all(f[f"tq_{k}"] == 0 for k in CLASSES)
    assert f["tq_advanced"] == 0 and f["tq_hardest"] <= 2.3
    assert f["tq_lone_steps"] <= sum(s.technique in SINGLES for s in run.steps)


def test_a_hard_puzzle_needs_more_and_counts_each_class():
    run = solve_with_techniques(parse(HUMAN_HARD), solution_of(parse(HUMAN_HARD)))
    f = technique_features(run)
    assert f["tq_forcing"] > 0 and f["tq_hardest"] >= 7.5
    assert f["tq_needs_chain"] == f["tq_needs_wing"] == f["tq_needs_pair"] == 1
    assert f["tq_advanced"] == sum(f[f"tq_{k}"] for k in CLASSES)
    counts = run.counts()
    assert sum(counts.values()) == len(run.steps)
    assert run.hardest.weight == f["tq_hardest"]


def test_a_stuck_puzzle_without_solution_is_an_error():
    with pytest.raises(PuzzleError, match="stuck"):
        solve_with_techniques(parse(HUMAN_HARD), ladder=())
    run = solve_with_techniques(parse(HUMAN_HARD), solution_of(parse(HUMAN_HARD)), ladder=())
    assert "guess" in run.counts()


def test_the_technique_needed_for_a_cell_is_the_hardest_step_before_it():
    puzzle = parse(HUMAN_HARD)
    solution = solution_of(puzzle)
    run = solve_with_techniques(puzzle, solution)
    hardest = 0.0
    for step in run.steps:
        hardest = max(hardest, step.weight)
        if step.placements and hardest > 2.3:
            c = step.placements[0][0]
            needed = technique_needed(3, puzzle.givens.tolist(), c, solution)
            assert needed.weight == pytest.approx(hardest)
            break
    else:
        pytest.fail("the hard puzzle needed nothing beyond singles")
    # a cell that is a single on the board is that single
    easy = parse(MEDIUM)
    c, d, technique = singles(Board.of(easy))[0]
    assert technique_needed(3, easy.givens.tolist(), c, solution_of(easy)).technique == technique
    with pytest.raises(ValueError):
        technique_needed(3, puzzle.givens.tolist(), int(np.flatnonzero(puzzle.givens)[0]),
                         solution)


def test_rate_has_a_technique_family():
    puzzle = parse(MEDIUM)
    only = rate(puzzle, rng=1, only=("techniques",))
    assert set(FEATURES) <= set(only.metrics)
    assert only.techniques is not None
    again = rate(puzzle, rng=2, only=("techniques",))
    assert {k: only.metrics[k] for k in FEATURES} == {k: again.metrics[k] for k in FEATURES}
    assert families_for(["tq_hardest", "serate"]) == ("human", "techniques")
