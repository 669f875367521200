"""Puzzles: the list with each one's state, and a puzzle's page with its facts, its
predicted fill order and its latest solves."""

from __future__ import annotations

from aiohttp import web

from fairgrid.analytics.puzzle_model import grid_facts

from .. import documents
from ..store.repository import console as sql
from ..store.repository import puzzles as puzzle_sql
from ..text import shown
from ..web.auth import Principal
from ..web.context import read
from . import svg
from .pages import NotFound, mmss, page, render
from .solves import expected_time, flat, grid_of


@page
async def puzzle_page(request: web.Request, who: Principal) -> web.Response:
    pid = request.match_info["id"]
    row = await read(request, puzzle_sql.puzzle_document, pid)
    if row is None or not (row["owner"] is None or who.sees(row["owner"])):
        raise NotFound(f"There is no puzzle {pid!r}.")
    doc = documents.puzzle(row)
    box_size, shape, _, _ = grid_of(doc, 0)
    givens = grid_facts(doc["puzzle_type"], doc["givens"])[0].tolist()
    board = None
    if doc["predicted_order"]:
        ranks = [r or None for r in flat(doc["predicted_order"])]
        board = svg.board(box_size, givens, ranks, max_rank=max(1, sum(1 for g in givens
                                                                   if not g)),
                          title="Predicted fill order", id_prefix="pz", shape=shape)
    ratings = doc["ratings"] or {}
    solves = await read(request, sql.puzzle_solves, who.visible(), pid)
    return render(request, "puzzle.html", {
        "title": f"Puzzle {shown(pid)}", "p": doc, "board": board,
        "level": ratings.get("level_name"), "registered": row["registered_at"],
        "expected": expected_time(ratings), "solves": solves})


@page
async def puzzle_list(request: web.Request, who: Principal) -> web.Response:
    rows = await read(request, sql.puzzle_list, who.visible())
    for r in rows:
        r["expected"] = mmss(1000 * r["expected_s"]) if r["expected_s"] else None
    return render(request, "puzzles.html", {"title": "Puzzles", "rows": rows})
