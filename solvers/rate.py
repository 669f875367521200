"""Every difficulty metric of one puzzle, seeded, with its evidence: :func:`rate`.

========================  =================================================  ==========
metric                    what                                               module
========================  =================================================  ==========
``givens``                number of givens                                   grid
``serate``                max minimal refutation score (thesis §2.3)         propagation
``refutation_sum``        summed refutation scores, mean of runs (§2.3)      propagation
``refutation_steps``      placements that needed a refutation                propagation
``lone_single_steps``     placements with exactly one single on offer        propagation
``mean_options``          singles on offer per placement                     propagation
``sa_steps``              median SA steps to solve (thesis §3.1; capped)     annealing
``sa_solved_fraction``    share of SA runs that solved within the cap        annealing
``backtrack_steps``       median steps of the thesis' DFS (§3.3)             backtracking
``harmony_cost``          median best cost after 10,000 improvisations       harmony
``hill_iterations``       median iterations of Jones et al.'s climber        hill_climbing
``hill_restarts``         median restarts of the climber                     hill_climbing
``relaxation_count``      mean solutions with 45 constraints removed         relaxation
``relaxation_log10``      mean log10 of those counts                         relaxation
``slis_level``            Mandal & Sadhu's level (1–5), median of runs       levels
``tq_*``                  the human technique model's features (steps per    techniques
                          technique class, hardest technique, singles by
                          kind and on offer; see ``technique_features``)
========================  =================================================  ==========

``runs`` scales the number of runs of every randomised metric (1.0 = the defaults below);
``budget_s`` is the time SA may take on the reference machine, one core (it becomes a
step cap per run, so results do not depend on the machine's load).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np

from ._rng import puzzle_seed, seed_of, spawn_seeds
from .annealing import Model, run_kernel
from .backtracking import solve_backtracking
from .grid import Puzzle
from .harmony import harmony_metric
from .hill_climbing import hill_metric
from .levels import slis
from .fill_order import REFERENCE_STEPS_PER_S
from .propagation import HumanModelResult, human_model, solution_of
from .relaxation import relaxation_metric
from .techniques import FEATURES as TECHNIQUE_METRICS
from .techniques import TechniqueRun, solve_with_techniques, technique_features

# runs of each family at runs=1.0 (the technique model is deterministic: one run)
DEFAULT_RUNS = {"human": 30, "sa": 10, "backtrack": 10, "harmony": 3, "hill": 5,
                "relaxation": 20, "slis": 5, "techniques": 1}
DEFAULT_BUDGET_S = 1.0
METRICS = ("givens", "serate", "refutation_sum", "refutation_steps", "lone_single_steps",
           "mean_options", "sa_steps", "sa_solved_fraction", "backtrack_steps",
           "harmony_cost", "hill_iterations", "hill_restarts", "relaxation_count",
           "relaxation_log10", "slis_level") + TECHNIQUE_METRICS

FAMILY = {"givens": "human", "serate": "human", "refutation_sum": "human",
          "refutation_steps": "human", "lone_single_steps": "human", "mean_options": "human",
          "sa_steps": "sa", "sa_solved_fraction": "sa", "backtrack_steps": "backtrack",
          "harmony_cost": "harmony", "hill_iterations": "hill", "hill_restarts": "hill",
          "relaxation_count": "relaxation", "relaxation_log10": "relaxation",
          "slis_level": "slis", **{m: "techniques" for m in TECHNIQUE_METRICS}}


def families_for(metrics) -> tuple[str, ...]:
    """The metric families :func:`rate` must run to produce ``metrics``."""
    return tuple(sorted({FAMILY[m] for m in metrics}))


@dataclass(frozen=True, eq=False)
class Ratings:
    """All metrics of one puzzle (``metrics``: name → value) and the evidence behind them."""

    puzzle: Puzzle
    solution: np.ndarray = field(repr=False)
    metrics: dict[str, float]
    human: HumanModelResult = field(repr=False)
    sa_capped_runs: int = 0
    techniques: TechniqueRun | None = field(default=None, repr=False)


def _runs(scale: float) -> dict[str, int]:
    return {k: max(1, int(round(v * scale))) for k, v in DEFAULT_RUNS.items()}


def rate(puzzle: Puzzle, *, rng, runs: float = 1.0, budget_s: float = DEFAULT_BUDGET_S,
         only: tuple[str, ...] | None = None) -> Ratings:
    """Rate ``puzzle`` with every metric (or the families named in ``only``).

    ``rng`` is an int seed or numpy Generator: the same seed gives the same ratings.
    Families: ``human``, ``sa``, ``backtrack``, ``harmony``, ``hill``, ``relaxation``,
    ``slis``, ``techniques``. Raises :class:`PuzzleError` for a puzzle without a unique solution.
    """
    if not runs > 0:
        raise ValueError(f"runs must be > 0, got {runs}")
    if not budget_s > 0:
        raise ValueError(f"budget_s must be > 0, got {budget_s}")
    families = set(DEFAULT_RUNS) if only is None else set(only)
    unknown = families - set(DEFAULT_RUNS)
    if unknown:
        raise ValueError(f"unknown metric families {sorted(unknown)}; "
                         f"known: {sorted(DEFAULT_RUNS)}")
    seed = seed_of(rng)
    # the seven seeded families keep the seeds they had before the (unseeded) technique
    # model joined: the same seed gives the same figures as it always did
    seeded = sorted(k for k in DEFAULT_RUNS if k != "techniques")
    seeds = {name: int(s) for name, s in zip(seeded, spawn_seeds(seed, len(seeded)))}
    n = _runs(runs)
    solution = solution_of(puzzle)
    m: dict[str, float] = {"givens": float(np.count_nonzero(puzzle.givens))}
    human = human_model(puzzle, rng=seeds["human"], runs=n["human"] if "human" in families
                        else 1, solution=solution)
    if "human" in families:
        m.update(human.metrics())
    capped = 0
    if "sa" in families:
        model = Model.from_puzzle(puzzle)
        cap = max(1, int(budget_s * REFERENCE_STEPS_PER_S / n["sa"]))
        results = [run_kernel(model, s, max_steps=cap) for s in spawn_seeds(seeds["sa"], n["sa"])]
        capped = sum(not r.solved for r in results)
        m["sa_steps"] = float(np.median([r.steps for r in results]))
        m["sa_solved_fraction"] = 1.0 - capped / len(results)
    if "backtrack" in families:
        gen = np.random.default_rng(seeds["backtrack"])
        m["backtrack_steps"] = float(np.median(
            [solve_backtracking(puzzle, rng=gen).steps for _ in range(n["backtrack"])]))
    if "harmony" in families:
        m["harmony_cost"] = harmony_metric(puzzle, rng=seeds["harmony"], runs=n["harmony"])[0]
    if "hill" in families:
        it, restarts, _ = hill_metric(puzzle, rng=seeds["hill"], runs=n["hill"])
        m["hill_iterations"], m["hill_restarts"] = it, restarts
    if "relaxation" in families:
        relax = relaxation_metric(puzzle, rng=seeds["relaxation"], removals=n["relaxation"])
        m["relaxation_count"], m["relaxation_log10"] = relax.mean_count, relax.mean_log10
    if "slis" in families:
        gen = np.random.default_rng(seeds["slis"])
        m["slis_level"] = float(np.median([slis(puzzle, rng=gen).level
                                           for _ in range(n["slis"])]))
    techniques = None
    if "techniques" in families:
        techniques = solve_with_techniques(puzzle, solution)
        m.update(technique_features(techniques))
    for k, v in m.items():
        if not math.isfinite(v):
            raise AssertionError(f"metric {k} is not finite: {v}")
    return Ratings(puzzle, solution, m, human, capped, techniques)


def _rate_job(args):
    text_or_puzzle, seed, runs, budget_s, only = args
    from .grid import parse
    try:
        puzzle = text_or_puzzle if isinstance(text_or_puzzle, Puzzle) else parse(text_or_puzzle)
        return rate(puzzle, rng=seed, runs=runs, budget_s=budget_s, only=only), None
    except ValueError as exc:  # PuzzleError is a ValueError
        return None, str(exc)


def rating_seed(seed: int | None, puzzle) -> int:
    """The seed a puzzle (a Puzzle or its text) is rated with under the user's ``seed``."""
    from .grid import format_line, parse
    try:
        p = puzzle if isinstance(puzzle, Puzzle) else parse(puzzle)
        key = format_line(p.givens, p.box_size)
    except Exception:  # noqa: BLE001 - a bad puzzle is reported by the rating itself
        key = str(puzzle)
    return puzzle_seed(seed, key)


def rate_many(puzzles, *, seed: int = 0, runs: float = 1.0,
              budget_s: float = DEFAULT_BUDGET_S, workers: int | None = None,
              only: tuple[str, ...] | None = None, on_done=None, executor=None):
    """Rate many puzzles (Puzzle objects or text) in parallel; yields, in input order,
    ``(Ratings, None)`` or ``(None, error message)`` per puzzle.

    Each puzzle is rated with a seed derived from ``seed`` and the puzzle itself
    (:func:`rating_seed`), so its rating depends on neither ``workers`` nor where it stands
    in the batch: ``fairgrid rate`` gives a puzzle alone the figures it gets in a file.
    ``on_done()`` is called once per finished puzzle (progress bars). ``executor`` (any
    ``concurrent.futures.Executor``, e.g. a Dask cluster's) replaces the local pool.
    """
    from .fill_order import default_executor
    items = list(puzzles)
    seeds = [rating_seed(seed, p) for p in items]
    args = [(p, int(s), runs, budget_s, only) for p, s in zip(items, seeds)]
    workers = min(workers or os.cpu_count() or 1, max(1, len(items)))
    if executor is None and workers == 1:
        for a in args:
            out = _rate_job(a)
            if on_done:
                on_done()
            yield out
        return
    own = executor is None
    pool = default_executor(workers) if own else executor
    try:
        futures = [pool.submit(_rate_job, a) for a in args]
        if on_done:
            for f in futures:
                f.add_done_callback(lambda _f: on_done())
        for f in futures:
            yield f.result()
    finally:
        if own:
            pool.shutdown()
