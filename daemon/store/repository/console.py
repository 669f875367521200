"""What the organiser console reads: per-tournament overview, the flag queue with
filters, sort and pages, one flag with everything a reviewer needs, search, CSV export.
Every read takes ``portals`` (None: every portal) and never returns rows of others."""

from __future__ import annotations

from ...states import FlagState
from .players import left_to_judge
from .rows import dicts, first, portal_clause

SORTS = {"newest": "f.created_at DESC, f.id DESC", "oldest": "f.created_at ASC, f.id ASC",
         "strongest": "sc.p_value ASC NULLS LAST, f.id DESC",
         "tournament": "s.tournament_id ASC NULLS LAST, f.created_at DESC, f.id DESC"}


def like_pattern(text: str) -> str:
    """A case-insensitive substring pattern for ``ILIKE ... ESCAPE '\\'``."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


_FLAGS_BY_STATE = "".join(f"count(f.id) FILTER (WHERE f.state = '{s}') AS {s}, "
                          for s in FlagState)


def overview(cur, portals) -> list[dict]:
    """Per tournament: solves received, scored, unfinished; flags by state."""
    clause, params = portal_clause("s.portal", portals)
    cur.execute(
        "SELECT coalesce(s.tournament_id, '') AS tournament_id, count(*) AS received, "
        "count(*) FILTER (WHERE s.status = 'scored') AS scored, "
        "count(*) FILTER (WHERE NOT s.complete) AS unfinished, " + _FLAGS_BY_STATE +
        "max(s.received_at) AS last_solve "
        "FROM submissions s LEFT JOIN flags f ON f.portal = s.portal AND "
        f"f.submission_id = s.submission_id WHERE {clause} "
        "GROUP BY 1 ORDER BY last_solve DESC", params)
    return dicts(cur)


def backlogs(cur, portals) -> dict:
    clause, params = portal_clause("portal", portals)
    waiting, unscorable = cur.execute(
        "SELECT count(*) FILTER (WHERE status IN ('pending', 'rescore')), "
        f"count(*) FILTER (WHERE status = 'unscorable') FROM submissions WHERE {clause}",
        params).fetchone()
    # the puzzles ``portals`` may see, as the puzzle list shows them
    owner, owner_params = portal_clause("owner", portals)
    pending = cur.execute("SELECT count(*) FROM puzzles WHERE status = 'pending' AND "
                          f"(owner IS NULL OR {owner})", owner_params).fetchone()[0]
    run = cur.execute("SELECT id, started_at, finished_at, status FROM job_runs WHERE "
                      "job = 'nightly' ORDER BY started_at DESC LIMIT 1").fetchone()
    return {"scoring": waiting, "unscorable": unscorable, "analysis": pending,
            "verdicts": len(left_to_judge(cur, portals)),
            "nightly": None if run is None else dict(zip(("id", "started_at", "finished_at",
                                                          "status"), run))}


def _queue_where(portals, tournament, state, player, max_p, reason=None, level=None):
    clause, params = portal_clause("f.portal", portals)
    where = [clause]
    for cond, value in (("s.tournament_id = ?", tournament), ("f.state = ?", state),
                        ("s.player_id ILIKE ? ESCAPE '\\'",
                         None if player is None else like_pattern(player)),
                        ("sc.p_value <= ?", max_p), ("p.level = ?", level),
                        ("list_contains(CAST(json_extract(sc.evidence, '$.reasons') AS "
                         "VARCHAR[]), ?)", reason)):
        if value is not None:
            where.append(cond)
            params.append(value)
    return " AND ".join(where), params


FROM = ("FROM flags f JOIN submissions s ON s.portal = f.portal AND s.submission_id = "
        "f.submission_id LEFT JOIN scores sc ON sc.portal = f.portal AND sc.submission_id = "
        "f.submission_id LEFT JOIN puzzles p ON p.id = s.puzzle_id")
# flags that stand against a player: open, or confirmed by a person
STANDING = ("(SELECT count(*) FROM flags f2 JOIN submissions s2 ON s2.portal = f2.portal "
            "AND s2.submission_id = f2.submission_id WHERE s2.portal = s.portal AND "
            "s2.player_id = s.player_id AND f2.state IN ('open', 'confirmed'))")


def flag_queue(cur, portals, *, tournament=None, state=None, player=None, max_p=None,
               reason=None, level=None, sort="newest", offset=0,
               limit=50) -> tuple[list[dict], int]:
    """One page of flags and the number matching in all: per flag what a queue card
    shows (verdict, reasons, level, time against expected, the player's standing flags).
    ``player`` matches any part of the player id, case-insensitive."""
    where, params = _queue_where(portals, tournament, state, player, max_p, reason, level)
    total = cur.execute(f"SELECT count(*) {FROM} WHERE {where}", params).fetchone()[0]
    cur.execute(
        "SELECT f.id, f.portal, f.submission_id, f.created_at, f.state, s.tournament_id, "
        "s.player_id, s.puzzle_id, s.duration_ms, sc.anomaly, sc.p_value, "
        "json_extract_string(sc.evidence, '$.verdict') AS verdict, "
        "CAST(json_extract(sc.evidence, '$.reasons') AS VARCHAR[]) AS reasons, "
        "coalesce(json_extract_string(sc.evidence, '$.puzzle_type'), p.puzzle_type) "
        "AS puzzle_type, p.level, json_extract_string(p.ratings, '$.level_name') AS level_name, "
        "TRY_CAST(json_extract(p.ratings, '$.expected_time_s') AS DOUBLE) AS expected_s, "
        f"{STANDING} AS standing {FROM} WHERE {where} "
        f"ORDER BY {SORTS[sort]} LIMIT ? OFFSET ?", params + [limit, offset])
    return dicts(cur), total


def neighbours(cur, portals, flag_id: int, *, tournament=None, state=None, player=None,
               max_p=None, reason=None, level=None,
               sort="newest") -> tuple[int | None, int | None]:
    """The flags before and after ``flag_id`` in the queue's order (None at an end); the
    flag itself need not match the queue any more (one just decided has left it)."""
    where, params = _queue_where(portals, tournament, state, player, max_p, reason, level)
    ids = [i for (i,) in cur.execute(
        f"SELECT f.id {FROM} WHERE ({where}) OR f.id = ? ORDER BY {SORTS[sort]}",
        params + [flag_id]).fetchall()]
    if flag_id not in ids:
        return None, None
    at = ids.index(flag_id)
    return (ids[at - 1] if at > 0 else None), (ids[at + 1] if at + 1 < len(ids) else None)


def levels(cur, portals) -> list[tuple[int, str]]:
    """(level, its name) of the puzzles flagged solves were made on."""
    clause, params = portal_clause("f.portal", portals)
    return cur.execute(
        "SELECT DISTINCT p.level, coalesce(json_extract_string(p.ratings, '$.level_name'), "
        f"'level ' || p.level) {FROM} WHERE p.level IS NOT NULL AND {clause} ORDER BY 1",
        params).fetchall()


def tournaments(cur, portals) -> list[str]:
    clause, params = portal_clause("portal", portals)
    return [t for (t,) in cur.execute(
        f"SELECT DISTINCT tournament_id FROM submissions WHERE tournament_id IS NOT NULL "
        f"AND {clause} ORDER BY 1", params).fetchall()]


def flag(cur, flag_id: int, portals) -> dict | None:
    """A flag with its submission's row keys and its score's evidence."""
    clause, params = portal_clause("f.portal", portals)
    cur.execute(
        "SELECT f.id, f.portal, f.submission_id, f.created_at, f.state, s.sub_key, "
        "s.tournament_id, s.player_id, s.puzzle_id, s.started_at, s.duration_ms, "
        "s.complete, s.status, s.score_error, sc.anomaly, sc.p_value, sc.evidence, "
        "sc.scored_at "
        f"{FROM} WHERE f.id = ? AND {clause}", [flag_id] + params)
    return first(cur)


def history(cur, flag_id: int) -> list[tuple]:
    return cur.execute("SELECT changed_at, state, note, actor FROM flag_history WHERE "
                       "flag_id = ? ORDER BY changed_at", [flag_id]).fetchall()


def search(cur, portals, text: str, limit: int = 50) -> list[dict]:
    """Submissions whose id, player or tournament contains ``text`` (any case), newest
    first."""
    clause, params = portal_clause("s.portal", portals)
    like = like_pattern(text)
    cur.execute(
        "SELECT s.portal, s.submission_id, s.player_id, s.tournament_id, s.puzzle_id, "
        "s.started_at, s.duration_ms, s.complete, s.status, s.score_error, sc.anomaly, "
        "f.id AS flag_id, "
        "f.state FROM submissions s LEFT JOIN scores sc ON sc.portal = s.portal AND "
        "sc.submission_id = s.submission_id LEFT JOIN flags f ON f.portal = s.portal AND "
        "f.submission_id = s.submission_id WHERE (s.submission_id ILIKE ? ESCAPE '\\' OR "
        "s.player_id ILIKE ? ESCAPE '\\' OR s.tournament_id ILIKE ? ESCAPE '\\') AND "
        f"{clause} ORDER BY s.started_at DESC LIMIT ?", [like, like, like] + params + [limit])
    return dicts(cur)


def export(cur, portals, tournament: str) -> list[dict]:
    """Every flag of a tournament with each review decision (one row per history entry)."""
    clause, params = portal_clause("f.portal", portals)
    cur.execute(
        "SELECT f.id AS flag_id, f.portal, f.submission_id, s.player_id, s.puzzle_id, "
        "f.created_at, f.state AS current_state, sc.p_value, h.changed_at, "
        "h.state AS decision, h.actor, h.note "
        f"{FROM} LEFT JOIN flag_history h ON h.flag_id = f.id "
        f"WHERE s.tournament_id = ? AND {clause} ORDER BY f.id, h.changed_at",
        [tournament] + params)
    return dicts(cur)


def submission(cur, portals, portal: str, submission_id: str) -> dict | None:
    """One solve, flagged or not, with its score's evidence and its flag (if any)."""
    clause, params = portal_clause("s.portal", portals)
    cur.execute(
        "SELECT s.portal, s.submission_id, s.sub_key, s.tournament_id, s.player_id, "
        "s.puzzle_id, s.started_at, s.duration_ms, s.complete, s.status, s.score_error, "
        "sc.anomaly, sc.p_value, sc.evidence, sc.scored_at, f.id AS flag_id, "
        "f.state AS flag_state FROM submissions s LEFT JOIN scores sc ON "
        "sc.portal = s.portal AND sc.submission_id = s.submission_id LEFT JOIN flags f ON "
        "f.portal = s.portal AND f.submission_id = s.submission_id "
        f"WHERE s.portal = ? AND s.submission_id = ? AND {clause}",
        [portal, submission_id] + params)
    return first(cur)


def puzzle_list(cur, portals) -> list[dict]:
    """Every puzzle ``portals`` may see, with its state, level and its solves and flags
    (counted within ``portals``), most recently registered first."""
    clause, params = portal_clause("s.portal", portals)
    owner, owner_params = portal_clause("p.owner", portals)
    cur.execute(
        "SELECT p.id, p.puzzle_type, p.status, p.level, "
        "json_extract_string(p.ratings, '$.level_name') AS level_name, "
        "TRY_CAST(json_extract(p.ratings, '$.expected_time_s') AS DOUBLE) AS expected_s, "
        "p.registered_at, count(s.sub_key) AS solves, "
        "count(f.id) FILTER (WHERE f.state = 'open') AS open_flags "
        "FROM puzzles p LEFT JOIN submissions s ON s.puzzle_id = p.id AND "
        f"{clause} LEFT JOIN flags f ON f.portal = s.portal AND "
        f"f.submission_id = s.submission_id WHERE (p.owner IS NULL OR {owner}) "
        "GROUP BY ALL ORDER BY p.registered_at DESC, p.id", params + owner_params)
    return dicts(cur)


def puzzle_solves(cur, portals, puzzle_id: str, limit: int = 50) -> list[dict]:
    """A puzzle's latest solves within ``portals``, with their flags."""
    clause, params = portal_clause("s.portal", portals)
    cur.execute(
        "SELECT s.portal, s.submission_id, s.player_id, s.tournament_id, s.started_at, "
        "s.duration_ms, s.complete, s.status, sc.p_value, f.id AS flag_id, f.state "
        "FROM submissions s LEFT JOIN scores sc ON sc.portal = s.portal AND "
        "sc.submission_id = s.submission_id LEFT JOIN flags f ON f.portal = s.portal AND "
        f"f.submission_id = s.submission_id WHERE s.puzzle_id = ? AND {clause} "
        "ORDER BY s.started_at DESC LIMIT ?", [puzzle_id] + params + [limit])
    return dicts(cur)
