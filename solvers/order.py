"""Fill-order prediction and the SA difficulty metric (Křivánek 2011, §4.1 and §3.1).

Thesis §4.1: run simulated annealing R times (R = 100), and in each run order the cells
by the step at which they were last swapped: a cell that stops moving early is one the
search settled early, as a human fills it early. The prediction for a cell is the median
of its rank over the runs; its spread (inter-quartile range of the ranks) says how sure
the prediction is. The SA difficulty metric (thesis §3.1) is the median number of steps
over the same runs.

Seeding: run ``i`` always gets the ``i``-th child of ``numpy.random.SeedSequence(seed)``,
so the prediction is the same however the runs are spread over processes.

Runs that hit their step cap
----------------------------
Some puzzles that are easy for people take SA 10^8 steps and more (see
``docs/benchmarks.md``), so every run has a step cap (``max_steps``). A capped run is
**kept**, and ranked by when each cell settled on its final digit: a cell that holds its
solution digit ranks by its last-swap step, as in a solved run (where every cell holds
its solution digit, so the rule is exactly the thesis' one); a cell that holds a wrong
digit has not been filled yet and ranks after all of them. This is what a move log of a
human who stopped early would show, it keeps the order information a capped run has, and
it does not bias the prediction towards the rare lucky runs as dropping capped runs
would. The result reports how many runs were capped; the SA steps metric is then a lower
bound (reported as such). ``docs/benchmarks.md`` measures how far a capped prediction
is from an uncapped one (Spearman correlation of the median ranks), which is what the
default cap is chosen from.
"""

from __future__ import annotations

import math
import multiprocessing
import os
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy.stats import rankdata

from ._rng import spawn_seeds
from .annealing import SCHEDULES, Model, run_kernel
from .backtracking import unique_solution
from .grid import Puzzle

DEFAULT_RUNS = 100  # thesis §4.1
# Per-run step cap of a prediction; chosen in docs/benchmarks.md ("capped prediction").
DEFAULT_ORDER_MAX_STEPS = 20_000_000


@dataclass(frozen=True, eq=False)
class OrderPrediction:
    """A fill-order prediction for one puzzle, with the SA difficulty metric.

    ``median_rank[cell]`` is the cell's median rank over the runs (1 = filled first; NaN
    for givens); ``spread[cell]`` its inter-quartile range; ``rank[cell]`` the predicted
    fill order 1..free cells (0 for givens), ties in median broken by mean rank, then cell.
    """

    puzzle: Puzzle
    median_rank: np.ndarray = field(repr=False)
    spread: np.ndarray = field(repr=False)
    rank: np.ndarray = field(repr=False)
    steps: np.ndarray = field(repr=False)  # per run
    solved: np.ndarray = field(repr=False)  # per run, bool
    schedule: str
    max_steps: int
    seed: int | None

    @property
    def runs(self) -> int:
        return int(self.steps.size)

    @property
    def capped_runs(self) -> int:
        """Runs that reached ``max_steps`` without solving the puzzle."""
        return int((~self.solved).sum())

    @property
    def median_steps(self) -> float:
        """The SA difficulty metric (thesis §3.1): median steps over the runs.

        A lower bound when runs were capped (capped runs count their cap).
        """
        return float(np.median(self.steps))

    def as_dict(self) -> dict:
        """A JSON-ready view: grids as lists of rows, givens as null."""
        size = self.puzzle.size

        def grid(values, digits=None):
            out = []
            for r in range(size):
                row = []
                for c in range(r * size, (r + 1) * size):
                    v = values[c]
                    if self.puzzle.givens[c]:
                        row.append(None)
                    else:
                        row.append(round(float(v), digits) if digits is not None else int(v))
                out.append(row)
            return out

        return {
            "puzzle": str(self.puzzle),
            "schedule": self.schedule,
            "runs": self.runs,
            "solved_runs": self.runs - self.capped_runs,
            "capped_runs": self.capped_runs,
            "max_steps": self.max_steps,
            "seed": self.seed,
            "median_steps": self.median_steps,
            "median_steps_is_lower_bound": self.capped_runs > 0,
            "rank": grid(self.rank),
            "median_rank": grid(self.median_rank, 2),
            "spread": grid(self.spread, 2),
        }


CAPPED_POLICIES = ("settled", "raw")


def settled_steps(result, free: np.ndarray, solution: np.ndarray | None,
                  max_steps: int) -> np.ndarray:
    """Per free cell, the step from which it held its final digit, for ranking.

    A solved run: its last-swap step (thesis §4.1). A capped run: the same for cells that
    hold their solution digit; cells that hold a wrong digit have not been "filled" yet
    and come after every other cell (``max_steps + 1``). Without a known solution a
    capped run keeps its raw last-swap steps.
    """
    last = result.last_swap[free].copy()
    if not result.solved and solution is not None:
        last[result.grid[free] != solution[free]] = max_steps + 1
    return last


def _run_batch(givens: bytes, order: int, seeds: np.ndarray, schedule: str, max_steps: int,
               progress: Callable[[int], None] | None = None, capped: str = "settled"):
    """Worker: SA runs for ``seeds``; returns (settled steps of free cells, steps, solved)."""
    puzzle = Puzzle(order, np.frombuffer(givens, dtype=np.int8))
    model = Model.from_puzzle(puzzle)
    free = puzzle.empty_cells
    solution = None
    lasts = np.empty((seeds.size, free.size), dtype=np.int64)
    steps = np.empty(seeds.size, dtype=np.int64)
    solved = np.empty(seeds.size, dtype=bool)
    for i, seed in enumerate(seeds):
        res = run_kernel(model, seed, schedule=schedule, max_steps=max_steps)
        if not res.solved and solution is None and capped == "settled":
            solution = unique_solution(puzzle)  # the uniqueness check: milliseconds
        lasts[i] = settled_steps(res, free, solution, max_steps)
        steps[i] = res.steps
        solved[i] = res.solved
        if progress:
            progress(1)
    return lasts, steps, solved


def default_executor(jobs: int) -> ProcessPoolExecutor:
    """A process pool of ``jobs`` workers (fork where the platform has it: no re-import)."""
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    return ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)


def predict_order(puzzle: Puzzle, *, seed: int | None = 0, runs: int = DEFAULT_RUNS,
                  schedule: str = "thesis", max_steps: int = DEFAULT_ORDER_MAX_STEPS,
                  jobs: int = 1, executor: Executor | None = None,
                  progress: Callable[[int], None] | None = None,
                  capped: str = "settled") -> OrderPrediction:
    """Predict the order in which humans fill the cells of ``puzzle`` (thesis §4.1).

    Parameters
    ----------
    puzzle : Puzzle
    seed : int or None
        Seeds all runs (``SeedSequence(seed)``); the same seed gives the same prediction
        whatever ``jobs`` is. None draws fresh entropy.
    runs : int
        Number of SA runs R (thesis: 100).
    schedule : {"thesis", "lewis"}
    max_steps : int
        Step cap per run; capped runs are kept (see the module docstring).
    jobs : int
        Processes to spread the runs over (1 = in this process). Ignored when an
        ``executor`` is given.
    executor : concurrent.futures.Executor, optional
        A pool to run on (the daemon passes its own).
    progress : callable, optional
        Called with the number of runs just finished, as they finish.
    capped : {"settled", "raw"}
        How capped runs rank their cells: "settled" (default, see the module docstring)
        or "raw" last-swap steps (kept for the comparison in docs/benchmarks.md).
    """
    if runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs}")
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    if max_steps < 1:
        raise ValueError(f"max_steps must be >= 1, got {max_steps}")
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    if capped not in CAPPED_POLICIES:
        raise ValueError(f"capped must be one of {CAPPED_POLICIES}, got {capped!r}")
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (2 ** 63))
    seeds = spawn_seeds(seed, runs)
    free = puzzle.empty_cells
    lasts = np.empty((runs, free.size), dtype=np.int64)
    steps = np.empty(runs, dtype=np.int64)
    solved = np.empty(runs, dtype=bool)
    givens = puzzle.givens.tobytes()

    if executor is None and jobs == 1:
        lasts, steps, solved = _run_batch(givens, puzzle.order, seeds, schedule, max_steps,
                                          progress, capped)
    else:
        own = executor is None
        if own:
            # Compile or load the kernel here once, so forked workers inherit it.
            run_kernel(Model.from_puzzle(puzzle), seeds[0], schedule=schedule, max_steps=1)
            executor = default_executor(min(jobs, runs))
        workers = jobs if own else (getattr(executor, "_max_workers", None) or os.cpu_count() or 1)
        # Several small batches per worker keep the cores busy when run lengths differ.
        batch = max(1, math.ceil(runs / (4 * workers)))
        try:
            futures = {executor.submit(_run_batch, givens, puzzle.order, seeds[lo:lo + batch],
                                       schedule, max_steps, None, capped): lo
                       for lo in range(0, runs, batch)}
            for fut in as_completed(futures):
                lo = futures[fut]
                l, s, ok = fut.result()
                lasts[lo:lo + len(s)], steps[lo:lo + len(s)], solved[lo:lo + len(s)] = l, s, ok
                if progress:
                    progress(len(s))
        finally:
            if own:
                executor.shutdown(cancel_futures=True)
    return summarize(puzzle, lasts, steps, solved, schedule=schedule, max_steps=max_steps,
                     seed=seed)


def summarize(puzzle: Puzzle, lasts: np.ndarray, steps: np.ndarray, solved: np.ndarray, *,
              schedule: str, max_steps: int, seed: int | None) -> OrderPrediction:
    """Turn per-run last-swap steps (runs x free cells) into the median-rank prediction."""
    free = puzzle.empty_cells
    ranks = rankdata(lasts, axis=1, method="average") if free.size else lasts.astype(float)
    median = np.full(puzzle.ncells, np.nan)
    spread = np.full(puzzle.ncells, np.nan)
    rank = np.zeros(puzzle.ncells, dtype=np.int64)
    if free.size:
        q1, med, q3 = np.percentile(ranks, [25, 50, 75], axis=0)
        median[free], spread[free] = med, q3 - q1
        # predicted order: by median rank, then mean rank, then cell index
        keys = np.lexsort((free, ranks.mean(axis=0), med))
        rank[free[keys]] = np.arange(1, free.size + 1)
    return OrderPrediction(puzzle, median, spread, rank, steps, solved, schedule, max_steps,
                           seed)
