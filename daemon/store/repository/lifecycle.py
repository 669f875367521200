"""The data's life: erasing a person, retention of raw move logs, consistent backups and
tournament exports (DuckDB's own COPY paths)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

# tournament export: one file per table, columns as stored (the raw body and moves are
# left out: they are the solve log the submission document carries)
EXPORTS = {
    "submissions": "SELECT s.portal, s.submission_id, s.tournament_id, s.player_id, "
                   "s.puzzle_id, s.started_at, s.received_at, s.n_moves, s.duration_ms, "
                   "s.complete, s.status FROM submissions s WHERE s.tournament_id = $t",
    "scores": "SELECT sc.portal, sc.submission_id, sc.scored_at, sc.anomaly, sc.p_value, "
              "sc.flagged, sc.evidence FROM scores sc JOIN submissions s ON s.portal = "
              "sc.portal AND s.submission_id = sc.submission_id WHERE s.tournament_id = $t",
    "flags": "SELECT f.id AS flag_id, f.portal, f.submission_id, f.created_at, f.state, "
             "f.reasons FROM flags f JOIN submissions s ON s.portal = f.portal AND "
             "s.submission_id = f.submission_id WHERE s.tournament_id = $t",
    "reviews": "SELECT h.flag_id, h.changed_at, h.state, h.note, h.actor FROM flag_history h "
               "JOIN flags f ON f.id = h.flag_id JOIN submissions s ON s.portal = f.portal "
               "AND s.submission_id = f.submission_id WHERE s.tournament_id = $t",
}
FORMATS = {"csv": "(FORMAT csv, HEADER true)", "parquet": "(FORMAT parquet)"}


def _count(con, sql: str, params) -> int:
    row = con.execute(sql, params).fetchone()
    return int(row[0]) if row else 0


def erase_player(con, portal: str, player: str, actor: str, now: datetime) -> dict | None:
    """Remove a person's solves (their webhook-ids with them), moves, scores, flags and
    their history, notifications about them and their skill ratings; record that an erasure happened
    (when, by whom, how many rows) without naming them. None when nothing is known of
    them. Puzzle ratings (aggregates over everyone) stay."""
    subs = con.execute("SELECT sub_key, submission_id FROM submissions WHERE portal = ? "
                       "AND player_id = ?", [portal, player]).fetchall()
    keys, sids = [k for k, _ in subs], [s for _, s in subs]
    ratings = _count(con, "SELECT count(*) FROM player_ratings WHERE portal = ? AND "
                     "player_id = ?", [portal, player])
    if not subs and not ratings:
        return None
    flags = [f for (f,) in con.execute(
        "SELECT id FROM flags WHERE portal = ? AND list_contains(?, submission_id)",
        [portal, sids]).fetchall()]
    rows = {}
    for table, sql, params in (
            ("moves", "DELETE FROM moves WHERE list_contains(?, sub_key)", [keys]),
            ("flag_history", "DELETE FROM flag_history WHERE list_contains(?, flag_id)",
             [flags]),
            ("flags", "DELETE FROM flags WHERE list_contains(?, id)", [flags]),
            ("scores", "DELETE FROM scores WHERE portal = ? AND list_contains(?, "
             "submission_id)", [portal, sids]),
            ("outbox", "DELETE FROM outbox WHERE portal = ? AND list_contains(?, subject)",
             [portal, sids]),
            ("player_ratings", "DELETE FROM player_ratings WHERE portal = ? AND "
             "player_id = ?", [portal, player]),
            ("submissions", "DELETE FROM submissions WHERE portal = ? AND player_id = ?",
             [portal, player])):
        rows[table] = _count(con, sql, params)
    con.execute("INSERT INTO erasures VALUES (?, ?, ?, ?)",
                [now, portal, actor, json.dumps(rows)])
    return rows


def erasures(cur) -> list[tuple]:
    return cur.execute("SELECT erased_at, portal, actor, rows FROM erasures "
                       "ORDER BY erased_at").fetchall()


def apply_retention(con, before: datetime) -> int:
    """Drop the move logs of solves committed before ``before``: their ``moves`` rows, and
    the moves in their stored raw body (scores, flags and the rest stay). The number of
    solves whose log went."""
    # only scored solves: one still waiting for a score needs its moves
    old = "committed_at < ? AND status = 'scored'"
    n = _count(con, f"SELECT count(*) FROM submissions WHERE {old} AND "
               "json_exists(raw, '$.moves')", [before])
    if n:
        con.execute(f"DELETE FROM moves WHERE sub_key IN (SELECT sub_key FROM submissions "
                    f"WHERE {old})", [before])
        con.execute("UPDATE submissions SET raw = json_merge_patch(raw, '{\"moves\": null}') "
                    f"WHERE {old} AND json_exists(raw, '$.moves')", [before])
    return n


def backup_to(cur, target: str) -> dict:
    """Copy the whole database, as of one moment, into a new DuckDB file ``target`` (run on
    a read cursor while the daemon serves: DuckDB's COPY FROM DATABASE reads one
    snapshot). Counts of the main tables in the copy."""
    import uuid

    main = cur.execute("SELECT current_database()").fetchone()[0]
    alias = f"fairgrid_backup_{uuid.uuid4().hex}"  # attach names are per database: unique
    cur.execute(f"ATTACH '{_quoted(target)}' AS {alias}")
    try:
        cur.execute(f'COPY FROM DATABASE "{main}" TO {alias}')
        counts = {t: cur.execute(f"SELECT count(*) FROM {alias}.{t}").fetchone()[0]
                  for t in ("submissions", "moves", "scores", "flags")}
    finally:
        cur.execute(f"DETACH {alias}")
    return counts


def export_to(cur, tournament: str, table: str, fmt: str, target: str) -> int:
    """Write one table of a tournament to ``target`` with DuckDB's COPY; rows written."""
    sql = EXPORTS[table].replace("$t", "?")
    cur.execute(f"COPY ({sql}) TO '{_quoted(target)}' {FORMATS[fmt]}", [tournament])
    return _count(cur, f"SELECT count(*) FROM ({sql})", [tournament])


def _quoted(path: str) -> str:
    return str(Path(path)).replace("'", "''")
