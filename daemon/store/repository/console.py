"""What the organiser console reads: per-tournament overview, the flag queue with
filters, sort and pages, one flag with everything a reviewer needs, search, CSV export.
Every read takes ``portals`` (None: every portal) and never returns rows of others."""

from __future__ import annotations

from ...states import FlagState
from .rows import dicts, first, portal_clause

SORTS = {"newest": "f.created_at DESC, f.id DESC", "oldest": "f.created_at ASC, f.id ASC",
         "strongest": "sc.p_value ASC NULLS LAST, f.id DESC"}


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
    pending = cur.execute("SELECT count(*) FROM puzzles WHERE status = 'pending'").fetchone()[0]
    run = cur.execute("SELECT id, started_at, finished_at, status FROM job_runs WHERE "
                      "job = 'nightly' ORDER BY started_at DESC LIMIT 1").fetchone()
    return {"scoring": waiting, "unscorable": unscorable, "analysis": pending,
            "nightly": None if run is None else dict(zip(("id", "started_at", "finished_at",
                                                          "status"), run))}


def _queue_where(portals, tournament, state, player, max_p):
    clause, params = portal_clause("f.portal", portals)
    where = [clause]
    for cond, value in (("s.tournament_id = ?", tournament), ("f.state = ?", state),
                        ("s.player_id = ?", player), ("sc.p_value <= ?", max_p)):
        if value is not None:
            where.append(cond)
            params.append(value)
    return " AND ".join(where), params


FROM = ("FROM flags f JOIN submissions s ON s.portal = f.portal AND s.submission_id = "
        "f.submission_id LEFT JOIN scores sc ON sc.portal = f.portal AND sc.submission_id = "
        "f.submission_id")


def flag_queue(cur, portals, *, tournament=None, state=None, player=None, max_p=None,
               sort="newest", offset=0, limit=50) -> tuple[list[dict], int]:
    """One page of flags and the number matching in all."""
    where, params = _queue_where(portals, tournament, state, player, max_p)
    total = cur.execute(f"SELECT count(*) {FROM} WHERE {where}", params).fetchone()[0]
    cur.execute(
        "SELECT f.id, f.portal, f.submission_id, f.created_at, f.state, s.tournament_id, "
        "s.player_id, s.puzzle_id, s.duration_ms, sc.anomaly, sc.p_value, "
        f"json_extract_string(sc.evidence, '$.verdict') AS verdict {FROM} WHERE {where} "
        f"ORDER BY {SORTS[sort]} LIMIT ? OFFSET ?", params + [limit, offset])
    return dicts(cur), total


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
    """Submissions whose id, player or tournament starts with ``text``, newest first."""
    clause, params = portal_clause("s.portal", portals)
    like = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    cur.execute(
        "SELECT s.portal, s.submission_id, s.player_id, s.tournament_id, s.puzzle_id, "
        "s.started_at, s.duration_ms, s.complete, s.status, s.score_error, sc.anomaly, "
        "f.id AS flag_id, "
        "f.state FROM submissions s LEFT JOIN scores sc ON sc.portal = s.portal AND "
        "sc.submission_id = s.submission_id LEFT JOIN flags f ON f.portal = s.portal AND "
        "f.submission_id = s.submission_id WHERE (s.submission_id LIKE ? ESCAPE '\\' OR "
        "s.player_id LIKE ? ESCAPE '\\' OR s.tournament_id LIKE ? ESCAPE '\\') AND "
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
