"""Puzzle registry: registration (uniqueness checked), analysis in a process pool, status.

A puzzle is registered by ``POST /v1/puzzles`` or on the fly by the first webhook that
carries its givens. Registration checks the puzzle has exactly one solution (a few ms)
and stores it ``pending``; one analysis task then predicts its fill order (R SA runs
spread over the process pool, from a worker thread, so the event loop never blocks) and
marks it ``ready``. Puzzles left ``pending`` by a full queue or a restart are picked up
by a periodic sweep, so no puzzle stays pending for good.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import threading
import time
from concurrent.futures import Executor
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from fairgrid.solvers import PuzzleError, format_line, parse
from fairgrid.solvers.backtracking import count_solutions, unique_solution
from fairgrid.solvers.order import PredictionCancelled, predict_order

from .metrics import Metrics
from .settings import Settings
from .store import QueueFull, Store, insert_puzzle
from .validate import ValidationError

log = logging.getLogger("fairgrid.puzzles")
SWEEP_S = 30.0


class PuzzleConflict(Exception):
    """The id is registered with other givens (409)."""


@dataclass(frozen=True, eq=False)
class PuzzleInfo:
    """A registered puzzle as the webhook needs it (parsed once, cached)."""

    id: str
    givens: str  # one-line format
    order: int
    solution: str

    @functools.cached_property
    def givens_array(self) -> np.ndarray:
        return parse(self.givens).givens

    @functools.cached_property
    def solution_array(self) -> np.ndarray:
        return parse(self.solution).givens.astype(np.int64)

    @functools.cached_property
    def matching_texts(self) -> set[str]:
        """Givens texts already found to be this puzzle (saves re-parsing per webhook)."""
        return {self.givens}


def check_puzzle(text: str, field: str = "givens") -> tuple[str, int, str]:
    """Parse and check a puzzle: (givens line, order, solution line); ValidationError(422)."""
    try:
        puzzle = parse(text)
    except PuzzleError as exc:
        raise ValidationError(field, str(exc)) from None
    solution = unique_solution(puzzle)
    if solution is None:
        n = count_solutions(puzzle, limit=2)
        raise ValidationError(field, "the puzzle has no solution" if n == 0
                              else "the puzzle has more than one solution")
    return format_line(puzzle.givens), puzzle.order, format_line(solution)


def analyse(givens: str, *, runs: int, budget_s: float, seed: int,
            executor: Executor | None, cancel: threading.Event | None = None,
            solution: str | None = None) -> dict:
    """The analysis of one puzzle (blocking; called from a worker thread): the SA fill
    order, then the ratings and honest nulls scoring needs (in the pool)."""
    from .scoring import scoring_model

    puzzle = parse(givens)
    started = time.perf_counter()
    pred = predict_order(puzzle, seed=seed, runs=runs, budget_s=budget_s, executor=executor,
                         cancel=cancel)
    median = [None if np.isnan(v) else round(float(v), 2) for v in pred.median_rank]
    spread = [None if np.isnan(v) else round(float(v), 2) for v in pred.spread]
    ratings = None
    if solution is not None:
        args = (givens, solution, median, seed)
        ratings = (executor.submit(scoring_model, *args).result() if executor is not None
                   else scoring_model(*args))
    return {"ratings": ratings, "predicted_order": pred.rank.tolist(), "order_median": median,
            "order_spread": spread, "sa_median_steps": pred.median_steps,
            "sa_capped_runs": pred.capped_runs, "order_basis_runs": pred.basis_runs,
            "seconds": time.perf_counter() - started}


class PuzzleRegistry:
    """The daemon's view of puzzles: a cache of registered ones and the analysis queue."""

    def __init__(self, store: Store, settings: Settings, metrics: Metrics,
                 executor: Executor | None):
        self._store = store
        self._settings = settings
        self._metrics = metrics
        self._executor = executor
        self._cache: dict[str, PuzzleInfo] = {}
        self._queue: asyncio.Queue[str] = asyncio.Queue(maxsize=settings.analysis_queue_size)
        self._queued: set[str] = set()
        self._tasks: list[asyncio.Task] = []
        self._cancel = threading.Event()
        self.on_ready = None  # async callback(puzzle_id) once a puzzle is analysed
        metrics.analysis_queue_depth.set_function(self._queue.qsize)

    async def start(self) -> None:
        self._tasks = [asyncio.create_task(self._worker(), name="fairgrid-analysis"),
                       asyncio.create_task(self._sweeper(), name="fairgrid-analysis-sweep")]

    async def stop(self) -> None:
        self._cancel.set()  # a running prediction stops waiting; its puzzle stays pending
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def running(self) -> bool:
        return bool(self._tasks) and not any(t.done() for t in self._tasks)

    async def lookup(self, puzzle_id: str) -> PuzzleInfo | None:
        """A registered puzzle, or None."""
        info = self._cache.get(puzzle_id)
        if info is not None:
            return info
        rows = await asyncio.to_thread(self._store.read, "SELECT givens, puzzle_order, "
                                       "solution FROM puzzles WHERE id = ?", [puzzle_id])
        if not rows:
            return None
        info = PuzzleInfo(puzzle_id, rows[0][0], rows[0][1], rows[0][2])
        self._cache[puzzle_id] = info
        return info

    def remember(self, info: PuzzleInfo) -> None:
        self._cache[info.id] = info

    async def register(self, puzzle_id: str, givens_text: str) -> tuple[bool, PuzzleInfo]:
        """Register a puzzle; (created, info). 409 PuzzleConflict, 422 ValidationError."""
        givens, order, solution = await asyncio.to_thread(check_puzzle, givens_text)
        known = await self.lookup(puzzle_id)
        if known is not None:
            if known.givens != givens:
                raise PuzzleConflict(f"puzzle {puzzle_id!r} is registered with other givens")
            return False, known
        if self._queue.full():
            raise QueueFull("the analysis queue is full")
        now = datetime.now(timezone.utc)

        def insert(con):
            insert_puzzle(con, puzzle_id, givens, order, solution, now)
            return con.execute("SELECT givens FROM puzzles WHERE id = ?",
                               [puzzle_id]).fetchone()[0]

        stored = await asyncio.wrap_future(self._store.writer.call(insert))
        if stored != givens:  # lost a race with another registration
            raise PuzzleConflict(f"puzzle {puzzle_id!r} is registered with other givens")
        info = PuzzleInfo(puzzle_id, givens, order, solution)
        self.remember(info)
        self.schedule(puzzle_id)
        return True, info

    def schedule(self, puzzle_id: str) -> None:
        """Queue a pending puzzle for analysis (the sweep retries when the queue is full)."""
        if puzzle_id in self._queued:
            return
        try:
            self._queue.put_nowait(puzzle_id)
            self._queued.add(puzzle_id)
        except asyncio.QueueFull:
            pass

    async def _sweeper(self) -> None:
        while True:
            rows = await asyncio.to_thread(
                self._store.read, "SELECT id FROM puzzles WHERE status = 'pending' "
                "ORDER BY registered_at LIMIT ?", [self._settings.analysis_queue_size])
            for (pid,) in rows:
                self.schedule(pid)
            await asyncio.sleep(SWEEP_S)

    async def _worker(self) -> None:
        while True:
            pid = await self._queue.get()
            try:
                await self._analyse(pid)
            except (asyncio.CancelledError, PredictionCancelled):
                raise
            except Exception:  # noqa: BLE001 - one bad puzzle must not stop the worker
                log.exception("analysis of puzzle %s failed", pid)
            finally:
                self._queued.discard(pid)

    async def _analyse(self, pid: str) -> None:
        rows = await asyncio.to_thread(
            self._store.read, "SELECT givens, status, solution FROM puzzles WHERE id = ?", [pid])
        if not rows or rows[0][1] != "pending":
            return
        s = self._settings
        result = await asyncio.to_thread(analyse, rows[0][0], runs=s.analysis_order_runs,
                                         budget_s=s.analysis_order_budget_s,
                                         seed=s.analysis_seed, executor=self._executor,
                                         cancel=self._cancel, solution=rows[0][2])
        self._metrics.analysis_duration.observe(result["seconds"])
        now = datetime.now(timezone.utc)

        def update(con):
            con.execute(
                "UPDATE puzzles SET status = 'ready', analysed_at = ?, analysis_seconds = ?, "
                "sa_median_steps = ?, sa_capped_runs = ?, order_basis_runs = ?, "
                "predicted_order = ?, order_median = ?, order_spread = ?, ratings = ?, "
                "level = ? WHERE id = ?",
                [now, result["seconds"], result["sa_median_steps"], result["sa_capped_runs"],
                 result["order_basis_runs"], json.dumps(result["predicted_order"]),
                 json.dumps(result["order_median"]), json.dumps(result["order_spread"]),
                 json.dumps(ratings), ratings["level"] if ratings else None, pid])

        ratings = result["ratings"]
        await asyncio.wrap_future(self._store.writer.call(update))
        log.info("puzzle %s analysed in %.1f s", pid, result["seconds"])
        if self.on_ready is not None:
            await self.on_ready(pid)

    def counts(self) -> dict[str, int]:
        return dict(self._store.read("SELECT status, count(*) FROM puzzles GROUP BY status"))
