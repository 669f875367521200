"""The flag queue, a flag's page with its review form, and recording a decision."""

from __future__ import annotations

import urllib.parse

from aiohttp import web

from ..ingest import ValidationError
from ..states import REVIEW_STATES, FlagState
from ..store.repository import console as sql
from ..web.auth import Principal
from ..web.context import read
from ..web.organiser import record_review
from .pages import FORM, NotFound, choice, page, render
from .solves import solve_view

PAGE_SIZE = 50
STATES = (FlagState.OPEN.value, FlagState.CLEARED.value, FlagState.CONFIRMED.value,
          FlagState.WITHDRAWN.value, "any")  # the queue's filter, in the order offered
# evidence strength filters: the combined p-value at most
STRENGTHS = {"any": None, "1e-3": 1e-3, "1e-5": 1e-5, "1e-6": 1e-6}
STRENGTH_WORDS = {"any": "any", "1e-3": "below 1 in 1,000", "1e-5": "below 1 in 100,000",
                  "1e-6": "below 1 in a million"}
DECISIONS = {FlagState.CLEARED: "Clear (honest)", FlagState.CONFIRMED: "Confirm (cheating)",
             FlagState.OPEN: "Reopen"}


@page
async def flag_queue(request: web.Request, who: Principal) -> web.Response:
    state = choice(request, "state", STATES, FlagState.OPEN.value)
    sort = choice(request, "sort", tuple(sql.SORTS), "newest")
    strength = choice(request, "strength", tuple(STRENGTHS), "any")
    tournament = request.query.get("tournament") or None
    player = request.query.get("player") or None
    try:
        page_no = max(1, int(request.query.get("page", "1")))
    except ValueError:
        raise ValidationError("page", "must be a page number", 400) from None
    rows, total = await read(request, sql.flag_queue, who.visible(), tournament=tournament,
                             state=None if state == "any" else state, player=player,
                             max_p=STRENGTHS[strength], sort=sort,
                             offset=(page_no - 1) * PAGE_SIZE, limit=PAGE_SIZE)
    pages = max(1, -(-total // PAGE_SIZE))
    query = {k: v for k, v in (("tournament", tournament), ("state", state),
                               ("player", player), ("strength", strength), ("sort", sort))
             if v}

    def link(n):
        return "/ui/flags?" + urllib.parse.urlencode({**query, "page": n})

    tournaments = await read(request, sql.tournaments, who.visible())
    return render(request, "flags.html", {
        "title": "Flags", "rows": rows, "total": total, "page": page_no, "pages": pages,
        "prev": link(page_no - 1) if page_no > 1 else None,
        "next": link(page_no + 1) if page_no < pages else None,
        "tournaments": tournaments, "f": {"tournament": tournament or "", "state": state,
                                           "player": player or "", "strength": strength,
                                           "sort": sort},
        "states": STATES, "sorts": tuple(sql.SORTS), "strengths": STRENGTH_WORDS,
        "export": (f"/ui/tournaments/{urllib.parse.quote(tournament, safe='')}/flags.csv"
                   if tournament else None)})


def _flag_id(request: web.Request) -> int:
    try:
        return int(request.match_info["id"])
    except ValueError:
        raise NotFound("There is no such flag.") from None


@page
async def flag_page(request: web.Request, who: Principal) -> web.Response:
    flag_id = _flag_id(request)
    row = await read(request, sql.flag, flag_id, who.visible())
    if row is None:
        raise NotFound(f"There is no flag {flag_id}.")
    history = await read(request, sql.history, flag_id)
    decisions = [(s, DECISIONS[s]) for s in REVIEW_STATES if s != row["state"]
                 and not (s == FlagState.OPEN and row["state"] == FlagState.WITHDRAWN)]
    return render(request, "flag.html", {
        "title": f"Flag {flag_id}", "flag": row, "history": history, "decisions": decisions,
        **await solve_view(request, row)})


@page
async def review(request: web.Request, who: Principal) -> web.Response:
    flag_id = _flag_id(request)
    form = request[FORM]
    state = str(form.get("state", ""))
    if state not in REVIEW_STATES:
        raise ValidationError("decision", "choose clear, confirm or reopen", 400)
    note = str(form.get("note", "")).strip() or None
    if note is not None and len(note) > 4000:
        raise ValidationError("note", "at most 4,000 characters", 400)
    if not who.can_review:
        raise ValidationError(None, "you may not review flags", 403)
    history = await record_review(request, who, flag_id, state, note)
    if history is None:
        raise NotFound(f"There is no flag {flag_id}.")
    raise web.HTTPSeeOther(f"/ui/flags/{flag_id}#history")


