"""Player verdicts in the API: the queue (``GET /v1/players``), the verdict on the player
document, and a person's decision (``POST /v1/players/{portal}/{player}/review``)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from aiohttp import web

from fairgrid.analytics.player_verdict import PlayerVerdict

from .. import documents
from ..documents import iso
from ..ingest import ValidationError, parse_json
from ..store.repository import players as sql
from .auth import AuthError
from .context import read, write
from .organiser import MAX_LIMIT, REVIEW_STATES, _query_number, actor_name
from .responses import cursor as cursor_of, error, json_response, known_query, read_cursor
from .tokens import require_token

PLAYER_STATES = sql.STATES
PLAYERS_QUERY = frozenset({"state", "limit", "cursor"})


def _position(row: dict) -> list:
    return [row["p_value"], row["portal"], row["player_id"]]


def _read_position(p, portal, player) -> tuple[float, str, str]:
    return float(p), str(portal), str(player)


async def get_players(request: web.Request) -> web.Response:
    """Player verdicts, strongest evidence first, by ``state`` (default every state)."""
    who = require_token(request, admin=False)
    known_query(request, PLAYERS_QUERY)
    state = request.query.get("state")
    if state is not None and state not in PLAYER_STATES:
        raise ValidationError("state", f"must be one of {', '.join(PLAYER_STATES)}", 400)
    limit = _query_number(request, "limit", int, 50, 1, MAX_LIMIT)
    cursor = read_cursor(request, _read_position)
    rows = await read(request, sql.listing, state=state, portals=who.visible(),
                      cursor=cursor, limit=limit + 1)
    more = len(rows) > limit
    rows = rows[:limit]
    players = []
    for r in rows:
        v = PlayerVerdict.from_json(json.loads(r["verdict"]))
        players.append({"portal": r["portal"], "player_id": r["player_id"],
                        "state": r["state"], "flagged": r["flagged"],
                        "p_value": r["p_value"], "solves": r["solves"],
                        "summary": v.summary, "judged_at": iso(r["judged_at"]),
                        "flagged_at": iso(r["flagged_at"])})
    return json_response({"players": players,
                          "next_cursor": cursor_of(_position(rows[-1])) if more else None})


async def review_player(request: web.Request) -> web.Response:
    """``{"state": "cleared"|"confirmed"|"open", "note"}``: a person's decision on a
    player's verdict, as on a flag (organiser or admin within their portals, or an admin
    service token naming its ``actor``). Clearing remembers the solves judged so far:
    only other solves can flag the player again."""
    who = require_token(request, admin=False)
    if not who.can_review:
        raise AuthError("reviews need a person's token or an admin token; an organiser "
                        "service token only reads", 403)
    known_query(request)
    portal, player = request.match_info["portal"], request.match_info["player_id"]
    body = parse_json(await request.read())
    if not isinstance(body, dict):
        raise ValidationError(None, "the body must be a JSON object", 422)
    state = body.get("state")
    if state not in REVIEW_STATES:
        raise ValidationError("state", f"must be one of {list(REVIEW_STATES)}", 422)
    note = body.get("note")
    if note is not None and (not isinstance(note, str) or len(note) > 4000):
        raise ValidationError("note", "must be a string of at most 4,000 characters", 422)
    history = (await review(request, who, portal, player, state, note, body.get("actor"))
               if who.sees(portal) else None)
    if history is None:
        return error(404, f"no verdict on player {player!r} of portal {portal!r}")
    row = await read(request, sql.verdict, portal, player)
    return json_response({"portal": portal, "player_id": player,
                          "verdict": documents.player_verdict(row, history)})


async def review(request: web.Request, who, portal: str, player: str, state: str,
                 note: str | None, actor=None) -> list[tuple] | None:
    """Record a decision on a player as ``who`` (the API's and the console's); None when
    the player has no verdict."""
    name = actor_name(who, actor)
    row = await read(request, sql.verdict, portal, player)
    if row is None:
        return None
    seen = [sid for sid, _, _ in (await read(request, sql.seasons, [(portal, player)]))
            .get((portal, player), [])]
    return await write(request, sql.review, portal, player, state, note, name,
                       datetime.now(timezone.utc), seen,
                       "flagged" if row["flagged"] else "clear")
