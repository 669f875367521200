"""The overview: per tournament, solves and flags; the backlogs."""

from __future__ import annotations

from aiohttp import web

from ..states import FlagState
from ..store.repository import console as sql
from ..web.auth import Principal
from ..web.context import CTX, read
from .pages import page, render


@page
async def overview(request: web.Request, who: Principal) -> web.Response:
    rows = await read(request, sql.overview, who.visible())
    backlogs = await read(request, sql.backlogs, who.visible())
    fpr = request.app[CTX].settings.scoring_fpr
    for r in rows:
        flagged = sum(r[s] for s in (FlagState.OPEN, FlagState.CLEARED, FlagState.CONFIRMED))
        r["flag_rate"] = flagged / r["scored"] if r["scored"] else None
    return render(request, "overview.html", {"title": "Overview", "rows": rows,
                                              "backlogs": backlogs, "fpr": fpr})


