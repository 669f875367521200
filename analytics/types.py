"""The puzzle-type seam of the analytics: what a type's expected time starts from, how
its levels are cut, and how its honest players are simulated for the cold-start nulls.

The other half of the seam, :mod:`fairgrid.solvers.puzzle_types`, says what a type *is*
(text, values, rules, the deducible-at-a-moment replay, its words); this half says how
people solve it, which solvers must not know (they are the layer below). Both are keyed by
the type's name; nothing else in the analytics branches on a type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from fairgrid.solvers.puzzle_types import NURIKABE, SUDOKU, TYPES

from .simulate import SimulatedSolve


@dataclass(frozen=True)
class TypeModel:
    """How people solve one type of puzzle, as the analytics model it."""

    name: str
    # (expected log-seconds, its sd) from the type's quick metrics before any human data;
    # None: the shipped calibration, fitted to human times (analytics.expected_time)
    prior: Callable[[Mapping[str, float]], tuple[float, float]] | None
    # the level 1-5 of an expected time, cut points shifted by a portal's offset ``mu``;
    # None: the shipped calibration's cut points
    level: Callable[[float, float], int] | None
    # one simulated honest solve: (facts, rng) -> SimulatedSolve
    honest: Callable[..., SimulatedSolve]
    # the least spread of the cold-start order null (None: as simulated): where no human
    # orders are known, orders unlike the model's must not read as evidence
    cold_order_scale: float | None = None

    @property
    def calibrated(self) -> bool:
        """Whether its expected time comes from the calibration fitted on human times
        (which the nightly job refits)."""
        return self.prior is None


def _sudoku_honest(facts, rng) -> SimulatedSolve:
    from fairgrid.solvers.grid import Puzzle

    from .simulate import simulate
    return simulate(Puzzle(facts.box_size, facts.givens), facts.solution, "honest", rng=rng,
                    expected_log_s=facts.expected_log_s, sd_log=facts.sd_log)


def _nurikabe_honest(facts, rng) -> SimulatedSolve:
    from .nurikabe import simulate_nurikabe
    return simulate_nurikabe(facts.givens, facts.grid_shape, facts.solution, "honest",
                             rng=rng, expected_log_s=facts.expected_log_s,
                             sd_log=facts.sd_log)


def _nurikabe_prior(metrics: Mapping[str, float]) -> tuple[float, float]:
    from .nurikabe import PRIOR_SD_LOG, expected_log_time
    return expected_log_time(metrics), PRIOR_SD_LOG


def _nurikabe_level(expected_s: float, mu: float = 0.0) -> int:
    from .nurikabe import level
    return level(expected_s, mu)


def _models() -> dict[str, TypeModel]:
    from .nurikabe import COLD_ORDER_SCALE
    return {SUDOKU: TypeModel(SUDOKU, None, None, _sudoku_honest),
            NURIKABE: TypeModel(NURIKABE, _nurikabe_prior, _nurikabe_level,
                                _nurikabe_honest, COLD_ORDER_SCALE)}


_MODELS: dict[str, TypeModel] = {}


def type_model(name: str) -> TypeModel:
    """The analytics of the type called ``name``; ValueError listing the known ones."""
    if not _MODELS:
        _MODELS.update(_models())
        assert set(_MODELS) == set(TYPES), "every puzzle type needs its analytics"
    if name not in _MODELS:
        raise ValueError(f"unknown puzzle type {name!r}; known: {', '.join(TYPES)}")
    return _MODELS[name]


__all__ = ["TypeModel", "type_model"]
