"""Notifications sent to the portals, and sending one again."""

from __future__ import annotations

from datetime import datetime, timezone

from aiohttp import web

from ..ingest import ValidationError
from ..store.repository import outbox as outbox_sql
from ..web.auth import Principal
from ..web.context import CTX, read, write
from .pages import NotFound, choice, page, render, when


@page
async def notifications(request: web.Request, who: Principal) -> web.Response:
    state = choice(request.query, "state", ("failed", "pending", "delivered", "any"), "any")
    rows = await read(request, outbox_sql.listing, state=None if state == "any" else state,
                      portals=who.visible(), limit=200)
    return render(request, "notifications.html", {
        "title": "Notifications", "rows": rows, "state": state, "when": when,
        "states": ("any", "failed", "pending", "delivered")})


@page
async def redeliver(request: web.Request, who: Principal) -> web.Response:
    event_id = request.match_info["id"]
    if who.role != "admin":
        raise ValidationError(None, "only an admin may redeliver notifications", 403)
    portal = await read(request, outbox_sql.portal_of, event_id)
    if portal is None or not who.sees(portal) or not await write(
            request, outbox_sql.redeliver, event_id, datetime.now(timezone.utc)):
        raise NotFound(f"There is no notification {event_id!r}.")
    request.app[CTX].notifier.wake()
    raise web.HTTPSeeOther("/ui/notifications?state=pending")


