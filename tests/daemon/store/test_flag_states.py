"""The flag state machine on a real database file: re-scoring moves a flag scoring
raised between open and withdrawn, and never touches one a person decided last."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np

from fairgrid.daemon.store import Store
from fairgrid.daemon.store.repository import organiser, scores

from ..helpers import query, record


def _batch(sid: str, key: int, flagged: bool) -> dict:
    def obj(v):
        return np.array([v], dtype=object)
    return {"sub_key": np.array([key]), "portal": obj("demo"), "submission_id": obj(sid),
            "anomaly": np.array([9.0 if flagged else 0.5]),
            "p_value": np.array([1e-9 if flagged else 0.4]),
            "flagged": np.array([flagged]), "evidence": obj("{}"),
            "reasons": obj('["unforced"]' if flagged else "[]"), "note": obj("scored"),
            "run_id": obj(None)}


def test_rescoring_follows_the_machine_and_leaves_a_persons_decision(tmp_path):
    store = Store(str(tmp_path / "f.duckdb"))
    try:
        for sid in ("a", "b"):
            assert store.writer.submit(record(sid, f"h-{sid}")).result(30).outcome == \
                "accepted"
        keys = dict(query(store, "SELECT submission_id, sub_key FROM submissions"))
        t0 = datetime(2026, 11, 23, tzinfo=timezone.utc)

        def score(sid, flagged, minutes, rescored):
            return store.write(scores.write_scores, _batch(sid, keys[sid], flagged),
                               t0 + timedelta(minutes=minutes), rescored).result(30)
        for sid in ("a", "b"):
            score(sid, True, 0, False)
        ids = dict(query(store, "SELECT submission_id, id FROM flags"))
        # "b" is cleared by a person, then reopened on appeal
        for state, minutes in (("cleared", 1), ("open", 2)):
            store.write(organiser.review, ids["b"], state, "appeal", "alice",
                        t0 + timedelta(minutes=minutes)).result(30)
        # a re-score that no longer finds anything
        for sid in ("a", "b"):
            score(sid, False, 3, True)
        state = dict(query(store, "SELECT submission_id, state FROM flags"))
        assert state == {"a": "withdrawn", "b": "open"}
        # and one that finds it again brings the machine's flag back
        score("a", True, 4, True)
        assert dict(query(store, "SELECT submission_id, state FROM flags"))["a"] == "open"
        history = query(store, "SELECT state, actor FROM flag_history WHERE flag_id = ? "
                        "ORDER BY changed_at", [ids["a"]])
        assert history == [("open", "fairgrid"), ("withdrawn", "fairgrid"),
                           ("open", "fairgrid")]
    finally:
        store.close()


def test_a_score_from_the_run_before_leaves_a_rescore_mark(tmp_path):
    """A batch that scored a solve with the rating run before, committed after a
    nightly run marked the solve ``rescore``, leaves the mark for the sweep; a score
    with the run in force clears it."""
    from fairgrid.daemon.store import connect

    from ..helpers import COLUMNS

    con = connect(str(tmp_path / "r.duckdb"))
    now = datetime.now(timezone.utc)
    con.execute(f"INSERT INTO submissions {COLUMNS} VALUES (1, 'demo', 'a', 'w1', 't', "
                "'p', 'x', ?, ?, ?, 1, 1, true, 'rescore', '{}')", [now, now, now])
    con.execute("INSERT INTO current_rating VALUES (1, 'run-new')")
    for run, status in (("run-old", "rescore"), (None, "rescore"), ("run-new", "scored")):
        batch = {**_batch("a", 1, False), "run_id": np.array([run], dtype=object)}
        scores.write_scores(con, batch, now, True)
        assert con.execute("SELECT status FROM submissions").fetchone()[0] == status, run


def test_a_score_naming_a_solve_erased_meanwhile_names_it_no_longer(tmp_path):
    """A batch that compared a log with a solve erased while it was scored (the single
    writer took the erasure first) stores evidence that no longer names that solve."""
    import json

    from fairgrid.daemon.store import connect

    from ..helpers import COLUMNS

    con = connect(str(tmp_path / "e.duckdb"))
    now = datetime.now(timezone.utc)
    for key, sid in ((1, "copy"), (2, "kept")):
        con.execute(f"INSERT INTO submissions {COLUMNS} VALUES (?, 'demo', ?, ?, 't', "
                    "'p', 'x', ?, ?, ?, 1, 1, true, 'pending', '{}')",
                    [key, sid, f"w{key}", now, now, now])
    explained = ("the time before each placement follows an earlier solve of this puzzle "
                 "(submission {} of this portal, the closest of 3 compared)")
    for key, named in ((1, "gone"), (2, "kept")):
        doc = {"log_match": {"submission_id": named, "cells": 40, "same_gaps": 38,
                             "spread": 0.01, "same_order": 49, "compared": 3, "p": 1e-30},
               "signals": [{"name": "log_match",
                            "explanation": explained.format(repr(named))}]}
        sid = "copy" if key == 1 else "also"
        batch = {**_batch(sid, key, True), "evidence": np.array([json.dumps(doc)], object)}
        if key == 2:
            con.execute(f"INSERT INTO submissions {COLUMNS} VALUES (3, 'demo', 'also', 'w3',"
                        " 't', 'p', 'x', ?, ?, ?, 1, 1, true, 'pending', '{}')",
                        [now, now, now])
            batch["sub_key"] = np.array([3])
        scores.write_scores(con, batch, now, False)
    stored = {sid: json.loads(doc) for sid, doc in con.execute(
        "SELECT submission_id, evidence FROM scores").fetchall()}
    assert stored["copy"]["log_match"]["submission_id"] is None
    assert stored["copy"]["log_match"]["erased"] is True
    assert "a solve since erased" in stored["copy"]["signals"][0]["explanation"]
    assert "'gone'" not in json.dumps(stored["copy"])
    assert stored["also"]["log_match"]["submission_id"] == "kept"


def test_a_repeat_found_while_it_is_scored_stays_marked(tmp_path):
    """A batch that finds a later solve repeats its log while that solve is being scored
    elsewhere (without this one to compare with) gives it a repeat mark; the score
    computed without the source then leaves it ``rescore`` for the sweep, whether it was
    a first score or a re-score, and only a score that read the mark clears it."""
    from fairgrid.daemon.store import connect

    from ..helpers import COLUMNS

    con = connect(str(tmp_path / "c.duckdb"))
    now = datetime.now(timezone.utc)
    for key, sid in ((1, "source"), (2, "repeat"), (3, "failed")):
        con.execute(f"INSERT INTO submissions {COLUMNS} VALUES (?, 'demo', ?, ?, 't', "
                    "'p', 'x', ?, ?, ?, 1, 1, true, 'pending', '{}')",
                    [key, sid, f"w{key}", now, now, now])

    def state(sid):
        return con.execute("SELECT status, repeat_marks FROM submissions WHERE "
                           "submission_id = ?", [sid]).fetchone()

    def score(sid, key, marks_read, rescored, copies=()):
        batch = {**_batch(sid, key, False), "marks_read": np.array([marks_read], object)}
        scores.write_scores(con, batch, now, rescored, copies=list(copies))

    # the repeat's first score is being computed when the source's batch finds it
    score("source", 1, 0, False, copies=[2])
    assert state("source") == ("scored", 0) and state("repeat") == ("pending", 1)
    score("repeat", 2, 0, False)             # computed without the source
    assert state("repeat") == ("rescore", 1)
    # its re-score is being computed when the source's re-score finds it again
    score("source", 1, 0, True, copies=[2])
    assert state("repeat") == ("rescore", 2)
    score("repeat", 2, 1, True)              # read before that mark
    assert state("repeat") == ("rescore", 2)
    score("repeat", 2, 2, True)              # read after it: the source was seen
    assert state("repeat") == ("scored", 2)
    score("source", 1, 0, True, copies=[2])  # a scored one is marked at once
    assert state("repeat") == ("rescore", 3)
    # one whose batch failed keeps ``pending`` and its first score, read later, counts
    score("source", 1, 0, True, copies=[3])
    assert state("failed") == ("pending", 1)
    score("failed", 3, 1, False)
    assert state("failed") == ("scored", 1)
