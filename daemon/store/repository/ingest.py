"""The writer's statements: submissions and their moves, dedupe look-ups, recovery."""

from __future__ import annotations

from datetime import datetime

import numpy as np


def next_sub_key(con) -> int:
    return con.execute("SELECT coalesce(max(sub_key), 0) + 1 FROM submissions").fetchone()[0]


def moves_through(con) -> int:
    """The sub_key up to which every submission's moves are in the moves table."""
    return con.execute("SELECT max(through) FROM moves_through").fetchone()[0] or 0


def stored_keys(con, recent_since: datetime, below: int) -> dict[str, np.ndarray]:
    """Every stored submission's dedupe keys (sub_key < ``below``), as columns; ``recent``
    says whether its webhook-id still counts (received at or after ``recent_since``)."""
    return con.execute(
        "SELECT portal, submission_id, webhook_id, received_at >= ? AS recent "
        "FROM submissions WHERE sub_key < ?", [recent_since, below]).fetchnumpy()


def already_stored(con, portal: str, webhook_ids: list[str], hooks_since: datetime,
                   submission_ids: list[str]) -> list[tuple[str, str, str | None]]:
    """Of one portal's keys: ('hook', webhook_id, raw body) for each webhook-id received
    since ``hooks_since``, ('sub', submission_id, raw body) for each stored submission
    id."""
    return con.execute(
        "SELECT 'hook', webhook_id, raw FROM submissions WHERE portal = ? AND "
        "webhook_id IN (SELECT unnest(?::VARCHAR[])) AND received_at >= ? "
        "UNION ALL SELECT 'sub', submission_id, raw FROM submissions "
        "WHERE portal = ? AND submission_id IN (SELECT unnest(?::VARCHAR[]))",
        [portal, webhook_ids, hooks_since, portal, submission_ids]).fetchall()


def insert_puzzle(con, puzzle_id: str, givens: str, box_size: int, solution: str,
                  now: datetime, puzzle_type: str, owner: str | None = None
                  ) -> None:
    """Register a puzzle as ``pending`` unless the id is already known (``owner``: the
    portal whose webhook registered it; None: every portal's)."""
    con.execute("INSERT INTO puzzles (id, givens, box_size, solution, status, "
                "registered_at, puzzle_type, owner) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                [puzzle_id, givens, box_size, solution, now, puzzle_type, owner])


_PUZZLE = "p.id, p.givens, p.box_size, p.solution, p.puzzle_type"


def resolve_name(cur, portal: str, name: str) -> tuple[str, str, int, str, str] | None:
    """(id, givens, box_size, solution, puzzle type) of the puzzle a portal calls ``name``:
    one of its names, else a shared puzzle (no owner) or its own of that id; None when it
    knows no such puzzle (another portal's puzzle of that id is not its)."""
    row = cur.execute(f"SELECT {_PUZZLE} FROM puzzle_names n JOIN puzzles p ON "
                      "p.id = n.puzzle_id WHERE n.portal = ? AND n.name = ?",
                      [portal, name]).fetchone()
    if row is None:
        row = cur.execute(f"SELECT {_PUZZLE} FROM puzzles p WHERE p.id = ? AND "
                          "(p.owner IS NULL OR p.owner = ?)", [name, portal]).fetchone()
    return row


def claim_puzzle(con, portal: str, name: str, puzzle: tuple[str, int, str, str],
                 now: datetime) -> str | None:
    """The id of the puzzle ``portal`` calls ``name``, registering ``puzzle`` (givens,
    box_size, solution, type) under it when the portal knows no such puzzle: as ``name``
    when that id is free, else as ``name@portal`` (another portal uses the id). None
    when the portal's puzzle of that name has other givens or another type (a race of
    two first solves). Runs in the writer's transaction, so two claims never race."""
    givens, box_size, solution, type_name = puzzle
    known = resolve_name(con, portal, name)
    if known is not None:
        pid = known[0]
        if (known[1], known[4]) != (givens, type_name):
            return None
    else:
        pid, n = name, 1
        while con.execute("SELECT 1 FROM puzzles WHERE id = ?", [pid]).fetchone():
            n += 1
            pid = f"{name}@{portal}" if n == 2 else f"{name}@{portal}~{n}"
        insert_puzzle(con, pid, givens, box_size, solution, now, type_name, owner=portal)
    con.execute("INSERT INTO puzzle_names VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                [portal, name, pid])
    return pid


def insert_submissions(con, new_subs: dict[str, np.ndarray], committed_us: int,
                       in_transaction: bool) -> None:
    """Insert submission rows (columns of numpy arrays, times in epoch microseconds) as
    ``pending``, and commit: one call, so the GIL is released and retaken once (the event
    loop holds it most of the time). ``in_transaction``: a transaction is open (a puzzle
    registered with the batch) and this call commits it."""
    # DuckDB reads the parameter new_subs by name (a replacement scan): a
    # register()/unregister() pair cost ~2.5 ms more per batch
    commit = "; COMMIT" if in_transaction else ""
    con.execute(
        "INSERT INTO submissions (sub_key, portal, submission_id, webhook_id, tournament_id, "
        "player_id, puzzle_id, started_at, received_at, committed_at, n_moves, duration_ms, "
        "complete, status, raw) SELECT sub_key, portal, submission_id, webhook_id, "
        "tournament_id, player_id, puzzle_id, make_timestamptz(started_at), "
        f"make_timestamptz(received_at), make_timestamptz({int(committed_us)}), n_moves, "
        f"duration_ms, complete, 'pending', raw FROM new_subs{commit}")


def insert_moves(con, new_moves: dict[str, np.ndarray] | None, through: int) -> None:
    """Insert moves rows (columns; None: none) and set moves_through to ``through``: one
    transaction, one call."""
    insert = ("INSERT INTO moves SELECT sub_key, seq, t_ms, cell, digit, note FROM new_moves; "
              if new_moves is not None else "")  # DuckDB reads the parameter by name
    con.execute(f"BEGIN TRANSACTION; {insert}"
                f"UPDATE moves_through SET through = {int(through)}; COMMIT")


def without_moves(con, through: int) -> list[tuple[int, str]]:
    """(sub_key, raw body) of submissions past ``through`` that have no moves rows."""
    return con.execute(
        "SELECT s.sub_key, s.raw FROM submissions s WHERE s.sub_key > $t AND NOT EXISTS "
        "(SELECT 1 FROM moves m WHERE m.sub_key = s.sub_key AND m.sub_key > $t) "
        "ORDER BY s.sub_key", {"t": through}).fetchall()


def last_sub_key(con) -> int:
    return con.execute("SELECT coalesce(max(sub_key), 0) FROM submissions").fetchone()[0]


def stored_solves(con) -> dict[tuple[str, str], tuple[int, str]]:
    """(portal, submission id) -> (how often it is stored, its status)."""
    return {(portal, sid): (n, status) for portal, sid, n, status in con.execute(
        "SELECT portal, submission_id, count(*), max(status) FROM submissions "
        "GROUP BY portal, submission_id").fetchall()}


def integrity(con) -> dict:
    """What a crash must never leave behind: per submission id, how often it is stored;
    submissions whose moves rows are not all there; moves rows without a submission;
    repeated sub_keys."""
    return {
        "copies": dict(con.execute("SELECT submission_id, count(*) FROM submissions "
                                   "GROUP BY submission_id").fetchall()),
        "partial": con.execute(
            "SELECT count(*) FROM submissions s WHERE s.n_moves <> "
            "(SELECT count(*) FROM moves m WHERE m.sub_key = s.sub_key)").fetchone()[0],
        "orphan_moves": con.execute(
            "SELECT count(*) FROM moves m WHERE NOT EXISTS (SELECT 1 FROM "
            "submissions s WHERE s.sub_key = m.sub_key)").fetchone()[0],
        "duplicate_keys": con.execute("SELECT count(*) - count(DISTINCT sub_key) FROM "
                                      "submissions").fetchone()[0],
    }
