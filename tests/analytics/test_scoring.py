"""Fill order, signals, calibration and the simulator (analytics, pure functions)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fairgrid.analytics.calibration import LEAD_P, bh, complete, honest_null, judge
from fairgrid.analytics.evidence import score_solve
from fairgrid.analytics.fill_order import fill_order
from fairgrid.analytics.signals import PuzzleFacts, change_point, compute, spearman
from fairgrid.analytics.simulate import BEHAVIOURS, simulate
from fairgrid.solvers import parse
from fairgrid.solvers.propagation import HIDDEN, NAKED, NOT_DEDUCIBLE, run_once, solution_of

from ..fixtures import EASY, EASY_SOLUTION, MEDIUM

GIVENS = np.array([int(c) for c in EASY])
SOL = np.array([int(c) for c in EASY_SOLUTION])
EMPTY = np.flatnonzero(GIVENS == 0)


def test_puzzle_facts_box_size_still_answers_to_order_its_name_before():
    puzzle = parse(EASY)
    facts = PuzzleFacts(puzzle.givens, 3, np.zeros(81), np.full(81, np.nan), 6.0, 0.4)
    assert facts.order == facts.box_size == 3 and facts.grid_shape == (9, 9)
    with pytest.raises(AttributeError):
        facts.order = 4


def _log(cells, digits=None, step=1000):
    cells = np.asarray(cells)
    digits = SOL[cells] if digits is None else np.asarray(digits)
    t = np.arange(1, cells.size + 1) * step
    return t, cells, digits, np.zeros(cells.size, dtype=bool)


# ------------------------------------------------------------------------- fill order

def test_plain_log_ranks_cells_in_move_order():
    f = fill_order(*_log(EMPTY), GIVENS, SOL)
    assert f.complete and f.filled == EMPTY.size
    assert np.array_equal(f.cells, EMPTY)
    assert np.all(f.rank[GIVENS > 0] == -1)
    assert (f.mistakes, f.erasures, f.overwrites) == (0, 0, 0)


def test_wrong_then_right_counts_at_the_correction():
    a, b = EMPTY[0], EMPTY[1]
    wrong = SOL[a] % 9 + 1
    t = np.array([1000, 2000, 3000])
    f = fill_order(t, [a, b, a], [wrong, SOL[b], SOL[a]], None, GIVENS, SOL)
    assert list(f.cells) == [b, a] and f.mistakes == 1 and f.overwrites == 1
    assert f.fill_ms[a] == 3000 and not f.complete


def test_erase_and_refill_counts_at_the_refill_and_erased_cells_are_unfilled():
    a, b = EMPTY[0], EMPTY[1]
    t = np.array([1000, 2000, 3000, 4000, 5000])
    f = fill_order(t, [a, b, a, a, b], [SOL[a], SOL[b], 0, SOL[a], 0], None, GIVENS, SOL)
    assert list(f.cells) == [a] and f.fill_ms[a] == 4000
    assert f.erasures == 2 and f.rank[b] == -1


def test_a_move_that_leaves_the_cell_as_it_was_changes_nothing():
    """A portal that logs every key press sends the digit a cell shows typed again (a
    double tap), and an empty cell erased: the board did not change, so neither is a
    fill, an overwrite or a mistake, and the cell keeps its fill time."""
    a, b = EMPTY[0], EMPTY[1]
    wrong = SOL[b] % 9 + 1
    t = np.arange(1, 7) * 1000
    f = fill_order(t, [a, b, b, a, b, EMPTY[2]], [SOL[a], wrong, wrong, SOL[a], SOL[b], 0],
                   None, GIVENS, SOL)
    assert list(f.cells) == [a, b] and f.fill_ms[a] == 1000
    assert (f.mistakes, f.overwrites, f.erasures) == (1, 1, 0)


def test_retyping_digits_at_the_end_of_an_honest_solve_is_not_evidence():
    """Five cells filled early, their digits typed again at the end: moved to the end
    of the fill order, they left the singles they gave looking unforced and the order
    unlike a person's, and an honest solve was flagged."""
    puzzle, _, facts = _facts()
    facts = dataclasses.replace(facts, hardest_rung=0, time_basis="calibration")
    null = honest_null(facts, rng=1, n=40)
    s = simulate(puzzle, facts.solution, "honest", rng=np.random.default_rng(3),
                 expected_log_s=facts.expected_log_s)
    t, c, d, note = (np.asarray(x).copy() for x in (s.t_ms, s.cell, s.digit, s.note))
    first = fill_order(t, c, d, note, facts.givens, facts.solution).cells[:5]
    t2 = np.concatenate([t, t[-1] + 1000 * np.arange(1, 6)])
    c2 = np.concatenate([c, first])
    d2 = np.concatenate([d, facts.solution[first]])
    n2 = np.concatenate([note, np.zeros(5, bool)])
    before, after = (score_solve(facts, null, *log) for log in ((t, c, d, note),
                                                               (t2, c2, d2, n2)))
    assert after.signal("unforced").value == before.signal("unforced").value
    assert after.signal("order_sa").value == before.signal("order_sa").value
    assert after.flagged == before.flagged


def test_notes_and_moves_on_givens_are_ignored():
    a = EMPTY[0]
    given = int(np.flatnonzero(GIVENS)[0])
    f = fill_order([1000, 2000, 3000], [a, given, a], [5, 1, SOL[a]], [True, False, False],
                   GIVENS, SOL)
    assert f.notes == 1 and list(f.cells) == [a] and f.mistakes == 0


# ---------------------------------------------------------------------------- signals

def _facts(text=MEDIUM):
    puzzle = parse(text)
    sol = solution_of(puzzle)
    # the human model's own median order stands in for the SA prediction here
    from fairgrid.solvers.propagation import human_model
    pred = human_model(puzzle, rng=0, runs=20).median_fill_rank(puzzle.ncells)
    return puzzle, sol, PuzzleFacts(puzzle.givens, 3, sol, pred, float(np.log(600)), 0.35)


def test_spearman_matches_scipy_and_handles_constants():
    from scipy.stats import spearmanr
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=30), rng.normal(size=30)
    assert spearman(a, b) == pytest.approx(spearmanr(a, b)[0])
    assert np.isnan(spearman(np.ones(5), a[:5]))


def test_signals_on_hand_built_logs():
    puzzle, sol, facts = _facts()
    empty = puzzle.empty_cells
    model = run_once(puzzle, sol, np.uint64(3))
    # following the model's order at a steady 10 s a step, total 10 min: agrees, every
    # placement forced, a metronome's pace
    t = np.linspace(10_000, 600_000, empty.size).astype(int)
    f = fill_order(t, model.cells, sol[model.cells], None, puzzle.givens, sol)
    good = compute(facts, f, 600_000)
    assert good["order_sa"] > 0.5 and good["unforced"] == 0.0
    assert abs(good["speed"]) < 1e-9 and good["pace_variation"] < 1e-3
    # row order, 20 s in all: uncorrelated, many digits the board did not force, fast
    t = np.linspace(300, 20_000, empty.size).astype(int)
    f = fill_order(t, empty, sol[empty], None, puzzle.givens, sol)
    row = compute(facts, f, 20_000, client={"paste_count": 1})
    assert row["order_sa"] < good["order_sa"] - 0.3
    assert row["unforced"] > 8
    assert row["speed"] < -5
    assert row["paste"] == 1
    # every move at one instant (a log of 0 ms): as fast as 1 ms, never skipped
    t = np.zeros(empty.size, dtype=int)
    f = fill_order(t, empty, sol[empty], None, puzzle.givens, sol)
    instant, one_ms = compute(facts, f, 0), compute(facts, f, 1)
    assert instant["speed"] == one_ms["speed"] < row["speed"]


def test_replay_labels_singles():
    from fairgrid.solvers.propagation import replay
    puzzle, sol, _ = _facts()
    model = run_once(puzzle, sol, np.uint64(4))
    tech, options, _ = replay(puzzle.givens, 3, model.cells, sol)
    assert np.array_equal(tech, model.technique) and np.array_equal(options, model.options)
    last = puzzle.empty_cells[::-1]
    tech, _, _ = replay(puzzle.givens, 3, last, sol)
    assert NOT_DEDUCIBLE in tech and tech[-1] in (NAKED, HIDDEN)


# ----------------------------------------------------------------- calibration, flags

def test_copy_in_row_order_is_flagged_and_honest_solves_are_not():
    puzzle, sol, facts = _facts()
    null = honest_null(facts, rng=1, n=80)
    rng = np.random.default_rng(2)
    honest_flags = 0
    for behaviour in ("honest", "scanner") * 30:
        s = simulate(puzzle, sol, behaviour, rng=rng, expected_log_s=facts.expected_log_s)
        f = fill_order(s.t_ms, s.cell, s.digit, s.note, puzzle.givens, sol)
        honest_flags += judge(compute(facts, f, s.duration_ms), null).flagged
    assert honest_flags == 0
    s = simulate(puzzle, sol, "row", rng=rng, expected_log_s=facts.expected_log_s)
    f = fill_order(s.t_ms, s.cell, s.digit, s.note, puzzle.givens, sol)
    verdict = judge(compute(facts, f, s.duration_ms), null)
    assert verdict.flagged and verdict.p_value < 1e-3
    assert "unforced" in verdict.reasons


def test_change_point_finds_where_the_pace_steadies():
    rng = np.random.default_rng(3)
    human = np.exp(rng.normal(np.log(8000), 0.8, 30))
    machine = np.exp(rng.normal(np.log(2000), 0.05, 20))
    stat, k = change_point(np.r_[human, machine])
    assert stat > 2.0 and abs(k - 30) <= 2
    stat_h, _ = change_point(np.exp(rng.normal(np.log(8000), 0.8, 50)))
    assert stat_h < 1.0
    assert change_point(np.ones(10)) == (0.0, -1)


def test_one_long_break_is_not_a_switch_to_a_steadier_pace():
    """An honest solve with one break of hours a third of the way in (lunch, a daily
    left open): the break made the pace before it look erratic and the same pace after
    it "steadier", below LEAD_P in most such solves. A copy's switch still reads."""
    puzzle, _, facts = _facts()
    null = honest_null(facts, rng=1, n=40)
    low = []
    for seed in range(10):
        s = simulate(puzzle, facts.solution, "honest", rng=np.random.default_rng(100 + seed),
                     expected_log_s=facts.expected_log_s)
        t = np.asarray(s.t_ms).copy()
        t[len(t) // 3:] += 4 * 3600 * 1000
        low.append(score_solve(facts, null, t, s.cell, s.digit, s.note).signal("switch").p)
    assert min(low) > LEAD_P, low
    rng = np.random.default_rng(3)
    human = np.exp(rng.normal(np.log(8000), 0.8, 30))
    human[10] = 4 * 3600 * 1000
    machine = np.exp(rng.normal(np.log(2000), 0.05, 20))
    assert change_point(np.r_[human, machine])[0] > 2.0


def test_bh():
    assert list(bh([0.001, 0.2, 0.01, 0.04], q=0.05)) == [True, False, True, False]
    assert list(bh([], 0.05)) == []


def test_simulator_is_seeded_and_every_behaviour_completes_the_grid():
    puzzle, sol, _ = _facts(EASY)
    for behaviour in BEHAVIOURS:
        a = simulate(puzzle, sol, behaviour, rng=9, expected_log_s=6.0)
        b = simulate(puzzle, sol, behaviour, rng=9, expected_log_s=6.0)
        assert np.array_equal(a.t_ms, b.t_ms) and np.array_equal(a.cell, b.cell)
        assert np.all(np.diff(a.t_ms) >= 0)
        f = fill_order(a.t_ms, a.cell, a.digit, a.note, puzzle.givens, sol)
        assert f.complete, behaviour
    with pytest.raises(ValueError, match="behaviour"):
        simulate(puzzle, sol, "robot", rng=1, expected_log_s=6.0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1.0, 2.5, 3.0, -1.0, float("inf"), 7.0]), min_size=1,
                max_size=40),
       st.lists(st.floats(-5, 5) | st.just(float("nan")), min_size=40, max_size=40))
def test_fast_ranks_and_spearman_match_scipy(values, others):
    import warnings

    from scipy.stats import rankdata, spearmanr

    from fairgrid.analytics.signals import average_ranks

    a = np.array(values)
    np.testing.assert_array_equal(average_ranks(a), rankdata(a))
    b = np.array(others[: a.size])
    rho = spearman(a, b)
    if a.size < 3 or np.isnan(b).any():
        assert np.isnan(rho)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on a constant input
        ref = spearmanr(a, b).statistic
    assert (np.isnan(rho) and np.isnan(ref)) or rho == pytest.approx(ref, abs=1e-12)


def test_placements_without_a_single_name_what_they_needed():
    from fairgrid.analytics.deduction import RUNG_WORDS
    from fairgrid.analytics.evidence import score_solve
    from fairgrid.analytics.signals import replay_solve, techniques_needed
    from fairgrid.solvers.deduction import UNPROVEN, needed_reference

    from ..fixtures import HUMAN_HARD
    puzzle = parse(HUMAN_HARD)
    sol = solution_of(puzzle)
    facts = PuzzleFacts(puzzle.givens, 3, sol, np.full(81, np.nan), float(np.log(3600)), 0.3)
    cells = puzzle.empty_cells  # typed in row order: nothing a person deduces first
    t = np.arange(1, cells.size + 1) * 2000
    fill = fill_order(t, cells, sol[cells], np.zeros(cells.size, bool), puzzle.givens, sol)
    rep = replay_solve(facts, fill)
    needed = techniques_needed(facts, rep, limit=3)
    # every interval is 2 s: the quickest three are the first three without a single
    first3 = np.flatnonzero(rep.technique == NOT_DEDUCIBLE)[:3]
    assert sorted(needed) == sorted(first3)
    ask = np.isin(np.arange(cells.size), first3)
    # the compiled search answers as the pure-Python techniques do
    ref = needed_reference(puzzle.givens, sol, cells, ask)
    assert [needed[k][1] for k in sorted(needed)] == ref[first3].tolist()
    assert all(0 < r <= UNPROVEN for r in ref[first3])
    evidence = score_solve(facts, complete({}), t, cells, sol[cells], None)
    assert evidence.flagged  # worked out for flagged solves, the ones people read
    hard = evidence.hardest_needed
    assert hard.technique != RUNG_WORDS[0] and hard.seconds == 2.0
    assert sum(x.needed is not None for x in evidence.timeline) == 10
    assert hard.technique in evidence.signal("unforced").explanation
    assert rep.options[hard.placement - 1] > 0  # one of the unforced placements
    # a solve placed only by singles needs nothing, flagged or not
    model = run_once(parse(MEDIUM), solution_of(parse(MEDIUM)), np.uint64(1))
    easy = _facts()[2]
    tm = np.arange(1, model.cells.size + 1) * 1000
    fill = fill_order(tm, model.cells, model.digits, np.zeros(model.cells.size, bool),
                      easy.givens, easy.solution)
    assert techniques_needed(easy, replay_solve(easy, fill)) == {}


def test_evidence_reads_back_what_it_stores_and_older_documents_as_current():
    from fairgrid.analytics.evidence import EVIDENCE_VERSION, Evidence, score_solve
    from fairgrid.analytics.signals import PuzzleFacts

    puzzle = parse(EASY)
    sol = np.array([int(ch) for ch in EASY_SOLUTION])
    cells = np.flatnonzero(puzzle.givens == 0)
    facts = PuzzleFacts(puzzle.givens, 3, sol, np.arange(81, dtype=float), 6.0, 0.4,
                        time_basis="calibration")
    t = 1000 * np.arange(1, cells.size + 1)
    doc = score_solve(facts, complete({}), t, cells, sol[cells], None).to_json()
    assert doc["version"] == EVIDENCE_VERSION
    assert Evidence.from_json(doc).to_json() == doc
    assert json.loads(json.dumps(doc)) == doc  # plain JSON all through
    # the pace a season compares solves by: ln(time / expected), skill left out
    assert doc["pace"] == pytest.approx(np.log(t[-1] / 1000.0) - 6.0, abs=1e-4)
    slow = score_solve(facts, complete({}), t, cells, sol[cells], None, skill=1.0)
    assert slow.pace == doc["pace"]
    assert doc["pace_basis"] == "calibration"
    half = score_solve(facts, complete({}), t[:10], cells[:10], sol[cells[:10]], None)
    assert half.pace is None and Evidence.from_json(half.to_json()).pace is None
    # an expected time too unsure to compare a player's solves by stores no pace
    unsure = dataclasses.replace(facts, time_basis=None)
    assert score_solve(unsure, complete({}), t, cells, sol[cells], None).pace is None
    # a document from before version 2: 0-based orders, no version, fewer fields
    old = {k: v for k, v in doc.items() if k not in ("version", "outcome", "counts")}
    old["actual_order"] = [[None if v is None else v - 1 for v in row]
                           for row in doc["actual_order"]]
    old["predicted_order"] = [[None if v is None else v - 1 for v in row]
                              for row in doc["predicted_order"]]
    back = Evidence.from_json(old)
    assert back.actual_order == Evidence.from_json(doc).actual_order
    assert back.predicted_order == Evidence.from_json(doc).predicted_order
    assert back.counts.filled == cells.size and back.outcome == "finished"
