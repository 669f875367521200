"""DuckDB storage: versioned migrations, one writer thread with group commit, reads.

One process owns the database file (DuckDB allows one writer process; a second one gets a
clear :class:`StoreLockedError`). Every write goes through :class:`Writer`, a single
thread that takes queued submissions, gathers more for up to ``group_commit_ms``, writes
them all in one transaction as column batches (``INSERT ... SELECT`` from numpy arrays),
commits, and only then resolves each submission's future; the web layer answers 202
after that. Reads use their own cursors. ``duckdb.Error`` never escapes: it becomes
:class:`StoreError` (the web layer answers 503).

The acknowledging transaction stores each submission's row with its raw body, which
holds every move. The ``moves`` rows follow a moment later, many batches to one insert
(a group commit costs ~7 ms however little it carries, and the moves insert was a third
of it: docs/benchmarks.md). ``moves_through`` records how far they got, in the same
transaction as the moves. Nobody sees the difference: a read whose SQL names the
``moves`` table first waits until every acknowledged submission's moves are stored, a
writer call runs after they are, and after a crash :func:`connect` re-derives the
missing ones from the raw bodies.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import queue
import re
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from importlib import resources
from typing import Any, Callable

import duckdb
import numpy as np

from .keyfilter import KeyFilter
from .validate import ValidationError, parse_body, same_content

log = logging.getLogger(__name__)

# Pending moves are stored once the writer was idle for MOVES_IDLE_S, or, under load,
# between two batches once the oldest waited MOVES_MAX_AGE_S or MOVES_MAX_ROWS rows wait.
# That insert holds up the next batch: ~4 ms + ~0.3 ms per 1,000 rows (20 ms for 54,000),
# so under load it comes often and small rather than seldom and big (docs/benchmarks.md).
MOVES_IDLE_S = 0.02
MOVES_MAX_AGE_S = 0.25
MOVES_MAX_ROWS = 32_768
SYNC_TIMEOUT_S = 60.0    # a read of the moves table waits at most this long for them
_READS_MOVES = re.compile(r"\bmoves\b", re.IGNORECASE)  # the table (not n_moves)


class StoreError(RuntimeError):
    """The database failed (disk, lock, corruption): the request can be retried later."""


class StoreLockedError(StoreError):
    """Another process holds the database file."""


class QueueFull(StoreError):
    """The write queue is full: answer 503 with Retry-After."""


def migrations() -> list[tuple[int, str]]:
    """The numbered migration scripts shipped in ``daemon/schema``, ascending."""
    out = []
    for entry in resources.files("fairgrid.daemon").joinpath("schema").iterdir():
        name = entry.name
        if name.endswith(".sql") and name[:3].isdigit():
            out.append((int(name[:3]), entry.read_text(encoding="utf-8")))
    return sorted(out)


def connect(path: str, checkpoint_mb: int = 256, memory_limit_mb: int = 2048,
            threads: int = 0) -> duckdb.DuckDBPyConnection:
    """Open (creating) the database and bring its schema up to date.

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
        if "lock" in str(exc).lower():
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
        con.execute("CREATE TABLE IF NOT EXISTS schema_version "
                    "(version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)")
        done = {v for (v,) in con.execute("SELECT version FROM schema_version").fetchall()}
        for version, sql in migrations():
            if version in done:
                continue
            con.execute("BEGIN TRANSACTION")
            con.execute(sql)
            con.execute("INSERT INTO schema_version VALUES (?, ?)", [version, _now()])
            con.execute("COMMIT")
    except duckdb.Error as exc:
        con.close()
        raise StoreError(f"cannot migrate the database {path}: {exc}") from exc
    try:
        recovered = recover_moves(con)
    except duckdb.Error as exc:
        con.close()
        raise StoreError(f"cannot store the moves of {path}'s last submissions: {exc}") from exc
    if recovered:
        log.warning("stored the moves of %d submission(s) acknowledged before the last "
                    "stop but not yet written to the moves table (re-read from their raw "
                    "bodies)", recovered)
    return con


def recover_moves(con) -> int:
    """Store the moves of submissions past ``moves_through`` (acknowledged, then a crash
    before the writer's moves insert), parsed from their raw bodies exactly as the
    webhook parsed them; returns how many submissions that covered. Submissions that
    have moves rows already (a database built by other means) are left alone."""
    through = moves_through(con)
    rows = con.execute(
        "SELECT s.sub_key, s.raw FROM submissions s WHERE s.sub_key > $t AND NOT EXISTS "
        "(SELECT 1 FROM moves m WHERE m.sub_key = s.sub_key AND m.sub_key > $t) "
        "ORDER BY s.sub_key", {"t": through}).fetchall()
    last = con.execute("SELECT coalesce(max(sub_key), 0) FROM submissions").fetchone()[0]
    if not rows and last <= through:
        return 0
    keys, logs = [], []
    for key, raw in rows:
        try:
            event = parse_body(raw.encode("utf-8"))
        except (ValidationError, UnicodeError) as exc:  # stored, so it parsed once
            log.error("submission %d: its raw body no longer parses (%s); no moves "
                      "stored for it", key, exc)
            continue
        keys.append(key)
        logs.append((event.t_ms, event.cell, event.digit, event.note))
    store_moves(con, move_columns(np.array(keys, dtype=np.int64), logs), max(last, through))
    return len(keys)


def moves_through(con) -> int:
    """The sub_key up to which every submission's moves are in the moves table."""
    return con.execute("SELECT max(through) FROM moves_through").fetchone()[0] or 0


def move_columns(keys: np.ndarray, logs: list[tuple]) -> dict[str, np.ndarray] | None:
    """The moves table's columns for solves ``keys`` (sub_keys) with move logs ``logs``
    (t_ms, cell, digit, note arrays each); None when they hold no move."""
    sizes = [t_ms.size for t_ms, _c, _d, _n in logs]
    if not sum(sizes):
        return None
    return {
        "sub_key": np.repeat(keys, sizes),
        "seq": np.concatenate([np.arange(n, dtype=np.int32) for n in sizes]),
        "t_ms": np.concatenate([t for t, _c, _d, _n in logs]).astype(np.int64),
        "cell": np.concatenate([c for _t, c, _d, _n in logs]).astype(np.int16),
        "digit": np.concatenate([d for _t, _c, d, _n in logs]).astype(np.int16),
        "note": np.concatenate([n for _t, _c, _d, n in logs]).astype(bool),
    }


def store_moves(con, new_moves: dict[str, np.ndarray] | None, through: int) -> None:
    """Insert ``new_moves`` (move_columns) and set moves_through to ``through``: one
    transaction, one call."""
    insert = ("INSERT INTO moves SELECT sub_key, seq, t_ms, cell, digit, note FROM new_moves; "
              if new_moves is not None else "")  # DuckDB reads the dict by name
    con.execute(f"BEGIN TRANSACTION; {insert}"
                f"UPDATE moves_through SET through = {int(through)}; COMMIT")


def _now() -> datetime:
    return datetime.now(timezone.utc)


def insert_puzzle(con, puzzle_id: str, givens: str, order: int, solution: str,
                  now: datetime) -> None:
    """Register a puzzle as ``pending`` unless the id is already known (run by the writer)."""
    con.execute("INSERT INTO puzzles (id, givens, puzzle_order, solution, status, "
                "registered_at) VALUES (?, ?, ?, ?, 'pending', ?) ON CONFLICT DO NOTHING",
                [puzzle_id, givens, order, solution, now])


@dataclass(eq=False, slots=True)  # not frozen: a frozen init cost ~2 % of a webhook's time
class SubmissionRecord:
    """A validated submission, ready to store (built by the webhook layer)."""

    portal: str
    submission_id: str
    webhook_id: str
    tournament_id: str | None
    player_id: str
    puzzle_id: str
    started_at: datetime
    received_at: datetime
    t_ms: np.ndarray  # int64
    cell: np.ndarray  # int16
    digit: np.ndarray  # int16
    note: np.ndarray  # bool: a pencil mark, not a placement
    complete: bool
    raw: str  # the body as received (same_content() on two of them: identical resubmission)
    new_puzzle: tuple[str, int, str] | None = None  # (givens, order, solution) to register

    @classmethod
    def of(cls, event, webhook_id: str, received_at: datetime, complete: bool, raw: str,
           new_puzzle: tuple[str, int, str] | None = None) -> SubmissionRecord:
        """The record of a solve parsed by ``validate.parse_body`` (its portal checked
        against the signature), as the webhook stores it."""
        return cls(event.portal, event.submission_id, webhook_id, event.tournament_id,
                   event.player_id, event.puzzle_id, event.started_at, received_at,
                   event.t_ms, event.cell.astype(np.int16), event.digit.astype(np.int16),
                   event.note, complete, raw, new_puzzle)


@dataclass(frozen=True)
class WriteResult:
    outcome: str  # accepted | duplicate | conflict
    committed_at: float  # time.monotonic() at commit
    sub_key: int | None = None  # the stored row's key (accepted only)


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


class Writer:
    """The single writer thread: group commit of queued submissions, plus ad-hoc writes."""

    def __init__(self, con: duckdb.DuckDBPyConnection, *, queue_size: int,
                 group_commit_ms: float, max_batch: int, dedupe_days: int,
                 on_batch: Callable[[int], None] | None = None,
                 moves_idle_s: float = MOVES_IDLE_S, moves_max_age_s: float = MOVES_MAX_AGE_S,
                 moves_max_rows: int = MOVES_MAX_ROWS):
        self._con = con
        # Unbounded queue; the bound applies to submissions only (ad-hoc writes such as a
        # finished analysis must never be dropped, nor block the event loop).
        self._queue: queue.SimpleQueue = queue.SimpleQueue()  # C: no Condition per put
        self._limit = queue_size
        self._waiting = 0  # submissions queued and not yet taken into a batch
        self._lock = threading.Lock()
        self._window = group_commit_ms / 1000.0
        self._max_batch = max_batch
        self._dedupe = timedelta(days=dedupe_days)
        self._on_batch = on_batch
        self._thread = threading.Thread(target=self._run, name="fairgrid-writer", daemon=True)
        self._stopping = False
        self._idle_s = 0.0  # time spent waiting for work, and since when it waits now
        self._idle_since: float | None = None
        self._next_key = con.execute(
            "SELECT coalesce(max(sub_key), 0) + 1 FROM submissions").fetchone()[0]
        # moves of accepted submissions not yet in the moves table (module docstring):
        # every sub_key <= _through has its moves stored, every one < _next_key is stored
        self._through = moves_through(con)
        self._pending: list[dict[str, np.ndarray]] = []
        self._pending_rows = 0
        self._pending_since: float | None = None  # time.monotonic() of the oldest
        self._moves_idle_s = moves_idle_s
        self._moves_max_age_s = moves_max_age_s
        self._moves_max_rows = moves_max_rows
        # the dedupe filter is built in the background (~4 s per million stored
        # submissions); until it is ready every key is checked in the database, and the
        # keys written meanwhile are added when the writer switches to it
        self._seen: KeyFilter | None = None
        self._loaded: KeyFilter | None = None
        self._written_meanwhile: list[str] = []
        self._loader = threading.Thread(target=self._load_filter, args=(self._next_key,),
                                        name="fairgrid-keyfilter", daemon=True)

    def _load_filter(self, below: int) -> None:
        """Build the dedupe filter over every stored submission id (sub_key < ``below``)
        and the webhook-ids of the last ``dedupe_days``, on its own cursor."""
        name_os_thread("fg-keyfilter")
        try:
            cur = self._con.cursor()
            try:
                cols = cur.execute(
                    "SELECT portal, submission_id, webhook_id, received_at >= ? AS recent "
                    "FROM submissions WHERE sub_key < ?",
                    [_now() - self._dedupe, below]).fetchnumpy()
            finally:
                cur.close()
        except duckdb.Error:
            return  # the database path stays in use: slower, never wrong
        n = len(cols["portal"])
        seen = KeyFilter(capacity=max(1 << 20, 2 * n))
        for lo in range(0, n, 100_000):  # bounded temporaries for big tables
            part = {k: v[lo:lo + 100_000] for k, v in cols.items()}
            recent = np.asarray(part["recent"], dtype=bool)
            seen.add(_sub_key(p, s) for p, s in zip(part["portal"], part["submission_id"]))
            seen.add(_hook_key(p, h) for p, h, r in zip(part["portal"], part["webhook_id"],
                                                         recent) if r)
        self._loaded = seen

    def filter_ready(self) -> bool:
        """Whether duplicates are screened by the in-memory filter yet."""
        return self._seen is not None

    def _screen(self, keys: list[str]) -> np.ndarray:
        """Per key: may it be stored already? (All True until the filter is ready.)"""
        if self._seen is None and self._loaded is not None:  # switch, on this thread
            self._loaded.add(self._written_meanwhile)
            self._seen, self._written_meanwhile = self._loaded, []
        if self._seen is None:
            return np.ones(len(keys), dtype=bool)
        return self._seen.maybe(keys)

    def _remember(self, keys: list[str]) -> None:
        if self._seen is None:
            self._written_meanwhile.extend(keys)
        else:
            self._seen.add(keys)

    def start(self) -> None:
        self._loader.start()
        self._thread.start()

    def depth(self) -> int:
        """Submissions waiting for the writer."""
        return self._waiting

    def idle_seconds(self) -> float:
        """Seconds (time.perf_counter) the writer has spent waiting for work since it
        started: sampled twice, the share of the time between that it was idle tells
        whether ingestion leaves room for other work."""
        since = self._idle_since
        return self._idle_s + (time.perf_counter() - since if since is not None else 0.0)

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

    def call(self, fn: Callable[[duckdb.DuckDBPyConnection], Any]) -> concurrent.futures.Future:
        """Run ``fn(con)`` in one transaction on the writer thread (never refused), after
        the moves of every submission accepted so far are stored."""
        fut: concurrent.futures.Future = concurrent.futures.Future()
        self._queue.put_nowait(("call", fn, fut))
        return fut

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

    def _taken(self, n: int) -> None:
        with self._lock:
            self._waiting -= n

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
            kind, payload, fut = self._next()
            if kind != "sub":
                if self._other(kind, payload, fut):
                    return
                continue
            batch = [(payload, fut)]
            # Others already waiting means the last commit gathered this batch: write what
            # is there now. Waiting out the window as well only lengthened every cycle
            # under load (by 5 ms in ~25); it is for a writer that was idle.
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
            self._store_moves_when_due()

    def _next(self):
        """The next queued item. While none is, pending moves are stored once the writer
        was idle for ``moves_idle_s``; the time spent waiting counts as idle."""
        try:
            return self._queue.get_nowait()
        except queue.Empty:
            pass
        if self.moves_pending():
            item = self._wait(self._moves_idle_s)
            if item is not None:
                return item
            self._store_moves_quietly()
        return self._wait(None)

    def _wait(self, timeout: float | None):
        self._idle_since = since = time.perf_counter()
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
        finally:
            self._idle_s += time.perf_counter() - since
            self._idle_since = None

    def _other(self, kind: str, payload, fut) -> bool:
        """Run a queued item that is not a submission; True for "stop"."""
        if kind == "call":
            self._run_call(payload, fut)
        elif kind == "sync":
            self._run_sync(fut)
        else:  # stop
            self._drain_remaining()
            return True
        return False

    def _drain_remaining(self) -> None:
        batch, others = [], []
        while True:
            try:
                kind, payload, fut = self._queue.get_nowait()
            except queue.Empty:
                break
            if kind == "sub":
                batch.append((payload, fut))
            elif kind != "stop":
                others.append((kind, payload, fut))
        if batch:
            self._commit_batch(batch)
        for kind, payload, fut in others:
            self._other(kind, payload, fut)
        self._store_moves_quietly()

    def _store_moves(self) -> None:
        """Insert the pending moves and advance moves_through, in one transaction; on
        failure they stay pending (StoreError)."""
        if not self.moves_pending():
            return
        through = self._next_key - 1
        new_moves = None
        if self._pending:
            new_moves = {name: np.concatenate([part[name] for part in self._pending])
                         for name in self._pending[0]}
        try:
            store_moves(self._con, new_moves, through)
        except duckdb.Error as exc:
            self._rollback()
            self._pending_since = time.monotonic()  # retried when due again, not at once
            raise StoreError(f"database write failed (moves): {exc}") from exc
        self._pending, self._pending_rows, self._pending_since = [], 0, None
        self._through = through

    def _store_moves_quietly(self) -> None:
        try:
            self._store_moves()
        except StoreError as exc:
            log.error("storage error: %s (kept in memory, retried)", exc)

    def _store_moves_when_due(self) -> None:
        if self._pending_since is not None and (
                self._pending_rows >= self._moves_max_rows
                or time.monotonic() - self._pending_since >= self._moves_max_age_s):
            self._store_moves_quietly()

    def _run_sync(self, fut) -> None:
        try:
            self._store_moves()
        except StoreError as exc:
            if not fut.cancelled():
                fut.set_exception(exc)
        else:
            if not fut.cancelled():
                fut.set_result(None)

    def _run_call(self, fn, fut) -> None:
        try:
            self._store_moves()  # a call may read them
            self._con.execute("BEGIN TRANSACTION")
            result = fn(self._con)
            self._con.execute("COMMIT")
        except Exception as exc:  # noqa: BLE001 - handed to the caller's future
            self._rollback()
            if not fut.cancelled():  # the caller may have given up (shutdown)
                fut.set_exception(StoreError(str(exc)) if isinstance(exc, duckdb.Error)
                                  else exc)
        else:
            if not fut.cancelled():
                fut.set_result(result)

    def _rollback(self) -> None:
        try:
            self._con.execute("ROLLBACK")
        except duckdb.Error:
            pass

    def _commit_batch(self, batch: list[tuple[SubmissionRecord, concurrent.futures.Future]]
                      ) -> None:
        self._taken(len(batch))
        try:
            outcomes, keys = self._write(batch)  # commits what is new (if anything)
        except Exception as exc:  # noqa: BLE001 - every waiter learns the batch failed
            self._rollback()
            _resolve(batch, [StoreError(f"database write failed: {exc}")] * len(batch))
            return
        done = time.monotonic()
        _resolve(batch, [WriteResult(outcome, done, key) for outcome, key in zip(outcomes, keys)])
        if self._on_batch:
            self._on_batch(len(batch))

    def _write(self, batch) -> tuple[list[str], list[int | None]]:
        con = self._con
        records = [r for r, _ in batch]
        seen_hooks: set[tuple[str, str]] = set()
        stored: dict[tuple[str, str], str] = {}
        # the database is asked only about keys the filter may have seen (duplicates and
        # rare false positives), in one statement (DuckDB statements cost ~1 ms each)
        sub_keys = [_sub_key(r.portal, r.submission_id) for r in records]
        hook_keys = [_hook_key(r.portal, r.webhook_id) for r in records]
        maybe = self._screen(sub_keys + hook_keys)
        n = len(records)
        suspects = [r for i, r in enumerate(records) if maybe[i] or maybe[n + i]]
        for portal in {r.portal for r in suspects}:
            mine = [r for r in suspects if r.portal == portal]
            for what, key, raw in con.execute(
                    "SELECT 'hook', webhook_id, NULL FROM submissions WHERE portal = ? AND "
                    "webhook_id IN (SELECT unnest(?::VARCHAR[])) AND received_at >= ? "
                    "UNION ALL SELECT 'sub', submission_id, raw FROM submissions "
                    "WHERE portal = ? AND submission_id IN (SELECT unnest(?::VARCHAR[]))",
                    [portal, [r.webhook_id for r in mine], _now() - self._dedupe, portal,
                     [r.submission_id for r in mine]]).fetchall():
                if what == "hook":
                    seen_hooks.add((portal, key))
                else:
                    stored[(portal, key)] = raw
        outcomes: list[str] = []
        keys: list[int | None] = []  # the sub_key each accepted record gets
        accepted: list[SubmissionRecord] = []
        new_keys: list[str] = []
        for i, r in enumerate(records):
            key = (r.portal, r.submission_id)
            if (r.portal, r.webhook_id) in seen_hooks:
                outcomes.append("duplicate")
                keys.append(None)
            elif key in stored:
                # the same body again (up to key order and white space), or another one
                outcomes.append("duplicate" if same_content(stored[key], r.raw) else "conflict")
                keys.append(None)
            else:
                outcomes.append("accepted")
                keys.append(self._next_key + len(accepted))
                stored[key] = r.raw
                seen_hooks.add((r.portal, r.webhook_id))
                accepted.append(r)
                new_keys += (sub_keys[i], hook_keys[i])
        if accepted:
            self._insert(accepted)
            self._remember(new_keys)
        return outcomes, keys

    def _insert(self, records: list[SubmissionRecord]) -> None:
        """Store accepted records and commit: their submission rows (raw bodies included),
        in one call. Each call releases and retakes the GIL, which the event loop holds
        most of the time. Their moves join the pending ones (module docstring)."""
        con = self._con
        now = _now()
        new_puzzles = {}
        for r in records:
            if r.new_puzzle is not None:
                new_puzzles.setdefault(r.puzzle_id, r.new_puzzle)
        commit = ""  # one INSERT is a transaction of its own
        if new_puzzles:  # rare: a puzzle first seen in a webhook
            con.execute("BEGIN TRANSACTION")
            commit = "; COMMIT"
            for pid, (givens, order, solution) in new_puzzles.items():
                insert_puzzle(con, pid, givens, order, solution, now)
        obj = lambda values: np.array(values, dtype=object)  # noqa: E731
        keys = np.arange(self._next_key, self._next_key + len(records), dtype=np.int64)
        # DuckDB reads this local dict of numpy arrays by name (a replacement scan): a
        # register()/unregister() pair cost ~2.5 ms more per batch. Times go as epoch
        # microseconds: datetime objects are converted one by one under the GIL.
        new_subs = {  # noqa: F841 - read by name in the statement below
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
        }
        con.execute(
            "INSERT INTO submissions (sub_key, portal, submission_id, webhook_id, tournament_id, "
            "player_id, puzzle_id, started_at, received_at, committed_at, n_moves, duration_ms, "
            "complete, status, raw) SELECT sub_key, portal, submission_id, webhook_id, "
            "tournament_id, player_id, puzzle_id, make_timestamptz(started_at), "
            f"make_timestamptz(received_at), make_timestamptz({int(epoch_us(now))}), n_moves, "
            f"duration_ms, complete, 'pending', raw FROM new_subs{commit}")
        self._next_key += len(records)
        moves = move_columns(keys, [(r.t_ms, r.cell, r.digit, r.note) for r in records])
        if moves is not None:
            self._pending.append(moves)
            self._pending_rows += moves["seq"].size
        if self._pending_since is None:
            self._pending_since = time.monotonic()


def name_os_thread(name: str) -> None:
    """Name the calling thread for the OS (``top -H``, ``ps -L``, /proc/PID/task/*/comm);
    Python's thread names stay inside Python. Linux only, best effort."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").prctl(15, name.encode()[:15], 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):
        pass


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


def epoch_us(when: datetime) -> int:
    """Microseconds since the Unix epoch (exact; ``when`` carries a time zone)."""
    return (when - _EPOCH) // _MICROSECOND


def _sub_key(portal: str, submission_id: str) -> str:
    return f"s\x1f{portal}\x1f{submission_id}"


def _hook_key(portal: str, webhook_id: str) -> str:
    return f"h\x1f{portal}\x1f{webhook_id}"


class Store:
    """The database: the writer thread and read cursors."""

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
                             moves_idle_s=moves_idle_s, moves_max_age_s=moves_max_age_s)
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

    def read(self, sql: str, params: list | None = None) -> list[tuple]:
        """Run a read query on a fresh cursor; StoreError on failure. A query that names
        the moves table first waits until every acknowledged solve's moves are in it."""
        return self._query(sql, params, lambda cur: cur.fetchall())

    def read_dicts(self, sql: str, params: list | None = None) -> list[dict]:
        """Like :meth:`read`, each row a dict keyed by column name."""
        def rows(cur):
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row)) for row in cur.fetchall()]
        return self._query(sql, params, rows)

    def read_numpy(self, sql: str, params: list | None = None) -> dict:
        """Like :meth:`read`, as a dict of numpy arrays (one per column): bulk reads."""
        return self._query(sql, params, lambda cur: cur.fetchnumpy())

    def _query(self, sql: str, params: list | None, fetch):
        if _READS_MOVES.search(sql):  # every acknowledged solve's moves first
            try:
                self.writer.sync().result(timeout=SYNC_TIMEOUT_S)
            except concurrent.futures.TimeoutError:
                raise StoreError("the moves of the last submissions are not stored yet; "
                                 "retry") from None
        try:
            cur = self._con.cursor()
            try:
                return fetch(cur.execute(sql, params or []))
            finally:
                cur.close()
        except duckdb.Error as exc:
            raise StoreError(f"database read failed: {exc}") from exc
