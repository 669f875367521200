"""The deduction engine (solvers/deduction.py) and its pure-Python reference techniques:
each new technique where it is the only way forward, soundness on hard puzzles, the
numba closure against the reference, and the per-placement trace."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairgrid.solvers import deduction as D
from fairgrid.solvers import parse
from fairgrid.solvers.grid import PuzzleError
from fairgrid.solvers.propagation import solution_of
from fairgrid.solvers.techniques import (DEDUCTION_LADDER, DEDUCTION_RUNGS, LADDER, SINGLES,
                                         WEIGHT, Board, deduction_closure, empty_rectangle,
                                         every_step, finned_swordfish, finned_x_wing,
                                         forcing, singles, skyscraper,
                                         solve_with_techniques, technique_name,
                                         technique_needed,
                                         two_string_kite, unique_rectangle, w_wing)

from ..fixtures import DEDUCTION_HARD, EASY, HUMAN_HARD, MEDIUM, SIXTEEN

RUNG_OF = {technique_name(t): r for r, rung in enumerate(DEDUCTION_RUNGS, 1) for t in rung}
RUNG_OF.update({s: D.SINGLE for s in SINGLES})
BEYOND = 99  # forcing and guesses: beyond every rung


def cell(r: int, c: int) -> int:
    return 9 * r + c


def board(**restrict) -> Board:
    """An empty 9×9 candidate grid with some cells narrowed (``r0c4="13"``)."""
    b = Board(3)
    for name, digits in restrict.items():
        b.cand[cell(int(name[1]), int(name[3]))] = sum(1 << (int(d) - 1) for d in digits)
    return b


def without(b: Board, digit: int, cells) -> Board:
    for c in cells:
        b.eliminate(c, digit)
    return b


def masks(b: Board) -> np.ndarray:
    """The board's candidates in the engine's convention (bit d for digit d)."""
    return np.array([m << 1 for m in b.cand], dtype=np.int64)


def grid_of(b: Board) -> np.ndarray:
    return np.array(b.value, dtype=np.int64)


def found(technique, b: Board) -> set[tuple[int, int]]:
    """Every elimination the reference technique finds on ``b`` (still a candidate)."""
    return {(c, d) for s in every_step(technique, b) for c, d in s.eliminations
            if b.cand[c] >> (d - 1) & 1}


def engine_rung(b: Board, q: int) -> set[tuple[int, int]]:
    """What one pass of the engine's rung ``q`` removes from ``b``."""
    gone = D.eliminations_kernel(grid_of(b), masks(b), q)
    return {(c, d) for c in range(81) for d in range(1, 10) if gone[c] >> d & 1}


def alone(b: Board, technique) -> set[tuple[int, int]]:
    """The technique's eliminations, after checking that no single and no other
    technique of the deduction ladder progresses on ``b``, and that the engine's rung
    of it removes exactly these while its lower rungs remove nothing."""
    assert singles(b) == []
    for other in DEDUCTION_LADDER:
        if other is not technique:
            assert found(other, b) == set(), f"{technique_name(other)} progresses"
    gone = found(technique, b)
    assert gone
    q = RUNG_OF[technique_name(technique)]
    assert engine_rung(b, q) == gone
    assert D.closure(masks(b), grid_of(b), q - 1).candidates.tolist() == masks(b).tolist()
    return gone


# --------------------------------------------------------------- the new techniques

def test_two_string_kite_clears_the_cell_seeing_both_far_ends():
    # digit 1: row 0 only at c1, c6; column 0 only at r2, r7; r0c1 and r2c0 share block 0
    b = without(board(), 1, [cell(0, c) for c in range(9) if c not in (1, 6)]
                + [cell(r, 0) for r in range(9) if r not in (2, 7)])
    assert alone(b, two_string_kite) == {(cell(7, 6), 1)}


def test_empty_rectangle_clears_the_cross_of_its_column_and_the_link():
    # digit 1 in block 0 only on row 0 (c1, c2) and column 0 (r1, r2); column 5 only at
    # r0 and r6: r6c0 = 1 would leave block 0 without a 1
    b = without(board(), 1, [cell(0, 0), cell(1, 1), cell(1, 2), cell(2, 1), cell(2, 2)]
                + [cell(r, 5) for r in range(9) if r not in (0, 6)])
    assert alone(b, empty_rectangle) == {(cell(6, 0), 1)}


def test_finned_x_wing_clears_its_cover_column_in_the_fins_block():
    # rows 1 and 7 hold 1 on columns 1 and 7, row 7 also at the fin r7c8 (block 8)
    b = without(board(), 1, [cell(1, c) for c in range(9) if c not in (1, 7)]
                + [cell(7, c) for c in range(9) if c not in (1, 7, 8)])
    assert alone(b, finned_x_wing) == {(cell(6, 7), 1), (cell(8, 7), 1)}


def test_finned_swordfish_clears_its_cover_column_in_the_fins_block():
    keep = {0: (0, 4), 3: (4, 8), 6: (0, 7, 8)}  # the fin: r6c7
    b = without(board(), 1, [cell(r, c) for r, cs in keep.items() for c in range(9)
                             if c not in cs])
    assert alone(b, finned_swordfish) == {(cell(7, 8), 1), (cell(8, 8), 1)}


def test_skyscraper_clears_what_sees_both_tops_beyond_the_sashimi_x_wings():
    # digit 1: column 0 only at r2, r3, column 1 only at r2, r5: the bases share row 2,
    # so r3c0 or r5c1 holds it and block 3, seeing both, loses it. The sashimi x-wings
    # of those columns (a fin at either top) reach only their cover rows there. (Block
    # 6 keeps its 1 at r7c2 alone, a single, or pointing would clear column 2 first:
    # the closure meets such boards, as it places nothing.)
    b = without(board(), 1, [cell(r, 0) for r in range(9) if r not in (2, 3)]
                + [cell(r, 1) for r in range(9) if r not in (2, 5)]
                + [cell(6, 2), cell(8, 2)])
    assert found(skyscraper, b) == {(cell(3, 2), 1), (cell(4, 2), 1), (cell(5, 2), 1)}
    assert found(finned_x_wing, b) == {(cell(3, 2), 1), (cell(5, 2), 1)}
    others = set(DEDUCTION_LADDER) - {skyscraper, finned_x_wing}
    assert all((cell(4, 2), 1) not in found(t, b) for t in others)
    assert (cell(4, 2), 1) in engine_rung(b, D.FISH)
    assert D.closure(masks(b), grid_of(b), D.SUBSET).candidates[cell(4, 2)] & 0b10
    assert not D.closure(masks(b), grid_of(b), D.FISH).candidates[cell(4, 2)] & 0b10


def test_w_wing_clears_y_where_both_cells_are_seen():
    # r0c0, r4c4 = {1,2}; column 8 holds 1 only at r0c8 (sees r0c0) and r4c8 (sees r4c4)
    b = without(board(r0c0="12", r4c4="12"), 1,
                [cell(r, 8) for r in range(9) if r not in (0, 4)])
    assert alone(b, w_wing) == {(cell(0, 4), 2), (cell(4, 0), 2)}


def test_unique_rectangle_type_1_clears_the_pair_from_the_fourth_corner():
    b = board(r0c0="12", r0c3="12", r1c0="12", r1c3="125")
    pair_unit = ([cell(0, c) for c in range(9) if c not in (0, 3)]
                 + [cell(r, 0) for r in range(2, 9)]
                 + [cell(r, c) for r in range(3) for c in (1, 2)] + [cell(2, 0)])
    for d in (1, 2):  # the naked pairs' eliminations, made already
        without(b, d, pair_unit)
    assert alone(b, unique_rectangle) == {(cell(1, 3), 1), (cell(1, 3), 2)}


def _first_uses(text: str):
    """(technique name, board before it) at each technique's first use by the model
    with the deduction ladder, and the solution."""
    puzzle = parse(text)
    solution = solution_of(puzzle)
    b = Board.of(puzzle)
    first = {}
    for step in solve_with_techniques(puzzle, solution,
                                      ladder=DEDUCTION_LADDER + (forcing,)).steps:
        if step.technique not in first:
            first[step.technique] = (b.copy(), step)
        b.apply(step)
    return first, solution


@pytest.mark.parametrize("name", ["bug+1", "unique rectangle type 1", "w-wing",
                                  "empty rectangle", "two-string kite", "finned x-wing",
                                  "finned swordfish"])
def test_each_new_technique_is_the_cheapest_way_forward_on_a_known_position(name):
    # the first time the model (cheapest first) uses it on a fixture puzzle: sound, and
    # the engine's rung finds it where its lower rungs find nothing
    for text in DEDUCTION_HARD:
        first, solution = _first_uses(text)
        if name in first:
            break
    else:
        pytest.fail(f"no fixture puzzle needs {name}")
    b, step = first[name]
    technique = next(t for t in DEDUCTION_LADDER if technique_name(t) == name)
    assert singles(b) == []
    for earlier in DEDUCTION_LADDER[:DEDUCTION_LADDER.index(technique)]:
        assert earlier(b) is None
    assert technique(b) == step
    assert all(solution[c] != d for c, d in step.eliminations)
    q = RUNG_OF[name]
    assert set(step.eliminations) <= engine_rung(b, q) == {
        e for t in DEDUCTION_RUNGS[q - 1] for e in found(t, b)}


def test_new_techniques_have_weights_but_stay_off_the_rating_ladder():
    new = set(DEDUCTION_LADDER) - set(LADDER)
    assert {technique_name(t) for t in new} == {
        "finned x-wing", "finned swordfish", "skyscraper", "two-string kite",
        "empty rectangle", "w-wing", "unique rectangle type 1", "bug+1"}
    assert all(technique_name(t) in WEIGHT for t in DEDUCTION_LADDER)
    assert set(LADDER) - set(DEDUCTION_LADDER) == {forcing}
    assert D.RUNG_TECHNIQUES[D.SINGLE] == SINGLES
    assert D.RUNG_TECHNIQUES[D.CHAIN] == ("xy-chain",)


# ------------------------------------------------------------------------- soundness

def test_every_technique_at_every_stuck_point_of_hard_puzzles_is_sound():
    # each technique of the ladder wherever it applies, not only the one the model takes;
    # and the engine's closure of the same board at every rung keeps the solution
    used = set()
    for text in DEDUCTION_HARD:
        puzzle = parse(text)
        solution = solution_of(puzzle)
        b = Board.of(puzzle)
        for step in solve_with_techniques(puzzle, solution,
                                          ladder=DEDUCTION_LADDER + (forcing,)).steps:
            if not step.placements and step.technique != "forcing":
                for t in DEDUCTION_LADDER:
                    for s in every_step(t, b):
                        assert all(solution[c] != d for c, d in s.eliminations), s
                        used.add(s.technique)
                for r in range(D.CHAIN + 1):
                    closed = D.closure(masks(b), grid_of(b), r)
                    empty = grid_of(b) == 0
                    assert not closed.broken
                    assert np.all((closed.candidates >> solution & 1)[empty] == 1)
            b.apply(step)
    assert used == {technique_name(t) for t in DEDUCTION_LADDER}


@pytest.mark.parametrize("text", DEDUCTION_HARD + (HUMAN_HARD,))
def test_traces_of_random_orders_place_and_keep_only_the_solution(text):
    # the trace checks every closure and every layer of singles against the solution
    # and raises on the first that contradicts it
    puzzle = parse(text)
    solution = solution_of(puzzle)
    rng = np.random.default_rng(7)
    for _ in range(3):
        t = D.trace_placements(puzzle.givens, solution, rng.permutation(puzzle.empty_cells),
                               chain_budget=10 ** 6)
        assert np.all(t.rung <= D.UNPROVEN)


# --------------------------------------------------- the engine against the reference

_PUZZLES = [parse(t) for t in DEDUCTION_HARD + (HUMAN_HARD,)]
_SOLUTIONS = [solution_of(p) for p in _PUZZLES]


@st.composite
def moments(draw, sound=True):
    """A board of a random moment of a random solve order of a hard puzzle, with random
    eliminations on top: only wrong candidates (``sound``) or any (a player's notes)."""
    i = draw(st.integers(0, len(_PUZZLES) - 1))
    puzzle, solution = _PUZZLES[i], _SOLUTIONS[i]
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    order = rng.permutation(puzzle.empty_cells)
    k = draw(st.integers(0, order.size * 2 // 3))
    values = puzzle.givens.astype(np.int64)
    values[order[:k]] = solution[order[:k]]
    b = Board(3, values.tolist())
    p = draw(st.sampled_from([0.0, 0.1, 0.3]))
    for c in range(81):
        for d in range(1, 10):
            if b.cand[c] >> (d - 1) & 1 and (d != solution[c] or not sound) \
                    and rng.random() < p:
                b.eliminate(c, d)
    return b


@settings(max_examples=30, deadline=None)
@given(moments())
def test_the_closure_at_each_rung_is_the_reference_fixpoint(b):
    for r in range(D.CHAIN + 1):
        ref = b.copy()
        ok = deduction_closure(ref, r)
        got = D.closure(masks(b), grid_of(b), r)
        assert ok and not got.broken
        assert got.candidates.tolist() == masks(ref).tolist()


@settings(max_examples=30, deadline=None)
@given(moments(sound=False))
def test_wrong_notes_give_the_reference_closure_or_both_report_broken(b):
    for r in (1, 3, D.CHAIN):
        ref = b.copy()
        ok = deduction_closure(ref, r)
        got = D.closure(masks(b), grid_of(b), r)
        assert got.broken == (not ok)
        assert got.candidates.tolist() == masks(ref).tolist()  # where both stopped


@settings(max_examples=15, deadline=None)
@given(moments(), st.integers(0, D.CHAIN))
def test_each_rung_pass_removes_what_the_reference_techniques_find(b, q):
    if q == 0:
        return
    assert engine_rung(b, q) == {e for t in DEDUCTION_RUNGS[q - 1] for e in found(t, b)}


@pytest.mark.parametrize("placed_by,kw", [("model", {}), ("random", {}),
                                     ("random", {"chain_budget": 2}),
                                     ("random", {"max_rung": D.FISH, "d1_from": D.LOCKED})])
def test_the_trace_is_the_reference_trace(placed_by, kw):
    puzzle = parse(DEDUCTION_HARD[3])
    solution = solution_of(puzzle)
    run = solve_with_techniques(puzzle, solution)
    cells = (np.array([c for c, _, _ in run.placements()]) if placed_by == "model"
             else np.random.default_rng(3).permutation(puzzle.empty_cells))
    got = D.trace_placements(puzzle.givens, solution, cells, **kw)
    ref = D.trace_reference(puzzle.givens, solution, cells, **kw)
    for field in ("rung", "rung_d1", "offer", "offers", "cands_bare", "cands_closed"):
        assert getattr(got, field).tolist() == getattr(ref, field).tolist(), field
    assert got.chain_searches == ref.chain_searches


# ------------------------------------------------------------------------- the trace

def _model_order(text, ladder=None):
    """The model's fill order and, per placement, the highest rung among the steps the
    model took up to it (:data:`BEYOND` once it needed forcing)."""
    puzzle = parse(text)
    solution = solution_of(puzzle)
    cells, bound, hardest = [], [], 0
    for step in solve_with_techniques(puzzle, solution, ladder=ladder).steps:
        hardest = max(hardest, RUNG_OF.get(step.technique, BEYOND))
        for c, _ in step.placements:
            cells.append(c)
            bound.append(hardest)
    return puzzle, solution, np.array(cells), np.array(bound)


@pytest.mark.parametrize("ladder", [None, DEDUCTION_LADDER + (forcing,)])
def test_the_models_own_order_is_proved_within_the_techniques_it_used(ladder):
    # the engine closes at every rung, the model takes one cheapest step at a time: the
    # techniques are not monotone (a pattern can vanish when a cell keeps one candidate,
    # and the engine never places inside a closure), so a rare placement can be unproven
    # where the model's own path proved it; then a single was on offer within the bound
    checked = above = 0
    for text in DEDUCTION_HARD + (HUMAN_HARD, MEDIUM, EASY):
        puzzle, solution, cells, bound = _model_order(text, ladder)
        t = D.trace_placements(puzzle.givens, solution, cells, chain_budget=10 ** 6)
        known = bound < BEYOND
        checked += int(known.sum())
        over = known & (t.rung > bound)
        above += int(over.sum())
        assert np.all(t.rung[over] == D.UNPROVEN) and np.all(t.offer[over] <= bound[over])
    assert checked > 400 and above <= checked // 200


def test_a_row_by_row_copy_of_a_hard_puzzle_is_unproven_while_singles_were_on_offer():
    puzzle = parse(HUMAN_HARD)
    solution = solution_of(puzzle)
    copy = D.trace_placements(puzzle.givens, solution, puzzle.empty_cells)
    honest = D.trace_placements(puzzle.givens, solution, _model_order(HUMAN_HARD)[2])
    easy_offer = copy.offer == D.SINGLE
    hard = copy.rung >= D.FISH
    assert np.sum(hard & easy_offer) >= 8
    assert np.sum(copy.rung == D.UNPROVEN) >= 8 and np.sum(copy.rung_d1 == D.UNPROVEN) >= 5
    assert np.sum(honest.rung == D.SINGLE) > np.sum(copy.rung == D.SINGLE)


@pytest.mark.parametrize("text", [MEDIUM, DEDUCTION_HARD[0], HUMAN_HARD])
def test_the_trace_is_deterministic_and_consistent(text):
    puzzle = parse(text)
    solution = solution_of(puzzle)
    cells = np.random.default_rng(11).permutation(puzzle.empty_cells)
    a = D.trace_placements(puzzle.givens, solution, cells)
    b = D.trace_placements(puzzle.givens, solution, cells.tolist())
    for field in ("rung", "rung_d1", "offer", "offers", "cands_bare", "cands_closed"):
        assert getattr(a, field).tolist() == getattr(b, field).tolist()
    assert a.chain_searches == b.chain_searches <= D.DEFAULT_CHAIN_BUDGET
    assert np.all(a.rung_d1 <= a.rung) and np.all(a.offer <= a.rung)
    assert np.all((a.offers >= 1) == (a.offer <= D.CHAIN))
    assert np.all((1 <= a.cands_closed) & (a.cands_closed <= a.cands_bare))
    assert np.all(a.rung_d1[a.rung < D.SUBSET] == a.rung[a.rung < D.SUBSET])
    # the first placement starts from the bare board: proves() on it agrees
    first = D.proves(np.full(81, 0b1111111110), puzzle.givens, int(cells[0]),
                     int(solution[cells[0]]))
    assert first == a.rung[0]


def test_a_spent_chain_budget_reports_not_analysed_and_changes_nothing_below():
    puzzle = parse(HUMAN_HARD)
    solution = solution_of(puzzle)
    cells = puzzle.empty_cells
    full = D.trace_placements(puzzle.givens, solution, cells, chain_budget=10 ** 6)
    none = D.trace_placements(puzzle.givens, solution, cells, chain_budget=0)
    some = D.trace_placements(puzzle.givens, solution, cells, chain_budget=5)
    assert none.chain_searches == 0 and some.chain_searches == 5 < full.chain_searches
    needs_chain = (full.rung == D.CHAIN) | (full.rung == D.UNPROVEN)
    assert np.all(none.rung[needs_chain] == D.NOT_ANALYSED)
    assert not np.any(none.rung == D.UNPROVEN)
    assert none.rung[~needs_chain].tolist() == full.rung[~needs_chain].tolist()
    cut = some.rung != full.rung
    assert cut.any() and np.all(some.rung[cut] == D.NOT_ANALYSED)
    assert np.all(needs_chain[cut])
    fish = D.trace_placements(puzzle.givens, solution, cells, max_rung=D.FISH,
                              chain_budget=0)
    assert fish.chain_searches == 0 and not np.any(fish.rung == D.NOT_ANALYSED)
    assert np.all(fish.rung[full.rung > D.FISH] == D.UNPROVEN)


# ------------------------------------------------------------ what a cell needed

@pytest.mark.parametrize("kw", [{}, {"chain_budget": 2}, {"max_rung": D.FISH}])
def test_what_each_cell_needed_is_the_reference_answer(kw):
    seen = set()
    for text, order in ((HUMAN_HARD, "row"), (DEDUCTION_HARD[3], "random"),
                        (DEDUCTION_HARD[0], "random")):
        puzzle = parse(text)
        solution = solution_of(puzzle)
        cells = (puzzle.empty_cells if order == "row" else
                 np.random.default_rng(5).permutation(puzzle.empty_cells))
        ask = np.arange(cells.size) % 2 == 0
        got = D.needed(puzzle.givens, solution, cells, ask, **kw)
        assert got.tolist() == D.needed_reference(puzzle.givens, solution, cells, ask,
                                                  **kw).tolist()
        assert np.all(got[~ask] == -1)
        seen |= set(got[ask].tolist())
    # the comparison reaches the rungs that matter, and the budget's end where it ends
    assert {D.SINGLE, D.UNPROVEN} <= seen and len(seen - {D.SINGLE, D.UNPROVEN}) >= 2
    assert (D.NOT_ANALYSED in seen) == ("chain_budget" in kw)


def _highest_rung(step) -> int:
    return D.UNPROVEN if step.technique == "guess" else RUNG_OF[step.technique]


def test_a_cell_needs_the_highest_rung_the_technique_model_used_to_reach_it():
    # cheapest-first, on the same techniques, the model's hardest rung on its way to a
    # cell is the rung the compiled search finds: every cell of hard puzzles, typed in
    # the model's order, row by row and at random
    checked = 0
    for text in DEDUCTION_HARD[:6] + (HUMAN_HARD,):
        puzzle, solution, model, _ = _model_order(text)
        for cells in (model, puzzle.empty_cells,
                      np.random.default_rng(3).permutation(puzzle.empty_cells)):
            got = D.needed(puzzle.givens, solution, cells, np.ones(cells.size, bool),
                           chain_budget=10 ** 6)
            values = np.array(puzzle.givens)
            want = []
            for c in cells.tolist():
                step = technique_needed(3, values.tolist(), c, solution,
                                        ladder=DEDUCTION_LADDER, hardness=_highest_rung)
                want.append(_highest_rung(step))
                values[c] = solution[c]
            assert got.tolist() == want, text
            checked += cells.size
    assert checked > 1000


def test_a_singles_puzzle_needs_singles_and_a_row_copy_of_a_hard_one_more():
    easy, easy_solution, order, _ = _model_order(MEDIUM)
    got = D.needed(easy.givens, easy_solution, order[::-1], np.ones(order.size, bool))
    # every cell is reached by singles, in whatever order it is typed
    assert np.all(got == D.SINGLE)
    puzzle = parse(HUMAN_HARD)
    solution = solution_of(puzzle)
    first = np.arange(puzzle.empty_cells.size) < 10
    copy = D.needed(puzzle.givens, solution, puzzle.empty_cells, first)
    assert np.sum(copy[:10] >= D.FISH) >= 3
    spent = D.needed(puzzle.givens, solution, puzzle.empty_cells, first, chain_budget=0)
    beyond = copy[:10] >= D.CHAIN
    assert beyond.any() and np.all(spent[:10][beyond] == D.NOT_ANALYSED)
    assert spent[:10][~beyond].tolist() == copy[:10][~beyond].tolist()
    with pytest.raises(ValueError, match="one flag per placement"):
        D.needed(puzzle.givens, solution, puzzle.empty_cells, np.ones(3, bool))


def test_broken_notes_stop_the_closure_and_are_reported_not_raised():
    puzzle = parse(MEDIUM)
    grid = puzzle.givens.astype(np.int64)
    bare = D.closure(np.full(81, -1), grid, 0).candidates
    empty = int(np.flatnonzero(grid == 0)[0])
    notes = bare.copy()
    notes[empty] = 0                        # a cell with no candidate left
    assert D.closure(notes, grid, D.CHAIN).broken
    assert D.proves(notes, grid, int(np.flatnonzero(grid == 0)[1]), 1) == D.CONTRADICTION
    notes = bare.copy()
    row = [c for c in range(9) if grid[c] == 0]
    notes[row] &= ~(1 << 5)                 # digit 5 nowhere left in the first row
    if not any(grid[c] == 5 for c in range(9)):
        assert D.closure(notes, grid, D.LOCKED).broken
    rng = np.random.default_rng(0)
    for _ in range(200):                    # random notes: never a crash or a hang
        notes = rng.integers(0, 1 << 10, 81)
        got = D.closure(notes, grid, D.CHAIN)
        assert got.candidates.shape == (81,) and np.all(got.candidates & ~bare == 0)
        r = D.proves(notes, grid, empty, int(rng.integers(1, 10)))
        assert 0 <= r <= D.CONTRADICTION and r != D.NOT_ANALYSED


def test_proves_names_the_lowest_rung():
    b = without(board(), 1, [cell(1, c) for c in range(9) if c not in (1, 7)]
                + [cell(7, c) for c in range(9) if c not in (1, 7, 8)])
    # r8c7 loses 1 to the finned x-wing; then it is 2 by a naked single
    b.cand[cell(8, 7)] = 0b11
    notes, grid = masks(b), grid_of(b)
    assert D.proves(notes, grid, cell(8, 7), 2) == D.FISH
    assert D.proves(notes, grid, cell(8, 7), 2, max_rung=D.SUBSET) == D.UNPROVEN
    assert D.proves(notes, grid, cell(1, 1), 1) == D.UNPROVEN
    assert D.rung_name(D.FISH) == "fish" and D.rung_name(D.NOT_ANALYSED) == "not analysed"


def test_bad_input_is_a_clear_error():
    puzzle = parse(MEDIUM)
    solution = solution_of(puzzle)
    cells = puzzle.empty_cells
    with pytest.raises(PuzzleError, match="9×9"):
        D.trace_placements(parse(SIXTEEN).givens, np.ones(256, int), [])
    wrong = solution.copy()
    wrong[int(np.flatnonzero(puzzle.givens)[0])] %= 9
    wrong[int(np.flatnonzero(puzzle.givens)[0])] += 1
    with pytest.raises(PuzzleError, match="does not complete the givens"):
        D.trace_placements(puzzle.givens, wrong, cells)
    swapped = solution.copy()
    a, b = cells[0], next(c for c in cells[1:] if c // 9 == cells[0] // 9
                          and solution[c] != solution[cells[0]])
    swapped[[a, b]] = swapped[[b, a]]
    with pytest.raises(PuzzleError, match="not a valid grid"):
        D.trace_placements(puzzle.givens, swapped, cells)
    with pytest.raises(ValueError, match="given or is filled twice"):
        D.trace_placements(puzzle.givens, solution, [cells[0], cells[0]])
    with pytest.raises(ValueError, match="given or is filled twice"):
        D.trace_placements(puzzle.givens, solution, [int(np.flatnonzero(puzzle.givens)[0])])
    with pytest.raises(ValueError, match="max_rung"):
        D.trace_placements(puzzle.givens, solution, cells, max_rung=6)
    with pytest.raises(ValueError, match="not an empty cell"):
        D.proves(np.zeros(81, int), puzzle.givens, int(np.flatnonzero(puzzle.givens)[0]), 1)


def test_a_cell_with_one_candidate_is_a_single_not_part_of_a_naked_subset():
    # r0c0 can only be 1: a naked pair with r0c4 would spread that single's digit
    # through the row without placing it, which the closure leaves to placements
    from fairgrid.solvers.techniques import naked_pair, naked_triple
    b = board(r0c0="1", r0c4="12", r0c8="123")
    assert naked_pair(b) is None and naked_triple(b) is None
    assert found(naked_pair, b) == set() and engine_rung(b, D.SUBSET) == set()


def _states(text: str, every: int = 6):
    """(grid, solution) at every ``every``-th moment of the technique model's solve."""
    puzzle = parse(text)
    solution = solution_of(puzzle).astype(np.int64)
    cells = [c for c, _, _ in solve_with_techniques(puzzle, solution).placements()]
    grid = puzzle.givens.astype(np.int64)
    for k, c in enumerate(cells):
        if k % every == 0:
            yield grid.copy(), solution
        grid[c] = solution[c]


def test_a_trial_is_the_reference_trial_and_never_proves_a_wrong_digit():
    proved = 0
    for text in DEDUCTION_HARD[:6]:
        for grid, solution in _states(text):
            bare = D.closure(np.full(81, -1), grid, 0).candidates
            for c in np.flatnonzero(grid == 0).tolist():
                right = int(solution[c])
                # a wrong candidate of the cell: assuming the right one breaks nothing
                wrong = (int(bare[c]) & ~(1 << right)).bit_length() - 1
                for cap in (3, D.FORCING_CAP):
                    got = D.trial(grid, c, right, cap)
                    assert got == D.trial_reference(grid, c, right, cap)
                    if wrong > 0:
                        assert not D.trial(grid, c, wrong, cap)
                        assert not D.trial_reference(grid, c, wrong, cap)
                    proved += got
    assert proved > 50   # not vacuous


def test_a_trial_needs_two_candidates_and_a_contradiction():
    grid, solution = next(_states(DEDUCTION_HARD[6]))    # the givens
    bare = D.closure(np.full(81, -1), grid, 0).candidates
    count = {c: bin(int(bare[c])).count("1") for c in np.flatnonzero(grid == 0).tolist()}
    # only two-candidate cells are tried, and the contradiction must come within the cap
    assert all(not D.trial(grid, c, int(solution[c])) for c, n in count.items() if n != 2)
    tried = [c for c, n in count.items() if n == 2 and D.trial(grid, c, int(solution[c]))]
    assert tried
    assert sum(D.trial(grid, c, int(solution[c]), cap=0) for c in tried) < len(tried)
    with pytest.raises(ValueError, match="not an empty cell"):
        D.trial(grid, int(np.flatnonzero(grid)[0]), 1)
    with pytest.raises(ValueError, match="digit must be 1..9"):
        D.trial(grid, tried[0], 0)
    with pytest.raises(PuzzleError, match="9×9"):
        D.trial(np.zeros(16, int), 0, 1)
