"""Nurikabe: the model and the thesis' solvers (Křivánek 2011, §4.2), pure and seeded.

A second puzzle type beside Sudoku. Nothing here does I/O; every random choice comes from
the ``rng`` (an int seed or a numpy Generator) the caller passes in, and the same seed
gives the same result. Modules, in the order a puzzle flows through them:

* :mod:`.model` — :class:`NurikabePuzzle`, the text format, the rules (:func:`check`);
* :mod:`.cost` — the four-part cost shared by SA and harmony search;
* :mod:`.annealing` — simulated annealing over colourings (:func:`solve_sa`);
* :mod:`.harmony` — harmony search (:func:`harmony_search`);
* :mod:`.bruteforce` — island expansion (:func:`solve_bruteforce`), the exact count;
* :mod:`.metrics` — the static metrics of Table 4.3;
* :mod:`.propagation` — the human-like model (:func:`propagate`, :func:`deducible`);
* :mod:`.rate` — every metric at once (:func:`rate_nurikabe`);
* :mod:`.generator` — unique puzzles for tests and the command line.

    >>> from fairgrid.solvers.nurikabe import *
    >>> p = parse_nurikabe("4x5:.2......2......1.1..")
    >>> grid = unique_solution(p)          # (rows, cols), 1 = river; None if not unique
    >>> format_solution(grid)
    '4x5:#o####o#o####o#o#o##'
    >>> check(p, grid), solve_sa(p, rng=1).solved, propagate(p).solved
    ([], True, True)
    >>> list(rate_nurikabe(p, 1, runs=3)) == list(METRICS)   # every metric, as floats
    True
"""

from .annealing import NurikabeSAResult, sa_metric, solve_sa
from .bruteforce import (BruteForceResult, SearchLimitError, bruteforce_metric,
                         count_solutions, solve_bruteforce, unique_solution)
from .cost import cost, cost_parts
from .generator import generate_nurikabe
from .harmony import NurikabeHSResult, harmony_metric, harmony_search
from .metrics import STATIC_METRICS, static_metrics
from .model import (NurikabeError, NurikabePuzzle, check, format_nurikabe, format_solution,
                    is_solution, parse_nurikabe, parse_solution)
from .propagation import (RULES, Deductions, PropagationResult, PropagationStep, deducible,
                          deductions, propagate, start_state)
from .rate import METRICS, rate_nurikabe

__all__ = [
    "BruteForceResult", "Deductions", "METRICS", "NurikabeError", "NurikabeHSResult",
    "NurikabePuzzle", "NurikabeSAResult", "PropagationResult", "PropagationStep", "RULES",
    "STATIC_METRICS", "SearchLimitError", "bruteforce_metric", "check", "cost",
    "cost_parts", "count_solutions", "deducible", "deductions", "format_nurikabe",
    "format_solution", "generate_nurikabe", "harmony_metric", "harmony_search",
    "is_solution", "parse_nurikabe", "parse_solution", "propagate", "rate_nurikabe",
    "sa_metric", "solve_bruteforce", "solve_sa", "start_state", "static_metrics",
    "unique_solution",
]
