"""The process pool that puzzle analysis, scoring and the nightly fit run in.

The daemon's work comes in lanes of different urgency (:class:`Lane`). A
:class:`LanePool` holds each lane's tasks in one priority queue and hands the pool's
processes only as many tasks as it has processes, so a free process always takes the
most urgent task waiting: a 9x9 puzzle registered behind a 16x16 one waits for one SA
run to end, not for the whole 16x16 analysis. Tasks of one lane run in the order they
were submitted. Work already running is never pre-empted, so the large lane submits
short tasks (one SA run each).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import multiprocessing
import os
import threading
from concurrent.futures import CancelledError, Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from enum import IntEnum

log = logging.getLogger("fairgrid.pool")


def _worker_init() -> None:
    """Pool workers only use CPU nobody else wants (Linux SCHED_IDLE; elsewhere nice 19):
    analysis and scoring yield the CPU to ingestion, fall behind during a burst and catch
    up when it is over (``fairgrid_scoring_backlog`` shows how far behind). They also die
    with the daemon: a SIGKILLed daemon must not leave orphaned workers behind (Linux
    PR_SET_PDEATHSIG)."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        try:
            os.nice(19)
        except OSError:
            pass
    try:
        import ctypes
        import signal
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the daemon died before the call
            os._exit(1)
    except (OSError, AttributeError):
        pass  # not Linux: shutdown still stops the pool


def start_pool(workers: int = 0) -> ProcessPoolExecutor:
    """``workers`` processes (0: one per core)."""
    workers = workers or os.cpu_count() or 1
    # spawn: the daemon has threads (the writer), which fork does not copy safely
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_init)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop the pool now: queued work is dropped, running work is killed (the puzzles stay
    pending and are analysed after the next start; submissions are scored by the next
    start's sweep).

    A worker killed while it writes a result (a scoring batch's evidence is megabytes)
    leaves the executor's manager thread reading the rest of that message forever, and
    the interpreter waits for that thread at exit. Closing the daemon's own ends of the
    pool's pipes wakes those threads (end of file, a broken pipe), and the executor winds
    itself up."""
    # no public API for any of this before Python 3.14
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    # the daemon's ends of the pipes the manager thread and the queue feeder may block on
    # (shutdown() drops the executor's references to them)
    ends = [getattr(getattr(pool, "_result_queue", None), "_writer", None),
            getattr(getattr(pool, "_call_queue", None), "_reader", None)]
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        proc.terminate()
    for proc in processes:
        proc.join(5)
    if manager is None:
        return
    manager.join(1)
    if manager.is_alive():
        for end in ends:
            try:
                end.close()
            except (AttributeError, OSError):
                pass
        manager.join(5)


# how often the pool looks for a process that died unnoticed (LanePool._watch)
WATCH_S = 1.0


class Lane(IntEnum):
    """Kinds of pool work, most urgent first."""

    SCORING = 0  # a batch of solves: milliseconds, and flags wait on it
    SMALL_PUZZLES = 1  # analysis of puzzles up to 9x9: about a second in all
    NIGHTLY = 2  # the nightly fit: one long task, once a day
    LARGE_PUZZLES = 3  # analysis of 16x16 and up: minutes, in one-run tasks


class LanePool:
    """A process pool whose queued tasks run most urgent lane first (see the module
    docstring). ``lane(L)`` gives the executor a component submits to."""

    def __init__(self, workers: int = 0, *, pool: Executor | None = None, cluster=None):
        self.workers = workers or os.cpu_count() or 1
        self.cluster = cluster  # work.compute.Cluster: puzzle analysis goes there
        self._owned = pool is None  # a pool of its own is renewed when a worker dies
        self._pool = pool if pool is not None else start_pool(self.workers)
        self.renewed = 0  # times a broken pool was replaced (fairgrid_pool_renewals)
        self._heap: list = []
        self._seq = itertools.count()
        self._running = 0
        self._stopping = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._dispatch, name="fairgrid-pool-dispatch",
                                        daemon=True)
        self._thread.start()
        self._stopped = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="fairgrid-pool-watch",
                                         daemon=True)
        self._watcher.start()

    def lane(self, lane: Lane) -> Executor:
        if self.cluster is not None and lane in (Lane.SMALL_PUZZLES, Lane.LARGE_PUZZLES):
            from .compute import PRIORITY
            return self.cluster.lane(PRIORITY[int(lane)])
        return LaneExecutor(self, lane)

    def waiting(self) -> dict[Lane, int]:
        """Tasks queued per lane, not yet handed to a process."""
        with self._cond:
            counts = {lane: 0 for lane in Lane}
            for item in self._heap:
                counts[Lane(item[0])] += 1
            return counts

    def submit(self, lane: Lane, fn, /, *args, **kwargs) -> Future:
        outer: Future = Future()
        with self._cond:
            if self._stopping:
                raise RuntimeError("cannot schedule new work after shutdown")
            heapq.heappush(self._heap, (int(lane), next(self._seq), outer, fn, args, kwargs))
            self._cond.notify()
        return outer

    def _dispatch(self) -> None:
        # a thread of its own: submitting to a ProcessPoolExecutor from a done-callback
        # (its manager thread) can deadlock on the wake-up pipe
        while True:
            with self._cond:
                while not self._stopping and (self._running >= self.workers or not self._heap):
                    self._cond.wait()
                if self._stopping:
                    return
                _, _, outer, fn, args, kwargs = heapq.heappop(self._heap)
                if not outer.set_running_or_notify_cancel():
                    continue  # cancelled while it waited
                self._running += 1
                pool = self._pool
            try:
                try:
                    inner = pool.submit(fn, *args, **kwargs)
                except BrokenProcessPool:  # broke since its last task ended: a new one
                    pool = self._renew(pool)
                    inner = pool.submit(fn, *args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - the caller sees it
                self._finished(outer, None, exc)
                continue
            inner.add_done_callback(lambda f, outer=outer, pool=pool:
                                    self._finished(outer, f, pool=pool))

    def _finished(self, outer: Future, inner: Future | None, exc: BaseException | None = None,
                  pool: Executor | None = None) -> None:
        if inner is not None:
            exc = CancelledError() if inner.cancelled() else inner.exception()
        # the executor's own mark that a process died (a task may raise the class too)
        if isinstance(exc, BrokenProcessPool) and pool is not None \
                and getattr(pool, "_broken", False):
            self._renew(pool)
        if exc is not None:
            outer.set_exception(exc)
        else:
            outer.set_result(inner.result())
        with self._cond:
            self._running -= 1
            self._cond.notify()

    def _watch(self) -> None:
        """Renew a pool whose process died unnoticed. The executor learns of a death
        from the process's sentinel, unless its manager thread is inside reading that
        process's result: a process killed while it wrote a big one (a scoring batch's
        evidence, the OOM killer) leaves the thread waiting for the rest for good, and
        every task after it with it. A process found dead at two looks in a row
        (``WATCH_S`` apart) is such a death: the pool is replaced, and closing the old
        one's pipes fails its tasks in flight (BrokenProcessPool; their callers retry)."""
        suspect = None
        while not self._stopped.wait(WATCH_S):
            pool = self._pool
            try:
                procs = list((getattr(pool, "_processes", None) or {}).values())
            except RuntimeError:    # the executor's own thread changed it meanwhile
                continue
            if not self._owned or not any(p.exitcode is not None for p in procs):
                suspect = None
                continue
            if suspect is pool and not getattr(pool, "_broken", False):
                log.error("a pool process died and the pool did not notice (it was "
                          "sending a result); the pool is replaced")
                self._renew(pool)
                suspect = None
            else:
                suspect = pool

    def _renew(self, broken: Executor) -> Executor:
        """The pool now, replacing ``broken`` if it still is the pool. A process of a
        ProcessPoolExecutor that dies (the OOM killer, a crash in compiled code) breaks
        the executor for good: tasks in flight may fail with BrokenProcessPool, and
        every task after fails at once. Their callers try them again (scoring's sweep, the
        analysis after a pause); everything after runs on a new pool."""
        with self._cond:
            if self._pool is not broken or not self._owned or self._stopping:
                return self._pool
            self._pool = start_pool(self.workers)
            self.renewed += 1
        log.error("a pool process died; the pool was replaced (%d times since the start)",
                  self.renewed)
        # not on this thread: it may be the broken executor's own manager thread
        threading.Thread(target=stop_pool, args=(broken,), name="fairgrid-pool-stop",
                         daemon=True).start()
        return self._pool

    def shutdown(self) -> None:
        """Drop queued work, stop the processes (see :func:`stop_pool`)."""
        self._stopped.set()
        with self._cond:
            self._stopping = True
            queued, self._heap = self._heap, []
            self._cond.notify_all()
        for item in queued:
            item[2].cancel()
        self._thread.join(5)
        if isinstance(self._pool, ProcessPoolExecutor):
            stop_pool(self._pool)
        else:
            self._pool.shutdown(wait=False, cancel_futures=True)
        if self.cluster is not None:
            self.cluster.close()


class LaneExecutor(Executor):
    """One lane of a :class:`LanePool`, as a ``concurrent.futures.Executor``."""

    def __init__(self, pool: LanePool, lane: Lane):
        self._pool = pool
        self.lane = lane

    @property
    def workers(self) -> int:
        return self._pool.workers

    def submit(self, fn, /, *args, **kwargs) -> Future:
        return self._pool.submit(self.lane, fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """The pool is the daemon's: a lane does not stop it."""


def _checked(items, check):
    """``items``, calling ``check()`` (when given) before each is taken."""
    it = iter(items)
    while True:
        if check is not None:
            check()
        try:
            x = next(it)
        except StopIteration:
            return
        yield x


def in_tasks(tasks, fn, items):
    """``fn(x)`` for each of ``items`` (an iterator, consumed only as tasks free up, for
    the reads behind it are big), as tasks of ``tasks`` when given, a few per worker in
    flight; yielded in input order."""
    if tasks is None:
        for x in items:
            yield fn(x)
        return
    limit = 2 * max(1, getattr(tasks, "workers", 1) or 1)
    # tasks that can refuse work (a stopping nightly run) say so before the next item,
    # whose read may be big, is made
    check = getattr(tasks, "check", None)
    window = []
    for x in _checked(items, check):
        window.append(tasks.submit(fn, x))
        if len(window) >= limit:
            yield window.pop(0).result()
    for f in window:
        yield f.result()
