"""A database made by an earlier fairgrid opens with its rows kept and the new columns
filled as the rows were (the migrations run in order, once)."""

from __future__ import annotations

from datetime import datetime, timezone

import duckdb

from fairgrid.daemon.store.connection import connect, migrations

from ...fixtures import EASY, EASY_SOLUTION


def _at_schema(path: str, version: int, now: datetime) -> duckdb.DuckDBPyConnection:
    """A database file as fairgrid left it at schema ``version`` (its migrations run in
    order), open for the old rows a test puts in."""
    con = duckdb.connect(path)
    con.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, "
                "applied_at TIMESTAMPTZ NOT NULL)")
    for n, script in migrations():
        if n > version:
            break
        con.execute(script)
        con.execute("INSERT INTO schema_version VALUES (?, ?)", [n, now])
    return con


def test_puzzles_and_skills_from_before_types_become_sudoku(tmp_path):
    path = str(tmp_path / "old.duckdb")
    now = datetime.now(timezone.utc)
    con = _at_schema(path, 10, now)
    con.execute("INSERT INTO puzzles (id, givens, puzzle_order, solution, status, "
                "registered_at) VALUES ('p', ?, 3, ?, 'ready', ?)",
                [EASY, EASY_SOLUTION, now])
    con.execute("INSERT INTO rating_runs (run_id, finished_at, solves, puzzles, players) "
                "VALUES ('r', ?, 1, 1, 1)", [now])
    con.execute("INSERT INTO player_ratings VALUES ('r', 'demo', 'u', 0.25, 7)")
    con.close()

    con = connect(path)
    assert con.execute("SELECT puzzle_type FROM puzzles").fetchall() == [("sudoku",)]
    assert con.execute("SELECT run_id, portal, player_id, skill, solves, puzzle_type "
                       "FROM player_ratings").fetchall() == [("r", "demo", "u", 0.25, 7,
                                                               "sudoku")]
    assert con.execute("SELECT by_type FROM rating_runs").fetchall() == [(None,)]
    # a skill per type now: the same player may have one for Nurikabe too
    con.execute("INSERT INTO player_ratings VALUES ('r', 'demo', 'u', -0.5, 3, 'nurikabe')")
    versions = [v for (v,) in con.execute("SELECT version FROM schema_version "
                                          "ORDER BY version").fetchall()]
    assert versions == [v for v, _ in migrations()]
    con.close()


def test_people_added_before_explicit_scope_keep_what_they_saw(tmp_path):
    path = str(tmp_path / "old.duckdb")
    now = datetime.now(timezone.utc)
    con = _at_schema(path, 13, now)
    # an empty list meant every portal
    for name, role, portals in (("ann", "organiser", "[]"), ("bea", "organiser", '["demo"]'),
                                ("cid", "admin", "[]")):
        con.execute("INSERT INTO users VALUES (?, ?, ?, NULL, false, ?, ?)",
                    [name, role, portals, now, now])
    con.close()

    con = connect(path)
    assert con.execute("SELECT name, portals, all_portals FROM users ORDER BY name"
                       ).fetchall() == [("ann", "[]", True), ("bea", '["demo"]', False),
                                        ("cid", "[]", True)]
    con.close()


def test_puzzles_from_before_names_per_portal_keep_their_names(tmp_path):
    from fairgrid.daemon.store.repository.ingest import resolve_name

    path = str(tmp_path / "old.duckdb")
    now = datetime.now(timezone.utc)
    con = _at_schema(path, 14, now)
    for pid in ("x", "y"):
        con.execute("INSERT INTO puzzles (id, givens, puzzle_order, solution, status, "
                    "registered_at) VALUES (?, ?, 3, ?, 'ready', ?)",
                    [pid, EASY, EASY_SOLUTION, now])
    for k, portal in enumerate(("demo", "demo", "acme"), start=1):
        con.execute("INSERT INTO submissions (sub_key, portal, submission_id, webhook_id, "
                    "player_id, puzzle_id, started_at, received_at, committed_at, n_moves, "
                    "duration_ms, complete, status, raw) VALUES (?, ?, ?, ?, 'p', 'x', ?, ?, "
                    "?, 0, 0, false, 'scored', '{}')", [k, portal, f"s-{k}", f"h-{k}",
                                                       now, now, now])
    con.execute("UPDATE moves_through SET through = 3")  # none has moves
    con.close()

    con = connect(path)
    # each portal that sent solves of a puzzle keeps its name; the puzzles stay shared
    assert con.execute("SELECT portal, name, puzzle_id FROM puzzle_names ORDER BY portal"
                       ).fetchall() == [("acme", "x", "x"), ("demo", "x", "x")]
    assert con.execute("SELECT id, owner FROM puzzles ORDER BY id").fetchall() == \
        [("x", None), ("y", None)]
    assert [resolve_name(con, p, n)[0] for p, n in (("demo", "x"), ("acme", "x"),
                                                    ("shop", "y"))] == ["x", "x", "y"]
    con.close()


def test_a_player_flagged_before_the_case_was_kept_keeps_what_flagged_them(tmp_path):
    """A player flagged before verdicts kept the one that flagged them was flagged by the
    verdict stored then: the case shows it once later solves dilute the evidence."""
    path = str(tmp_path / "old.duckdb")
    now = datetime.now(timezone.utc)
    con = _at_schema(path, 18, now)
    for player, state, p in (("f", "flagged", 1e-5), ("c", "clear", 0.4)):
        con.execute("INSERT INTO player_verdicts (portal, player_id, state, flagged, "
                    "p_value, solves, verdict, judged_at) VALUES ('demo', ?, ?, ?, ?, 9, ?, ?)",
                    [player, state, state == "flagged", p, f'{{"p": {p}}}', now])
    con.close()

    con = connect(path)
    assert con.execute("SELECT player_id, flagging_verdict, flagging_p FROM player_verdicts "
                       "ORDER BY player_id").fetchall() == [("c", None, None),
                                                            ("f", '{"p": 1e-05}', 1e-5)]
    con.close()
