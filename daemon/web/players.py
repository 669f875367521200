"""Player verdicts in the API: the queue (``GET /v1/players``), the verdict on the player
document, and a person's decision (``POST /v1/players/{portal}/{player}/review``)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from aiohttp import web

from fairgrid.analytics.player_verdict import PlayerVerdict

from .. import documents
from ..documents import iso
from ..errors import ValidationError
from ..store.repository import players as sql
from .context import CTX, read, write
from .organiser import actor_name
from .queries import decision, listing, one_page
from .responses import cursor_number, cursor_text, error, json_response

PLAYER_STATES = sql.STATES
PLAYERS_QUERY = frozenset({"state", "limit", "cursor"})


def _position(row: dict) -> list:
    return [row["rank_p"], row["portal"], row["player_id"]]


def _read_position(p, portal, player) -> tuple[float, str, str]:
    return cursor_number(p), cursor_text(portal), cursor_text(player)


async def get_players(request: web.Request) -> web.Response:
    """Player verdicts, strongest evidence first, by ``state`` (default every state)."""
    asked = listing(request, PLAYERS_QUERY, PLAYER_STATES, _read_position)
    rows, next_cursor = one_page(await read(request, sql.listing, state=asked.state,
                                            portals=asked.who.visible(), cursor=asked.cursor,
                                            limit=asked.limit + 1), asked.limit, _position)
    players = []
    for r in rows:
        v = PlayerVerdict.from_json(json.loads(r["verdict"]))
        players.append({"portal": r["portal"], "player_id": r["player_id"],
                        "state": r["state"], "flagged": r["flagged"],
                        "p_value": r["p_value"], "solves": r["solves"],
                        "summary": v.summary, "judged_at": iso(r["judged_at"]),
                        "flagged_at": iso(r["flagged_at"]),
                        "flagging": documents.flagging_verdict(r, findings=False)})
    return json_response({"players": players, "next_cursor": next_cursor})


async def review_player(request: web.Request) -> web.Response:
    """``{"state": "cleared"|"confirmed"|"open", "note", "judged_at", "seen"}``: a
    person's decision on a player's verdict, as on a flag (organiser or admin within
    their portals, or an admin service token naming its ``actor``). Clearing remembers
    the solves the verdict judged: only other solves can flag the player again."""
    d = await decision(request, sql.STATES,
                       frozenset({"state", "note", "actor", "judged_at", "seen"}))
    portal, player = request.match_info["portal"], request.match_info["player_id"]
    history = (await review(request, d.who, portal, player, d.state, d.note, d.actor,
                            d.judged_at, d.seen)
               if d.who.sees(portal) else None)
    if history is None:
        return error(404, f"no verdict on player {player!r} of portal {portal!r}")
    row = await read(request, sql.verdict, portal, player)
    return json_response({"portal": portal, "player_id": player,
                          "verdict": documents.player_verdict(row, history)})


async def review(request: web.Request, who, portal: str, player: str, state: str,
                 note: str | None, actor=None, judged_at: str | None = None,
                 seen: str | None = None) -> list[tuple] | None:
    """Record a decision on a player as ``who`` (the API's and the console's); None when
    the player has no verdict. With ``judged_at`` (the verdict's, as the caller read it)
    a verdict judged again since is a 409: the decision was made on another one; with
    ``seen`` (the case's state as the console showed it), so is another decision made
    since. Clearing remembers the solves the verdict judged."""
    name = actor_name(who, actor)
    history = await write(request, sql.review, portal, player, state, note, name,
                          datetime.now(timezone.utc), _instant(judged_at), seen)
    verdicts = request.app[CTX].scorer.verdicts
    if history is not None and verdicts is not None:
        # a person decided on the case itself: a cleared solve flag's judgement still to
        # come must not end a case just reopened or confirmed
        verdicts.decided(portal, player)
    return history


def _instant(text: str | None) -> datetime | None:
    """A decision's ``judged_at`` as an instant (any ISO 8601 spelling of it); 422 for
    text that is none."""
    if text is None:
        return None
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise ValidationError("judged_at", "must be the verdict's judged_at as the API "
                              "gave it (ISO 8601)", 422) from None
    if at.tzinfo is None:
        raise ValidationError("judged_at", "must name its time zone, as the API gives it",
                              422)
    return at
