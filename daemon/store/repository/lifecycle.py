"""The data's life: erasing a person, retention of raw move logs, consistent backups and
tournament exports (DuckDB's own COPY paths)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from fairgrid.analytics.evidence import forget_log_source

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
    # fetchall, not fetchone: a result left unread keeps its transaction open, and an
    # open transaction on the store's connection stops every CHECKPOINT
    rows = con.execute(sql, params).fetchall()
    return int(rows[0][0]) if rows else 0


def player_known(cur, portal: str, player: str) -> bool:
    """Whether any solve or skill rating of the person is stored."""
    return _count(cur, "SELECT (SELECT count(*) FROM submissions WHERE portal = ? AND "
                  "player_id = ?) + (SELECT count(*) FROM player_ratings WHERE portal = ? "
                  "AND player_id = ?)", [portal, player, portal, player]) > 0


def erase_player(con, portal: str, player: str, actor: str, now: datetime,
                 digest: str) -> dict | None:
    """Remove a person's solves (their webhook-ids with them), moves, scores, flags and
    their history, notifications about them, their skill ratings and player verdicts, and
    their solves' ids from the evidence of logs that repeated them; list them as
    erased by ``digest`` (their keyed hash, ``store.erasure``); record that an erasure
    happened (when, by whom, how many rows) without naming them. None when nothing is
    known of them. Puzzle ratings (aggregates over everyone) stay. The deleted rows'
    bytes stay in the file until it is rewritten (``rewritten_at``)."""
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
    forget_erased_sources(con, portal, sids)  # others' logs that repeated theirs
    rows = {}
    for table, sql, params in (
            ("moves", "DELETE FROM moves WHERE list_contains(?, sub_key)", [keys]),
            ("flag_history", "DELETE FROM flag_history WHERE list_contains(?, flag_id)",
             [flags]),
            ("flags", "DELETE FROM flags WHERE list_contains(?, id)", [flags]),
            ("scores", "DELETE FROM scores WHERE portal = ? AND list_contains(?, "
             "submission_id)", [portal, sids]),
            # a solve's events name its submission id, a player's "player:" and the id:
            # each is matched with its own types (a submission id may read "player:bob")
            ("outbox", "DELETE FROM outbox WHERE portal = ? AND ((list_contains(?, type) "
             "AND list_contains(?, subject)) OR (type = ? AND subject = ?))",
             [portal, list(SOLVE_EVENTS), sids, PLAYER_EVENT, player_subject(player)]),
            ("player_verdicts", "DELETE FROM player_verdicts WHERE portal = ? AND "
             "player_id = ?", [portal, player]),
            ("player_verdict_history", "DELETE FROM player_verdict_history WHERE "
             "portal = ? AND player_id = ?", [portal, player]),
            ("player_ratings", "DELETE FROM player_ratings WHERE portal = ? AND "
             "player_id = ?", [portal, player]),
            ("submissions", "DELETE FROM submissions WHERE portal = ? AND player_id = ?",
             [portal, player])):
        rows[table] = _count(con, sql, params)
    remember_erased(con, [digest], now)
    con.execute("INSERT INTO erasures (erased_at, portal, actor, rows) VALUES (?, ?, ?, ?)",
                [now, portal, actor, json.dumps(rows)])
    return rows


def forget_erased_sources(con, portal: str, erased: list[str]) -> None:
    """Scores of ``portal`` whose log names one of the ``erased`` submissions as the solve
    it repeats name it no longer (``analytics.evidence.forget_log_source``): an erasure
    leaves nothing of a person in others' evidence."""
    for sid, doc in con.execute(
            "SELECT submission_id, evidence FROM scores WHERE portal = ? AND list_contains("
            "?, json_extract_string(evidence, '$.log_match.submission_id')) AND NOT "
            "list_contains(?, submission_id)", [portal, erased, erased]).fetchall():
        con.execute("UPDATE scores SET evidence = ? WHERE portal = ? AND submission_id = ?",
                    [json.dumps(forget_log_source(json.loads(doc))), portal, sid])


# the outbox's event types about one solve (subject: its submission id) and about a
# player (subject: :func:`player_subject`)
SOLVE_EVENTS = ("flag.raised", "flag.reviewed")
PLAYER_EVENT = "player.flagged"


def player_subject(player: str) -> str:
    """The outbox subject of an event about a player (not about one solve)."""
    return "player:" + player


def remember_erased(con, digests: list[str], now: datetime) -> None:
    """List ``digests`` in ``erased_players`` (those already there stay as they are)."""
    if digests:
        con.execute("INSERT INTO erased_players SELECT unnest(?), ? ON CONFLICT DO NOTHING",
                    [digests, now])


def erased_digests(cur) -> set[str]:
    """The erased people the database remembers; none in a file of a schema older than
    the list (a backup restored, or read, before any start migrated it)."""
    if "erased_players" not in table_names(cur):
        return set()
    return {d for (d,) in cur.execute("SELECT digest FROM erased_players").fetchall()}


def erasure_fingerprint(cur) -> str | None:
    """The fingerprint of the erasure key the database's erasures were made with (None:
    not known, a file from before it was kept)."""
    if "erasure_key" not in table_names(cur):
        return None
    row = cur.execute("SELECT fingerprint FROM erasure_key WHERE id = 1").fetchone()
    return None if row is None else row[0]


def keep_fingerprint(con, fingerprint: str, stored: str | None) -> None:
    """Store the fingerprint of the erasure key in use, where it is not ``stored`` (what
    :func:`erasure_fingerprint` read) and the schema has the table."""
    if stored != fingerprint and "erasure_key" in table_names(con):
        con.execute("INSERT OR REPLACE INTO erasure_key VALUES (1, ?)", [fingerprint])


def players(cur) -> list[tuple[str, str]]:
    """Every (portal, player id) with a solve or a skill rating stored (a file of a
    schema before skills, a backup to restore, has solves only)."""
    rated = _count(cur, "SELECT count(*) FROM information_schema.tables "
                        "WHERE table_name = 'player_ratings'", []) > 0
    return cur.execute("SELECT portal, player_id FROM submissions" + (
        " UNION SELECT portal, player_id FROM player_ratings" if rated else "")).fetchall()


def needs_rewrite(cur) -> bool:
    """Whether an erasure's deleted rows may still lie in the file's bytes."""
    return _count(cur, "SELECT count(*) FROM erasures WHERE rewritten_at IS NULL", []) > 0


def erasures(cur) -> list[tuple]:
    return cur.execute("SELECT erased_at, portal, actor, rows FROM erasures "
                       "ORDER BY erased_at").fetchall()


def apply_retention(con, before: datetime) -> int:
    """Drop the move logs of solves committed before ``before``: their ``moves`` rows, and
    the moves in their stored raw body (scores, flags and the rest stay). The number of
    solves whose log went. A solve waiting for a decision keeps its log (its flag is
    open, or its player's case is): the reviewer decides on its replay."""
    # only scored solves: one still waiting for a score needs its moves
    old = ("committed_at < ? AND status = 'scored' AND NOT EXISTS (SELECT 1 FROM flags f "
           "WHERE f.portal = submissions.portal AND f.submission_id = "
           "submissions.submission_id AND f.state = 'open') AND NOT EXISTS (SELECT 1 FROM "
           "player_verdicts v WHERE v.portal = submissions.portal AND v.player_id = "
           "submissions.player_id AND v.state = 'flagged')")
    n = _count(con, f"SELECT count(*) FROM submissions WHERE {old} AND "
               "json_exists(raw, '$.moves')", [before])
    if n:
        con.execute(f"DELETE FROM moves WHERE sub_key IN (SELECT sub_key FROM submissions "
                    f"WHERE {old})", [before])
        con.execute("UPDATE submissions SET raw = json_merge_patch(raw, '{\"moves\": null}') "
                    f"WHERE {old} AND json_exists(raw, '$.moves')", [before])
    return n


# the tables whose counts a backup reports
COUNTED = ("submissions", "moves", "scores", "flags")


def copy_database(cur, target: str, now: datetime) -> dict:
    """Copy the whole database, as of one moment, into the new DuckDB file ``target``
    (DuckDB's COPY FROM DATABASE reads one snapshot: a read cursor while the daemon
    serves will do), and close it checkpointed: no WAL beside it. Only live rows are
    copied, so the copy holds none of the bytes an erasure deleted: its erasures are
    marked rewritten. Counts of the main tables in the copy."""
    import uuid

    main = cur.execute("SELECT current_database()").fetchone()[0]
    alias = f"fairgrid_copy_{uuid.uuid4().hex}"  # attach names are per database: unique
    cur.execute(f"ATTACH '{_quoted(target)}' AS {alias}")
    try:
        cur.execute(f'COPY FROM DATABASE "{main}" TO {alias}')
        cur.execute(f"UPDATE {alias}.erasures SET rewritten_at = ? WHERE rewritten_at IS NULL",
                    [now])
        counts = {t: cur.execute(f"SELECT count(*) FROM {alias}.{t}").fetchone()[0]
                  for t in COUNTED}
    finally:
        cur.execute(f"DETACH {alias}")  # checkpoints the copy and closes it
    return counts


def table_names(cur, every_schema: bool = False) -> list[str]:
    """The tables of the open database, sorted: those of its ``main`` schema (fairgrid's),
    or, with ``every_schema``, of any (what tells another program's file)."""
    where = "" if every_schema else " AND schema_name = 'main'"
    return [t for (t,) in cur.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
        + where + " ORDER BY table_name").fetchall()]


def table_counts(cur) -> dict[str, int]:
    """Rows of every table of the database (from DuckDB's metadata: cheap, but it reads
    no row; :func:`table_digests` reads them)."""
    return {t: _count(cur, f'SELECT count(*) FROM "{t}"', []) for t in table_names(cur)}


ROW = "fairgrid_row__"  # no table has a column of this name


def table_digests(cur) -> dict[str, tuple[int, int]]:
    """Per table, its rows and a digest of every value in them (the xor of the rows'
    hashes): what a restore checks. DuckDB answers count(*) from its metadata, so a file
    cut short still counts every row; hashing every row reads every block of the data,
    and a missing or damaged one raises duckdb.Error."""
    out = {}
    for t in table_names(cur):
        # the alias names the whole row; a column of that name would win over it
        n, digest = cur.execute(
            f'SELECT count(*), bit_xor(hash("{ROW}")) FROM "{t}" AS "{ROW}"').fetchone()
        out[t] = (int(n), int(digest or 0))
    return out


def schema_version(cur) -> int | None:
    return cur.execute("SELECT max(version) FROM schema_version").fetchone()[0]


def tournament_known(cur, tournament: str) -> bool:
    """Whether any solve was sent for ``tournament``."""
    return cur.execute("SELECT EXISTS (SELECT 1 FROM submissions WHERE tournament_id = ?)",
                       [tournament]).fetchone()[0]


def export_to(cur, tournament: str, table: str, fmt: str, target: str) -> int:
    """Write one table of a tournament to ``target`` with DuckDB's COPY; rows written
    (COPY's own count: a second count would read a later snapshot than the file's)."""
    sql = EXPORTS[table].replace("$t", "?")
    return _count(cur, f"COPY ({sql}) TO '{_quoted(target)}' {FORMATS[fmt]}", [tournament])


def _quoted(path: str) -> str:
    return str(Path(path)).replace("'", "''")
