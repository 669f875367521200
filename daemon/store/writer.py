"""The single writer thread: group commit of queued submissions, plus ad-hoc writes.

One process owns the database file, and every write goes through :class:`Writer`, a
single thread that takes queued submissions, gathers more for up to ``group_commit_ms``,
writes them all in one transaction as column batches (``INSERT ... SELECT`` from numpy
arrays), commits, and only then resolves each submission's future; the web layer answers
202 after that. Their moves rows follow (:mod:`.moves`). Other writes (a finished
analysis, a batch of scores, a review, the nightly run) are functions run in one
transaction on the same thread (:meth:`Writer.call`). Between items the writer
checkpoints the WAL itself when DuckDB skipped its automatic checkpoint
(:meth:`Writer._checkpoint_if_due`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import queue
import threading
import time
from typing import Any, Callable

import duckdb
import numpy as np

from .connection import rollback
from .dedupe import Dedupe, same_content
from .errors import QueueFull, StoreError
from .moves import MOVES_IDLE_S, MOVES_MAX_AGE_S, MOVES_MAX_ROWS, PendingMoves, move_columns
from .records import SubmissionRecord, WriteResult, epoch_us, utc_now
from .repository import ingest as sql
from .threads import name_os_thread

log = logging.getLogger("fairgrid.store")
CHECKPOINT_RETRY_S = 1.0   # an idle writer tries again when a read put a checkpoint off
CHECKPOINT_PAUSE_S = 30.0  # ...and when one failed otherwise


def _resolve(batch, results) -> None:
    """Hand each submission its WriteResult (or StoreError): concurrent futures directly,
    asyncio futures with one wake-up per event loop for the whole batch."""
    by_loop: dict = {}
    for (_, fut), result in zip(batch, results):
        if isinstance(fut, asyncio.Future):
            by_loop.setdefault(fut.get_loop(), []).append((fut, result))
        elif fut.cancelled():
            continue
        elif isinstance(result, BaseException):
            fut.set_exception(result)
        else:
            fut.set_result(result)
    for loop, pairs in by_loop.items():
        try:
            loop.call_soon_threadsafe(_settle, pairs)
        except RuntimeError:
            pass  # the loop is closed: nobody waits any more


def _settle(pairs) -> None:
    for fut, result in pairs:
        if fut.done():
            continue
        if isinstance(result, BaseException):
            fut.set_exception(result)
        else:
            fut.set_result(result)


def _settle_call(fut, error: BaseException | None = None, result=None) -> None:
    if fut.cancelled():  # the caller may have given up (shutdown)
        return
    if error is not None:
        fut.set_exception(error)
    else:
        fut.set_result(result)


class Writer:
    def __init__(self, con: duckdb.DuckDBPyConnection, *, queue_size: int,
                 group_commit_ms: float, max_batch: int, dedupe_days: int,
                 on_batch: Callable[[int], None] | None = None,
                 moves_idle_s: float = MOVES_IDLE_S, moves_max_age_s: float = MOVES_MAX_AGE_S,
                 moves_max_rows: int = MOVES_MAX_ROWS, wal_path: str | None = None,
                 checkpoint_bytes: int = 0,
                 clock: Callable[[], float] = time.perf_counter):
        self._con = con
        self._clock = clock  # what idle time is measured with (tests pass their own)
        # Unbounded queue; the bound applies to submissions only (ad-hoc writes such as a
        # finished analysis must never be dropped, nor block the event loop).
        self._queue: queue.SimpleQueue = queue.SimpleQueue()  # C: no Condition per put
        self._limit = queue_size
        self._waiting = 0  # submissions queued and not yet taken into a batch
        self._lock = threading.Lock()
        self._window = group_commit_ms / 1000.0
        self._max_batch = max_batch
        self._on_batch = on_batch
        self._thread = threading.Thread(target=self._run, name="fairgrid-writer", daemon=True)
        self._stopping = False
        self._idle_s = 0.0  # time spent waiting for work, and since when it waits now
        self._idle_since: float | None = None
        self._next_key = sql.next_sub_key(con)
        # every sub_key <= _through has its moves stored, every one < _next_key is stored
        self._through = sql.moves_through(con)
        self._pending = PendingMoves(moves_max_age_s, moves_max_rows)
        self._moves_idle_s = moves_idle_s
        self._dedupe = Dedupe(con, dedupe_days, self._next_key)
        self._wal_path = wal_path
        self._checkpoint_bytes = checkpoint_bytes  # 0: DuckDB's automatic checkpoints only
        self._checkpoint_after = 0.0  # time.monotonic() before which none is tried again
        self._put_off = False  # the last one failed because a read held an old snapshot

    def filter_ready(self) -> bool:
        """Whether duplicates are screened by the in-memory filter yet."""
        return self._dedupe.ready()

    def start(self) -> None:
        self._dedupe.start()
        self._thread.start()

    def depth(self) -> int:
        """Submissions waiting for the writer."""
        return self._waiting

    def idle_seconds(self) -> float:
        """Seconds (of its clock) the writer has spent waiting for work since it
        started: sampled twice, the share of the time between that it was idle tells
        whether ingestion leaves room for other work."""
        since = self._idle_since
        return self._idle_s + (self._clock() - since if since is not None else 0.0)

    def submit(self, record: SubmissionRecord, loop: asyncio.AbstractEventLoop | None = None
               ) -> concurrent.futures.Future | asyncio.Future:
        """Queue a submission; its future resolves to a WriteResult after the commit.

        With ``loop`` (the caller's running loop) the future is an asyncio one, and a
        committed batch wakes that loop once for all its submissions rather than once per
        submission. Raises QueueFull when ``queue_size`` submissions are already waiting.
        """
        fut = loop.create_future() if loop is not None else concurrent.futures.Future()
        with self._lock:
            if self._stopping:
                raise QueueFull("shutting down")
            if self._waiting >= self._limit:
                raise QueueFull("the write queue is full")
            self._waiting += 1
        self._queue.put_nowait(("sub", record, fut))
        return fut

    def call(self, fn: Callable[..., Any], *args, **kwargs) -> concurrent.futures.Future:
        """Run ``fn(con, *args, **kwargs)`` in one transaction on the writer thread (never
        refused), after the moves of every submission accepted so far are stored."""
        fut: concurrent.futures.Future = concurrent.futures.Future()
        self._queue.put_nowait(("call", (fn, args, kwargs), fut))
        return fut

    def exclusive(self, fn: Callable[[], Any]) -> concurrent.futures.Future:
        """Run ``fn()`` on the writer thread, outside any transaction, once the moves of
        every submission accepted so far are stored: nothing writes meanwhile (a
        rewrite of the database file, :meth:`Store.rewrite`)."""
        fut: concurrent.futures.Future = concurrent.futures.Future()
        self._queue.put_nowait(("exclusive", fn, fut))
        return fut

    def wait_filter_loaded(self) -> None:
        self._dedupe.wait_loaded()

    def detach(self) -> None:
        """Close the writer's cursor (only from :meth:`exclusive`'s ``fn``)."""
        try:
            self._con.close()
        except duckdb.Error:
            pass

    def attach(self, con: duckdb.DuckDBPyConnection) -> None:
        """Write through ``con`` from now on (only from :meth:`exclusive`'s ``fn``)."""
        self._con = con
        self._dedupe.rebind(con)

    def moves_pending(self) -> bool:
        """Whether some accepted submission's moves are not in the moves table yet."""
        return self._next_key - 1 > self._through

    def sync(self) -> concurrent.futures.Future:
        """A future that resolves once the moves of every submission accepted before this
        call are in the moves table (StoreError if they cannot be stored)."""
        fut: concurrent.futures.Future = concurrent.futures.Future()
        if not self.moves_pending():
            fut.set_result(None)
        elif threading.current_thread() is self._thread:
            self._run_sync(fut)
        elif not self._thread.is_alive():
            fut.set_exception(StoreError("the writer has stopped before storing the last "
                                         "moves (they are stored at the next start)"))
        else:
            self._queue.put_nowait(("sync", None, fut))
        return fut

    def stop(self, timeout: float) -> None:
        """Stop taking new work, drain and commit what is queued, end the thread."""
        with self._lock:
            self._stopping = True
        self._queue.put(("stop", None, None))
        self._thread.join(timeout)

    # -- the thread --------------------------------------------------------------------

    def _run(self) -> None:
        name_os_thread("fg-writer")
        while True:
            op, payload, fut = self._next()
            if op != "sub":
                if self._other(op, payload, fut):
                    return
                continue
            batch = [(payload, fut)]
            # Others already waiting means the last commit gathered this batch: write what
            # is there now. Waiting out the window as well only lengthens every cycle
            # under load; the window is for a writer that was idle.
            backlog = not self._queue.empty()
            deadline = time.monotonic() + self._window
            other = None
            while len(batch) < self._max_batch:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    remaining = deadline - time.monotonic()
                    if backlog or remaining <= 0:
                        break
                    try:
                        item = self._queue.get(timeout=remaining)
                    except queue.Empty:
                        break
                if item[0] != "sub":
                    other = item
                    break
                batch.append((item[1], item[2]))
            self._commit_batch(batch)
            if other is not None and self._other(*other):
                return
            if self._pending.due():
                self._store_moves_quietly()

    def _next(self):
        """The next queued item. While none is, pending moves are stored once the writer
        was idle for ``moves_idle_s``, then the WAL is checkpointed if DuckDB did not
        (:meth:`_checkpoint_if_due`); the time spent waiting counts as idle."""
        try:
            item = self._queue.get_nowait()
        except queue.Empty:
            pass
        else:
            self._checkpoint_if_due(busy=True)
            return item
        if self.moves_pending():
            item = self._wait(self._moves_idle_s)
            if item is not None:
                return item
            self._store_moves_quietly()
        while self._checkpoint_if_due(busy=False):  # a read put it off: try again soon
            item = self._wait(CHECKPOINT_RETRY_S)
            if item is not None:
                return item
        return self._wait(None)

    def _checkpoint_if_due(self, busy: bool) -> bool:
        """CHECKPOINT if the WAL has outgrown ``checkpoint_bytes`` (twice that while work
        is queued: an idle moment is preferred, but a writer that is never idle must not
        let the WAL grow without bound); True while one is owed because a read put it off.

        DuckDB checkpoints by itself at a commit past the threshold, but not while
        another connection holds a transaction open across the writer's updates (every
        moves insert and score write updates rows); CHECKPOINT fails then too, and FORCE
        CHECKPOINT would wait for the read with every acknowledgement behind it. So a
        long read (an export) puts the checkpoint off until it ends, and the writer makes
        it then, without waiting for another commit. Runs after the last batch's futures
        resolved; not due, it costs one ``os.stat``."""
        now = time.monotonic()
        if now < self._checkpoint_after:
            return self._put_off
        self._put_off = False
        if self._wal_size() <= self._checkpoint_bytes * (2 if busy else 1):
            return False
        try:
            self._con.execute("CHECKPOINT")
        except duckdb.TransactionException:  # a read holds an older snapshot
            self._put_off = True
            self._checkpoint_after = now + CHECKPOINT_RETRY_S
            return True
        except duckdb.Error as exc:
            log.warning("checkpoint failed: %s (retried in %.0f s)", exc, CHECKPOINT_PAUSE_S)
            self._checkpoint_after = now + CHECKPOINT_PAUSE_S
            return False
        log.info("checkpointed the WAL in %.2f s (DuckDB had put it off)",
                 time.monotonic() - now)
        return False

    def _wal_size(self) -> int:
        """Bytes in the WAL file (0: none, or the writer leaves checkpoints to DuckDB)."""
        if not self._checkpoint_bytes or self._wal_path is None:
            return 0
        try:
            return os.stat(self._wal_path).st_size
        except OSError:  # none: nothing written since the last checkpoint
            return 0

    def _wait(self, timeout: float | None):
        self._idle_since = since = self._clock()
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
        finally:
            self._idle_s += self._clock() - since
            self._idle_since = None

    def _other(self, op: str, payload, fut) -> bool:
        """Run a queued item that is not a submission; True for "stop"."""
        if op == "call":
            self._run_call(payload, fut)
        elif op == "exclusive":
            self._run_exclusive(payload, fut)
        elif op == "sync":
            self._run_sync(fut)
        else:  # stop
            self._drain_remaining()
            return True
        return False

    def _drain_remaining(self) -> None:
        batch, others = [], []
        while True:
            try:
                op, payload, fut = self._queue.get_nowait()
            except queue.Empty:
                break
            if op == "sub":
                batch.append((payload, fut))
            elif op != "stop":
                others.append((op, payload, fut))
        if batch:
            self._commit_batch(batch)
        for op, payload, fut in others:
            self._other(op, payload, fut)
        self._store_moves_quietly()

    def _store_moves(self) -> None:
        """Insert the pending moves and advance moves_through, in one transaction; on
        failure they stay pending (StoreError)."""
        if not self.moves_pending():
            return
        through = self._next_key - 1
        try:
            sql.insert_moves(self._con, self._pending.columns(), through)
        except duckdb.Error as exc:
            rollback(self._con)
            self._pending.retry_later()
            raise StoreError(f"database write failed (moves): {exc}") from exc
        self._pending.stored()
        self._through = through

    def _store_moves_quietly(self) -> None:
        try:
            self._store_moves()
        except StoreError as exc:
            log.error("storage error: %s (kept in memory, retried)", exc)

    def _run_sync(self, fut) -> None:
        try:
            self._store_moves()
        except StoreError as exc:
            _settle_call(fut, exc)
        else:
            _settle_call(fut, None, None)

    def _run_call(self, call, fut) -> None:
        fn, args, kwargs = call
        try:
            self._store_moves()  # a call may read them
            self._con.execute("BEGIN TRANSACTION")
            result = fn(self._con, *args, **kwargs)
            self._con.execute("COMMIT")
        except Exception as exc:  # noqa: BLE001 - handed to the caller's future
            rollback(self._con)
            _settle_call(fut, StoreError(str(exc)) if isinstance(exc, duckdb.Error) else exc)
        else:
            _settle_call(fut, None, result)

    def _run_exclusive(self, fn, fut) -> None:
        try:
            self._store_moves()
            result = fn()
        except Exception as exc:  # noqa: BLE001 - handed to the caller's future
            _settle_call(fut, StoreError(str(exc)) if isinstance(exc, duckdb.Error) else exc)
        else:
            _settle_call(fut, None, result)


    def _taken(self, n: int) -> None:
        with self._lock:
            self._waiting -= n

    def _commit_batch(self, batch: list[tuple[SubmissionRecord, concurrent.futures.Future]]
                      ) -> None:
        self._taken(len(batch))
        try:
            outcomes, keys = self._write(batch)  # commits what is new (if anything)
        except Exception as exc:  # noqa: BLE001 - every waiter learns the batch failed
            rollback(self._con)
            _resolve(batch, [StoreError(f"database write failed: {exc}")] * len(batch))
            return
        done = time.monotonic()
        _resolve(batch, [WriteResult(outcome, done, key, r.puzzle_id if key else None)
                         for (r, _), outcome, key in zip(batch, outcomes, keys)])
        if self._on_batch:
            self._on_batch(len(batch))

    def _write(self, batch) -> tuple[list[str], list[int | None]]:
        records = [r for r, _ in batch]
        claims = self._claim_puzzles(records)  # opens a transaction when there are any
        seen_hooks, stored, filter_keys = self._dedupe.stored(self._con, records)
        outcomes: list[str] = []
        keys: list[int | None] = []  # the sub_key each accepted record gets
        accepted: list[SubmissionRecord] = []
        new_keys: list[str] = []
        for r, pair in zip(records, filter_keys):
            key = (r.portal, r.submission_id)
            hook = (r.portal, r.webhook_id)
            if r.puzzle_id is None:  # its claim found the portal's puzzle with other givens
                outcomes.append("puzzle_conflict")
                keys.append(None)
            elif hook in seen_hooks:
                # a retry of the same message, or another message under a used id
                outcomes.append("duplicate" if same_content(seen_hooks[hook], r.raw)
                                else "hook_conflict")
                keys.append(None)
            elif key in stored:
                # the same body again (up to key order and white space), or another one
                outcomes.append("duplicate" if same_content(stored[key], r.raw) else "conflict")
                keys.append(None)
            else:
                outcomes.append("accepted")
                keys.append(self._next_key + len(accepted))
                stored[key] = r.raw
                seen_hooks[hook] = r.raw
                accepted.append(r)
                new_keys += pair
        if accepted:
            self._insert(accepted, in_transaction=claims)
            self._dedupe.remember(new_keys)
        elif claims:  # nothing stored: no puzzle registered either
            self._con.execute("ROLLBACK")
        return outcomes, keys

    def _claim_puzzles(self, records: list[SubmissionRecord]) -> bool:
        """Resolve the puzzle names that webhooks found no puzzle for, registering the
        puzzles they carry (``repository.ingest.claim_puzzle``), in a transaction it
        opens (True) that the batch's insert commits; a record whose claim failed gets
        ``puzzle_id`` None. Rare: a puzzle first seen in a webhook."""
        new = [r for r in records if r.new_puzzle is not None]
        if not new:
            return False
        self._con.execute("BEGIN TRANSACTION")
        now = utc_now()
        for r in new:
            r.puzzle_id = sql.claim_puzzle(self._con, r.portal, r.puzzle_id, r.new_puzzle,
                                           now)
        return True

    def _insert(self, records: list[SubmissionRecord], in_transaction: bool) -> None:
        """Store accepted records (their submission rows, raw bodies included) and commit
        (the transaction the claims opened, if any); their moves join the pending
        ones."""
        con = self._con
        now = utc_now()
        obj = lambda values: np.array(values, dtype=object)  # noqa: E731
        keys = np.arange(self._next_key, self._next_key + len(records), dtype=np.int64)
        # Times go as epoch microseconds: datetime objects are converted one by one under
        # the GIL.
        sql.insert_submissions(con, {
            "sub_key": keys,
            "portal": obj([r.portal for r in records]),
            "submission_id": obj([r.submission_id for r in records]),
            "webhook_id": obj([r.webhook_id for r in records]),
            "tournament_id": obj([r.tournament_id for r in records]),
            "player_id": obj([r.player_id for r in records]),
            "puzzle_id": obj([r.puzzle_id for r in records]),
            "started_at": np.array([epoch_us(r.started_at) for r in records], dtype=np.int64),
            "received_at": np.array([epoch_us(r.received_at) for r in records],
                                    dtype=np.int64),
            "n_moves": np.array([r.t_ms.size for r in records], dtype=np.int32),
            "duration_ms": np.array([int(r.t_ms[-1]) if r.t_ms.size else 0 for r in records],
                                    dtype=np.int64),
            "complete": np.array([r.complete for r in records], dtype=bool),
            "raw": obj([r.raw for r in records]),
        }, epoch_us(now), in_transaction=in_transaction)
        self._next_key += len(records)
        self._pending.add(move_columns(keys, [(r.t_ms, r.cell, r.digit, r.note)
                                              for r in records]))
