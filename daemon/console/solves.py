"""A solve and the people and searches that lead to it: the evidence of one solve (used
by the flag page and the solve page), the player page and the search."""

from __future__ import annotations

import json

from aiohttp import web

from fairgrid.analytics.evidence import Evidence, Placement, needed_phrase
from fairgrid.analytics.puzzle_model import grid_facts
from fairgrid.solvers.puzzle_types import DEFAULT_TYPE, NOT_DEDUCIBLE, puzzle_type

from .. import documents
from ..store.repository import console as sql
from ..store.repository import organiser as organiser_sql
from ..store.repository import players as players_sql
from ..store.repository import puzzles as puzzle_sql
from ..text import shown
from ..web.auth import Principal
from ..web.context import CTX, read
from . import svg
from .pages import NotFound, case_link, mmss, page, render

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


def _hard_steps(timeline: tuple[Placement, ...]) -> list[bool]:
    """The placements a person would find hard: the top quarter by difficulty, and only
    steps harder than the solve's easiest."""
    diffs = sorted(t.difficulty for t in timeline)
    if not diffs:
        return []
    cut = diffs[int(0.75 * (len(diffs) - 1))]
    return [t.difficulty >= cut and t.difficulty > diffs[0] for t in timeline]


# what the replay and the pace chart call each kind of mark
MARK_WORDS = {"unforced": "nothing forced it", "unproven": "nothing proved it",
              "pace": "the pace changed here", "wrong": "wrong digit", "erase": "erased",
              "note": "notes"}


def _marks(ev: Evidence) -> list[list[str]]:
    """Per placement of the timeline, what the evidence says of it: nothing forced it
    (the board offered no single for it), nothing proved it (``unproven``: not the
    deduction ladder, a trial, nor the player's own notes; documents without the key
    say nothing), the pace changed at it."""
    unforced = puzzle_type(ev.puzzle_type).words.techniques[NOT_DEDUCIBLE]
    switch = ev.switch_from
    out = []
    for i, t in enumerate(ev.timeline):
        marks = []
        if t.technique == unforced:
            marks.append("unforced")
        if t.unproven:
            marks.append("unproven")
        if switch is not None and i == switch - 1:
            marks.append("pace")
        out.append(marks)
    return out


def proved(proof: str) -> str:
    """What proved a placement, as the replay says it: "proved by a single", but a phrase
    that says it itself as it is (a Nurikabe cell "forced by a rule", a cell "not
    searched")."""
    return proof if proof.startswith(("forced by ", "proved by ", "not ")) \
        else f"proved by {proof}"


def replay_moves(moves, timeline: tuple[Placement, ...], marks: list[list[str]],
                 solution: list[int] | None) -> list[list]:
    """The replay's moves: [t_ms, cell, value, is_note, marks, what the evidence found
    (words or None)]; a placement is matched to its timeline entry by time and cell."""
    at = {(t.t_ms, t.cell): i for i, t in enumerate(timeline)}
    out = []
    for t_ms, cell, value, note in moves:
        kinds, found = [], None
        if note:
            kinds.append("note")
        elif not value:
            kinds.append("erase")
        else:
            if solution and solution[cell] and solution[cell] != value:
                kinds.append("wrong")
            i = at.get((t_ms, cell))
            if i is not None:
                kinds += marks[i]
                t = timeline[i]
                if t.proof:
                    found = proved(t.proof)
                elif (phrase := needed_phrase(t.needed)):
                    found = f"needed {phrase}"
                if t.stall_look:
                    # what a stuck person had to find: how far the cell was from the board
                    look = f"at a stall: {t.stall_look}"
                    found = f"{found}; {look}" if found else look
        out.append([t_ms, cell, value, bool(note), kinds, found])
    return out


async def solve_view(request: web.Request, row: dict) -> dict:
    """What a page shows of one solve (a row with ``sub_key``, ``portal``, ``player_id``,
    ``puzzle_id``, ``submission_id``, ``duration_ms`` and its score's ``evidence``): the
    evidence in words, the fill orders, the replay with the evidence marked, the pace,
    the puzzle's facts and the player's other solves."""
    ev = documents.stored_evidence(row["evidence"])
    moves = await read(request, organiser_sql.moves, row["sub_key"])
    others = await read(request, organiser_sql.player_submissions, row["portal"],
                        row["player_id"])
    puzzle_row = await read(request, puzzle_sql.puzzle_document, row["puzzle_id"])
    puzzle = documents.puzzle(puzzle_row) if puzzle_row else None
    kind = (puzzle or {}).get("puzzle_type") or DEFAULT_TYPE
    # a solve not scored yet (or unscorable) has no evidence: the puzzle's own givens
    givens = (list(ev.givens) if ev else
              [int(v) for v in grid_facts(kind, puzzle["givens"])[0]] if puzzle else [])
    box_size, shape, rows, cols = grid_of(puzzle, len(givens))
    # one predicted order: the puzzle's own, with a rank per cell (the evidence's copy
    # ranks by median, so cells share ranks); the evidence's for a puzzle gone since
    predicted = ([r or None for r in flat(puzzle["predicted_order"])]
                 if puzzle and puzzle.get("predicted_order")
                 else flat(ev and ev.predicted_order))
    actual = flat(ev and ev.actual_order)
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
    timeline = ev.timeline if ev else ()
    seconds, last = [], 0
    for t in timeline:
        seconds.append(max(0.0, (t.t_ms - last) / 1000.0))
        last = t.t_ms
    switch = ev and ev.switch_from
    marks = _marks(ev) if ev else []
    chart = svg.pace_chart(seconds, hard=_hard_steps(timeline), title="Seconds per placement",
                           id_prefix="pace", switch_at=switch - 1 if switch else None,
                           marks=[", ".join(MARK_WORDS[m] for m in ms if m != "pace")
                                  for ms in marks])
    signals = sorted(ev.signals, key=lambda s: s.p) if ev else []
    hard = ev and ev.hardest_needed
    phrase = needed_phrase(hard.technique) if hard else None
    needed = None if not phrase else {
        **hard.to_json(), "phrase": phrase,
        "where": f"r{hard.cell // cols + 1}c{hard.cell % cols + 1}"}
    ratings = (puzzle or {}).get("ratings") or {}
    solution = None
    if kind == DEFAULT_TYPE and puzzle and puzzle.get("solution"):
        solution = grid_facts(kind, puzzle["solution"])[0].tolist()
    replay = {"box_size": box_size, "rows": rows, "cols": cols, "givens": givens,
              # how the replay shows a move's value (None: the value's base-36 digit)
              "values": puzzle_type(kind).symbols, "words": MARK_WORDS,
              "moves": replay_moves(moves, timeline, marks, solution)}
    return {
        "ev": ev, "signals": signals, "boards": boards, "chart": chart,
        "needed": needed, "switch": switch,
        "marked": {m: sum(m in ms for ms in marks) for m in ("unforced", "unproven")},
        "others": [o for o in others if o["submission_id"] != row["submission_id"]][:20],
        "puzzle": puzzle, "level": ratings.get("level_name"),
        "expected": expected_time(ratings), "duration": mmss(row["duration_ms"]),
        "replay_json": json.dumps(replay).replace("</", "<\\/"), "size": cols}


@page
async def solve_page(request: web.Request, who: Principal) -> web.Response:
    """Any solve, flagged or not: its evidence and replay."""
    portal, sid = request.match_info["portal"], request.match_info["id"]
    row = await read(request, sql.submission, who.visible(), portal, sid)
    if row is None:
        raise NotFound(f"There is no solve {sid!r} of portal {portal!r}.")
    return render(request, "solve.html", {"title": f"Solve {shown(sid)}", "row": row,
                                          **await solve_view(request, row)})


@page
async def player_page(request: web.Request, who: Principal) -> web.Response:
    portal, player = request.match_info["portal"], request.match_info["player_id"]
    rows = (await read(request, organiser_sql.player_submissions, portal, player)
            if who.sees(portal) else [])
    if not rows:
        raise NotFound(f"There is no player {player!r} of portal {portal!r}.")
    z, flagged = documents.player_numbers(rows)
    s = request.app[CTX].settings
    # the season verdict is the player's state; flags standing and Z are numbers beside it
    season = await read(request, players_sql.verdict, portal, player)
    return render(request, "player.html", {
        "title": f"Player {shown(player)}", "portal": portal, "player": player, "rows": rows,
        "z": z, "threshold": s.scoring_player_z, "flag_count": s.scoring_player_flags,
        "flagged": flagged,
        "season": None if season is None else {
            "state": season["state"], "link": case_link(portal, player),
            "summary": documents.case_summary(season)}})




@page
async def search(request: web.Request, who: Principal) -> web.Response:
    text = request.query.get("q", "").strip()
    rows = await read(request, sql.search, who.visible(), text) if text else []
    return render(request, "search.html", {"title": "Search", "q": text, "rows": rows})
