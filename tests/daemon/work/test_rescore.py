"""What the daemon's sweep re-scores: a solve scored with a rating run no longer in
force, and never one whose move log retention dropped."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from fairgrid.daemon.store import connect
from fairgrid.daemon.work.nightly import run_nightly
from fairgrid.daemon.work.nightly_db import direct_db

from ..helpers import COLUMNS, build, make_settings


def test_rescore_never_marks_a_solve_whose_move_log_retention_dropped(tmp_path):
    """Night 1 keeps 2 days of move logs (rescore 2 days); the operator then widens
    the rescore window to 7 days (and retention with it, as the docs ask). Night 2
    marks the 3-day-old solves ``rescore`` although their moves are gone: the sweep
    re-scores them on an empty log."""
    con, _ = build(tmp_path / "fg.duckdb", puzzles=4, players=10, few_solves_puzzle=False)
    old = datetime.now(timezone.utc) - timedelta(days=3)
    con.execute("UPDATE submissions SET committed_at = ?, raw = '{\"moves\": []}'", [old])
    s1 = make_settings(tmp_path, storage_moves_retention_days=2, nightly_rescore_days=2,
                       nightly_min_solves=3)
    out = run_nightly(direct_db(con), s1)
    assert out["move_logs_dropped"] > 0
    assert con.execute("SELECT count(*) FROM moves").fetchone()[0] == 0
    s2 = make_settings(tmp_path, storage_moves_retention_days=7, nightly_rescore_days=7,
                       nightly_min_solves=3)
    out = run_nightly(direct_db(con), s2)
    no_log = con.execute(
        "SELECT count(*) FROM submissions s WHERE status = 'rescore' AND NOT EXISTS "
        "(SELECT 1 FROM moves m WHERE m.sub_key = s.sub_key)").fetchone()[0]
    assert no_log == 0, (f"{no_log} solves whose move logs retention dropped are left to "
                         f"re-score (handed to the scorer: {len(out['rescore'])})")


def test_a_first_score_from_the_run_before_is_left_to_re_score(tmp_path):
    """A solve arrives and its batch reads the rating run in force (none yet, or
    last night's); the nightly run commits its write stage (marking only solves already
    ``scored``); then the batch writes. The solve is committed inside the rescore window
    but ends ``scored`` on the old ratings, and nothing re-scores it with the new run
    (a re-score in the same spot is kept ``rescore``: the first score is not)."""
    import numpy as np

    from fairgrid.daemon.store.repository import scores

    con = connect(str(tmp_path / "p.duckdb"))
    now = datetime.now(timezone.utc)
    con.execute(f"INSERT INTO submissions {COLUMNS} VALUES (1, 'demo', 'a', 'w1', 't', "
                "'p', 'x', ?, ?, ?, 1, 1, true, 'pending', '{}')", [now, now, now])
    read_with = scores.submissions_to_score(con, [1])[0]["run_id"]   # the batch reads: None
    con.execute("INSERT INTO current_rating VALUES (1, 'run-new')")  # the nightly write

    def obj(v):
        return np.array([v], dtype=object)
    batch = {"sub_key": np.array([1]), "portal": obj("demo"), "submission_id": obj("a"),
             "anomaly": np.array([0.5]), "p_value": np.array([0.4]),
             "flagged": np.array([False]), "evidence": obj("{}"), "reasons": obj("[]"),
             "note": obj("scored"), "run_id": obj(read_with)}
    scores.write_scores(con, batch, now, False)
    status = con.execute("SELECT status FROM submissions").fetchone()[0]
    assert status == "rescore", status
