"""The database as the daemon holds it: the writer thread and reads on cursors."""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
from typing import Any, Callable

import duckdb

from .connection import connect
from .errors import StoreError
from .moves import MOVES_IDLE_S, MOVES_MAX_AGE_S
from .writer import Writer

log = logging.getLogger("fairgrid.store")
SYNC_TIMEOUT_S = 60.0    # a read that needs the moves waits at most this long for them


class Store:
    """One process owns the database file (DuckDB allows one writer process; a second one
    gets a clear :class:`StoreLockedError`). Reads run repository functions on cursors of
    their own; ``duckdb.Error`` never escapes: it becomes :class:`StoreError` (the web
    layer answers 503)."""

    def __init__(self, path: str, *, queue_size: int = 10_000, group_commit_ms: float = 5.0,
                 max_batch: int = 512, dedupe_days: int = 3, checkpoint_mb: int = 256,
                 memory_limit_mb: int = 2048, threads: int = 0,
                 on_batch: Callable[[int], None] | None = None,
                 moves_idle_s: float = MOVES_IDLE_S, moves_max_age_s: float = MOVES_MAX_AGE_S):
        self.path = path
        self._threads = threads
        self._con = connect(path, checkpoint_mb, memory_limit_mb, threads)
        self.writer = Writer(self._con.cursor(), queue_size=queue_size,
                             group_commit_ms=group_commit_ms, max_batch=max_batch,
                             dedupe_days=dedupe_days, on_batch=on_batch,
                             moves_idle_s=moves_idle_s, moves_max_age_s=moves_max_age_s,
                             wal_path=f"{path}.wal", checkpoint_bytes=checkpoint_mb * 10**6)
        self.writer.start()

    def close(self, timeout: float = 30.0) -> None:
        self.writer.stop(timeout)
        try:
            self._con.close()
        except duckdb.Error:
            pass

    @contextlib.contextmanager
    def all_cores(self):
        """DuckDB at one worker thread per core for the length of a ``with`` block (the
        nightly job's scans and aggregations), back to ``threads`` afterwards. The
        setting is the database's, so ingestion meanwhile runs as it does with 0."""
        if self._threads <= 0:
            yield
            return
        try:
            self._con.cursor().execute("RESET GLOBAL threads")
        except duckdb.Error as exc:
            raise StoreError(f"cannot set DuckDB's threads: {exc}") from exc
        try:
            yield
        finally:
            try:
                self._con.cursor().execute(f"SET GLOBAL threads = {int(self._threads)}")
            except duckdb.Error as exc:
                log.error("cannot set DuckDB's threads back to %d: %s", self._threads, exc)

    def read(self, fn: Callable[..., Any], *args, **kwargs) -> Any:
        """``fn(cursor, *args, **kwargs)`` on a fresh cursor (a repository read);
        StoreError on failure. A read marked ``needs_moves`` first waits until every
        acknowledged solve's moves are in the moves table."""
        if getattr(fn, "needs_moves", False):
            try:
                self.writer.sync().result(timeout=SYNC_TIMEOUT_S)
            except concurrent.futures.TimeoutError:
                raise StoreError("the moves of the last submissions are not stored yet; "
                                 "retry") from None
        try:
            cur = self._con.cursor()
            try:
                return fn(cur, *args, **kwargs)
            finally:
                cur.close()
        except duckdb.Error as exc:
            raise StoreError(f"database read failed: {exc}") from exc

    def write(self, fn: Callable[..., Any], *args, **kwargs) -> concurrent.futures.Future:
        """``fn(con, *args, **kwargs)`` in one transaction on the writer thread."""
        return self.writer.call(fn, *args, **kwargs)
