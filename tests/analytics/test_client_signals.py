"""The page's own signals as evidence (analytics.client_signals): pastes, and cells
nothing proved placed on coming back to the page."""

from __future__ import annotations

import numpy as np

from fairgrid.analytics.calibration import complete
from fairgrid.analytics.client_signals import absences, after_return, client_signals
from fairgrid.analytics.deduction import hardest_rung
from fairgrid.analytics.evidence import score_solve
from fairgrid.analytics.signals import PuzzleFacts
from fairgrid.solvers import deduction as engine

from .test_deduction_evidence import XWING, _fish_stall, _log, _model_order


def _v1(hidden=(), blur=(), pastes=0):
    return {"version": 1, "hidden": [{"t_ms": t, "ms": ms} for t, ms in hidden],
            "blur": [{"t_ms": t, "ms": ms} for t, ms in blur],
            "pastes": [{"t_ms": 1, "digits": 81}] * pastes, "paste_count": pastes}


def test_absences_merge_hidden_and_blur_and_drop_glances():
    client = _v1(hidden=[(10_000, 6_000), (40_000, 2_000)], blur=[(9_000, 1_500), (60_000, 5_000)])
    assert absences(client).tolist() == [[9_000, 16_000], [60_000, 65_000]]
    assert absences({"paste_count": 1, "hidden": [{"t_ms": 0, "ms": 9000}]}).size == 0
    assert after_return(np.array([15_000, 16_000, 46_000, 46_001, 70_000]),
                        absences(client)).tolist() == [-1, 0, 0, -1, 1]


def _hinted_solve():
    """The x-wing puzzle solved in the technique model's order, except that at the
    fish stall two cells nothing proves are typed, as from a solution looked up."""
    givens, solution, placed = _model_order(XWING)
    cells = [c for c, _, _ in placed]
    x = _fish_stall(givens, solution, cells)
    hints = [c for c in cells[x:] if engine.trace_placements(
        givens, solution, cells[:x] + [c]).rung[-1] == engine.UNPROVEN][:2]
    order = cells[:x] + hints + [c for c in cells[x:] if c not in hints]
    times = 4000 * np.arange(1, len(order) + 1)
    times[x:] += 60_000  # a minute away before the hints
    facts = PuzzleFacts(givens, 3, solution, np.full(81, np.nan), 6.0, 0.4,
                        hardest_rung=hardest_rung(givens, solution))
    return facts, _log(order, solution, times), int(times[x - 1]) + 1000


def _score(client):
    facts, log, left = _hinted_solve()
    return score_solve(facts, complete({}), *log, client=client), left


def test_cells_nothing_proved_typed_on_coming_back_are_away_evidence_in_words():
    facts, log, left = _hinted_solve()
    doc, _ = _score(_v1(hidden=[(left, 55_000)]))
    away = doc.signal("away")
    # the first hint is unproven (the second, the first proves): one bit, and its words
    assert away is not None and away.value == 1.0 and away.p < 0.5
    assert away.explanation.startswith(
        "the player left the page 1 time for 5 s or more (55 s in all), and on coming back "
        "placed 1 cell nothing on the board proved")
    assert away.explanation.endswith("came 8 s after 55 s away")
    # the same solve by someone who never left, or who left and came back long before
    # the hints: no signal, so nothing dilutes the other evidence either
    for client in (_v1(), _v1(hidden=[(0, 9_000)]), _v1(blur=[(left, 4_000)])):
        doc, _ = _score(client)
        assert doc.signal("away") is None and doc.signal("paste") is None
        assert doc.p_value == _score(None)[0].p_value


def test_no_block_or_an_unversioned_one_is_no_away_evidence():
    for client in (None, {"paste_count": 0}, {"hidden": [{"t_ms": 0, "ms": 99_000}]}):
        doc, _ = _score(client)
        assert doc.signal("away") is None
    assert _score({"paste_count": 2})[0].signal("paste").value == 2.0
    assert _score(None)[0].signal("paste") is None


def test_a_pasted_solution_is_paste_evidence():
    doc, _ = _score(_v1(pastes=1))
    paste = doc.signal("paste")
    assert paste.value == 1.0 and paste.p < 0.05
    assert "reported 1 paste" in paste.explanation


def test_nothing_without_the_ladder_and_nothing_from_an_empty_block():
    class Rep:
        deduction = None
        times_ms = np.array([1000])
    assert client_signals(_v1(hidden=[(0, 9000)], pastes=2), Rep()) == {"paste": 2.0}
    assert client_signals(None, Rep()) == {}


def test_a_solve_typed_at_one_instant_is_explained_in_words_not_infinity():
    """Every move at t = 0 (a portal that stamps no times, or a paste of the grid): the
    speed signal says so in words; no 'inf' reaches the evidence a person reads."""
    givens, solution, placed = _model_order(XWING)
    cells = [c for c, _, _ in placed]
    facts = PuzzleFacts(givens, 3, solution, np.full(81, np.nan), 6.0, 0.4,
                        hardest_rung=hardest_rung(givens, solution))
    doc = score_solve(facts, complete({}), *_log(cells, solution, np.zeros(len(cells))))
    speed = doc.signal("speed")
    assert "in no time at all" in speed.explanation
    assert "inf" not in str(doc.to_json()).lower().replace("information", "")
