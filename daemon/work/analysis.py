"""Puzzle analysis.

A puzzle is registered (``ingest.catalog``: by ``POST /v1/puzzles``, or by the first
webhook that carries its givens) once it is checked to have exactly one solution, and
stored ``pending``; an analysis task then predicts its fill order (R SA runs
spread over the process pool, from a worker thread, so the event loop never blocks),
builds the puzzle model scoring reads (``analytics.puzzle_model``) and marks it
``ready``. Puzzles left ``pending`` by a full queue or a restart are found again by the
queue's sweep, so no puzzle stays pending for good.

Puzzles go in two lanes, each with its own queue and task: below 256 cells (a 9x9
Sudoku: about a second of analysis; a Nurikabe of up to 15x15: seconds) and from 256 up
(a 16x16 Sudoku: minutes; a large Nurikabe). The lanes share the process pool, where the small
lane's tasks go first and the large lane sends one SA run per task, or a Nurikabe's
rating and then one simulated honest solve per task (``work.pool``), so a 9x9 puzzle
registered behind a large one is ready in seconds, and scoring waits for one such task
at most.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import logging
import threading
import time
from concurrent.futures import Executor
from concurrent.futures.process import BrokenProcessPool

import numpy as np

from fairgrid.analytics import puzzle_model
from fairgrid.solvers import parse
from fairgrid.solvers.fill_order import PredictionCancelled, predict_fill_order
from fairgrid.solvers.puzzle_types import DEFAULT_TYPE
from fairgrid.solvers.puzzle_types import puzzle_type as _type

from ..metrics import Metrics
from ..settings import Settings
from ..store import Store, StoreError
from ..store.records import utc_now
from ..store.repository import puzzles as sql
from .compute import Cluster, ClusterLane, ComputeUnavailable
from .pool import Lane, LanePool
from .queue import WorkQueue

log = logging.getLogger("fairgrid.puzzles")


def _rounded(values) -> list:
    return [None if np.isnan(v) else round(float(v), 2) for v in values]


LARGE_CELLS = 256  # 16x16 Sudoku and up, and Nurikabe of as many cells, go in the large lane


def analysis_budget(settings) -> float:
    """The fill-order budget in reference seconds: ``analysis.order_budget_s`` of wall
    time on ``compute.cores`` cores (0: the reference machine's). It sets a step cap, so
    the prediction depends on the configuration, never on how many workers are up."""
    from fairgrid.solvers.fill_order import REFERENCE_CORES

    cores = settings.compute_cores or REFERENCE_CORES
    return settings.analysis_order_budget_s * cores / REFERENCE_CORES


def lane_of(ncells: int) -> Lane:
    return Lane.LARGE_PUZZLES if ncells >= LARGE_CELLS else Lane.SMALL_PUZZLES


def analyse(givens: str, *, runs: int, budget_s: float, seed: int,
            executor: Executor | None, cancel: threading.Event | None = None,
            solution: str | None = None, batch: int | None = None,
            puzzle_type: str = DEFAULT_TYPE) -> dict:
    """The analysis of one puzzle (blocking; called from a worker thread): the SA fill
    order, then the puzzle model scoring needs (in the pool). A type whose fill order is
    not SA's (``PuzzleType.sa_fill_order``) takes it from its human-like model
    (deterministic: one run), and its model from ``puzzle_model.build_typed``, in one
    pool task, or with ``batch`` in short ones."""
    if not _type(puzzle_type).sa_fill_order:
        if cancel is not None and cancel.is_set():
            raise PredictionCancelled("the daemon is stopping")
        return _analyse_typed(puzzle_type, givens, solution, seed, executor, batch, cancel)
    puzzle = parse(givens)
    started = time.perf_counter()
    pred = predict_fill_order(puzzle, seed=seed, runs=runs, budget_s=budget_s,
                              executor=executor, cancel=cancel, batch=batch)
    median = _rounded(pred.median_rank)
    model = None
    if solution is not None:
        args = (givens, solution, median, seed)
        model = (executor.submit(puzzle_model.build, *args).result() if executor is not None
                 else puzzle_model.build(*args))
        split = pred.split_half()
        model = dataclasses.replace(model, order_reliability=None if split != split
                                    else round(split, 4))
    return {"model": model, "predicted_fill_order": pred.rank.tolist(),
            "fill_rank_median": median, "fill_rank_spread": _rounded(pred.spread),
            "sa_median_steps": pred.median_steps, "sa_capped_runs": pred.capped_runs,
            "fill_basis_runs": pred.basis_runs, "seconds": time.perf_counter() - started}


def _analyse_typed(type_name: str, givens: str, solution: str | None, seed: int,
                   executor: Executor | None, batch: int | None,
                   cancel: threading.Event | None = None) -> dict:
    if solution is None:
        raise ValueError(f"a {type_name} puzzle is analysed with its solution")
    started = time.perf_counter()
    # in the large lane a simulated solve a task, as SA's runs: none holds a process long
    model, median = puzzle_model.build_typed(type_name, givens, solution, seed,
                                             tasks=executor, batch=batch, cancel=cancel)
    return {"model": model, "predicted_fill_order": [int(r or 0) for r in median],
            "fill_rank_median": median, "fill_rank_spread": [None] * len(median),
            "sa_median_steps": float(model.metrics.get("sa_steps", float("nan"))),
            "sa_capped_runs": 0, "fill_basis_runs": 1,
            "seconds": time.perf_counter() - started}


class TasksDropped(RuntimeError):
    """The executor cancelled the analysis's tasks (a cluster that went away, a pool
    stopped or replaced): not the puzzle's failure."""


def _analyse_dropping(*args, **kwargs):
    """:func:`analyse`, with a cancelled task's ``concurrent.futures.CancelledError``
    raised as :class:`TasksDropped`: ``asyncio.to_thread`` turns that very class into
    ``asyncio.CancelledError``, which reads as the daemon stopping and would end the
    lane's worker with the puzzle left pending and nothing said."""
    try:
        return analyse(*args, **kwargs)
    except concurrent.futures.CancelledError as exc:
        raise TasksDropped("the executor cancelled the analysis's tasks") from exc


class PuzzleAnalysis:
    """The analysis queue: a lane each, workers, and the sweep that re-finds pending
    puzzles (registration is ingestion's: ``ingest.catalog``)."""

    def __init__(self, store: Store, settings: Settings, metrics: Metrics,
                 pool: LanePool | None):
        self._store = store
        self._settings = settings
        self._metrics = metrics
        self._pool = pool
        # the portal whose webhook registered each puzzle waiting (None: POST /v1/puzzles);
        # a lane takes its puzzles by turns of these
        self._owners: dict[str, str | None] = {}
        self._queues: dict[Lane, WorkQueue[str]] = {
            lane: WorkQueue(settings.analysis_queue_size,
                            lambda lane=lane: self._pending(lane), turns=self._owners.get)
            for lane in (Lane.SMALL_PUZZLES, Lane.LARGE_PUZZLES)}
        self._tasks: list[asyncio.Task] = []
        self._cancel = threading.Event()
        self._queued_at: dict[str, float] = {}  # when each waiting puzzle was queued
        self.on_ready = None  # async callback(puzzle_id) once a puzzle is analysed
        self.on_invalid = None  # async callback(puzzle_id) once one is marked invalid
        metrics.analysis_queue_depth.set_function(
            lambda: sum(q.waiting() for q in self._queues.values()))

    async def start(self) -> None:
        self._tasks = []
        for lane, queue in self._queues.items():
            name = lane.name.lower().replace("_", "-")
            self._tasks += [asyncio.create_task(self._worker(lane), name=f"fairgrid-{name}"),
                            asyncio.create_task(queue.sweep_forever(),
                                                name=f"fairgrid-{name}-sweep")]

    async def stop(self) -> None:
        self._cancel.set()  # a running prediction stops waiting; its puzzle stays pending
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def running(self) -> bool:
        return bool(self._tasks) and not any(t.done() for t in self._tasks)

    async def _pending(self, lane: Lane) -> list[str]:
        rows = await asyncio.to_thread(self._store.read, sql.pending_ids,
                                       self._settings.analysis_queue_size,
                                       lane == Lane.LARGE_PUZZLES, LARGE_CELLS)
        now = time.monotonic()
        for pid, owner in rows:  # found by the sweep (after a restart, say): waiting from now
            self._queued_at.setdefault(pid, now)
            self._owners[pid] = owner
        return [pid for pid, _ in rows]

    def has_room(self, ncells: int) -> bool:
        """Whether the lane of a puzzle of ``ncells`` cells can queue one more."""
        return not self._queues[lane_of(ncells)].full()

    def schedule(self, puzzle_id: str, ncells: int, up_to: float = 1.0,
                 owner: str | None = None) -> None:
        """Queue a pending puzzle of ``ncells`` cells, registered by ``owner``'s webhook
        (None: for every portal), for analysis while its lane holds less than ``up_to``
        of ``analysis.queue_size``; past that (or when the lane is full) the sweep queues
        it later, taking the portals whose webhooks registered puzzles in turn
        (``sql.pending_ids``). A lane is worked through by turns of the owners too: a
        portal's puzzle waits a turn of every other owner's, not their whole backlog."""
        self._queued_at.setdefault(puzzle_id, time.monotonic())
        self._owners.setdefault(puzzle_id, owner)
        queue = self._queues[lane_of(ncells)]
        if queue.waiting() < up_to * self._settings.analysis_queue_size:
            queue.schedule(puzzle_id)

    async def _worker(self, lane: Lane) -> None:
        queue = self._queues[lane]
        while True:
            pid = await queue.get()
            owner = self._owners.pop(pid, None)
            waited = time.monotonic() - self._queued_at.pop(pid, time.monotonic())
            self._metrics.analysis_queue_wait.observe(waited)
            unavailable = later = False
            try:
                await self._analyse(pid, lane, waited)
            except asyncio.CancelledError:
                if asyncio.current_task().cancelling():  # the daemon stops this worker
                    raise
                # a cancellation from the work below, not a stop: the worker lives on,
                # and the puzzle stays pending and is tried again after a pause
                log.error("the analysis of puzzle %s was cancelled under it; it is tried "
                          "again", pid)
                later = True
            except PredictionCancelled:
                raise
            except ComputeUnavailable:
                unavailable = True
            except StoreError:  # the database, not the puzzle: the sweep tries again
                log.exception("analysis of puzzle %s could not be stored", pid)
            except BrokenProcessPool:
                # a pool process died (the OOM killer, say), which may fail any task in
                # flight: this puzzle's, a scoring batch's, another lane's. Which one
                # killed it is not known, so it is held against none: the pool is renewed and the
                # puzzle stays pending (FairgridPoolProcessDied says it recurs)
                log.error("a pool process died while puzzle %s was analysed; it is tried "
                          "again", pid)
                later = True
            except Exception as exc:  # noqa: BLE001 - one bad puzzle must not stop the worker
                # the analysis is seeded: it would fail again at every sweep, and a
                # queue full of such puzzles would starve every portal's new ones
                log.exception("analysis of puzzle %s failed; marked invalid", pid)
                await self._mark_invalid(pid, exc)
            finally:
                queue.done(pid)
            if unavailable or later:
                # the puzzle stays pending (with the cluster away, its status says why)
                # and is tried again after a pause
                if unavailable:
                    self._metrics.compute_up.set(0)
                await asyncio.sleep(self._settings.compute_retry_s)
                self.schedule(pid, LARGE_CELLS if lane == Lane.LARGE_PUZZLES else 0,
                              owner=owner)

    async def _mark_invalid(self, pid: str, exc: Exception) -> None:
        reason = f"the analysis failed: {type(exc).__name__}: {exc}".splitlines()[0]
        try:
            await asyncio.wrap_future(self._store.write(sql.mark_invalid, pid, reason))
            if self.on_invalid is not None:  # (its solves: the scoring sweep retries)
                await self.on_invalid(pid)
        except StoreError:
            log.exception("puzzle %s could not be marked invalid", pid)

    async def _analyse(self, pid: str, lane: Lane, waited: float = 0.0) -> None:
        row = await asyncio.to_thread(self._store.read, sql.to_analyse, pid)
        if row is None or row[1] != "pending":
            return
        givens, _status, solution, type_name = row
        s = self._settings
        executor = self._pool and self._pool.lane(lane)
        if isinstance(executor, ClusterLane):
            await asyncio.to_thread(executor.connect)  # ComputeUnavailable: wait for it
            self._metrics.compute_up.set(1)
        try:
            result = await asyncio.to_thread(_analyse_dropping, givens,
                                             runs=s.analysis_order_runs,
                                             budget_s=analysis_budget(s),
                                             seed=s.analysis_seed,
                                             executor=executor,
                                             cancel=self._cancel, solution=solution,
                                             batch=1 if lane == Lane.LARGE_PUZZLES else None,
                                             puzzle_type=type_name)
        except Exception as exc:
            cause = exc.__cause__ if isinstance(exc, TasksDropped) else exc
            if isinstance(executor, ClusterLane) and Cluster.lost(cause):
                # the scheduler or every worker went away mid-analysis: wait for it
                raise executor.cluster.unavailable(
                    f"the compute cluster was lost during the analysis of puzzle {pid} "
                    f"({type(cause).__name__})") from exc
            if isinstance(exc, TasksDropped):
                if self._cancel.is_set():
                    raise PredictionCancelled() from exc
                # the local pool dropped them (a process died under them): try again
                raise BrokenProcessPool(str(exc)) from exc
            raise
        self._metrics.analysis_duration.observe(result["seconds"])
        await asyncio.wrap_future(self._store.write(sql.save_analysis, pid, result, utc_now()))
        log.info("puzzle %s analysed in %.1f s after %.1f s in the queue", pid,
                 result["seconds"], waited)
        if self.on_ready is not None:
            await self.on_ready(pid)

    def waiting_for(self) -> str | None:
        """Why pending puzzles are not being analysed now (the cluster), or None."""
        cluster = self._pool.cluster if self._pool is not None else None
        return cluster.problem if cluster is not None else None

    def counts(self) -> dict[str, int]:
        return self._store.read(sql.counts_by_status)
