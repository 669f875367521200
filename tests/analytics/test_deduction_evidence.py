"""What a person could have known at each placement (analytics.deduction): pencil marks,
portal auto-notes, hints at a stall, and a hard technique after a long think."""

from __future__ import annotations

import numpy as np
import pytest

from fairgrid.analytics.deduction import (AUTO_NOTES_MIN, STALL_LOOKS, STALL_NONE_LR,
                                          STALL_WRONG_LR, TRIAL_WORDS, deduce, hardest_rung,
                                          read_notes, right_first_time)
from fairgrid.analytics.fill_order import fill_order
from fairgrid.solvers import deduction as engine
from fairgrid.solvers import parse
from fairgrid.solvers.propagation import solution_of
from fairgrid.solvers.techniques import Board, solve_with_techniques

from ..daemon.helpers import bench_players
from ..fixtures import DEDUCTION_HARD, EASY, EASY_SOLUTION, MEDIUM

XWING = DEDUCTION_HARD[6]  # locked candidates, then stalls only a fish breaks
# a sudoku.org.uk Diabolical daily whose xy-wing stall proves two cells
TWO_CELL_WING = ("4000200080003000062605000700809040001200000940002070800500030293000010"
                 "00600050003")


def _fish_stall(givens, solution, cells) -> int:
    """The first placement of ``cells`` made at a stall only a fish breaks."""
    trace = engine.trace_placements(givens, solution, cells)
    return int(np.flatnonzero(trace.offer == engine.FISH)[0])


def _model_order(text: str):
    """(givens, solution, the technique model's placements (cell, digit, technique) and
    the index of each step's first placement after an advanced technique)."""
    puzzle = parse(text)
    solution = solution_of(puzzle)
    run = solve_with_techniques(puzzle, solution)
    return puzzle.givens.astype(np.int64), solution, run.placements()


def _log(cells, solution, times_ms, notes=()):
    """A move log placing ``cells`` (their solution digits) at ``times_ms``, after the
    ``notes`` moves (t_ms, cell, digit)."""
    t = [n[0] for n in notes] + list(times_ms)
    c = [n[1] for n in notes] + list(cells)
    d = [n[2] for n in notes] + [int(solution[x]) for x in cells]
    k = [True] * len(notes) + [False] * len(cells)
    return (np.array(t, dtype=np.int64), np.array(c, dtype=np.int64),
            np.array(d, dtype=np.int64), np.array(k, dtype=bool))


def _deduce(givens, solution, log):
    fill = fill_order(*log, givens, solution)
    return fill, deduce(givens, solution, fill, *log)


def test_a_cell_an_x_wing_proves_after_a_long_think_is_a_persons_work():
    givens, solution, placed = _model_order(XWING)
    cells = [c for c, _, _ in placed]
    fill, found = _deduce(givens, solution, _log(cells, solution, 3000 * np.arange(
        1, len(cells) + 1)))
    x = _fish_stall(givens, solution, cells)
    assert found.offer[x] == engine.FISH      # a stall: only a fish moves
    assert found.proof[x] == engine.FISH and not found.unproven[x]
    assert not found.unproven.any()  # the technique model's own solve is all explained
    # the same solve with a four-minute think before that placement: still a person's
    times = 3000 * np.arange(1, len(cells) + 1)
    times[x:] += 240_000
    assert not _deduce(givens, solution, _log(cells, solution, times))[1].unproven.any()


def test_cells_of_the_solution_typed_at_a_stall_are_unproven():
    givens, solution, placed = _model_order(XWING)
    cells = [c for c, _, _ in placed]
    x = _fish_stall(givens, solution, cells)
    # at that stall, two cells nothing near the easiest move proves, typed from a solution
    board = Board(3, givens.tolist())
    for c in cells[:x]:
        board.place(c, int(solution[c]))
    trace = engine.trace_placements(givens, solution, cells)
    rest = [c for c in cells[x:]]
    hints = [c for c in rest if engine.trace_placements(
        givens, solution, cells[:x] + [c]).rung[-1] == engine.UNPROVEN][:2]
    assert len(hints) == 2 and trace.offer[x] >= engine.LOCKED
    order = cells[:x] + hints + [c for c in rest if c not in hints]
    times = 3000 * np.arange(1, len(order) + 1)
    times[x:] += 30_000  # thinks half a minute, then types them seconds apart
    fill, found = _deduce(givens, solution, _log(order, solution, times))
    assert found.unproven[x] and found.bits(found.unproven) >= 1.0
    # the same cells guessed wrong first and corrected later are guesses, not knowledge
    wrong = [(int(times[x]) - 1, hints[0], int(solution[hints[0]]) % 9 + 1)]
    log = _log(order, solution, times)
    t, c, d, n = log
    t = np.concatenate([[wrong[0][0]], t])
    c = np.concatenate([[wrong[0][1]], c])
    d = np.concatenate([[wrong[0][2]], d])
    n = np.concatenate([[False], n])
    order_t = np.argsort(t, kind="stable")
    log = (t[order_t], c[order_t], d[order_t], n[order_t])
    fill, found = _deduce(givens, solution, log)
    k = int(np.flatnonzero(fill.cells == hints[0])[0])
    assert not found.right_first[k] and not found.unproven[k]


def _cell_nothing_proves():
    """(givens, solution, x, the cell, another of its candidates, the order): the
    technique model's order of the x-wing puzzle with, at its fish stall (placement x),
    a cell nothing up to a chain proves placed first."""
    givens, solution, placed = _model_order(XWING)
    cells = [c for c, _, _ in placed]
    x = _fish_stall(givens, solution, cells)
    hint = next(c for c in cells[x:] if engine.trace_placements(
        givens, solution, cells[:x] + [c]).rung[-1] == engine.UNPROVEN)
    other = next(d for d in range(1, 10) if d != solution[hint]
                 and Board(3, givens.tolist()).cand[hint] >> (d - 1) & 1)
    order = cells[:x] + [hint] + [c for c in cells[x:] if c != hint]
    return givens, solution, x, hint, other, order


def test_pencil_marks_the_player_narrowed_prove_what_they_place():
    givens, solution, x, hint, other, order = _cell_nothing_proves()
    # two marks written early, the wrong one struck later: the marks force the digit
    notes = [(100, hint, int(solution[hint])), (200, hint, other), (5000, hint, other)]
    times = 10_000 + 3000 * np.arange(len(order))
    fill, found = _deduce(givens, solution, _log(order, solution, times, notes))
    k = x
    assert found.by_notes[k] and not found.unproven[k]
    # a lone mark written just before is a claim, not a deduction
    fill, found = _deduce(givens, solution, _log(order, solution, times,
                                                 [(100, hint, int(solution[hint]))]))
    assert not found.by_notes[k] and found.unproven[k]


def test_a_note_takers_wrong_try_counts_though_the_struck_mark_proves_the_other():
    """A note taker who guesses wrong erases the digit and strikes its mark, and then the
    marks prove the other one: the try was still a wrong guess, weighed as one (honest
    guessers are wrong as often as the candidates say; a hint is right)."""
    givens, solution, x, hint, other, order = _cell_nothing_proves()
    times = 10_000 + 3000 * np.arange(len(order))
    times[x:] += 60_000
    at = int(times[x])
    marks = [(100, hint, int(solution[hint])), (200, hint, other)]

    def solve(tries):
        t, c, d, n = _log(order, solution, times, marks)
        k = len(marks) + x              # the move placing the cell
        extra = [(at - 4000 + i, hint, dig, note) for i, (dig, note) in enumerate(tries)]
        cols = [np.insert(col, k, vals) for col, vals in zip((t, c, d, n), zip(*extra))]
        return _deduce(givens, solution, tuple(cols))[1]

    wrong = solve([(other, False), (0, False), (other, True)])   # tried, erased, struck
    struck = solve([(other, True)])                              # struck, then placed
    assert struck.by_notes[x] and struck.looks[x] == -1 and not struck.tried[x]
    assert not wrong.right_first[x] and wrong.by_notes[x] and wrong.tried[x]
    assert wrong.looks[x] >= 0          # weighed at the stall, as a wrong try
    assert wrong.cands[x] > 1           # priced on the candidates before the try
    assert wrong.look_words(x).startswith("the first digit tried there was wrong")
    assert wrong.stall_look_llr() == pytest.approx(struck.stall_look_llr() + STALL_WRONG_LR)
    assert wrong.right_first_llr() < struck.right_first_llr() - 2.0


def test_portal_auto_notes_are_the_boards_candidates_not_the_players_thinking():
    puzzle = parse(EASY)
    solution = np.array([int(ch) for ch in EASY_SOLUTION])
    board = Board(3, puzzle.givens.tolist())
    auto = [(0, c, d) for c in range(81) if not puzzle.givens[c]
            for d in range(1, 10) if board.cand[c] >> (d - 1) & 1]
    assert len(auto) >= AUTO_NOTES_MIN
    cells = [c for c, _, _ in solve_with_techniques(puzzle, solution).placements()]
    log = _log(cells, solution, 60_000 + 2000 * np.arange(len(cells)), auto)
    fill = fill_order(*log, puzzle.givens, solution)
    notes = read_notes(*log, puzzle.givens, fill.seq)
    assert notes.auto and not notes.thinking
    # the same marks written one by one, a second apart: the player's own, first
    by_hand = [(1000 * (i + 1), c, d) for i, (_, c, d) in enumerate(auto)]
    log = _log(cells, solution, by_hand[-1][0] + 2000 * np.arange(1, len(cells) + 1),
               by_hand)
    notes = read_notes(*log, puzzle.givens, fill_order(*log, puzzle.givens, solution).seq)
    assert not notes.auto and notes.notes_first and notes.thinking


def test_right_first_time_is_per_cell_and_ignores_marks_and_erasures():
    givens = np.zeros(81, dtype=np.int64)
    solution = np.array([int(ch) for ch in EASY_SOLUTION])
    t = np.arange(5)
    c = np.array([0, 0, 0, 1, 1])
    d = np.array([solution[0] % 9 + 1, 0, solution[0], solution[1], solution[1]])
    n = np.array([True, False, False, False, False])  # the first is only a mark
    first = right_first_time(t, c, d, n, givens, solution)
    assert first[0] and first[1] and not first[2]


@pytest.mark.parametrize("text", [EASY, XWING])
def test_an_honest_solve_in_the_models_order_has_no_deduction_evidence(text):
    from fairgrid.analytics.signals import PuzzleFacts, compute

    givens, solution, placed = _model_order(text)
    cells = [c for c, _, _ in placed]
    log = _log(cells, solution, 4000 * np.arange(1, len(cells) + 1))
    facts = PuzzleFacts(givens, 3, solution, np.full(81, np.nan), 6.0, 0.4,
                        hardest_rung=hardest_rung(givens, solution))
    values = compute(facts, fill_order(*log, givens, solution), int(log[0][-1]), moves=log)
    assert values["unproven"] == 0.0 and values["unforced"] == 0.0


def test_right_first_time_weighs_being_right_against_the_candidates_left():
    from fairgrid.analytics.deduction import right_first_llr

    assert right_first_llr([], []) == 0.0
    two, five = right_first_llr([True], [2]), right_first_llr([True], [5])
    assert 0 < two < five  # right among more candidates says more
    assert right_first_llr([False], [2]) < -2  # a wrong first try is a guesser's
    assert right_first_llr([True, True], [2, 2]) == pytest.approx(2 * two)


def _stall_hints():
    """The technique model's order of XWING with, at its fish stall, two cells nothing
    near the easiest move proves typed after half a minute, seconds apart: (givens,
    solution, move log, index of the first hint in fill order)."""
    givens, solution, placed = _model_order(XWING)
    cells = [c for c, _, _ in placed]
    x = _fish_stall(givens, solution, cells)
    rest = cells[x:]
    times = 3000 * np.arange(1, len(cells) + 1)
    times[x:] += 30_000
    first = next(c for c in rest if engine.trace_placements(
        givens, solution, cells[:x] + [c]).rung[-1] == engine.UNPROVEN)
    for second in rest:  # one that nothing up to the stall's rungs proves after it
        hints = [first, second]
        order = cells[:x] + hints + [c for c in rest if c not in hints]
        log = _log(order, solution, times)
        if second != first and _deduce(givens, solution, log)[1].unexplained[x + 1]:
            return givens, solution, log, x
    raise AssertionError("no second hint")


def _evidence(givens, solution, log):
    from fairgrid.analytics.calibration import complete
    from fairgrid.analytics.evidence import score_solve
    from fairgrid.analytics.signals import PuzzleFacts

    facts = PuzzleFacts(givens, 3, solution, np.arange(81, dtype=float), 6.0, 0.4,
                        hardest_rung=hardest_rung(givens, solution))
    return score_solve(facts, complete({}), *log)


def test_the_timeline_says_what_proved_each_placement_and_old_documents_read_plain():
    from fairgrid.analytics.evidence import Evidence

    givens, solution, log, x = _stall_hints()
    ev = _evidence(givens, solution, log)
    assert ev.timeline[x].unproven and ev.timeline[x].proof is None
    assert ev.timeline[0].proof == "a single" and not ev.timeline[0].unproven
    assert ev.llr["right_first_time"] > 0
    doc = ev.to_json()
    assert doc["timeline"][x]["unproven"] is True and "llr" in doc
    assert Evidence.from_json(doc).to_json() == doc
    # a document stored before the fields existed reads as nothing unproven, no proof
    for p in doc["timeline"]:
        del p["unproven"], p["proof"]
    del doc["llr"]
    back = Evidence.from_json(doc)
    assert not any(p.unproven or p.proof for p in back.timeline) and back.llr == {}
    # the technique model's own solve: every placement proved, nothing to weigh
    givens, solution, placed = _model_order(XWING)
    cells = [c for c, _, _ in placed]
    honest = _evidence(givens, solution, _log(cells, solution,
                                              3000 * np.arange(1, len(cells) + 1)))
    assert not any(p.unproven for p in honest.timeline)
    assert all(p.proof for p in honest.timeline) and honest.llr["right_first_time"] == 0


def test_a_trial_on_a_two_candidate_cell_is_a_persons_work_a_hint_elsewhere_is_not():
    givens, solution, placed = _model_order(XWING)
    cells = [c for c, _, _ in placed]
    trace = engine.trace_placements(givens, solution, cells)
    x = int(np.flatnonzero(trace.offer > engine.SINGLE)[0])   # the first stall
    grid = givens.copy()
    grid[cells[:x]] = solution[cells[:x]]
    beyond = [c for c in cells[x:] if engine.trace_placements(
        givens, solution, cells[:x] + [c]).rung[-1] == engine.UNPROVEN]
    tried = [c for c in beyond if engine.trial(grid, c, int(solution[c]))]
    hinted = [c for c in beyond if c not in tried]
    assert tried and hinted        # no technique of the ladder proves any of them there
    for cell, by_trial in ((tried[0], True), (hinted[0], False)):
        order = cells[:x] + [cell] + [c for c in cells[x:] if c != cell]
        times = 3000 * np.arange(1, len(order) + 1)
        times[x:] += 40_000        # a long think, then that one cell
        fill, found = _deduce(givens, solution, _log(order, solution, times))
        assert found.by_trial[x] == by_trial and found.unproven[x] != by_trial
        assert (found.proof_words(x) == TRIAL_WORDS) == by_trial
        # a trial is no look at the board: only the hint is weighed by looks
        assert (found.looks[x] == -1) == by_trial
        ev = _evidence(givens, solution, _log(order, solution, times))
        assert ev.timeline[x].unproven != by_trial
        assert (ev.timeline[x].proof == TRIAL_WORDS) == by_trial
    # however quickly it came: fast people try digits fast too
    order = cells[:x] + [tried[0]] + [c for c in cells[x:] if c != tried[0]]
    fill, found = _deduce(givens, solution, _log(order, solution,
                                                 3000 * np.arange(1, len(order) + 1)))
    assert found.by_trial[x] and not found.unproven[x]
    # a first digit that was wrong is a guess, weighed as one, not a trial
    times = 3000 * np.arange(1, len(order) + 1)
    times[x:] += 40_000
    t, c, d, n = _log(order, solution, times)
    pair = int(engine.closure(np.full(81, -1), grid, 0).candidates[tried[0]])
    other = (pair & ~(1 << int(solution[tried[0]]))).bit_length() - 1
    at = int(times[x]) - 1
    log = (np.insert(t, x, at), np.insert(c, x, tried[0]), np.insert(d, x, other),
           np.insert(n, x, False))
    fill, found = _deduce(givens, solution, log)
    k = int(np.flatnonzero(fill.cells == tried[0])[0])
    assert not found.right_first[k] and not found.by_trial[k] and found.unexplained[k]


def test_a_trial_while_a_single_is_on_offer_is_still_unforced():
    givens, solution, placed = _model_order(XWING)
    cells = [c for c, _, _ in placed]
    trace = engine.trace_placements(givens, solution, cells)
    x = int(np.flatnonzero(trace.offer > engine.SINGLE)[0])
    for k in range(1, x):       # moments with a single on offer
        grid = givens.copy()
        grid[cells[:k]] = solution[cells[:k]]
        tried = [c for c in cells[k:] if engine.trace_placements(
            givens, solution, cells[:k] + [c]).rung[-1] == engine.UNPROVEN
            and engine.trial(grid, c, int(solution[c]))]
        if tried:
            break
    assert tried
    order = cells[:k] + [tried[0]] + [c for c in cells[k:] if c != tried[0]]
    times = 3000 * np.arange(1, len(order) + 1)
    times[k:] += 40_000
    fill, found = _deduce(givens, solution, _log(order, solution, times))
    assert found.offer[k] == engine.SINGLE and found.by_trial[k]
    assert not found.unproven[k] and found.unforced[k]


def test_the_unforced_sentence_counts_what_the_signal_counts():
    # a row-by-row copy of a hard puzzle, after writing every candidate by hand: the
    # notes show the player's eliminations, so `unforced` counts fish or harder only
    givens, solution, placed = _model_order(XWING)
    bare = engine.closure(np.full(81, -1), givens, 0).candidates
    notes = [(0, c, dig) for c in np.flatnonzero(givens == 0).tolist()
             for dig in range(1, 10) if bare[c] >> dig & 1]
    notes = [(50 * i, c, dig) for i, (_, c, dig) in enumerate(notes)]
    order = [c for c in range(81) if givens[c] == 0]
    start = notes[-1][0] + 1000
    log = _log(order, solution, start + 3000 * np.arange(len(order)), notes)
    fill, found = _deduce(givens, solution, log)
    assert found.worked
    ev = _evidence(givens, solution, log)
    words = ev.signal("unforced").explanation
    n = int(np.count_nonzero(found.unforced))
    assert n > 0 and words.startswith(f"{n} placement") and "a fish or harder" in words


def test_a_hint_run_at_a_stall_is_spelt_out_and_weighs_as_a_run():
    givens, solution, log, x = _stall_hints()
    fill, found = _deduce(givens, solution, log)
    assert found.run_of(x) == (x, x + 1) and found.hint_run_llr() > 0
    ev = _evidence(givens, solution, log)
    assert ev.llr["hint_run"] > 0
    words = ev.signal("unproven").explanation
    assert f"placement {x + 1} (" in words and "came 3 s after" in words
    assert f"placements {x + 1} to {x + 2}, none of which anything proved" in words
    # the same two cells a minute apart: not one look, no run
    t, c, d, n = log
    t = t.copy()
    t[x + 1:] += 60_000
    fill, found = _deduce(givens, solution, (t, c, d, n))
    assert found.run_of(x) == (x, x) and found.hint_run_llr() <= 0


def test_a_hint_taken_at_a_stall_raises_the_evidence_a_long_think_for_an_x_wing_does_not():
    givens, solution, placed = _model_order(XWING)
    cells = [c for c, _, _ in placed]
    x = _fish_stall(givens, solution, cells)
    times = 3000 * np.arange(1, len(cells) + 1)
    times[x:] += 240_000  # four minutes' think, then the cell the x-wing proves
    person = _evidence(givens, solution, _log(cells, solution, times))
    hinted = _evidence(*_stall_hints()[:3])
    assert person.signal("unproven").value == 0 and not any(
        p.unproven for p in person.timeline)
    assert hinted.signal("unproven").value >= 1
    assert hinted.signal("unproven").p < person.signal("unproven").p
    assert sum(hinted.llr.values()) > sum(person.llr.values())


@pytest.mark.parametrize("model", ["pencil_marker", "auto_notes"])
def test_a_player_who_works_in_notes_proves_the_placements_and_is_not_flagged(model):
    players = bench_players()
    play = {**players.HONEST, **players.HIDING_CHEATS}[model]
    givens = parse(MEDIUM).givens.astype(np.int64)
    solution = np.asarray(solution_of(parse(MEDIUM)), dtype=np.int64)
    for seed in (1, 2, 3):
        log = play(MEDIUM, solution, np.random.default_rng(seed),
                            300.0, tidy=0.9)
        fill = fill_order(*log.arrays, givens, solution)
        notes = read_notes(*log.arrays, givens, fill.seq)
        assert notes.auto == (model == "auto_notes")  # the portal's marks are recognised
        assert notes.thinking == (model == "pencil_marker")
        ev = _evidence(givens, solution, log.arrays)
        assert not ev.flagged and not any(p.unproven for p in ev.timeline), ev.verdict
        assert ev.llr["right_first_time"] == 0 and ev.llr["hint_run"] == 0


def test_a_hint_far_from_the_fewest_candidates_weighs_more_than_a_guess_there():
    """A stuck person who guesses picks a cell with the fewest candidates; a hint is any
    cell of the solution. Of two cells no number of looks proves at the same stall, the
    one with more candidates than the board's fewest weighs more."""
    givens, solution, placed = _model_order(XWING)
    cells = [c for c, _, _ in placed]
    x = _fish_stall(givens, solution, cells)
    times = 3000 * np.arange(1, len(cells) + 1)
    times[x:] += 30_000
    grid = givens.copy()
    grid[cells[:x]] = solution[cells[:x]]
    bare = engine.bare_counts(grid)
    fewest = bare[grid == 0].min()
    found = {}
    for c in cells[x:]:
        order = cells[:x] + [c] + [d for d in cells[x:] if d != c]
        _, f = _deduce(givens, solution, _log(order, solution, times))
        if f.looks[x] == STALL_LOOKS + 2:
            assert f.surplus[x] == bare[c] - fewest       # the bare board's count
            found.setdefault(min(int(f.surplus[x]), 2), f)
        else:
            assert f.surplus[x] == -1                     # counted only where nothing proves
    near, far = found[0], found[2]
    assert near.stall_look_llr() < far.stall_look_llr()
    assert STALL_NONE_LR[0] < STALL_NONE_LR[1] < STALL_NONE_LR[2]
    # the evidence says where the cell was
    assert near.look_words(x).endswith("among the cells with the fewest candidates "
                                       "(where a guess goes)")
    more = int(far.surplus[x])
    assert f"it had {more} candidates more than the fewest any empty cell had" \
        in far.look_words(x)


def test_a_guess_at_the_cell_with_the_fewest_marks_weighs_as_a_guess_there():
    """A pencil marker who guesses picks the cell with the fewest of *their* marks, which
    may hold more candidates on the bare board than its fewest: counted on the marks the
    player kept, such a guess weighs as one at the fewest, not as a hint far from them."""
    givens, solution, placed = _model_order(XWING)
    cells = [c for c, _, _ in placed]
    x = _fish_stall(givens, solution, cells)
    times = 10_000 + 3000 * np.arange(len(cells))
    times[x:] += 30_000
    grid = givens.copy()
    grid[cells[:x]] = solution[cells[:x]]
    bare = engine.bare_counts(grid)
    board = Board(3, grid.tolist())
    tried = 0
    for c in cells[x:]:
        order = cells[:x] + [c] + [d for d in cells[x:] if d != c]
        _, plain = _deduce(givens, solution, _log(order, solution, times))
        if plain.looks[x] != STALL_LOOKS + 2 or plain.surplus[x] < 2:
            continue
        for other in (d for d in range(1, 10) if d != solution[c] and board.cand[c] >> (d - 1) & 1):
            # two marks in that cell, none elsewhere: the player narrowed it to a pair
            notes = [(100, c, int(solution[c])), (200, c, other)]
            _, marked = _deduce(givens, solution, _log(order, solution, times, notes))
            if marked.looks[x] != STALL_LOOKS + 2:
                continue                   # the marks proved it: no guess at all
            tried += 1
            assert plain.surplus[x] == bare[c] - bare[grid == 0].min()
            assert marked.surplus[x] == max(0, 2 - bare[grid == 0].min())
            assert marked.stall_look_llr() < plain.stall_look_llr()
            assert "among the cells with the fewest candidates in the player's marks" \
                in marked.look_words(x)
            # marks that leave out the digit placed: it still counts in its cell
            third = next(d for d in range(1, 10) if d not in (solution[c], other)
                         and board.cand[c] >> (d - 1) & 1)
            _, stale = _deduce(givens, solution, _log(order, solution, times, [
                (100, c, other), (200, c, third)]))
            if stale.looks[x] == STALL_LOOKS + 2:
                rest = bare[(grid == 0) & (np.arange(81) != c)].min()
                assert stale.surplus[x] == 3 - min(3, rest)
    assert tried


def test_the_bare_boards_candidates_are_counted_per_cell():
    grid = np.zeros(81, dtype=np.int64)
    assert (engine.bare_counts(grid) == 9).all()
    grid[:8] = np.arange(1, 9)         # row 1 holds 1..8: its last cell can only be 9
    grid[9 * 4] = 9                    # and a 9 in column 1 below
    counts = engine.bare_counts(grid)
    assert counts[8] == 1 and (counts[:8] == 0).all()
    assert counts[9] == 9 - 3 - 1      # r2c1 sees 1, 2, 3 in its box and the 9 below
    # with a player's marks: those of them the board leaves (a stale mark drops out)
    marks = np.full(81, 0b1111111110, dtype=np.int64)
    marks[9] = (1 << 1) | (1 << 4) | (1 << 5)    # 1 (its box holds one), 4 and 5
    kept = engine.bare_counts(grid, marks)
    assert kept[9] == 2 and kept[10] == counts[10] and kept[8] == 1
    with pytest.raises(engine.PuzzleError):
        engine.bare_counts(np.zeros(80, dtype=np.int64))


def test_a_second_cell_the_same_step_proves_is_not_weighed_as_a_hint():
    """One step of a technique can place two cells: typed seconds after the first, the
    second is the same person's work when what they knew proves it up to the stall's
    rung, however far from the bare board it is."""
    givens, solution, placed = _model_order(TWO_CELL_WING)
    cells = [c for c, _, _ in placed]
    k = cells.index(34)                   # the xy-wing's cell, at a stall
    order = cells[:k + 1] + [60] + [c for c in cells[k + 1:] if c != 60]
    times = 3000 * np.arange(1, len(cells) + 1)
    times[k:] += 60_000
    _, found = _deduce(givens, solution, _log(order, solution, times))
    assert found.looks[k] > 1                          # the stall placement is weighed
    assert found.proof[k + 1] < found.look_rung[k]     # the wing's eliminations prove 60
    assert found.looks[k + 1] == -1 and found.surplus[k + 1] == -1


def test_the_marks_replay_follows_the_webhooks_rules():
    givens = np.zeros(81, dtype=np.int64)
    givens[80] = 9
    # (t, cell, digit, note): marks 3 and 5 in cell 0, 5 struck by hand; cell 1 cleared
    # and re-marked; a placement in cell 2 hides its marks, its erasure shows them; a
    # mark struck at a placement's instant is the portal's; moves on a given are ignored
    moves = [(0, 0, 3, 1), (0, 0, 5, 1), (0, 2, 4, 1), (10, 0, 5, 1), (20, 1, 6, 1),
             (20, 1, 0, 1), (21, 1, 7, 1), (30, 2, 4, 0), (30, 0, 3, 1), (31, 80, 1, 1),
             (40, 2, 0, 0), (50, 3, 1, 0)]
    t, c, d, n = (np.array(col) for col in zip(*moves))
    notes = read_notes(t, c, d, n.astype(bool), givens, [7, 11])
    first, last = notes.masks
    assert first[0] == 1 << 3 and first[1] == 1 << 7 and first[2] == 1 << 4
    assert last[0] == 0 and last[2] == 1 << 4 and last[80] == 0
    assert notes.narrowed[0, 0] and not notes.narrowed[0, 1] and not notes.narrowed[0, 2]
    assert notes.struck == 1 and not notes.auto


def test_a_cell_one_look_proves_at_a_stall_weighs_for_the_player_a_far_one_against():
    givens, solution, placed = _model_order(XWING)
    cells = [c for c, _, _ in placed]
    x = _fish_stall(givens, solution, cells)
    times = 3000 * np.arange(1, len(cells) + 1)
    times[x:] += 240_000
    fill, person = _deduce(givens, solution, _log(cells, solution, times))
    # the x-wing's cell is two looks away (the locked candidates it stands on, then the
    # fish): the player's stall placements weigh for them
    assert 1 <= person.looks[x] <= 2 and person.stall_look_llr() < 0
    assert (person.looks[person.offer == engine.SINGLE] == -1).all()
    givens, solution, log, x = _stall_hints()
    fill, hinted = _deduce(givens, solution, log)
    assert hinted.looks[x] > 1 and hinted.stall_look_llr() > person.stall_look_llr()
    # the second hint, seconds later, is weighed as part of the same stall
    assert hinted.looks[x + 1] >= 0 and hinted.look_rung[x + 1] == hinted.look_rung[x]
    assert hinted.llr()["stall_look"] == pytest.approx(hinted.stall_look_llr(), abs=1e-4)
    # the timeline says it in words, at the stall only
    ev = _evidence(givens, solution, log)
    assert ev.timeline[x].stall_look.startswith(("more than", "no number of rounds"))
    assert ev.timeline[0].stall_look is None and "stall_look" in ev.llr
    assert person.look_words(int(np.flatnonzero(person.looks >= 0)[0])) in (
        "one look at the board proves it", "two rounds of eliminations prove it")


def test_looks_count_the_rounds_of_eliminations_a_cell_needs():
    puzzle = parse(XWING)
    givens, solution = puzzle.givens.astype(np.int64), solution_of(puzzle)
    bare = np.full(81, 0b1111111110)
    from fairgrid.solvers.techniques import singles

    single, digit, _ = singles(Board(3, givens.tolist()))[0]
    assert engine.looks(bare, givens, single, digit, engine.LOCKED) == 0
    found = {engine.looks(bare, givens, c, int(solution[c]), engine.WING, 2)
             for c in range(81) if not givens[c]}
    assert found <= {0, 1, 2, 3, 4} and {0, 1} <= found
    # a cell no look at locked candidates proves: more than any number of looks
    never = [c for c in range(81) if not givens[c] and engine.proves(
        bare, givens, c, int(solution[c]), engine.LOCKED) > engine.LOCKED]
    assert never and all(engine.looks(bare, givens, c, int(solution[c]), engine.LOCKED, 2)
                         == 4 for c in never)
    with pytest.raises(ValueError, match="not an empty cell"):
        engine.looks(bare, givens, int(np.flatnonzero(givens)[0]), 1, engine.LOCKED)


@pytest.mark.parametrize("model", ["pencil_marker", "auto_notes"])
def test_a_note_takers_change_of_pace_is_weighed_against_note_takers_only(model):
    from fairgrid.analytics.calibration import complete, fit_null
    from fairgrid.analytics.evidence import explain, score_solve
    from fairgrid.analytics.recalibration import level_values
    from fairgrid.analytics.signals import NOTES_SWITCH, PuzzleFacts

    givens = parse(MEDIUM).givens.astype(np.int64)
    solution = np.asarray(solution_of(parse(MEDIUM)), dtype=np.int64)
    log = bench_players().HONEST[model](MEDIUM, solution, np.random.default_rng(4),
                                        300.0).arrays
    bare = tuple(a[~log[3]] for a in log)  # the same placements, no notes
    facts = PuzzleFacts(givens, 3, solution, np.arange(81, dtype=float), 6.0, 0.4,
                        hardest_rung=hardest_rung(givens, solution))

    def switch(moves, null, sources=None):
        ev = score_solve(facts, null, *moves, sources=sources)
        return next((s for s in ev.signals if s.name == "switch"), None)

    # cold start: the simulated nulls know no notes, so a note-taker's quick placing of
    # what the notes show is not weighed; the same placements without notes are
    cold = complete({})
    assert switch(log, cold) is None
    assert switch(bare, cold) is not None
    # after a run whose note-takers set their own null: that one, and only for them
    learnt = {**cold, NOTES_SWITCH: (3.0, 0.3)}
    mine = switch(log, learnt, {NOTES_SWITCH: "note-takers", "switch": "others"})
    assert mine.population == "note-takers" and mine.p > 0.99
    other = switch(bare, learnt, {NOTES_SWITCH: "note-takers", "switch": "others"})
    assert other.population == "others"
    assert other.p == switch(bare, cold).p
    # the nightly job files each solve's switch under its kind
    band = level_values([("3", facts, None, *log), ("3", facts, None, *bare)])["3"]
    assert len(band[NOTES_SWITCH]) == 1 and len(band["switch"]) == 1
    # note-takers' null is no narrower than the guard lets switch's be
    steady = fit_null({NOTES_SWITCH: list(np.linspace(-0.2, 0.2, 50))})[NOTES_SWITCH]
    assert steady[0] >= 0.4 and steady[1] >= 0.3
    assert NOTES_SWITCH not in cold
    # and the evidence says whom the steadier pace was compared with
    words = explain("switch", 1.0, 0.4, facts, {"switch_at": 12, "notes_carried": True})
    assert words.startswith("from placement 12 on") and "notes carried the thinking" in words


def test_the_stall_pace_weighs_each_stalls_first_cell_unless_the_players_marks_proved_it():
    """Scoring weighs how soon each stall's first cell came (``llr["stall_pace"]``): a
    copy typed at one pace is quick at every stall, a person who thinks there is not;
    a stall cell the player's own marks had narrowed to its digit is not weighed (the
    step was found in the notes)."""
    from fairgrid.analytics.signals import STALL_START_LR

    givens, solution, placed = _model_order(XWING)
    cells = [c for c, _, _ in placed]
    times = 3000 * np.arange(1, len(cells) + 1)
    copy = _evidence(givens, solution, _log(cells, solution, times))
    starts = [k for k, p in enumerate(copy.timeline) if k and p.singles_on_offer == 0
              and copy.timeline[k - 1].singles_on_offer > 0]
    assert starts
    # every interval is the median, so each start falls in the first band (within 1x);
    # a two-minute think in the last (after 4x)
    quick, slow = STALL_START_LR[0], STALL_START_LR[-1]
    assert copy.llr["stall_pace"] == pytest.approx(len(starts) * quick, abs=1e-3)
    thought = times.copy()
    for k in starts:
        thought[k:] += 120_000      # two minutes' think before each stall's first cell
    person = _evidence(givens, solution, _log(cells, solution, thought))
    assert person.llr["stall_pace"] == pytest.approx(len(starts) * slow, abs=1e-3)
    # the same copy, but each stall cell marked with two digits, then narrowed to its
    # own before the first placement: every start was proved by the player's marks
    notes = [(10 + i, cells[k], d) for i, k in enumerate(starts)
             for d in (int(solution[cells[k]]), int(solution[cells[k]]) % 9 + 1)]
    notes += [(1000 + i, cells[k], int(solution[cells[k]]) % 9 + 1)
              for i, k in enumerate(starts)]
    marked = _evidence(givens, solution, _log(cells, solution, times, notes))
    assert "stall_pace" not in marked.llr
