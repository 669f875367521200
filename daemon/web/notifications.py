"""Outgoing notifications: a portal's endpoint (admin) and the outbox (organiser reads,
admin redelivers). See ``work.notify`` for delivery."""

from __future__ import annotations

import asyncio
import base64
import secrets

from aiohttp import web

from ..documents import iso
from ..ingest import ValidationError
from ..text import ascii_int, url_problem
from ..store.records import utc_now
from ..store.repository import outbox as sql
from .tokens import require_token
from .context import CTX, read, write
from .responses import error, json_body, json_response, known_query

STATES = ("pending", "delivered", "failed")


async def _portal(request: web.Request) -> str:
    portal = request.match_info["portal"]
    ctx = request.app[CTX]
    # a portal added since the last look (fairgrid portal add) is known at once
    if portal not in ctx.settings.portals:
        await asyncio.to_thread(ctx.secrets.reload)
        if portal not in ctx.settings.portals:
            raise ValidationError("portal", f"no portal {portal!r}", 404)
    return portal


async def put_endpoint(request: web.Request) -> web.Response:
    """``{"url": "https://..."}``: events for the portal go there, signed with a new
    secret (in the answer, once; a second PUT makes a new one)."""
    require_token(request, admin=True)
    known_query(request)
    portal = await _portal(request)
    body = await json_body(request)
    if not isinstance(body, dict) or set(body) - {"url"}:
        raise ValidationError("url", "the body is {\"url\": \"https://...\"}", 422)
    url = body.get("url")
    problem = url_problem(url)
    if problem is not None:
        raise ValidationError("url", problem, 422)
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
    await write(request, sql.set_endpoint, portal, url, secret, utc_now())
    return json_response({"portal": portal, "url": url, "secret": secret})


async def delete_endpoint(request: web.Request) -> web.Response:
    require_token(request, admin=True)
    known_query(request)
    portal = request.match_info["portal"]
    # a portal taken out of the configuration keeps its endpoint until it is turned off
    if portal not in await read(request, sql.endpoints):
        portal = await _portal(request)
    await write(request, sql.set_endpoint, portal, None, None, utc_now())
    return json_response({"portal": portal, "url": None})


def _doc(r: dict) -> dict:
    return {"id": r["id"], "portal": r["portal"], "type": r["type"], "subject": r["subject"],
            "created_at": iso(r["created_at"]), "state": r["state"],
            "attempts": r["attempts"], "next_attempt_at": iso(r["next_at"]),
            "delivered_at": iso(r["delivered_at"]), "last_status": r["last_status"],
            "last_error": r["last_error"]}


async def get_notifications(request: web.Request) -> web.Response:
    who = require_token(request, admin=False)
    known_query(request, frozenset({"state", "portal", "limit"}))
    state = request.query.get("state")
    if state is not None and state not in STATES:
        raise ValidationError("state", f"must be one of {', '.join(STATES)}", 400)
    limit = ascii_int(request.query.get("limit", "100"), 9)
    if limit is None or not 1 <= limit <= 1000:
        raise ValidationError("limit", "must be between 1 and 1000", 400)
    portals = who.visible()
    if "portal" in request.query:
        wanted = request.query["portal"]
        portals = [wanted] if who.sees(wanted) else []
    rows = await read(request, sql.listing, state=state, portals=portals, limit=limit)
    stats = await read(request, sql.stats, utc_now())
    return json_response({"notifications": [_doc(r) for r in rows],
                          "totals": stats if who.portals is None else None})


async def post_redeliver(request: web.Request) -> web.Response:
    require_token(request, admin=True)
    known_query(request)
    event_id = request.match_info["id"]
    if not await write(request, sql.redeliver, event_id, utc_now()):
        return error(404, f"no notification {event_id!r}")
    request.app[CTX].notifier.wake()
    return json_response({"id": event_id, "state": "pending"})
