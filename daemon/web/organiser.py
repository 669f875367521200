"""Organiser routes (organiser or admin token): submissions, flags, players, reviews."""

from __future__ import annotations

from datetime import datetime, timezone

from aiohttp import web

from fairgrid.analytics.calibration import bh

from .. import documents
from ..ingest import ValidationError
from ..ingest.solve import one_line
from ..text import ascii_int
from ..store.repository import organiser as sql
from ..store.repository import players as players_sql
from ..documents import iso
from ..states import FLAG_STATES
from .auth import Principal
from .tokens import require_token
from .context import CTX, read, write
from .queries import decision, listing, one_page, query_number, query_time
from .responses import cursor_int, cursor_text, error, json_response, known_query

FLAG_QUERY = frozenset({"limit", "cursor", "tournament", "player", "since", "min_anomaly",
                        "min_score", "state", "fdr"})


async def get_submission(request: web.Request) -> web.Response:
    who = require_token(request, admin=False)
    known_query(request)
    portal, sid = request.match_info["portal"], request.match_info["submission_id"]
    row = await read(request, sql.submission, portal, sid) if who.sees(portal) else None
    if row is None:
        return error(404, f"no submission {sid!r} from portal {portal!r}")
    moves = await read(request, sql.moves, row["sub_key"])
    scored = await read(request, sql.score_with_flag, portal, sid)
    return json_response(documents.submission(row, moves, scored))


def _flag_position(at: str, flag_id: int) -> tuple[datetime, int]:
    return datetime.fromisoformat(cursor_text(at)), cursor_int(flag_id)


async def get_flags(request: web.Request) -> web.Response:
    """Flagged solves, newest first, filtered, paginated with an opaque cursor."""
    asked = listing(request, FLAG_QUERY, FLAG_STATES, _flag_position)
    query = {"tournament": request.query.get("tournament"),
             "player": request.query.get("player"), "since": query_time(request, "since"),
             "min_anomaly": query_number(request, "min_anomaly", float, None,
                                         float("-inf"), float("inf")),
             "state": asked.state, "cursor": asked.cursor, "limit": asked.limit + 1,
             "portals": asked.who.visible()}
    rows, next_cursor = one_page(await read(request, sql.flags, **query), asked.limit,
                                 lambda r: [r["created_at"].isoformat(), r["id"]])
    doc = {"flags": [documents.flag(r) for r in rows], "next_cursor": next_cursor}
    if "fdr" in request.query:
        doc["bh"] = await _benjamini_hochberg(request, asked.who)
    return json_response(doc)


async def _benjamini_hochberg(request: web.Request, who) -> dict:
    """Benjamini–Hochberg over every scored submission of one tournament (``?fdr=q``)."""
    q = query_number(request, "fdr", float, None, 1e-9, 1.0)
    tournament = request.query.get("tournament")
    if tournament is None:
        raise ValidationError("fdr", "needs tournament=...: the correction is per tournament",
                              400)
    rows = await read(request, sql.tournament_p_values, tournament, who.visible())
    rejected = bh([r[2] for r in rows], q)
    return {"q": q, "tournament": tournament, "scored": len(rows),
            "rejected": [{"portal": r[0], "submission_id": r[1], "p_value": r[2]}
                         for r, keep in zip(rows, rejected) if keep]}


async def get_player(request: web.Request) -> web.Response:
    """A player's submissions, newest first, and the aggregate evidence so far."""
    who = require_token(request, admin=False)
    known_query(request)
    portal, player = request.match_info["portal"], request.match_info["player_id"]
    rows = (await read(request, sql.player_submissions, portal, player)
            if who.sees(portal) else [])
    if not rows:
        return error(404, f"no submissions from player {player!r} of portal {portal!r}")
    subs = [{"submission_id": r["submission_id"], "tournament_id": r["tournament_id"],
             "puzzle_id": r["puzzle_id"], "started_at": iso(r["started_at"]),
             "duration_ms": r["duration_ms"], "n_moves": r["n_moves"],
             "complete": r["complete"], "status": r["status"],
             "score_error": r["score_error"], "anomaly": r["anomaly"],
             "flagged": r["flagged"]} for r in rows]
    z, n_flagged = documents.player_numbers(rows)
    settings = request.app[CTX].settings
    threshold = settings.scoring_player_z
    verdict = await _verdict(request, portal, player)
    return json_response({
        "portal": portal, "player_id": player,
        "aggregate": {"submissions": len(subs),
                      "complete": sum(1 for s in subs if s["complete"]),
                      "scored": sum(1 for s in subs if s["status"] == "scored"),
                      "flagged": n_flagged,
                      "stouffer_z": None if z is None else round(z, 3),
                      "player_flag_threshold": threshold,
                      "player_flag_count": settings.scoring_player_flags,
                      # one meaning of "a flagged player": the season verdict's
                      "player_flagged": verdict is not None
                      and verdict["state"] in ("flagged", "confirmed")},
        "verdict": verdict,
        "submissions": subs})


async def _verdict(request: web.Request, portal: str, player: str) -> dict | None:
    """The player's season verdict (None: not judged yet)."""
    row = await read(request, players_sql.verdict, portal, player)
    if row is None:
        return None
    return documents.player_verdict(row, await read(request, players_sql.history, portal,
                                                    player))


async def review_flag(request: web.Request) -> web.Response:
    """``POST /v1/flags/{id}/review``: ``{"state": "cleared"|"confirmed"|"open", "note",
    "seen"}``, by a person (organiser or admin, within their portals) or an admin service
    token; with ``seen`` (the flag's state as the reviewer read it), a flag another
    decision or a re-score changed since is a 409.

    The decision is a new ``flag_history`` row naming who decided; the flag keeps its
    whole history. A cleared solve rejoins the honest population; ``open`` reopens a
    decided flag (an appeal), which then waits for a new decision like any open flag."""
    d = await decision(request, FLAG_STATES)
    flag_id = ascii_int(request.match_info["id"])
    if flag_id is None:
        raise ValidationError("id", "must be a flag id (an integer)", 404)
    history = await record_review(request, d.who, flag_id, d.state, d.note, d.actor, d.seen)
    if history is None:
        return error(404, f"no flag {flag_id}")
    return json_response({"id": flag_id, "state": d.state, "history": [
        {"changed_at": iso(at), "state": st, "note": nt, "actor": ac}
        for at, st, nt, ac in history]})


async def record_review(request: web.Request, who: Principal, flag_id: int, state: str,
                        note: str | None, actor=None, seen: str | None = None
                        ) -> list[tuple] | None:
    """Write a review as ``who`` (see :func:`actor_name`); the player's verdict is judged
    again at once (a cleared solve's flag no longer counts). ``seen``: the state the
    reviewer decided on (Conflict when another decision changed it since)."""
    changed: list[int] = []
    dismissed: list[int] = []
    history = await write(request, sql.review, flag_id, state, note, actor_name(who, actor),
                          datetime.now(timezone.utc), who.visible(), seen, changed,
                          dismissed)
    verdicts = request.app[CTX].scorer.verdicts
    if verdicts is not None and changed:  # the state the flag had changes nothing
        await verdicts.after_flag_review(changed, dismissed)
    return history


def actor_name(who: Principal, actor=None) -> str:
    """Who a review's history names: the signed-in person; a service token as one, with
    the ``actor`` its client says it acts for."""
    if actor is not None:
        if who.person:
            raise ValidationError("actor", "is taken from your sign-in; leave it out", 422)
        if not isinstance(actor, str) or not actor.strip() or len(actor) > 200:
            raise ValidationError("actor", "must be a string of 1 to 200 characters", 422)
        one_line(actor, "actor")
    return who.name if actor is None else f"{who.name} for {actor.strip()}"
