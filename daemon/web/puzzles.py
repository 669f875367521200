"""``POST /v1/puzzles`` (admin) and ``GET /v1/puzzles/{id}`` (organiser)."""

from __future__ import annotations

from aiohttp import web

from ..ingest import ValidationError
from ..ingest.puzzles import check_type
from ..ingest.solve import check_id
from ..store.repository import puzzles as sql
from .. import documents
from .tokens import require_token
from .context import CTX, read
from .responses import error, json_body, json_response, known_query


async def post_puzzles(request: web.Request) -> web.Response:
    """Register one puzzle ``{"id", "givens", "puzzle_type"?}`` or many
    ``{"puzzles": [...]}``; ``puzzle_type`` is ``sudoku`` unless said."""
    require_token(request, admin=True)
    known_query(request)
    data = await json_body(request)
    many = "puzzles" in data
    items = data["puzzles"] if many else [data]
    if not isinstance(items, list) or not items:
        raise ValidationError("puzzles", "must be a non-empty list")
    checked = []
    for i, item in enumerate(items):
        where = f"puzzles[{i}]." if many else ""
        if not isinstance(item, dict):
            raise ValidationError(where.rstrip(".") or None, "must be an object", 422)
        pid, givens = item.get("id"), item.get("givens")
        if not isinstance(pid, str) or not pid or len(pid) > 200:
            raise ValidationError(where + "id", "must be a string of 1..200 characters")
        check_id(pid, where + "id")
        if not isinstance(givens, str):
            raise ValidationError(where + "givens", "must be puzzle text")
        type_name = check_type(item.get("puzzle_type"), where + "puzzle_type")
        checked.append((where, pid, givens, type_name))
    # all or none: a bad puzzle anywhere in a batch registers nothing
    ctx = request.app[CTX]
    created, new = await ctx.catalog.register_many(checked, room=ctx.analysis.has_room)
    for info in new:
        ctx.analysis.schedule(info.id, len(info.solution))
    results = [{"id": pid, "status": "registered" if new else "known"}
               for (_, pid, _, _), new in zip(checked, created)]
    status = 201 if any(created) else 200
    return json_response({"puzzles": results} if many else results[0], status=status)


async def get_puzzle(request: web.Request) -> web.Response:
    """A puzzle's status, solution, ratings and predicted fill order. The fill-order keys
    keep the names of the published contract (``predicted_order``, ``order_median``,
    ``order_spread``, ``order_basis_runs``: "order" there is the fill order); ``box_size``
    is the side of a Sudoku box (``order``, deprecated, repeats it)."""
    who = require_token(request, admin=False)
    known_query(request)
    pid = request.match_info["id"]
    row = await read(request, sql.puzzle_document, pid)
    # a portal's own puzzle is for those who see that portal (another portal's 404s)
    if row is None or not (row["owner"] is None or who.sees(row["owner"])):
        return error(404, f"no puzzle {pid!r}")
    doc = documents.puzzle(row)
    if doc["status"] == "pending":  # what it waits for, when it is not its turn
        doc["waiting_for"] = request.app[CTX].analysis.waiting_for()
    return json_response(doc)
