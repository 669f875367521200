"""Organiser queries (organiser or admin token): puzzles, submissions, flags, players."""

from __future__ import annotations

import asyncio
import base64
import json
from datetime import datetime, timezone

from aiohttp import web

from .context import CTX, error, require_token
from .validate import ValidationError, parse_json, parse_time

MAX_LIMIT = 500


def _iso(value):
    return value.isoformat() if value is not None else None


def _loads(value):
    return None if value is None else json.loads(value)


async def get_puzzle(request: web.Request) -> web.Response:
    require_token(request, admin=False)
    ctx = request.app[CTX]
    rows = await asyncio.to_thread(ctx.store.read_dicts, "SELECT * FROM puzzles WHERE id = ?",
                                   [request.match_info["id"]])
    if not rows:
        return error(404, f"no puzzle {request.match_info['id']!r}")
    row = rows[0]
    size = row["puzzle_order"] ** 2

    def grid(values):
        return None if values is None else [values[r * size:(r + 1) * size] for r in range(size)]

    return web.json_response({
        "id": row["id"], "status": row["status"], "givens": row["givens"],
        "order": row["puzzle_order"], "solution": row["solution"], "error": row["error"],
        "registered_at": _iso(row["registered_at"]), "analysed_at": _iso(row["analysed_at"]),
        "level": row["level"], "ratings": _loads(row["ratings"]),
        "sa_median_steps": row["sa_median_steps"], "sa_capped_runs": row["sa_capped_runs"],
        "order_basis_runs": row["order_basis_runs"],
        "predicted_order": grid(_loads(row["predicted_order"])),
        "order_median": grid(_loads(row["order_median"])),
        "order_spread": grid(_loads(row["order_spread"])),
    })


async def get_submission(request: web.Request) -> web.Response:
    require_token(request, admin=False)
    ctx = request.app[CTX]
    portal, sid = request.match_info["portal"], request.match_info["submission_id"]
    rows = await asyncio.to_thread(
        ctx.store.read_dicts, "SELECT * FROM submissions WHERE portal = ? AND submission_id = ?",
        [portal, sid])
    if not rows:
        return error(404, f"no submission {sid!r} from portal {portal!r}")
    row = rows[0]
    moves = await asyncio.to_thread(
        ctx.store.read, "SELECT t_ms, cell, digit, note FROM moves WHERE sub_key = ? "
        "ORDER BY seq", [row["sub_key"]])
    scored = await asyncio.to_thread(
        ctx.store.read_dicts, "SELECT sc.scored_at, sc.evidence, f.id AS flag_id, f.state "
        "FROM scores sc LEFT JOIN flags f ON f.portal = sc.portal AND "
        "f.submission_id = sc.submission_id WHERE sc.portal = ? AND sc.submission_id = ?",
        [portal, sid])
    score = None
    if scored:
        score = json.loads(scored[0]["evidence"])
        score["scored_at"] = _iso(scored[0]["scored_at"])
        score["flag"] = (None if scored[0]["flag_id"] is None else
                         {"id": scored[0]["flag_id"], "state": scored[0]["state"]})
    return web.json_response({
        "portal": portal, "submission_id": sid, "status": row["status"],
        "tournament_id": row["tournament_id"], "player_id": row["player_id"],
        "puzzle_id": row["puzzle_id"], "started_at": _iso(row["started_at"]),
        "received_at": _iso(row["received_at"]),
        "committed_at": _iso(row["committed_at"]), "complete": row["complete"],
        "duration_ms": row["duration_ms"], "n_moves": row["n_moves"],
        "moves": [{"t_ms": t, "cell": c, "digit": d, "kind": "note" if n else "place"}
                  for t, c, d, n in moves],
        "score": score,
    })




def _query_time(request: web.Request, name: str) -> datetime | None:
    text = request.query.get(name)
    return None if text is None else parse_time(text, name, 400)


def _query_number(request: web.Request, name: str, convert, default, lo, hi):
    text = request.query.get(name)
    if text is None:
        return default
    try:
        value = convert(text)
    except ValueError:
        raise ValidationError(name, f"must be a number, got {text!r}", 400) from None
    if not lo <= value <= hi:
        raise ValidationError(name, f"must be between {lo} and {hi}", 400)
    return value


def _encode_cursor(created_at: datetime, flag_id: int) -> str:
    return base64.urlsafe_b64encode(json.dumps([created_at.isoformat(), flag_id]).encode()).decode()


def _decode_cursor(text: str) -> tuple[datetime, int]:
    try:
        at, fid = json.loads(base64.urlsafe_b64decode(text.encode()))
        return datetime.fromisoformat(at), int(fid)
    except (ValueError, TypeError):
        raise ValidationError("cursor", "is not a cursor this API returned", 400) from None


FLAG_COLUMNS = ("f.id, f.portal, f.submission_id, f.created_at, f.state, f.reasons, "
                "s.tournament_id, s.player_id, s.puzzle_id, sc.anomaly, sc.p_value")


def flags_query(*, tournament=None, player=None, since=None, min_score=None, cursor=None,
                limit=50) -> tuple[str, list]:
    """The SQL of the flag list (newest first, keyset pagination); shared by the API and
    ``fairgrid flags`` when it reads the database file itself."""
    where, params = [], []
    for clause, value in (("s.tournament_id = ?", tournament), ("s.player_id = ?", player),
                          ("f.created_at >= ?", since), ("sc.anomaly >= ?", min_score)):
        if value is not None:
            where.append(clause)
            params.append(value)
    if cursor is not None:
        at, fid = cursor
        where.append("(f.created_at < ? OR (f.created_at = ? AND f.id < ?))")
        params += [at, at, fid]
    sql = (f"SELECT {FLAG_COLUMNS} FROM flags f JOIN submissions s ON s.portal = f.portal "
           "AND s.submission_id = f.submission_id LEFT JOIN scores sc ON sc.portal = f.portal "
           "AND sc.submission_id = f.submission_id"
           + (" WHERE " + " AND ".join(where) if where else "")
           + " ORDER BY f.created_at DESC, f.id DESC LIMIT ?")
    return sql, params + [limit]


def flag_json(r: dict) -> dict:
    return {"id": r["id"], "portal": r["portal"], "submission_id": r["submission_id"],
            "created_at": _iso(r["created_at"]), "state": r["state"],
            "reasons": _loads(r["reasons"]), "tournament_id": r["tournament_id"],
            "player_id": r["player_id"], "puzzle_id": r["puzzle_id"],
            "anomaly": r["anomaly"], "p_value": r["p_value"]}


async def get_flags(request: web.Request) -> web.Response:
    """Flagged solves, newest first, filtered, paginated with an opaque cursor."""
    require_token(request, admin=False)
    limit = _query_number(request, "limit", int, 50, 1, MAX_LIMIT)
    cursor = _decode_cursor(request.query["cursor"]) if "cursor" in request.query else None
    sql, params = flags_query(
        tournament=request.query.get("tournament"), player=request.query.get("player"),
        since=_query_time(request, "since"),
        min_score=_query_number(request, "min_score", float, None, float("-inf"), float("inf")),
        cursor=cursor, limit=limit + 1)
    rows = await asyncio.to_thread(request.app[CTX].store.read_dicts, sql, params)
    more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = _encode_cursor(rows[-1]["created_at"], rows[-1]["id"]) if more else None
    doc = {"flags": [flag_json(r) for r in rows], "next_cursor": next_cursor}
    if "fdr" in request.query:
        doc["bh"] = await _benjamini_hochberg(request)
    return web.json_response(doc)


async def _benjamini_hochberg(request: web.Request) -> dict:
    """Benjamini–Hochberg over every scored submission of one tournament (``?fdr=q``)."""
    from fairgrid.analytics.calibration import bh

    q = _query_number(request, "fdr", float, None, 1e-9, 1.0)
    tournament = request.query.get("tournament")
    if tournament is None:
        raise ValidationError("fdr", "needs tournament=...: the correction is per tournament",
                              400)
    rows = await asyncio.to_thread(
        request.app[CTX].store.read,
        "SELECT s.portal, s.submission_id, sc.p_value FROM submissions s JOIN scores sc ON "
        "sc.portal = s.portal AND sc.submission_id = s.submission_id WHERE "
        "s.tournament_id = ? AND sc.p_value IS NOT NULL ORDER BY sc.p_value", [tournament])
    rejected = bh([r[2] for r in rows], q)
    return {"q": q, "tournament": tournament, "scored": len(rows),
            "rejected": [{"portal": r[0], "submission_id": r[1], "p_value": r[2]}
                         for r, keep in zip(rows, rejected) if keep]}


async def get_player(request: web.Request) -> web.Response:
    """A player's submissions, newest first, and the aggregate evidence so far."""
    require_token(request, admin=False)
    portal, player = request.match_info["portal"], request.match_info["player_id"]
    rows = await asyncio.to_thread(
        request.app[CTX].store.read_dicts,
        "SELECT s.submission_id, s.tournament_id, s.puzzle_id, s.started_at, s.duration_ms, "
        "s.n_moves, s.complete, s.status, sc.anomaly, sc.p_value, "
        "EXISTS (SELECT 1 FROM flags f WHERE f.portal = s.portal AND "
        "f.submission_id = s.submission_id AND f.state <> 'cleared') AS flagged "
        "FROM submissions s LEFT JOIN scores sc ON sc.portal = s.portal AND "
        "sc.submission_id = s.submission_id WHERE s.portal = ? AND s.player_id = ? "
        "ORDER BY s.started_at DESC", [portal, player])
    if not rows:
        return error(404, f"no submissions from player {player!r} of portal {portal!r}")
    subs = [{"submission_id": r["submission_id"], "tournament_id": r["tournament_id"],
             "puzzle_id": r["puzzle_id"], "started_at": _iso(r["started_at"]),
             "duration_ms": r["duration_ms"], "n_moves": r["n_moves"],
             "complete": r["complete"], "status": r["status"], "anomaly": r["anomaly"],
             "flagged": r["flagged"]} for r in rows]
    from fairgrid.analytics.calibration import stouffer
    pvals = [r["p_value"] for r in rows if r["p_value"] is not None]
    z = stouffer(pvals) if pvals else None
    threshold = request.app[CTX].settings.scoring_player_z
    return web.json_response({
        "portal": portal, "player_id": player,
        "aggregate": {"submissions": len(subs),
                      "complete": sum(1 for s in subs if s["complete"]),
                      "scored": sum(1 for s in subs if s["status"] == "scored"),
                      "flagged": sum(1 for s in subs if s["flagged"]),
                      "stouffer_z": None if z is None else round(z, 3),
                      "player_flag_threshold": threshold,
                      "player_flagged": z is not None and z >= threshold},
        "submissions": subs})


REVIEW_STATES = ("cleared", "confirmed")


async def review_flag(request: web.Request) -> web.Response:
    """``POST /v1/flags/{id}/review`` (admin): ``{"state": "cleared"|"confirmed", "note"}``.

    The decision is a new ``flag_history`` row; the flag keeps its whole history. A
    cleared solve rejoins the honest population."""
    require_token(request, admin=True)
    ctx = request.app[CTX]
    try:
        flag_id = int(request.match_info["id"])
    except ValueError:
        raise ValidationError("id", "must be a flag id (an integer)", 404) from None
    body = parse_json(await request.read())
    if not isinstance(body, dict):
        raise ValidationError(None, "the body must be a JSON object", 422)
    state = body.get("state")
    if state not in REVIEW_STATES:
        raise ValidationError("state", f"must be one of {list(REVIEW_STATES)}", 422)
    note = body.get("note")
    if note is not None and (not isinstance(note, str) or len(note) > 4000):
        raise ValidationError("note", "must be a string of at most 4,000 characters", 422)
    actor = body.get("actor")
    if actor is not None and (not isinstance(actor, str) or len(actor) > 200):
        raise ValidationError("actor", "must be a string of at most 200 characters", 422)
    now = datetime.now(timezone.utc)

    def write(con):
        row = con.execute("SELECT state FROM flags WHERE id = ?", [flag_id]).fetchone()
        if row is None:
            return None
        con.execute("UPDATE flags SET state = ? WHERE id = ?", [state, flag_id])
        con.execute("INSERT INTO flag_history VALUES (?, ?, ?, ?, ?)",
                    [flag_id, now, state, note, actor or "organiser"])
        return con.execute("SELECT changed_at, state, note, actor FROM flag_history "
                           "WHERE flag_id = ? ORDER BY changed_at", [flag_id]).fetchall()

    history = await asyncio.wrap_future(ctx.store.writer.call(write))
    if history is None:
        return error(404, f"no flag {flag_id}")
    return web.json_response({"id": flag_id, "state": state, "history": [
        {"changed_at": _iso(at), "state": st, "note": nt, "actor": ac}
        for at, st, nt, ac in history]})
