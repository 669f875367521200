"""Scoring a Nurikabe solve with the same analytics as a Sudoku one."""

from __future__ import annotations

import numpy as np

from fairgrid.analytics.calibration import honest_null, judge
from fairgrid.analytics.evidence import score_solve
from fairgrid.analytics.fill_order import fill_order
from fairgrid.analytics.nurikabe import (LEVEL_BOUNDS_S, PRIOR_SD_LOG, expected_log_time, level,
                                        simulate_nurikabe)
from fairgrid.analytics.signals import PuzzleFacts, compute, pace_allowance
from fairgrid.solvers.nurikabe import generate_nurikabe, static_metrics
from fairgrid.solvers.puzzle_types import puzzle_type


def _facts(seed=5):
    t = puzzle_type("nurikabe")
    p = generate_nurikabe(8, 8, np.random.default_rng(seed))
    sol = t.solution(p)
    metrics = {**static_metrics(p), "prop_hints": 0.0}
    rank = t.model_ranks(p, sol)
    return p, PuzzleFacts(t.givens(p), 0, sol, np.where(rank < 0, np.nan, rank),
                          expected_log_time(metrics), PRIOR_SD_LOG, None, "nurikabe",
                          t.shape(p))


def test_honest_nurikabe_solves_pass_and_a_copy_in_row_order_is_flagged():
    p, facts = _facts()
    null = honest_null(facts, rng=1, n=80)
    assert {"order_sa", "unforced", "pace_variation"} <= set(null)
    rng = np.random.default_rng(2)
    for _ in range(30):
        s = simulate_nurikabe(facts.givens, facts.shape, facts.solution, "honest", rng=rng,
                              expected_log_s=facts.expected_log_s)
        f = fill_order(s.t_ms, s.cell, s.digit, s.note, facts.givens, facts.solution)
        assert f.complete
        assert not judge(compute(facts, f, s.duration_ms), null,
                         pace_allowance=pace_allowance(facts.expected_log_s,
                                                       s.duration_ms)).flagged
    s = simulate_nurikabe(facts.givens, facts.shape, facts.solution, "row", rng=rng,
                          expected_log_s=facts.expected_log_s)
    evidence = score_solve(facts, null, s.t_ms, s.cell, s.digit, s.note)
    assert evidence.flagged and {"order_sa", "pace_variation"} <= set(evidence.reasons)
    # the orders come back as the puzzle's own rows and columns
    assert len(evidence.actual_order) == 8 and len(evidence.actual_order[0]) == 8
    assert evidence.hardest_needed is None  # the technique ladder is Sudoku's
    assert evidence.counts.complete and evidence.counts.wrong == 0


def test_the_simulator_is_seeded():
    _, facts = _facts(seed=7)
    a = simulate_nurikabe(facts.givens, facts.shape, facts.solution, "honest", rng=3,
                          expected_log_s=5.0)
    b = simulate_nurikabe(facts.givens, facts.shape, facts.solution, "honest", rng=3,
                          expected_log_s=5.0)
    assert np.array_equal(a.t_ms, b.t_ms) and np.array_equal(a.cell, b.cell)


def test_levels_cut_the_expected_time_at_the_collections_quintiles():
    lo, _, mid, hi = LEVEL_BOUNDS_S
    assert [level(t) for t in (lo / 2, lo, (mid + hi) / 2, hi * 3)] == [1, 2, 4, 5]
    # a portal whose players take twice as long: its cut points move with them
    assert level(2 * (mid + hi) / 2, mu=np.log(2)) == 4
    assert level(2 * (mid + hi) / 2) == 5
