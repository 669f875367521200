"""``POST /v1/puzzles`` (admin) and ``GET /v1/puzzles/{id}`` (organiser)."""

from __future__ import annotations

from aiohttp import web

from ..ingest import ValidationError, parse_json
from ..store.repository import puzzles as sql
from ..documents import iso, loads
from .context import CTX, error, json_response, known_query, read, require_token


async def post_puzzles(request: web.Request) -> web.Response:
    """Register one puzzle ``{"id", "givens"}`` or many ``{"puzzles": [...]}``."""
    require_token(request, admin=True)
    known_query(request)
    data = parse_json(await request.read())
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
        if not isinstance(givens, str):
            raise ValidationError(where + "givens", "must be puzzle text")
        checked.append((where, pid, givens))
    # all or none: a bad puzzle anywhere in a batch registers nothing
    created = await request.app[CTX].puzzles.register_many(checked)
    results = [{"id": pid, "status": "registered" if new else "known"}
               for (_, pid, _), new in zip(checked, created)]
    status = 201 if any(created) else 200
    return json_response({"puzzles": results} if many else results[0], status=status)


async def get_puzzle(request: web.Request) -> web.Response:
    """A puzzle's status, solution, ratings and predicted fill order. The fill-order keys
    keep the names of the published contract (``predicted_order``, ``order_median``,
    ``order_spread``, ``order_basis_runs``: "order" there is the fill order); ``order``
    is the block side."""
    require_token(request, admin=False)
    known_query(request)
    pid = request.match_info["id"]
    row = await read(request, sql.puzzle_document, pid)
    if row is None:
        return error(404, f"no puzzle {pid!r}")
    size = row["puzzle_order"] ** 2

    def grid(values):
        return None if values is None else [values[r * size:(r + 1) * size] for r in range(size)]

    return json_response({
        "id": row["id"], "status": row["status"], "givens": row["givens"],
        "order": row["puzzle_order"], "solution": row["solution"], "error": row["error"],
        "registered_at": iso(row["registered_at"]), "analysed_at": iso(row["analysed_at"]),
        "level": row["level"], "ratings": loads(row["ratings"]),
        "sa_median_steps": row["sa_median_steps"], "sa_capped_runs": row["sa_capped_runs"],
        "order_basis_runs": row["fill_basis_runs"],
        "predicted_order": grid(loads(row["predicted_fill_order"])),
        "order_median": grid(loads(row["fill_rank_median"])),
        "order_spread": grid(loads(row["fill_rank_spread"])),
        "order_reliability": _reliability(loads(row["ratings"])),
    })


def _reliability(ratings: dict | None) -> dict | None:
    """How far the predicted fill order can be trusted, and whether scoring uses it."""
    from fairgrid.analytics.puzzle_model import ORDER_RELIABILITY_FLOOR, PuzzleModel

    if not ratings:
        return None
    model = PuzzleModel.from_json(ratings)
    used = model.order_usable
    return {"split_half": model.order_reliability, "floor": ORDER_RELIABILITY_FLOOR,
            "used_for_scoring": used,
            "why": None if used else "the SA runs disagree on the order (split-half "
                                     "agreement below the floor): scoring leaves the order "
                                     "signal out for this puzzle"}
