"""Opening the database: DuckDB settings, versioned migrations (``schema/NNN_*.sql``), and
re-deriving the moves a crash left unstored."""

from __future__ import annotations

import logging
from importlib import resources
from typing import Callable

import duckdb
import numpy as np

from .errors import StoreError, StoreLockedError, is_lock_error
from .moves import move_columns
from .records import utc_now
from .repository import ingest as sql
from .repository.lifecycle import table_names

log = logging.getLogger("fairgrid.store")


def migrations() -> list[tuple[int, str]]:
    """The numbered migration scripts shipped in ``daemon/store/schema``, ascending."""
    out = []
    for entry in resources.files("fairgrid.daemon.store").joinpath("schema").iterdir():
        name = entry.name
        if name.endswith(".sql") and name[:3].isdigit():
            out.append((int(name[:3]), entry.read_text(encoding="utf-8")))
    return sorted(out)


# a raw webhook body -> its moves (t_ms, cell, digit, note), parsed exactly as the webhook
# parsed it; ValueError when it does not parse (``ingest.moves_of``, handed in)
MovesOf = Callable[[bytes], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]


def connect(path: str, checkpoint_mb: int = 256, memory_limit_mb: int = 2048,
            threads: int = 0, moves_of: MovesOf | None = None
            ) -> duckdb.DuckDBPyConnection:
    """Open (creating) the database, bring its schema up to date and store the moves of
    submissions acknowledged before a crash (:func:`recover_moves`, with ``moves_of``;
    without it, a file that needs that is refused with StoreError rather than opened
    with moves missing).

    ``memory_limit_mb`` caps DuckDB's memory (its default is 80 % of the machine); big
    queries such as the nightly job's spill to a temp directory beside the file instead.

    ``checkpoint_mb``: WAL size that triggers a checkpoint. A checkpoint stalls the
    writer (~0.1-0.2 s); DuckDB's 16 MB default does that every few seconds under load
    and dominated the p99 ack latency (docs/benchmarks.md).

    ``threads``: DuckDB's worker threads (0: its default, one per core). With 1, each
    statement runs on the thread that issues it; a group commit of ~30 solves then costs
    ~3 ms of CPU instead of ~4 ms, because it no longer hands its few rows to a worker
    pool and waits for them (the daemon's default; the nightly job raises it, see
    :meth:`Store.all_cores`).
    """
    try:
        con = duckdb.connect(path)
    except duckdb.IOException as exc:
        if is_lock_error(exc):
            raise StoreLockedError(
                f"the database {path} is in use by another process (DuckDB allows one "
                f"writer); stop it, or point this one at another file") from exc
        raise StoreError(f"cannot open the database {path}: {exc}") from exc
    except duckdb.Error as exc:
        raise StoreError(f"cannot open the database {path}: {exc}") from exc
    try:
        con.execute(f"SET checkpoint_threshold = '{int(checkpoint_mb)}MB'")
        con.execute(f"SET memory_limit = '{int(memory_limit_mb)}MB'")
        con.execute("SET preserve_insertion_order = false")
        if threads > 0:
            con.execute(f"SET GLOBAL threads = {int(threads)}")
        # the writer's inserts read local dicts of numpy arrays by name (DuckDB's default,
        # stated here because the writer depends on it)
        con.execute("SET python_enable_replacements = true")
    except duckdb.Error as exc:
        con.close()
        raise StoreError(f"cannot set up the database {path}: {exc}") from exc
    # Migrations and recovery read on a cursor that is closed afterwards: a result left
    # unread on a connection keeps its transaction open, and while one is open DuckDB
    # skips every automatic checkpoint whose commit updates a row (all of the writer's
    # moves inserts do), so the WAL grew past checkpoint_mb without bound.
    cur = con.cursor()
    try:
        _migrate(cur, path)
        recovered = _recover(cur, path, moves_of)
    except StoreError:
        cur.close()
        con.close()
        raise
    cur.close()
    if recovered:
        log.warning("stored the moves of %d submission(s) acknowledged before the last "
                    "stop but not yet written to the moves table (re-read from their raw "
                    "bodies)", recovered)
    return con


def read_only(path, *, replacements: bool = True) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the database file ``path``, for a command that reads it
    while no daemon owns it (close it, or use it as a context manager); StoreError with
    DuckDB's reason when it does not open. Without ``replacements``, a table the file
    lacks is an error, not a Python variable of that name in the caller's frames (DuckDB's
    replacement scans, which the writer's queries of registered frames rely on): what
    reads a file that may be no fairgrid database at all."""
    try:
        return duckdb.connect(str(path), read_only=True,
                              config={"python_enable_replacements": replacements})
    except duckdb.Error as exc:
        raise StoreError(str(exc)) from None


def refuse_newer(version: int | None, what: str, verb: str) -> None:
    """StoreError when ``what`` (a database, a backup) has a schema version newer than
    this fairgrid's: a newer fairgrid wrote it (a restored backup, a downgrade), and
    what it stores that this code does not know of would be ignored or broken by its
    writes; ``verb`` says what to do with it (run, restore) with that version."""
    ours = migrations()[-1][0]
    if version is not None and version > ours:
        raise StoreError(f"{what} has schema version {version}, newer than this "
                         f"fairgrid's {ours}: {verb} it with the fairgrid that wrote it "
                         "(or a later one)")


def _migrate(con, path: str) -> None:
    """Apply the migrations the database has not had yet, each in its own transaction."""
    try:
        tables = set(table_names(con, every_schema=True))
        foreign = tables and "schema_version" not in tables
        if "schema_version" in tables:  # another program may use the name too
            columns = {c for (c,) in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = "
                "'schema_version'").fetchall()}
            foreign = not {"version", "applied_at"} <= columns
        if foreign:
            raise StoreError(f"the database {path} holds tables but no fairgrid schema "
                             f"version: another program's file, not fairgrid's (check "
                             f"storage.path)")
        con.execute("CREATE TABLE IF NOT EXISTS schema_version "
                    "(version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)")
        done = {v for (v,) in con.execute("SELECT version FROM schema_version").fetchall()}
        if done:
            refuse_newer(max(done), f"the database {path}", "run")
        for version, script in migrations():
            if version in done:
                continue
            con.execute("BEGIN TRANSACTION")
            con.execute(script)
            con.execute("INSERT INTO schema_version VALUES (?, ?)", [version, utc_now()])
            con.execute("COMMIT")
    except duckdb.Error as exc:
        raise StoreError(f"cannot migrate the database {path}: {exc}") from exc


def _recover(con, path: str, moves_of: MovesOf | None) -> int:
    """:func:`recover_moves`, its failure a StoreError."""
    try:
        return recover_moves(con, moves_of)
    except duckdb.Error as exc:
        raise StoreError(f"cannot store the moves of {path}'s last submissions: {exc}") from exc


def recover_moves(con, moves_of: MovesOf | None) -> int:
    """Store the moves of submissions past ``moves_through`` (acknowledged, then a crash
    before the writer's moves insert), parsed from their raw bodies by ``moves_of``;
    returns how many submissions that covered. Submissions that have moves rows
    already (a database built by other means) are left alone."""
    through = sql.moves_through(con)
    rows = sql.without_moves(con, through)
    last = sql.last_sub_key(con)
    if not rows and last <= through:
        return 0
    if rows and moves_of is None:
        raise StoreError(f"{len(rows)} submission(s) acknowledged before the last stop "
                         "have no moves stored yet: open the database with the daemon "
                         "(fairgrid serve), which re-derives them")
    keys, logs = [], []
    for key, raw in rows:
        try:
            logs.append(moves_of(raw.encode("utf-8")))
        except (ValueError, UnicodeError) as exc:  # stored, so it parsed once
            log.error("submission %d: its raw body no longer parses (%s); no moves "
                      "stored for it", key, exc)
            continue
        keys.append(key)
    sql.insert_moves(con, move_columns(np.array(keys, dtype=np.int64), logs),
                     max(last, through))
    return len(keys)


def in_transaction(con, fn, *args):
    """``fn(con, *args)`` in one transaction on a connection this process owns (no
    writer thread: an offline job)."""
    con.execute("BEGIN TRANSACTION")
    try:
        out = fn(con, *args)
        con.execute("COMMIT")
        return out
    except BaseException:
        rollback(con)
        raise


def rollback(con) -> None:
    """Roll back the transaction a failure interrupted, if one is still open: a COMMIT
    that failed (a full disk) has ended it already, and the ROLLBACK's own error ("no
    transaction is active") would stand in for the one that says what went wrong."""
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass
