"""A solve and the people and searches that lead to it: the evidence of one solve (used
by the flag page and the solve page), the player page and the search."""

from __future__ import annotations

import json

from aiohttp import web

from fairgrid.analytics.calibration import player_z
from fairgrid.analytics.evidence import RULES
from fairgrid.solvers.puzzle_types import DEFAULT_TYPE, puzzle_type
from fairgrid.solvers.techniques import SINGLES

from .. import documents
from ..store.repository import console as sql
from ..store.repository import organiser as organiser_sql
from ..store.repository import puzzles as puzzle_sql
from ..text import shown
from ..web.auth import Principal
from ..web.context import CTX, read
from . import svg
from .pages import NotFound, mmss, page, render, when

def expected_time(ratings: dict) -> str | None:
    """A puzzle's expected solve time as m:ss, from its ratings (None before them)."""
    seconds = ratings.get("expected_time_s")
    return mmss(1000 * seconds) if seconds else None


def grid_of(puzzle: dict | None, ncells: int) -> tuple[int, tuple[int, int] | None, int, int]:
    """(box_size, shape for ``svg.board``, rows, cols) of a puzzle document; without one,
    the Sudoku grid of ``ncells`` cells."""
    if puzzle is None:
        box_size = int(round(ncells ** 0.25)) or 3
        return box_size, None, box_size * box_size, box_size * box_size
    if puzzle_type(puzzle["puzzle_type"]).blocks:
        return puzzle["box_size"], None, puzzle["rows"], puzzle["cols"]
    return 0, (puzzle["rows"], puzzle["cols"]), puzzle["rows"], puzzle["cols"]


def flat(grid) -> list:
    return [v for row in grid for v in row] if grid else []


def _hard_steps(timeline: list[dict]) -> list[bool]:
    """The placements a person would find hard: the top quarter by difficulty, and only
    steps harder than the solve's easiest."""
    diffs = sorted(t["difficulty"] for t in timeline)
    if not diffs:
        return []
    cut = diffs[int(0.75 * (len(diffs) - 1))]
    return [t["difficulty"] >= cut and t["difficulty"] > diffs[0] for t in timeline]


async def solve_view(request: web.Request, row: dict) -> dict:
    """What a page shows of one solve (a row with ``sub_key``, ``portal``, ``player_id``,
    ``puzzle_id``, ``submission_id``, ``duration_ms`` and its score's ``evidence``): the
    evidence in words, the fill orders, the replay, the pace, the puzzle's facts and the
    player's other solves."""
    evidence = json.loads(row["evidence"]) if row["evidence"] else {}
    moves = await read(request, organiser_sql.moves, row["sub_key"])
    others = await read(request, organiser_sql.player_submissions, row["portal"],
                        row["player_id"])
    puzzle_row = await read(request, puzzle_sql.puzzle_document, row["puzzle_id"])
    puzzle = documents.puzzle(puzzle_row) if puzzle_row else None
    givens = evidence.get("givens") or []
    box_size, shape, rows, cols = grid_of(puzzle, len(givens))
    predicted, actual = flat(evidence.get("predicted_order")), flat(evidence.get("actual_order"))
    free = sum(1 for g in givens if not g)
    max_rank = max([free] + [r for r in predicted + actual if r]) if givens else 1
    boards = None
    if givens and predicted and actual:
        boards = {"predicted": svg.board(box_size, givens, predicted, max_rank=max_rank,
                                         title="Predicted fill order", id_prefix="pred",
                                         shape=shape),
                  "actual": svg.board(box_size, givens, actual, max_rank=max_rank,
                                      title="This solve's fill order", id_prefix="act",
                                      shape=shape),
                  "legend": svg.legend(max_rank, id_prefix="legend")}
    timeline = evidence.get("timeline") or []
    seconds, last = [], 0
    for t in timeline:
        seconds.append(max(0.0, (t["t_ms"] - last) / 1000.0))
        last = t["t_ms"]
    switch = (evidence.get("switch") or {}).get("from_placement")
    chart = svg.pace_chart(seconds, hard=_hard_steps(timeline), title="Seconds per placement",
                           id_prefix="pace", switch_at=switch - 1 if switch else None)
    signals = sorted(evidence.get("signals") or [], key=lambda s: s["p"])
    needed = evidence.get("hardest_needed")
    if needed and needed.get("technique") not in SINGLES:
        needed = {**needed, "where": f"r{needed['cell'] // cols + 1}c{needed['cell'] % cols + 1}"}
    else:
        needed = None
    ratings = (puzzle or {}).get("ratings") or {}
    replay = {"box_size": box_size, "rows": rows, "cols": cols, "givens": givens,
              # how the replay shows a move's value (None: the value's base-36 digit)
              "values": puzzle_type((puzzle or {}).get("puzzle_type") or DEFAULT_TYPE).symbols,
              "moves": [[t, c, d, bool(n)] for t, c, d, n in moves]}
    return {
        "ev": evidence, "signals": signals, "rule": RULES.get(evidence.get("rule") or ""),
        "boards": boards, "chart": chart, "needed": needed,
        "others": [o for o in others if o["submission_id"] != row["submission_id"]][:20],
        "puzzle": puzzle, "level": ratings.get("level_name"),
        "expected": expected_time(ratings), "duration": mmss(row["duration_ms"]),
        "mmss": mmss, "when": when,
        "replay_json": json.dumps(replay).replace("</", "<\\/"), "size": cols}


@page
async def player_page(request: web.Request, who: Principal) -> web.Response:
    portal, player = request.match_info["portal"], request.match_info["player_id"]
    rows = (await read(request, organiser_sql.player_submissions, portal, player)
            if who.sees(portal) else [])
    if not rows:
        raise NotFound(f"There is no player {player!r} of portal {portal!r}.")
    pvals = [r["p_value"] for r in rows if r["p_value"] is not None]
    z = player_z(pvals) if pvals else None
    s = request.app[CTX].settings
    flagged = sum(1 for r in rows if r["flagged"])
    return render(request, "player.html", {
        "title": f"Player {shown(player)}", "portal": portal, "player": player, "rows": rows,
        "z": z, "threshold": s.scoring_player_z, "flag_count": s.scoring_player_flags,
        "flagged": flagged, "player_flagged": (z is not None and z >= s.scoring_player_z)
        or flagged >= s.scoring_player_flags, "mmss": mmss, "when": when})




@page
async def search(request: web.Request, who: Principal) -> web.Response:
    text = request.query.get("q", "").strip()
    rows = await read(request, sql.search, who.visible(), text) if text else []
    return render(request, "search.html", {"title": "Search", "q": text, "rows": rows,
                                            "mmss": mmss, "when": when})
