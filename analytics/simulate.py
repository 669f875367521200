"""Simulated solve logs: honest players and five kinds of cheater (tests, demos, calibration).

**Honest players** follow the human-like propagation model
(:mod:`fairgrid.solvers.propagation`): its placement order, and per step a think time
drawn from a log-normal whose scale grows with the step's difficulty (fewer singles on
offer, a refutation needed) and shrinks with the player's skill. The total time is
scaled to a draw around the puzzle's expected time (``expected_log_s`` ± ``sd_log``,
shifted by ``-skill``), so simulated times agree with the calibrated expectation. With
probability ``mistake_rate`` a step first places a wrong digit and corrects it a little
later (an overwrite), and some of those are erased first.

**Cheaters** copy a solution from a solver:

``row``       cells in row-major order, quick and even pacing;
``random``    cells in random order, quick and even pacing;
``block``     block by block, row-major inside a block;
``careful``   a plausible order (a fresh run of the human model) and an honest-looking
              total time, but flat pacing (every interval about the same);
``partial``   the first half honestly, the rest copied in row order, quickly.

Everything is seeded: the same seed gives the same log.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fairgrid.solvers.grid import Puzzle, geometry
from fairgrid.solvers.propagation import run_once

CHEATS = ("row", "random", "block", "careful", "partial")
KINDS = ("honest",) + CHEATS


@dataclass(frozen=True, eq=False)
class SimulatedSolve:
    kind: str
    skill: float
    t_ms: np.ndarray = field(repr=False)
    cell: np.ndarray = field(repr=False)
    digit: np.ndarray = field(repr=False)
    note: np.ndarray = field(repr=False)

    @property
    def duration_ms(self) -> int:
        return int(self.t_ms[-1]) if self.t_ms.size else 0

    def moves(self) -> list[dict]:
        """The log as webhook ``moves`` entries."""
        out = []
        for t, c, d, n in zip(self.t_ms.tolist(), self.cell.tolist(), self.digit.tolist(),
                              self.note.tolist()):
            m = {"t_ms": t, "cell": c, "digit": d}
            if n:
                m["kind"] = "note"
            out.append(m)
        return out


def _step_weights(technique, score, options, rng, sigma=0.55):
    """Relative think time per step: harder steps (few singles, refutations) take longer."""
    difficulty = 1.0 / np.maximum(options, 1) + 0.6 * np.log1p(score) + 0.5 * (technique >= 2)
    return np.exp(1.3 * difficulty + rng.normal(0, sigma, size=len(technique)))


def _times(weights, total_ms):
    cum = np.cumsum(weights)
    return np.maximum(np.round(cum / cum[-1] * total_ms).astype(np.int64), 1)


def _flat_times(n, total_ms, rng, sigma=0.12):
    return _times(np.exp(rng.normal(0, sigma, size=n)), total_ms)


def _with_mistakes(cells, digits, times, size, rng, rate):
    """Insert wrong-then-corrected placements (some erased first) at rate ``rate``."""
    out_t, out_c, out_d = [], [], []
    prev = 0
    for c, d, t in zip(cells.tolist(), digits.tolist(), times.tolist()):
        if rng.random() < rate:
            wrong = int(rng.integers(1, size))
            wrong = wrong + 1 if wrong >= d else wrong
            tw = prev + max(1, int((t - prev) * 0.5))
            out_t.append(tw), out_c.append(c), out_d.append(wrong)
            if rng.random() < 0.4:
                te = tw + max(1, int((t - tw) * 0.5))
                out_t.append(te), out_c.append(c), out_d.append(0)
        out_t.append(t), out_c.append(c), out_d.append(d)
        prev = t
    return (np.array(out_t, dtype=np.int64), np.array(out_c, dtype=np.int64),
            np.array(out_d, dtype=np.int64))


def simulate(puzzle: Puzzle, solution: np.ndarray, kind: str, *, rng,
             expected_log_s: float, sd_log: float = 0.35, skill: float | None = None,
             mistake_rate: float = 0.03) -> SimulatedSolve:
    """One simulated solve of ``puzzle`` by a player of ``kind`` (see the module docstring).

    ``skill`` is the player's log-speed advantage (0 = average; 0.5 = 1.65x faster);
    drawn from N(0, 0.4) when not given. ``expected_log_s`` is the puzzle's expected log
    solve time in seconds (from :mod:`fairgrid.analytics.expected_time`).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(int(rng))
    solution = np.asarray(solution, dtype=np.int64)
    if skill is None:
        skill = float(rng.normal(0, 0.4))
    geo = geometry(puzzle.order)
    empty = np.flatnonzero(puzzle.givens == 0)
    total_ms = 1000 * np.exp(expected_log_s - skill + rng.normal(0, sd_log))
    honest = run_once(puzzle, solution, np.uint64(rng.integers(0, 2 ** 63)))
    note = None
    if kind == "honest":
        cells = honest.cells
        times = _times(_step_weights(honest.technique, honest.score, honest.options, rng),
                       total_ms)
        t, c, d = _with_mistakes(cells, solution[cells], times, puzzle.size, rng, mistake_rate)
        return SimulatedSolve(kind, skill, t, c, d, np.zeros(t.size, dtype=bool))
    fast_ms = total_ms * float(np.exp(rng.normal(np.log(0.3), 0.3)))  # a copier is quick
    if kind == "row":
        cells = empty
        times = _flat_times(cells.size, fast_ms, rng, 0.3)
    elif kind == "random":
        cells = rng.permutation(empty)
        times = _flat_times(cells.size, fast_ms, rng, 0.3)
    elif kind == "block":
        cells = empty[np.lexsort((empty, geo.block[empty]))]
        times = _flat_times(cells.size, fast_ms, rng, 0.3)
    elif kind == "careful":
        cells = run_once(puzzle, solution, np.uint64(rng.integers(0, 2 ** 63))).cells
        times = _flat_times(cells.size, total_ms, rng, 0.15)
    else:  # partial
        half = honest.cells.size // 2
        first = honest.cells[:half]
        w = _step_weights(honest.technique[:half], honest.score[:half],
                          honest.options[:half], rng)
        first_ms = total_ms * 0.5
        t1 = _times(w, first_ms)
        rest = np.array([c for c in empty if c not in set(first.tolist())], dtype=np.int64)
        t2 = t1[-1] + _flat_times(rest.size, fast_ms * 0.5, rng, 0.3)
        cells = np.concatenate([first, rest])
        times = np.concatenate([t1, t2])
    digits = solution[cells]
    note = np.zeros(cells.size, dtype=bool)
    return SimulatedSolve(kind, skill, times.astype(np.int64), cells.astype(np.int64),
                          digits.astype(np.int64), note)
