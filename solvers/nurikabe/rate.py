"""Every difficulty metric of one Nurikabe puzzle, seeded: :func:`rate_nurikabe`
(Křivánek 2011, §4.2, Table 4.3).

==========================  ===============================================  ============
metric                      what                                             module
==========================  ===============================================  ============
``sa_steps``                median SA steps to solve (capped)                annealing
``sa_solved_fraction``      share of SA runs that solved within the cap      annealing
``hs_cost``                 median best cost after 10,000 improvisations     harmony
``bf_steps``                median brute-force steps (islands placed)        bruteforce
``bf_solved_fraction``      share of brute-force runs that solved            bruteforce
``cells`` ... ``multi_island_cells``  the static metrics                     metrics
``prop_steps``              steps of the propagation model, hints included   propagation
``prop_hints``              cells it had to be shown (stalls)                propagation
``prop_hardest``            the highest rule id it needed (9 = a hint)       propagation
``prop_unknown``            cells left when it first stalls (0: solved)      propagation
==========================  ===============================================  ============

Each randomised family draws its own seed from ``rng`` (numpy SeedSequence), so the
same seed gives the same metrics. Capped runs count with their cap, so ``sa_steps`` and
``bf_steps`` are lower bounds where the solved fraction is below one half.
"""

from __future__ import annotations

from .._rng import seed_of, spawn_seeds
from .annealing import DEFAULT_ALPHA, sa_metric
from .bruteforce import bruteforce_metric, unique_solution
from .harmony import harmony_metric
from .metrics import STATIC_METRICS, static_metrics
from .model import NurikabeError, NurikabePuzzle, as_grid
from .propagation import propagate

METRICS = ("sa_steps", "sa_solved_fraction", "hs_cost", "bf_steps", "bf_solved_fraction",
           *STATIC_METRICS, "prop_steps", "prop_hints", "prop_hardest", "prop_unknown")
DEFAULT_SA_MAX_STEPS = 200_000
DEFAULT_BF_MAX_STEPS = 200_000


def rate_nurikabe(puzzle: NurikabePuzzle, rng, *, runs: int = 5,
                  sa_alpha: float = DEFAULT_ALPHA, sa_max_steps: int = DEFAULT_SA_MAX_STEPS,
                  bf_max_steps: int = DEFAULT_BF_MAX_STEPS, hs_max_imp: int = 10_000,
                  solution=None) -> dict[str, float]:
    """Every metric of :data:`METRICS` for ``puzzle`` as finite floats; ``runs`` runs of
    each randomised solver. ``solution`` (else found, and proved unique, by the exact
    search) feeds the propagation model's hints; NurikabeError when the puzzle has no
    unique solution."""
    if runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs}")
    s_sa, s_hs, s_bf = (int(s) for s in spawn_seeds(seed_of(rng), 3))
    sa_steps, sa_solved, _ = sa_metric(puzzle, rng=s_sa, runs=runs, alpha=sa_alpha,
                                       max_steps=sa_max_steps)
    hs_cost, _ = harmony_metric(puzzle, rng=s_hs, runs=runs, max_imp=hs_max_imp)
    bf_steps, bf_solved, _ = bruteforce_metric(puzzle, rng=s_bf, runs=runs,
                                               max_steps=bf_max_steps)
    if solution is None:  # a solution the search found is not proof that it is the only one
        solution = unique_solution(puzzle)
        if solution is None:
            raise NurikabeError("the puzzle has no unique solution")
    solution = as_grid(puzzle, solution)
    alone = propagate(puzzle)
    helped = propagate(puzzle, solution=solution)
    return {"sa_steps": sa_steps, "sa_solved_fraction": sa_solved, "hs_cost": hs_cost,
            "bf_steps": bf_steps, "bf_solved_fraction": bf_solved,
            **static_metrics(puzzle),
            "prop_steps": float(len(helped.steps)), "prop_hints": float(helped.hints),
            "prop_hardest": float(helped.hardest), "prop_unknown": float(alone.unknown)}
