"""The database as the daemon holds it: the writer thread, reads on cursors, erased
people kept out, and rewrites of the file that leave no deleted bytes behind."""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import threading
import time
from pathlib import Path
from typing import Any, Callable

import duckdb

from . import files
from .connection import MovesOf, connect, rollback
from .erasure import ErasedPlayers
from .errors import StoreError
from .moves import MOVES_IDLE_S, MOVES_MAX_AGE_S
from .records import utc_now
from .repository import lifecycle as lifecycle_sql
from .writer import Writer

log = logging.getLogger("fairgrid.store")
SYNC_TIMEOUT_S = 60.0    # a read that needs the moves waits at most this long for them
REAPPLIED_BY = "fairgrid (an erasure a restore had undone)"


class _Gate:
    """Reads share the connection; a rewrite of the file takes it alone, once the reads
    under way end (reads that come meanwhile wait for it)."""

    def __init__(self):
        self._cond = threading.Condition()
        self._readers = 0
        self._closed = False   # a rewrite holds it (or waits for the readers to leave)

    @contextlib.contextmanager
    def shared(self):
        with self._cond:
            self._cond.wait_for(lambda: not self._closed)
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextlib.contextmanager
    def exclusive(self):
        with self._cond:
            self._cond.wait_for(lambda: not self._closed)
            self._closed = True
            self._cond.wait_for(lambda: self._readers == 0)
        try:
            yield
        finally:
            with self._cond:
                self._closed = False
                self._cond.notify_all()


def open_erased(con, path: str) -> ErasedPlayers:
    """The erased people of the database at ``path`` (``con`` on it), its erasure key
    checked against the one its erasures were made with (``ErasedPlayers.open``), and
    that key's fingerprint kept in it. Run where :func:`erase_again` may run."""
    stored = lifecycle_sql.erasure_fingerprint(con)
    erased = ErasedPlayers.open(path, lifecycle_sql.erased_digests(con), stored)
    lifecycle_sql.keep_fingerprint(con, erased.fingerprint, stored)
    return erased


def erase_again(con, erased: ErasedPlayers) -> int:
    """Erase anyone the list file names and the database still holds (a backup from
    before their erasure was restored over it), and list in the database whom only the
    file lists; the people erased again. Run on a connection no one else writes on: the
    store's at its start, or the command line's when no daemon runs."""
    missing = erased.only_in_file
    if not missing:
        return 0
    now = utc_now()
    again = [(portal, player) for portal, player in lifecycle_sql.players(con)
             if erased.digest(portal, player) in missing]
    con.execute("BEGIN TRANSACTION")
    try:
        for portal, player in again:
            lifecycle_sql.erase_player(con, portal, player, REAPPLIED_BY, now,
                                       erased.digest(portal, player))
        lifecycle_sql.remember_erased(con, sorted(missing), now)
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise
    erased.only_in_file = set()
    if again:
        log.warning("erased %d player(s) again: the database held them although they "
                    "had been erased (a backup from before was restored)", len(again))
    return len(again)


class Store:
    """One process owns the database file (DuckDB allows one writer process; a second one
    gets a clear :class:`StoreLockedError`). Reads run repository functions on cursors of
    their own; ``duckdb.Error`` never escapes: it becomes :class:`StoreError` (the web
    layer answers 503)."""

    def __init__(self, path: str, *, queue_size: int = 10_000, group_commit_ms: float = 5.0,
                 max_batch: int = 512, dedupe_days: int = 3, checkpoint_mb: int = 256,
                 memory_limit_mb: int = 2048, threads: int = 0,
                 on_batch: Callable[[int], None] | None = None,
                 moves_idle_s: float = MOVES_IDLE_S, moves_max_age_s: float = MOVES_MAX_AGE_S,
                 moves_of: MovesOf | None = None, clock: Callable[[], float] = time.perf_counter):
        self.path = path
        self._threads = threads
        self._open_args = (checkpoint_mb, memory_limit_mb, threads, moves_of)
        self._gate = _Gate()
        self._con = self._open()
        try:
            # what a kill left half made, once the file's lock is this process's: a
            # second daemon refused by the lock must not take a running one's copy
            for suffix in (files.REWRITING, files.RESTORING):
                files.remove_leftovers(Path(path).resolve().parent, Path(path).name + suffix)
            self.erased = open_erased(self._con, path)
            self._erase_again()
            if lifecycle_sql.needs_rewrite(self._con):
                log.info("rewriting %s: an erasure's deleted rows may still lie in it", path)
                self._swap_file()
        except (duckdb.Error, OSError) as exc:
            self._con.close()
            raise StoreError(f"cannot open the database {path}: {exc}") from exc
        except BaseException:
            self._con.close()
            raise
        self.writer = Writer(self._con.cursor(), queue_size=queue_size,
                             group_commit_ms=group_commit_ms, max_batch=max_batch,
                             dedupe_days=dedupe_days, on_batch=on_batch,
                             moves_idle_s=moves_idle_s, moves_max_age_s=moves_max_age_s,
                             wal_path=f"{path}.wal", checkpoint_bytes=checkpoint_mb * 10**6,
                             clock=clock)
        self.writer.start()

    def _open(self) -> duckdb.DuckDBPyConnection:
        con = connect(self.path, *self._open_args)
        try:
            for path in (self.path, files.wal_of(self.path)):
                files.make_private(path)  # one an older fairgrid made 0644
        except OSError as exc:  # another user's file: named, not a failure to listen
            con.close()
            raise StoreError(f"cannot open the database {self.path}: {exc}") from exc
        return con

    def _erase_again(self) -> None:
        erase_again(self._con, self.erased)

    def rewrite(self) -> None:
        """Rewrite the database file from its live rows, so that no deleted row's bytes
        remain in it (DuckDB reuses, but does not clear, the space of deleted rows): a
        copy, durably renamed over the file, and the file reopened. Writes and reads
        wait for its length, that of a backup; StoreError when it fails (the old file
        stays in use, and the rewrite is done again at the next start)."""
        try:
            self.writer.exclusive(self._rewrite).result()
        except OSError as exc:  # the copy's file gone or the disk full: a store error
            raise StoreError(f"the database {self.path} could not be rewritten: {exc}"
                             ) from exc

    def _rewrite(self) -> None:  # on the writer thread
        with self._gate.exclusive():
            self.writer.wait_filter_loaded()  # its load reads on a cursor of its own
            self._swap_file(self.writer)

    def _swap_file(self, writer: Writer | None = None) -> None:
        """Copy the database into ``<path>.rewriting``, close every connection, rename
        the copy over the file, reopen (and hand ``writer`` its new cursor). No other
        cursor may be open: DuckDB would keep the old file's instance alive."""
        target = Path(self.path + files.REWRITING)
        cur = self._con.cursor()
        try:
            lifecycle_sql.copy_database(cur, str(target), utc_now())
        except BaseException:
            files.remove_database(target)
            raise
        finally:
            cur.close()
        if writer is not None:
            writer.detach()
        self._con.close()
        try:
            files.publish(target, self.path)
        finally:  # the copy in place, or on failure the old file again
            files.remove_database(target)
            self._con = self._open()
            if writer is not None:
                writer.attach(self._con.cursor())
        if lifecycle_sql.needs_rewrite(self._con):
            raise StoreError(f"{self.path} was rewritten, but the old file is still open")

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
            self._setting("RESET GLOBAL threads")
        except duckdb.Error as exc:
            raise StoreError(f"cannot set DuckDB's threads: {exc}") from exc
        try:
            yield
        finally:
            try:
                self._setting(f"SET GLOBAL threads = {int(self._threads)}")
            except duckdb.Error as exc:
                log.error("cannot set DuckDB's threads back to %d: %s", self._threads, exc)

    def _setting(self, statement: str) -> None:
        with self._gate.shared():
            cur = self._con.cursor()
            try:
                cur.execute(statement)
            finally:
                cur.close()

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
            with self._gate.shared():
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
