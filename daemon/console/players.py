"""The console's player verdicts: the queue of players (``/ui/players``, by state) and a
player's case (``/ui/players/{portal}/{player}/case``): the verdict in words, each
finding with the solves behind it, every solve of the season one click away, and the
review form with its history."""

from __future__ import annotations

import json
import urllib.parse

from aiohttp import web

from fairgrid.analytics.player_verdict import PlayerVerdict, ends_of, solved_again

from ..documents import iso, receded
from ..errors import Conflict
from ..ingest import ValidationError
from ..store.repository import players as sql
from ..text import shown
from ..web.auth import Principal
from ..web.context import read
from ..web.players import review as record_review
from ..states import FlagState
from .flags import DECISIONS, seen_state
from .pages import (FORM, NotFound, case_link, choice, decision, form_kept, page, page_number,
                    render, segment)

STATES = sql.STATES + ("any",)
PAGE_SIZE = 50


@page
async def player_queue(request: web.Request, who: Principal) -> web.Response:
    state = choice(request.query, "state", STATES, "flagged")
    page_no = page_number(request.query)
    # one row beyond the page says whether there is a next one
    rows = await read(request, sql.listing, state=None if state == "any" else state,
                      portals=who.visible(), limit=PAGE_SIZE + 1,
                      offset=(page_no - 1) * PAGE_SIZE)
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    for r in rows:
        r["summary"] = PlayerVerdict.from_json(json.loads(r["verdict"])).summary
        r["flagging"] = receded(r)
        r["link"] = case_link(r["portal"], r["player_id"])

    def link(n):
        return "/ui/players?" + urllib.parse.urlencode({"state": state, "page": n})

    return render(request, "players.html", {
        "title": "Players", "rows": rows, "state": state, "states": STATES,
        "page": page_no, "prev": link(page_no - 1) if page_no > 1 and rows else None,
        "next": link(page_no + 1) if more else None, "first_page": link(1)})


def _case(request) -> tuple[str, str]:
    return request.match_info["portal"], request.match_info["player_id"]


@page
async def player_case(request: web.Request, who: Principal) -> web.Response:
    return await _case_page(request, who, *_case(request))


async def _case_page(request: web.Request, who: Principal, portal: str, player: str, *,
                     notice: str | None = None, state: str | None = None, note: str = "",
                     status: int = 200) -> web.Response:
    """The case file; with ``notice``, above a decision form holding ``state`` and
    ``note`` as the reviewer sent them."""
    row = await read(request, sql.verdict, portal, player) if who.sees(portal) else None
    if row is None:
        raise NotFound(f"There is no verdict on player {player!r} of portal {portal!r}.")
    verdict = PlayerVerdict.from_json(json.loads(row["verdict"]))
    solves = await read(request, sql.case_solves, portal, player)
    flagging = receded(row)
    behind = {}
    for f in verdict.findings:
        for sid in f.solves:
            behind.setdefault(sid, []).append(f.kind)
    for f in (flagging.findings if flagging else ()):
        for sid in f.solves if f.p < 0.05 else ():
            behind.setdefault(sid, []).append(f"{f.kind} (when flagged)")
    for k, s in enumerate(solves, 1):
        s["number"] = k
        s["behind"] = behind.get(s["submission_id"], [])
    _left_out(solves, row.get("judged_solves"))
    history = await read(request, sql.history, portal, player)
    return render(request, "player_case.html", {
        "title": f"Case: player {shown(player)}", "portal": portal, "player": player,
        "row": row, "verdict": verdict, "solves": solves, "history": history,
        "findings": [f for f in verdict.findings if f.p < 0.05],
        "others": [f for f in verdict.findings if f.p >= 0.05], "flagging": flagging,
        "flagging_findings": [f for f in flagging.findings if f.p < 0.05] if flagging else [],
        "player_link": f"/ui/players/{segment(portal)}/{segment(player)}",
        "judged_at": iso(row["judged_at"]), "notice": notice,
        "decisions": {s: words for s, words in DECISIONS.items()
                      if not (s == FlagState.OPEN and row["flagging_verdict"] is None
                              and not row["flagged"])},
        "chosen": state, "note": note}, status=status)


def _left_out(solves: list[dict], judged_solves: str | None) -> None:
    """Mark each solve the verdict did not judge with why, in words (``left_out``): its
    puzzle counts as another of its solves (``player_verdict.solved_again``), or a solve
    the verdict has not read (scored since, or one a person cleared the player on). A
    verdict stored before it kept the solves it judged marks none."""
    try:
        judged = set(json.loads(judged_solves)) if judged_solves else None
    except (ValueError, TypeError):
        judged = None
    again = solved_again([s["puzzle_id"] for s in solves], [s["complete"] for s in solves],
                         ends_of([s["started_at"] for s in solves],
                                 [s["duration_ms"] for s in solves]))
    for s, repeat in zip(solves, again):
        s["left_out"] = None
        if judged is not None and s["submission_id"] not in judged:
            s["left_out"] = ("left out: the puzzle counts once, as another of its solves"
                             if repeat else "not in this verdict")


@page
async def review_player(request: web.Request, who: Principal) -> web.Response:
    portal, player = _case(request)
    form = request[FORM]
    try:
        state, note = decision(form, who, "players", note_to_confirm=True)
    except ValidationError as exc:
        return await _case_page(request, who, portal, player, **form_kept(form, exc))
    try:
        history = (await record_review(request, who, portal, player, state, note,
                                       judged_at=str(request[FORM].get("judged_at", ""))
                                       or None,
                                       seen=seen_state(request[FORM], sql.STATES))
                   if who.sees(portal) else None)
    except Conflict as exc:
        why = (f"{exc} while you read it" if exc.field == "seen" else
               "the verdict was judged again while you read it (a new solve, a flag "
               "decision or the nightly job)")
        return await _case_page(
            request, who, portal, player, state=state, note=note or "", status=409,
            notice=f"Not recorded: {why}. Read it below; your decision and note are kept "
                   "in the form.")
    if history is None:
        raise NotFound(f"There is no verdict on player {player!r} of portal {portal!r}.")
    raise web.HTTPSeeOther(case_link(portal, player) + "#history")


def add_routes(router) -> None:
    router.add_get("/ui/players", player_queue)
    router.add_get("/ui/players/{portal}/{player_id}/case", player_case)
    router.add_post("/ui/players/{portal}/{player_id}/review", review_player)
