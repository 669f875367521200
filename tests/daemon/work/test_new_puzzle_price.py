"""The expected time of a puzzle analysed since the rating run in force (a new round's
puzzle), after any number of nightly runs. Real DuckDB file, real nightly job, the
scorer's own read and input builder."""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone

import numpy as np
import pytest

from fairgrid.daemon.store.repository.scores import puzzle_for_scoring, rating_run
from fairgrid.daemon.work.nightly import run_nightly
from fairgrid.daemon.work.nightly_db import direct_db
from fairgrid.daemon.work.scoring import _inputs, rating_run_of

from ...fixtures import EASY
from ..helpers import build, make_settings


def _priced(con, run_id, puzzle_id, portal="demo"):
    """The expected log-time scoring prices a solve of ``puzzle_id`` on, under ``run_id``
    (``Scorer._load_inputs``: puzzle_for_scoring, then _inputs)."""
    cur = con.cursor()
    run = rating_run_of(rating_run(cur, run_id))
    return _inputs(puzzle_for_scoring(cur, puzzle_id, run_id, portal), run,
                   portal).facts.expected_log_s


def _new_puzzle(con, pid):
    """A puzzle analysed after the run in force, as work.analysis stores one: its model's
    expected time from the shipped calibration (puzzle_model.build: load_default())."""
    ratings, fill, sol = con.execute("SELECT ratings, fill_rank_median, solution FROM "
                                     "puzzles WHERE id = 'p00'").fetchone()
    doc = json.loads(ratings)
    con.execute("INSERT INTO puzzles (id, givens, box_size, solution, status, registered_at, "
                "ratings, fill_rank_median) VALUES (?, ?, 3, ?, 'ready', ?, ?, ?)",
                [pid, EASY, sol, datetime.now(timezone.utc), json.dumps(doc), fill])


def _complete_models(con):
    """build()'s stored models with the fields a PuzzleModel has (as analysis stores)."""
    for pid, text in con.execute("SELECT id, ratings FROM puzzles").fetchall():
        doc = json.loads(text)
        doc.update(expected_time_s=math.exp(doc["expected_log_s"]), level_name="Moderate")
        con.execute("UPDATE puzzles SET ratings = ? WHERE id = ?", [json.dumps(doc), pid])


@pytest.mark.parametrize("nights", [1, 2])
def test_a_new_rounds_puzzle_is_priced_like_its_twins_after_any_number_of_runs(
        tmp_path, nights):
    """Every puzzle of ``build`` has the same metrics (EASY's), so a new one analysed
    after the run in force is priced where the fit put its 24 twins. From the second
    run on, the run's offset ``mu`` is fitted against the recalibrated priors, which
    already hold the first run's offset, while the new puzzle's stored expected time is
    the shipped calibration's: the run's ``offset`` adds that distance back (without
    it the new puzzle was priced e^{-mu_1}, three times here, off)."""
    con, _ = build(tmp_path / "n.duckdb", few_solves_puzzle=False)
    _complete_models(con)
    settings = make_settings(tmp_path, nightly_min_solves=20)
    for _ in range(nights):
        run = run_nightly(direct_db(con), settings)
    _new_puzzle(con, "new")
    twins = np.mean([_priced(con, run["run_id"], f"p{j:02d}") for j in range(24)])
    new = _priced(con, run["run_id"], "new")
    assert abs(new - twins) < 0.3, f"the new puzzle is priced {math.exp(new - twins):.2f}x"
