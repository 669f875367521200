"""Puzzles: registration, the analysis queue's reads and writes, the API's view."""

from __future__ import annotations

import json
from datetime import datetime

from .ingest import insert_puzzle, resolve_name  # noqa: F401 - the registry reads it


def ping(cur) -> None:
    cur.execute("SELECT 1").fetchall()


def puzzle_texts(cur, puzzle_id: str) -> tuple[str, int, str, str] | None:
    """(givens, box_size, solution, puzzle type) of a registered puzzle, or None."""
    return cur.execute("SELECT givens, box_size, solution, puzzle_type FROM puzzles "
                       "WHERE id = ?", [puzzle_id]).fetchone()


def register_many(con, rows: list[tuple[str, str, int, str, str]],
                  now: datetime) -> list[str]:
    """Register puzzles (id, givens, box_size, solution, puzzle type) for every portal, all
    or none: the ids already registered with other givens or type (and nothing written),
    or [] once every id is in. One a portal's webhook registered first under that id,
    with the same givens, becomes shared: a portal's first solve cannot keep a puzzle the
    organiser registers for everyone to itself."""
    ids = [r[0] for r in rows]
    known = {pid: (givens, type_name) for pid, givens, type_name in con.execute(
        "SELECT id, givens, puzzle_type FROM puzzles WHERE id IN "
        "(SELECT unnest(?::VARCHAR[]))", [ids]).fetchall()}
    clash = [pid for pid, givens, _, _, type_name in rows
             if pid in known and known[pid] != (givens, type_name)]
    if clash:
        return clash
    for pid, givens, box_size, solution, type_name in rows:
        if pid not in known:
            insert_puzzle(con, pid, givens, box_size, solution, now, type_name)
    if known:
        con.execute("UPDATE puzzles SET owner = NULL WHERE owner IS NOT NULL AND id IN "
                    "(SELECT unnest(?::VARCHAR[]))", [list(known)])
    return []


def pending_ids(cur, limit: int, large: bool, large_cells: int
                ) -> list[tuple[str, str | None]]:
    """(id, owner) of the puzzles of one analysis lane waiting for analysis (of
    ``large_cells`` cells and up, or fewer: the solution has one symbol a cell), the
    portals whose webhooks registered them in turn (those ``POST /v1/puzzles``
    registered, with no owner, take one turn together), each one's oldest first: one
    portal's flood of new puzzles delays another's by a turn, not by the whole flood."""
    op = ">=" if large else "<"
    return [(pid, owner) for pid, owner in cur.execute(
        "SELECT id, owner FROM (SELECT id, owner, registered_at, row_number() OVER "
        "(PARTITION BY owner ORDER BY registered_at, id) AS turn FROM puzzles WHERE "
        f"status = 'pending' AND length(solution) {op} ?) ORDER BY turn, registered_at, "
        "id LIMIT ?", [large_cells, limit]).fetchall()]


def to_analyse(cur, puzzle_id: str) -> tuple[str, str, str, str] | None:
    """(givens, status, solution, puzzle type) of a puzzle, or None."""
    return cur.execute("SELECT givens, status, solution, puzzle_type FROM puzzles "
                       "WHERE id = ?", [puzzle_id]).fetchone()


def mark_invalid(con, puzzle_id: str, error: str) -> None:
    """A pending puzzle whose analysis failed: ``invalid``, with why (never retried)."""
    con.execute("UPDATE puzzles SET status = 'invalid', error = ? "
                "WHERE id = ? AND status = 'pending'", [error[:1000], puzzle_id])


def save_analysis(con, puzzle_id: str, result: dict, now: datetime) -> None:
    """Store an analysis (``work.analysis.analyse``) and mark the puzzle ready."""
    model = result["model"]
    con.execute(
        "UPDATE puzzles SET status = 'ready', analysed_at = ?, analysis_seconds = ?, "
        "sa_median_steps = ?, sa_capped_runs = ?, fill_basis_runs = ?, "
        "predicted_fill_order = ?, fill_rank_median = ?, fill_rank_spread = ?, ratings = ?, "
        "level = ? WHERE id = ?",
        [now, result["seconds"], result["sa_median_steps"], result["sa_capped_runs"],
         result["fill_basis_runs"], json.dumps(result["predicted_fill_order"]),
         json.dumps(result["fill_rank_median"]), json.dumps(result["fill_rank_spread"]),
         json.dumps(model.to_json() if model is not None else None),
         model.level if model is not None else None, puzzle_id])


def counts_by_status(cur) -> dict[str, int]:
    return dict(cur.execute("SELECT status, count(*) FROM puzzles GROUP BY status").fetchall())


def puzzle_document(cur, puzzle_id: str) -> dict | None:
    """Every column of a puzzle, or None."""
    cur.execute("SELECT * FROM puzzles WHERE id = ?", [puzzle_id])
    row = cur.fetchone()
    return None if row is None else dict(zip([d[0] for d in cur.description], row))
