"""Fill-order prediction and the SA difficulty metric (Křivánek 2011, §4.1 and §3.1).

Thesis §4.1: run simulated annealing R times (R = 100), and in each run order the cells
by the step at which they were last swapped: a cell that stops moving early is one the
search settled early, as a human fills it early. The prediction for a cell is the median
of its rank over the runs; its spread (inter-quartile range of the ranks) says how sure
the prediction is. The SA difficulty metric (thesis §3.1) is the median number of steps
over the same runs.

Seeding: run ``i`` always gets the ``i``-th child of ``numpy.random.SeedSequence(seed)``,
so the prediction is the same however the runs are spread over processes.

Budget, and runs that hit their step cap
----------------------------------------
Some puzzles that are easy for people take SA 10^8 steps and more per run (the SA-hard
test puzzle: median 1.2e8, p90 4.4e8), so every run has a step cap. The cap comes from a
time budget (``budget_s``, default 60 s) converted with a fixed reference speed
(:data:`REFERENCE_STEPS_PER_S` on :data:`REFERENCE_CORES` cores, measured here): a
wall-clock cut-off would make the prediction depend on the machine's load, a step cap
keeps it a function of (puzzle, seed, runs, budget).

Which runs the prediction uses (``capped=``, evidence in ``docs/benchmarks.md``):

``"solved"`` (default)
    The ranks come from the runs that solved the puzzle, when at least
    :data:`MIN_SOLVED_RUNS` did; otherwise from all runs under the "settled" rule. With
    the thesis schedule every reheat sends t back to 40, where the state is randomised
    within ~10^4 steps, so a run is a sequence of independent cooling cycles and the
    last-swap order of a solved run depends only on its final, successful cycle. Dropping
    capped runs therefore loses samples but adds no bias, and capped runs carry little
    order information (rank correlation with the uncapped prediction 0.3-0.4 at caps of
    2.5-20 M steps, against 0.70-0.78 for the solved runs alone).
``"settled"``
    Every run counts; in a capped run a cell that holds its solution digit ranks by its
    last-swap step and a cell that holds a wrong digit ranks after all of them (what the
    log of a human who stopped early would show). For a solved run this is exactly the
    thesis' rule.
``"raw"``
    Every run counts with its raw last-swap steps.

The result says how many runs were capped and how many the ranks rest on; the SA steps
metric is a lower bound when runs were capped (reported as such).
"""

from __future__ import annotations

import math
import multiprocessing
import os
import threading
from concurrent.futures import FIRST_COMPLETED, Executor, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ._rng import spawn_seeds
from .annealing import SCHEDULES, Model, run_kernel
from .backtracking import unique_solution
from .grid import Puzzle

DEFAULT_RUNS = 100  # thesis §4.1
DEFAULT_BUDGET_S = 60.0
# Reference speed that turns a time budget into a step cap: our kernel's thesis-schedule
# throughput on one core of the development machine (docs/benchmarks.md), and its cores.
REFERENCE_STEPS_PER_S = 20_000_000
REFERENCE_CORES = 2
MIN_SOLVED_RUNS = 5
CAPPED_POLICIES = ("solved", "settled", "raw")


class PredictionCancelled(Exception):
    """A prediction was cancelled through its ``cancel`` event."""


def steps_for_budget(budget_s: float, runs: int) -> int:
    """The per-run step cap a time budget buys (deterministic; see the module docstring)."""
    if not budget_s > 0:
        raise ValueError(f"budget_s must be > 0, got {budget_s}")
    return max(1, int(budget_s * REFERENCE_STEPS_PER_S * REFERENCE_CORES / runs))


DEFAULT_FILL_MAX_STEPS = steps_for_budget(DEFAULT_BUDGET_S, DEFAULT_RUNS)


@dataclass(frozen=True, eq=False)
class FillOrderPrediction:
    """A fill-order prediction for one puzzle, with the SA difficulty metric.

    ``median_rank[cell]`` is the cell's median rank over the runs the prediction rests on
    (1 = filled first; NaN for givens); ``spread[cell]`` its inter-quartile range;
    ``rank[cell]`` the predicted fill order 1..free cells (0 for givens), ties in median
    broken by mean rank, then cell. ``run_last`` and ``run_settled`` keep every run's raw
    and settled steps (runs x free cells) so :meth:`with_policy` can re-summarise.
    """

    puzzle: Puzzle
    median_rank: np.ndarray = field(repr=False)
    spread: np.ndarray = field(repr=False)
    rank: np.ndarray = field(repr=False)
    steps: np.ndarray = field(repr=False)  # per run
    solved: np.ndarray = field(repr=False)  # per run, bool
    run_last: np.ndarray = field(repr=False)
    run_settled: np.ndarray = field(repr=False)
    schedule: str
    max_steps: int
    seed: int | None
    capped: str
    basis_runs: int  # how many runs the ranks rest on

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

    def split_half(self) -> float:
        """How reproducible the prediction is: Spearman's ρ between the median ranks of
        the even and the odd runs (over the runs the prediction rests on), stepped up to
        the full number of runs by the Spearman–Brown formula 2ρ / (1 + ρ); NaN with
        fewer than four such runs. Near 1 when the order is a property of the puzzle, near
        0 when every run finds its own (capped runs on a puzzle too hard for the budget)."""
        keep = self.solved if self.capped == "solved" and self.solved.any() else \
            np.ones(self.solved.size, dtype=bool)
        settled = self.run_settled[keep]
        if settled.shape[0] < 4 or settled.shape[1] < 3:
            return float("nan")
        ranks = np.argsort(np.argsort(settled, axis=1, kind="stable"), axis=1) + 1.0
        a = np.median(ranks[0::2], axis=0)
        b = np.median(ranks[1::2], axis=0)
        ra = np.argsort(np.argsort(a, kind="stable")).astype(float)
        rb = np.argsort(np.argsort(b, kind="stable")).astype(float)
        if ra.std() == 0 or rb.std() == 0:
            return float("nan")
        rho = float(np.corrcoef(ra, rb)[0, 1])
        return 2 * rho / (1 + rho) if rho > -1 else -1.0

    def with_policy(self, capped: str) -> "FillOrderPrediction":
        """The same runs summarised under another capped-run policy."""
        return summarize(self.puzzle, self.run_last, self.run_settled, self.steps,
                         self.solved, schedule=self.schedule, max_steps=self.max_steps,
                         seed=self.seed, capped=capped)

    def as_dict(self) -> dict:
        """A JSON-ready view: grids as lists of rows, givens as null."""
        size = self.puzzle.size

        def grid(values, digits=None):
            out = []
            for r in range(size):
                row = []
                for c in range(r * size, (r + 1) * size):
                    if self.puzzle.givens[c]:
                        row.append(None)
                    elif digits is None:
                        row.append(int(values[c]))
                    else:
                        row.append(round(float(values[c]), digits))
                out.append(row)
            return out

        return {
            "puzzle": str(self.puzzle),
            "schedule": self.schedule,
            "runs": self.runs,
            "solved_runs": self.runs - self.capped_runs,
            "capped_runs": self.capped_runs,
            "max_steps": self.max_steps,
            "capped_policy": self.capped,
            "basis_runs": self.basis_runs,
            "seed": self.seed,
            "median_steps": self.median_steps,
            "median_steps_is_lower_bound": self.capped_runs > 0,
            "split_half": self.split_half(),
            "rank": grid(self.rank),
            "median_rank": grid(self.median_rank, 2),
            "spread": grid(self.spread, 2),
        }


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


def _run_batch(givens: bytes, box_size: int, seeds: np.ndarray, schedule: str, max_steps: int,
               progress: Callable[[int], None] | None = None):
    """Worker: SA runs for ``seeds``; returns (raw last-swap steps, settled steps, steps,
    solved), the first two as runs x free cells."""
    puzzle = Puzzle(box_size, np.frombuffer(givens, dtype=np.int8))
    model = Model.from_puzzle(puzzle)
    free = puzzle.empty_cells
    solution = None
    lasts = np.empty((seeds.size, free.size), dtype=np.int64)
    settled = np.empty((seeds.size, free.size), dtype=np.int64)
    steps = np.empty(seeds.size, dtype=np.int64)
    solved = np.empty(seeds.size, dtype=bool)
    for i, seed in enumerate(seeds):
        res = run_kernel(model, seed, schedule=schedule, max_steps=max_steps)
        if not res.solved and solution is None:
            solution = unique_solution(puzzle)  # the uniqueness check: milliseconds
        lasts[i] = res.last_swap[free]
        settled[i] = settled_steps(res, free, solution, max_steps)
        steps[i] = res.steps
        solved[i] = res.solved
        if progress:
            progress(1)
    return lasts, settled, steps, solved


def default_executor(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes (fork where the platform has it: no re-import)."""
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx)


def predict_fill_order(puzzle: Puzzle, *, seed: int | None = 0, runs: int = DEFAULT_RUNS,
                  schedule: str = "thesis", budget_s: float = DEFAULT_BUDGET_S,
                  max_steps: int | None = None, capped: str = "solved", workers: int = 1,
                  executor: Executor | None = None,
                  progress: Callable[[int], None] | None = None,
                  cancel: threading.Event | None = None,
                  batch: int | None = None) -> FillOrderPrediction:
    """Predict the order in which humans fill the cells of ``puzzle`` (thesis §4.1).

    Parameters
    ----------
    puzzle : Puzzle
    seed : int or None
        Seeds all runs (``SeedSequence(seed)``); the same seed gives the same prediction
        whatever ``workers`` is. None draws fresh entropy.
    runs : int
        Number of SA runs R (thesis: 100).
    schedule : {"thesis", "lewis"}
    budget_s : float
        Time budget of the whole prediction on the reference machine; sets the per-run
        step cap (:func:`steps_for_budget`). Ignored when ``max_steps`` is given.
    max_steps : int, optional
        Explicit step cap per run.
    capped : {"solved", "settled", "raw"}
        Which runs the ranks rest on (see the module docstring).
    workers : int
        Processes to spread the runs over (1 = in this process). Ignored when an
        ``executor`` is given.
    executor : concurrent.futures.Executor, optional
        A pool to run on (the daemon passes its own).
    progress : callable, optional
        Called with the number of runs just finished, as they finish.
    cancel : threading.Event, optional
        With an executor: when set, stop waiting and raise PredictionCancelled (the daemon
        sets it at shutdown; the puzzle stays pending and is analysed after a restart).
    batch : int, optional
        Runs per task sent to the pool (default: about four tasks per worker). The
        daemon sends large puzzles one run per task, so that more urgent work finds a
        free process soon.
    """
    if runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if max_steps is None:
        max_steps = steps_for_budget(budget_s, runs)
    if max_steps < 1:
        raise ValueError(f"max_steps must be >= 1, got {max_steps}")
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    if capped not in CAPPED_POLICIES:
        raise ValueError(f"capped must be one of {CAPPED_POLICIES}, got {capped!r}")
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (2 ** 63))
    seeds = spawn_seeds(seed, runs)
    givens = puzzle.givens.tobytes()

    if executor is None and workers == 1:
        lasts, settled, steps, solved = _run_batch(givens, puzzle.box_size, seeds, schedule,
                                                   max_steps, progress)
    else:
        nfree = puzzle.empty_cells.size
        lasts = np.empty((runs, nfree), dtype=np.int64)
        settled = np.empty((runs, nfree), dtype=np.int64)
        steps = np.empty(runs, dtype=np.int64)
        solved = np.empty(runs, dtype=bool)
        own = executor is None
        if own:
            # Compile or load the kernel here once, so forked workers inherit it.
            run_kernel(Model.from_puzzle(puzzle), seeds[0], schedule=schedule, max_steps=1)
            executor = default_executor(min(workers, runs))
        if not own:
            workers = (getattr(executor, "workers", None)
                       or getattr(executor, "_max_workers", None) or os.cpu_count() or 1)
        # Several small batches per worker keep the cores busy when run lengths differ.
        if batch is None:
            batch = max(1, math.ceil(runs / (4 * workers)))
        elif batch < 1:
            raise ValueError(f"batch must be >= 1, got {batch}")
        futures = {}
        try:
            futures = {executor.submit(_run_batch, givens, puzzle.box_size, seeds[lo:lo + batch],
                                       schedule, max_steps): lo
                       for lo in range(0, runs, batch)}
            for fut in completed(futures, cancel):
                lo = futures[fut]
                part = fut.result()
                hi = lo + part[2].size
                lasts[lo:hi], settled[lo:hi], steps[lo:hi], solved[lo:hi] = part
                if progress:
                    progress(hi - lo)
        finally:
            for fut in futures:
                fut.cancel()
            if own:
                executor.shutdown(cancel_futures=True)
    return summarize(puzzle, lasts, settled, steps, solved, schedule=schedule,
                     max_steps=max_steps, seed=seed, capped=capped)


def completed(futures, cancel: threading.Event | None = None):
    """``futures`` as each completes; PredictionCancelled within a quarter of a second
    of ``cancel`` being set (the caller cancels what is left)."""
    pending = set(futures)
    while pending:
        if cancel is not None and cancel.is_set():
            raise PredictionCancelled("the prediction was cancelled")
        done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
        yield from done


def summarize(puzzle: Puzzle, lasts: np.ndarray, settled: np.ndarray, steps: np.ndarray,
              solved: np.ndarray, *, schedule: str, max_steps: int, seed: int | None,
              capped: str = "solved") -> FillOrderPrediction:
    """Turn per-run steps (runs x free cells) into the median-rank prediction."""
    if capped == "raw":
        basis = lasts
    elif capped == "solved" and solved.sum() >= MIN_SOLVED_RUNS:
        basis = settled[solved]
    else:
        basis = settled
    free = puzzle.empty_cells
    median = np.full(puzzle.ncells, np.nan)
    spread = np.full(puzzle.ncells, np.nan)
    rank = np.zeros(puzzle.ncells, dtype=np.int64)
    if free.size:
        # imported here: scipy.stats costs every command line half a second to import
        from scipy.stats import rankdata
        ranks = rankdata(basis, axis=1, method="average")
        q1, med, q3 = np.percentile(ranks, [25, 50, 75], axis=0)
        median[free], spread[free] = med, q3 - q1
        # predicted order: by median rank, then mean rank, then cell index
        keys = np.lexsort((free, ranks.mean(axis=0), med))
        rank[free[keys]] = np.arange(1, free.size + 1)
    return FillOrderPrediction(puzzle, median, spread, rank, steps, solved, lasts, settled,
                           schedule, max_steps, seed, capped, int(basis.shape[0]))
