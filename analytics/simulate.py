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
``partial``   the first half honestly, the rest copied in row order, quickly;
``steady``    a human order (a fresh run of the human model) typed at a steady 1.5–3 s
              a cell;
``assisted``  honest for 60 % of the cells, then the rest copied in row order at a
              steady pace.

A second honest model of a different structure, ``scanner``
(:func:`scanner_order`), finds its placements by sweeping digits over boxes (hidden
singles), then cells in reading order (naked singles), and where it finds none takes
the cell with the fewest candidates after a long think; its think time per placement
grows with the number of checks the sweep needed, with gamma noise and occasional breaks.
It shares no code with the propagation model, so a detector tuned on one can be checked
on the other.

Everything is seeded: the same seed gives the same log.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fairgrid.solvers.grid import Puzzle, geometry
from fairgrid.solvers.propagation import run_once

CHEATS = ("row", "random", "block", "careful", "partial", "steady", "assisted")
HONEST = ("honest", "scanner")
BEHAVIOURS = HONEST + CHEATS


@dataclass(frozen=True, eq=False)
class SimulatedSolve:
    behaviour: str
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
        return webhook_moves(self.t_ms, self.cell, self.digit, self.note)


def webhook_moves(t_ms, cell, digit, note) -> list[dict]:
    """A move log's arrays as webhook ``moves`` entries (a note's ``kind`` is ``note``)."""
    out = []
    for t, c, d, n in zip(np.asarray(t_ms).tolist(), np.asarray(cell).tolist(),
                          np.asarray(digit).tolist(), np.asarray(note).tolist()):
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


def scanner_order(puzzle: Puzzle, solution: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
    """The placements of a player who scans: (cells, checks spent before each).

    Each round sweeps the digits, starting from a random one; for each digit, every box
    in turn: a box where the digit fits in exactly one empty cell gets it (a hidden
    single), then the sweep goes on. A full sweep without a find turns to the cells in
    reading order for one with a single candidate (a naked single). With neither, the
    player is stuck and places the cell with the fewest candidates (an advanced
    technique or a guess), charged as many checks as a full board scan times ten."""
    geo = geometry(puzzle.box_size)
    size = puzzle.size
    grid = np.asarray(puzzle.givens, dtype=np.int64).copy()
    solution = np.asarray(solution, dtype=np.int64)
    blocks = [geo.units[2 * size + b] for b in range(size)]
    cells_out, checks_out = [], []
    checks = 0

    def fits(c, d):
        return grid[c] == 0 and not np.any(grid[geo.peers[c]] == d)

    while (grid == 0).any():
        found = None
        start = int(rng.integers(1, size + 1))
        for k in range(size):
            d = (start - 1 + k) % size + 1
            for b in rng.permutation(size) if rng.random() < 0.3 else range(size):
                checks += 1
                box = blocks[b]
                if np.any(grid[box] == d):
                    continue
                spots = [c for c in box if fits(c, d)]
                if len(spots) == 1:
                    found = spots[0]
                    break
            if found is not None:
                break
        if found is None:
            for c in np.flatnonzero(grid == 0):
                checks += 1
                seen = set(grid[geo.peers[c]].tolist())
                if size - len(seen - {0}) == 1:
                    found = int(c)
                    break
        if found is None:
            empty = np.flatnonzero(grid == 0)
            n_cands = [size - len(set(grid[geo.peers[c]].tolist()) - {0}) for c in empty]
            found = int(empty[int(np.argmin(n_cands))])
            checks += 10 * empty.size
        grid[found] = solution[found]
        cells_out.append(int(found))
        checks_out.append(checks)
        checks = 0
    return np.array(cells_out, dtype=np.int64), np.array(checks_out, dtype=float)


def _scanner_times(checks, total_ms, rng):
    """Think time per placement: proportional to the checks made, gamma noise (shape 2),
    a second to write the digit, and a break of a minute or so now and then."""
    work = checks * rng.gamma(2.0, 0.5, size=checks.size) + 4.0
    breaks = rng.random(checks.size) < 0.02
    work = work + breaks * rng.exponential(0.5 * work.sum() / checks.size * 20, checks.size)
    return _times(work, total_ms)


def _steady_times(n, rng):
    """A copier typing at a steady pace: 1.5–3 s a cell, ±10 %."""
    per = rng.uniform(1500, 3000)
    return np.cumsum(per * np.exp(rng.normal(0, 0.1, size=n))).round().astype(np.int64)


def simulate(puzzle: Puzzle, solution: np.ndarray, behaviour: str, *, rng,
             expected_log_s: float, sd_log: float = 0.35, skill: float | None = None,
             mistake_rate: float = 0.03) -> SimulatedSolve:
    """One simulated solve of ``puzzle`` by a player of this ``behaviour`` (module docstring).

    ``skill`` is the player's log-speed advantage (0 = average; 0.5 = 1.65x faster);
    drawn from N(0, 0.4) when not given. ``expected_log_s`` is the puzzle's expected log
    solve time in seconds (from :mod:`fairgrid.analytics.expected_time`).
    """
    if behaviour not in BEHAVIOURS:
        raise ValueError(f"behaviour must be one of {BEHAVIOURS}, got {behaviour!r}")
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(int(rng))
    solution = np.asarray(solution, dtype=np.int64)
    if skill is None:
        skill = float(rng.normal(0, 0.4))
    geo = geometry(puzzle.box_size)
    empty = np.flatnonzero(puzzle.givens == 0)
    total_ms = 1000 * np.exp(expected_log_s - skill + rng.normal(0, sd_log))
    honest = run_once(puzzle, solution, np.uint64(rng.integers(0, 2 ** 63)))
    note = None
    if behaviour == "honest":
        cells = honest.cells
        times = _times(_step_weights(honest.technique, honest.score, honest.options, rng),
                       total_ms)
        t, c, d = _with_mistakes(cells, solution[cells], times, puzzle.size, rng, mistake_rate)
        return SimulatedSolve(behaviour, skill, t, c, d, np.zeros(t.size, dtype=bool))
    if behaviour == "scanner":
        cells, checks = scanner_order(puzzle, solution, rng)
        times = _scanner_times(checks, total_ms, rng)
        t, c, d = _with_mistakes(cells, solution[cells], times, puzzle.size, rng, mistake_rate)
        return SimulatedSolve(behaviour, skill, t, c, d, np.zeros(t.size, dtype=bool))
    fast_ms = total_ms * float(np.exp(rng.normal(np.log(0.3), 0.3)))  # a copier is quick
    if behaviour == "row":
        cells = empty
        times = _flat_times(cells.size, fast_ms, rng, 0.3)
    elif behaviour == "random":
        cells = rng.permutation(empty)
        times = _flat_times(cells.size, fast_ms, rng, 0.3)
    elif behaviour == "block":
        cells = empty[np.lexsort((empty, geo.block[empty]))]
        times = _flat_times(cells.size, fast_ms, rng, 0.3)
    elif behaviour == "careful":
        cells = run_once(puzzle, solution, np.uint64(rng.integers(0, 2 ** 63))).cells
        times = _flat_times(cells.size, total_ms, rng, 0.15)
    elif behaviour == "steady":
        cells = run_once(puzzle, solution, np.uint64(rng.integers(0, 2 ** 63))).cells
        times = _steady_times(cells.size, rng)
    elif behaviour == "assisted":
        k = int(round(0.6 * honest.cells.size))
        first = honest.cells[:k]
        w = _step_weights(honest.technique[:k], honest.score[:k], honest.options[:k], rng)
        t1 = _times(w, total_ms * 0.6)
        done = set(first.tolist())
        rest = np.array([c for c in empty if c not in done], dtype=np.int64)
        t2 = t1[-1] + _steady_times(rest.size, rng)
        cells = np.concatenate([first, rest])
        times = np.concatenate([t1, t2])
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
    return SimulatedSolve(behaviour, skill, times.astype(np.int64), cells.astype(np.int64),
                          digits.astype(np.int64), note)
