"""Calibration properties on quick samples: honest populations unlike the simulator the
nulls come from (other speeds, another structure, another project's solver) are not
flagged beyond the target, and copiers still are.

The full measurement, with thousands of solves per model, is ``bench/detection_eval.py``.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from fairgrid.analytics.calibration import player_z
from fairgrid.analytics.evidence import score_solve
from fairgrid.analytics.puzzle_model import build, scoring_inputs
from fairgrid.analytics.simulate import simulate
from fairgrid.solvers import parse
from fairgrid.solvers.fill_order import predict_fill_order

from ..fixtures import EASY, MEDIUM
from ..fixtures import analysed as analysed_puzzle

BENCH = Path(__file__).resolve().parents[2] / "bench"


@functools.cache  # loaded once: its routes are cached in the module
def _pencilmark():
    """bench/honest_pencilmark.py (pencilmark is in the test extras)."""
    spec = importlib.util.spec_from_file_location("honest_pencilmark",
                                                  BENCH / "honest_pencilmark.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def analysed():
    return [(text, *analysed_puzzle(text, seed, runs=20))
            for seed, text in enumerate((EASY, MEDIUM))]


def _honest(model, text, puzzle, solution, inputs, speed, rng):
    """One honest solve at ``speed`` times the calibration's average player, with a
    person's own skill drawn around it."""
    facts = inputs.facts_without_skill
    centre = facts.expected_log_s - np.log(speed)
    skill = float(rng.normal(0, 0.5))
    if model == "pencilmark":
        total_s = float(np.exp(centre - skill + rng.normal(0, 0.35)))
        return _pencilmark().pencilmark_solve(text, solution, rng, total_s=total_s)
    sim = simulate(puzzle, solution, "honest" if model == "fairgrid" else "scanner",
                   rng=rng, expected_log_s=centre, skill=skill)
    return sim.t_ms, sim.cell, sim.digit, sim.note


def _score(inputs, log):
    """A solve's evidence in its stored form (what the API and the console read)."""
    return score_solve(inputs.facts_without_skill, inputs.null, *log).to_json()


@pytest.mark.parametrize("model", ["fairgrid", "scanner", "pencilmark"])
def test_honest_players_far_from_the_calibration_are_not_flagged(analysed, model):
    # 3x and 6x faster than the calibration's average player (a field of tournament
    # players), and 3x slower; the old nulls flagged ~9 % of such solves
    rng = np.random.default_rng(11)
    scores = [_score(inputs, _honest(model, text, puzzle, solution, inputs, speed, rng))
              for text, puzzle, solution, inputs in analysed
              for speed in (6.0, 3.0, 1 / 3) for _ in range(25)]
    assert sum(s["flagged"] for s in scores) == 0
    # the p-values are calibrated or conservative: no excess of small ones
    p = np.array([s["p_value"] for s in scores])
    assert np.mean(p < 0.01) <= 0.02
    # a season of these solves is not a case against a person either
    assert player_z(p[:20]) < 4.5 and player_z(p[-20:]) < 4.5


def test_copiers_are_still_caught(analysed):
    rng = np.random.default_rng(12)
    caught = {}
    for text, puzzle, solution, inputs in analysed:
        for behaviour in ("row", "random", "block", "steady"):
            for _ in range(5):
                sim = simulate(puzzle, solution, behaviour, rng=rng,
                               expected_log_s=inputs.facts.expected_log_s)
                ev = _score(inputs, (sim.t_ms, sim.cell, sim.digit, sim.note))
                caught.setdefault(behaviour, []).append(ev["flagged"])
                assert ev["flagged"] == ev["verdict"].startswith("Flagged for review")
    # on a very easy puzzle a random order still hits many singles, so one may pass
    assert all(caught["row"]) and all(caught["block"]) and all(caught["steady"])
    assert sum(caught["random"]) >= 9


def test_a_switch_to_copying_ranks_above_honest_solves_and_says_where(analysed):
    rng = np.random.default_rng(13)
    text, puzzle, solution, inputs = analysed[1]
    honest = [_score(inputs, _honest("fairgrid", text, puzzle, solution, inputs, 1.0, rng))
              for _ in range(40)]
    assisted = []
    for _ in range(20):
        sim = simulate(puzzle, solution, "assisted", rng=rng,
                       expected_log_s=inputs.facts.expected_log_s)
        assisted.append(_score(inputs, (sim.t_ms, sim.cell, sim.digit, sim.note)))
    a = np.array([s["anomaly"] for s in assisted])
    h = np.array([s["anomaly"] for s in honest])
    auc = np.mean(a[:, None] > h[None, :]) + 0.5 * np.mean(a[:, None] == h[None, :])
    assert auc >= 0.9
    # the copying starts after 60 % of the placements: the switch is shown near there
    n = len(assisted[0]["timeline"])
    found = [s["switch"]["from_placement"] for s in assisted if s["switch"]]
    assert len(found) >= 15
    assert np.median(found) == pytest.approx(0.6 * n, abs=0.1 * n)


def test_the_switch_is_placed_exactly():
    # S erratic placements, then a copier at a constant pace from placement S + 1 on
    from fairgrid.analytics.fill_order import fill_order

    text, puzzle, solution, inputs = _medium_inputs()
    cells = puzzle.empty_cells
    rng = np.random.default_rng(5)
    for s in (20, 30):
        gaps = np.r_[np.exp(rng.normal(np.log(20_000), 1.0, s)),
                     np.full(cells.size - s, 2_000.0)]
        t = np.cumsum(gaps).round().astype(np.int64)
        log = (t, cells, solution[cells], np.zeros(cells.size, dtype=bool))
        ev = _score(inputs, log)
        assert ev["switch"] == {"from_placement": s + 1}
        assert fill_order(*log, puzzle.givens, solution).filled == cells.size


def test_a_model_stored_before_the_guarded_nulls_still_scores():
    from fairgrid.analytics.puzzle_model import PuzzleModel

    text, puzzle, solution, inputs = _medium_inputs()
    old = PuzzleModel({"cells": 1.0}, 600.0, float(np.log(600)), 0.35, 3, "Medium",
                      {"order_sa": (0.7, 0.05), "deducible": (1.0, 0.05),
                       "pacing_cv": (0.6, 0.1), "pacing_difficulty": (0.3, 0.1),
                       "speed": (0.0, 1.0)})
    sol = "".join(str(d) for d in solution)
    median = [None if g else 1.0 for g in puzzle.givens]
    got = scoring_inputs(text, 3, sol, median, PuzzleModel.from_json(old.to_json()))
    assert "deducible" not in got.null and "pacing_cv" not in got.null
    assert got.null["order_sa"] == (0.7, 0.2)           # widened to the guard
    assert got.null["pacing_difficulty"] == (0.0, 0.2)
    assert got.null["unforced"] == (2.0, 1.0)
    assert got.sources["unforced"].startswith("the fixed minimum")
    assert got.sources["order_sa"] == "simulated honest players"


def test_a_level_learns_how_far_orders_stray_from_each_puzzle_not_one_centre():
    from fairgrid.analytics.calibration import tail
    from fairgrid.analytics.puzzle_model import PuzzleModel, PuzzleRating, RatingRun
    from fairgrid.analytics.recalibration import LEVEL_NULL_MIN, level_nulls
    from fairgrid.analytics.signals import ORDER_OFFSET

    text, puzzle, solution, inputs = _medium_inputs()
    rng = np.random.default_rng(5)
    logs = [simulate(puzzle, solution, "honest", rng=rng,
                     expected_log_s=inputs.facts.expected_log_s)
            for _ in range(LEVEL_NULL_MIN)]

    def learnt(centre):
        return level_nulls(("3", inputs.facts, centre, s.t_ms, s.cell, s.digit, s.note)
                           for s in logs)["3"]

    # the same real solves, their puzzle's simulated centre told two ways: the level
    # learns how far they stray from it, not where they are
    near, far = learnt(0.6), learnt(0.3)
    assert "order_sa" not in near
    assert near[ORDER_OFFSET][0] == pytest.approx(far[ORDER_OFFSET][0] - 0.3)
    assert near[ORDER_OFFSET][1] == pytest.approx(far[ORDER_OFFSET][1])
    without = learnt(None)  # a puzzle without a usable order teaches no offset
    assert ORDER_OFFSET not in without and "unforced" in without

    # a puzzle whose order people barely share with the prediction (its simulated centre
    # 0.05) in a level of puzzles near 0.64: an honest rho of 0.04 there is ordinary
    sol = "".join(str(d) for d in solution)
    median = [None if g else 1.0 for g in puzzle.givens]
    model = PuzzleModel({"cells": 1.0}, 600.0, float(np.log(600)), 0.35, 3, "Medium",
                        {"order_sa": (0.05, 0.2), "speed": (0.0, 1.0)})
    rating = PuzzleRating(None, 3, None, None)
    run = RatingRun(0.0, 0.35, 0.5, {"3": {ORDER_OFFSET: [0.02, 0.25]}})
    got = scoring_inputs(text, 3, sol, median, model, run, rating)
    assert got.null["order_sa"] == pytest.approx((0.07, 0.25))
    assert got.sources["order_sa"].startswith("this puzzle's simulated solves, shifted")
    assert tail("order_sa", 0.04, *got.null["order_sa"])[1] > 0.3
    # a run that learnt one centre for the level (0.64, where that honest rho sat at
    # p = 0.001) is not read for the order
    old = RatingRun(0.0, 0.35, 0.5, {"3": {"order_sa": [0.64, 0.2]}})
    assert scoring_inputs(text, 3, sol, median, model, old, rating).null["order_sa"] == \
        (0.05, 0.2)
    # note-takers' switch null travels with the others, as wide as the guard's
    from fairgrid.analytics.signals import NOTES_SWITCH
    run = RatingRun(0.0, 0.35, 0.5, {"3": {NOTES_SWITCH: [1.0, 0.1]}})
    got = scoring_inputs(text, 3, sol, median, model, run, rating)
    assert got.null[NOTES_SWITCH] == (1.0, 0.3)
    assert got.sources[NOTES_SWITCH].endswith("whose notes carried the thinking")
    assert NOTES_SWITCH not in scoring_inputs(text, 3, sol, median, model).null
    # a portal with its own order offset for the level reads it; another, everyone's
    run = RatingRun(0.0, 0.35, 0.5, {"3": {ORDER_OFFSET: [0.02, 0.25]}},
                    portal_level_nulls={"club": {"3": {ORDER_OFFSET: [0.3, 0.25]}}})
    club = scoring_inputs(text, 3, sol, median, model, run, rating, portal="club")
    demo = scoring_inputs(text, 3, sol, median, model, run, rating, portal="demo")
    assert club.null["order_sa"] == pytest.approx((0.35, 0.25))
    assert demo.null["order_sa"] == pytest.approx((0.07, 0.25))
    assert "this portal's level-3 solves" in club.sources["order_sa"]
    assert "every portal's level-3 solves" in demo.sources["order_sa"]


def test_a_pace_is_kept_only_against_an_expected_time_sure_enough():
    """Where a puzzle's expected time is itself unsure by more than half a log (a
    Nurikabe prior), a player's solves are not compared by it; a portal's fit is a basis
    of its own (it differs from the calibration by the portal's offset)."""
    from fairgrid.analytics.puzzle_model import (CALIBRATION, PACE_MAX_SD, PORTAL_FIT,
                                                 PuzzleModel, PuzzleRating, RatingRun)
    text, puzzle, solution, _ = _medium_inputs()
    sol = "".join(str(d) for d in solution)
    median = [None if g else 1.0 for g in puzzle.givens]

    def model(sd):
        return PuzzleModel({"cells": 1.0}, 600.0, float(np.log(600)), sd, 3, "Medium",
                           {"speed": (0.0, 1.0)})
    rating = PuzzleRating(None, 3, None, None)
    assert scoring_inputs(text, 3, sol, median, model(0.161)).facts.time_basis == CALIBRATION
    wide = scoring_inputs(text, 3, sol, median, model(1.0))
    assert wide.facts.time_basis is None and wide.facts_without_skill.time_basis is None
    fitted = scoring_inputs(text, 3, sol, median, model(1.0), RatingRun(0.0, 0.3, 0.5, {}),
                            rating)
    assert fitted.facts.time_basis == PORTAL_FIT
    loose = RatingRun(0.0, PACE_MAX_SD + 0.1, 0.5, {})
    assert scoring_inputs(text, 3, sol, median, model(0.161), loose,
                          rating).facts.time_basis is None


def test_a_portals_solves_are_priced_with_its_offset():
    """A run fitted on several portals prices each portal's solves with that portal's
    offset (``by_type[type].portals``), on a fitted puzzle and on one the run did not
    fit; a portal the fit did not see is priced on the run's centre."""
    from fairgrid.analytics.puzzle_model import (PuzzleModel, PuzzleRating, RatingRun,
                                                 time_in_force)
    run = RatingRun(-1.0, 0.2, 0.4, {}, {"sudoku": {
        "mu": -1.0, "offset": -0.9, "residual_sd": 0.2, "skill_sd": 0.4, "solves": 500,
        "portals": {"club": -0.5, "school": 0.3}}})
    for portal, g in (("club", -0.5), ("school", 0.3), ("new", 0.0), (None, 0.0)):
        fit = run.for_type("sudoku", portal)
        assert fit.shift == g
        assert time_in_force(6.0, 0.16, fit, 5.0).log_s == pytest.approx(5.0 + g)
        assert time_in_force(6.0, 0.16, fit).log_s == pytest.approx(6.0 - 0.9 + g)
    text, puzzle, solution, _ = _medium_inputs()
    sol = "".join(str(d) for d in solution)
    median = [None if g else 1.0 for g in puzzle.givens]
    model = PuzzleModel({"cells": 1.0}, 600.0, float(np.log(600)), 0.161, 3, "Medium",
                        {"speed": (0.0, 1.0)})
    rating = PuzzleRating(5.0, 3, None, None)
    priced = {p: scoring_inputs(text, 3, sol, median, model, run, rating,
                                portal=p).facts.expected_log_s for p in ("club", "new")}
    assert priced == pytest.approx({"club": 4.5, "new": 5.0})


def _medium_inputs():
    return (MEDIUM, *analysed_puzzle(MEDIUM, 1, runs=10))


def test_unfinished_and_wrong_solves_are_their_own_outcome_not_a_flag(analysed):
    text, puzzle, solution, inputs = analysed[0]
    rng = np.random.default_rng(21)
    sim = simulate(puzzle, solution, "honest", rng=rng,
                   expected_log_s=inputs.facts.expected_log_s)
    cells = puzzle.empty_cells
    # the first ten moves, then the player stopped: not judged on order or pacing
    ten = (sim.t_ms[:10], sim.cell[:10], sim.digit[:10], sim.note[:10])
    ev = _score(inputs, ten)
    assert ev["outcome"] == "unfinished" and not ev["flagged"]
    assert ev["verdict"].startswith(f"Unfinished: {ev['counts']['right']} of {cells.size} "
                                    "cells filled.")
    # judged only on what does not depend on its length: the deduction behind each digit
    assert {x["name"] for x in ev["signals"]} == {"unforced", "unproven"}
    # every cell filled, one wrong digit left in place
    t, c, d = sim.t_ms.copy(), sim.cell.copy(), sim.digit.copy()
    last = int(np.flatnonzero(c == c[-1])[-1])
    d[last] = d[last] % 9 + 1
    ev = _score(inputs, (t, c, d, sim.note))
    assert ev["outcome"] == "wrong" and not ev["flagged"]
    assert ev["verdict"].startswith("Wrong: 1 cell differs from the solution.")
    assert ev["counts"]["wrong"] == 1
    # and a finished one says nothing of the kind
    ev = _score(inputs, (sim.t_ms, sim.cell, sim.digit, sim.note))
    assert ev["outcome"] == "finished" and not ev["verdict"].startswith(("Wrong", "Unfin"))


def test_an_order_the_sa_runs_disagree_on_is_not_scored_against():
    from fairgrid.analytics.puzzle_model import ORDER_RELIABILITY_FLOOR, PuzzleModel

    # an empty grid: every run fills it in its own order; a real puzzle: they agree
    noise = predict_fill_order(parse("." * 81), seed=0, runs=20, budget_s=2, workers=1)
    assert noise.split_half() < ORDER_RELIABILITY_FLOOR
    text, puzzle, solution, inputs = _medium_inputs()
    good = predict_fill_order(puzzle, seed=0, runs=20, budget_s=5, workers=1)
    assert good.split_half() > ORDER_RELIABILITY_FLOOR
    sol = "".join(str(d) for d in solution)
    median = [None if np.isnan(v) else float(v) for v in good.median_rank]
    model = build(text, sol, median, 1)
    for reliability, used in ((noise.split_half(), False), (good.split_half(), True)):
        m = PuzzleModel.from_json({**model.to_json(), "order_reliability": reliability})
        got = scoring_inputs(text, 3, sol, median, m)
        assert ("order_sa" in got.null) == used
        sim = simulate(puzzle, solution, "row", rng=3,
                       expected_log_s=got.facts.expected_log_s)
        ev = _score(got, (sim.t_ms, sim.cell, sim.digit, sim.note))
        assert ("order_sa" in {s["name"] for s in ev["signals"]}) == used
