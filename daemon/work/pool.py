"""The process pool that puzzle analysis, scoring and the nightly fit run in."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor


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
