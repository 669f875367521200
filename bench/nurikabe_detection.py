"""Nurikabe detection at cold start: how often honest players of three models of different
structure are flagged, and how well copies are caught.

    python bench/nurikabe_detection.py [--puzzles 40] [--players 25] [--per-player 10]
                                       [--cheaters 10] [--max-cells 144] [--workers N]
                                       [--seed 0] [--out FILE.json]

Puzzles: janko.at Nurikabe with proved unique solutions (../shared/data/nurikabe, see its
README), at most ``--max-cells`` cells and at least 5 rows and columns, drawn at random;
where that file is missing, puzzles from the project's generator (7x7 to 10x10). Each
puzzle gets the service's analysis of a Nurikabe puzzle (``puzzle_model.build_typed`` with
the daemon's default ``analysis.seed``: quick rating, the expected-time prior, the
propagation model's order, nulls from simulated honest solves), and every solve is scored
as the daemon scores a player the nightly job has no skill for: ``evidence.score_solve``
against ``scoring_inputs(...).facts_without_skill``, skill 0, at the daemon's default
``scoring.fpr``. There is no nightly phase: Nurikabe has no real solves to fit here.

Players, each solving ``--per-player`` puzzles drawn at random:

* honest, ``--players`` for every (model, speed): three models of different structure —
  ``fairgrid`` (``simulate_nurikabe(..., "honest")``, the model the cold-start nulls are
  simulated from), ``islander`` (island by island from the clues outwards, walls around
  each finished island, the rest of the river in reading-order sweeps; gamma think times,
  breaks, rare slips; shares no code with the propagation model) and ``nurisolver`` (the
  order in which jonpas/NuriSolver, a solver this project did not write, vendored in
  bench/third_party, decides the cells, on one of 16 variants of the puzzle: 8 rotations
  and mirrors x 2 orders of its procedures) — at 0.3x, 1x, 3x and 6x the speed of the
  Nurikabe prior, each person's skill drawn from N(0, 0.5) around it;
* cheaters, ``--cheaters`` per behaviour, copying every puzzle they play: ``row`` and
  ``random`` (``simulate_nurikabe``), and ``careful`` (the fairgrid honest order at an
  honest total time, typed at an even pace).

NuriSolver's rules are not sound in every state: a variant on which it decides a cell
against the unique solution is dropped, and a puzzle with no variant left is skipped for
that model (the report names them). Where its logic is stuck it guesses an island
extension; here the guess is lucky (the first of its candidates that is island in the
solution, where its backtracking would end up) and costs a long stall. A puzzle the
service's own analysis fails on (e.g. the rating's exact solution count hits its step
cap) is left out and named.

Prints the honest flagged rate per model and speed, the signals the flagged honest solves
were flagged for (with examples against the puzzle's null), how far each signal sits from
its null per model, per cheat behaviour the catch rate and the ROC AUC of ``anomaly``
against all honest solves, and the players flagged over their season as the service
judges a player (the season verdict, ``analytics.player_verdict``). ``--out`` writes the
figures as JSON. The default run takes about 3 minutes with ``--workers 2`` on 2 cores; same arguments, same figures.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import importlib.util
import json
import logging
import math
import signal
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np

from _common import auc, BENCH, SHARED_DATA, judge_seasons, machine, seasons_in_play_order

MODELS = ("fairgrid", "islander", "nurisolver")
SPEEDS = (0.3, 1.0, 3.0, 6.0)
SKILL_SD = 0.5
CHEATS = ("row", "random", "careful")
RIVER, ISLAND = 1, 2
DATA = SHARED_DATA / "nurikabe" / "janko_nurikabe.tsv"


def service_defaults() -> tuple[float, int]:
    """The daemon's default ``scoring.fpr`` and ``analysis.seed``."""
    from fairgrid.daemon.settings import Settings
    fields = {f.name: f.default for f in dataclasses.fields(Settings)}
    return float(fields["scoring_fpr"]), int(fields["analysis_seed"])


def _neighbours(rows: int, cols: int) -> list[list[int]]:
    out = []
    for c in range(rows * cols):
        r, k = divmod(c, cols)
        out.append([r2 * cols + k2 for r2, k2 in ((r - 1, k), (r + 1, k), (r, k - 1), (r, k + 1))
                    if 0 <= r2 < rows and 0 <= k2 < cols])
    return out


def _move_log(t_s, cells, values, rng=None):
    """(t_ms, cell, digit, note) from event times in seconds, strictly increasing ms."""
    t_s = np.asarray(t_s, float)
    order = np.argsort(t_s, kind="stable")
    t_ms = np.round(t_s[order] * 1000).astype(np.int64)
    ar = np.arange(t_ms.size)
    t_ms = np.maximum.accumulate(np.maximum(t_ms, 1) - ar) + ar
    return (t_ms, np.asarray(cells, np.int64)[order], np.asarray(values, np.int64)[order],
            np.zeros(t_ms.size, bool))


def _read_s(total_s: float, rng) -> float:
    """Reading the puzzle before the first move: a few per cent of the solve."""
    return total_s * float(np.clip(0.05 * rng.gamma(4.0, 0.25), 0.01, 0.15))


# ------------------------------------------------------------------------------ islander

ISLANDER_BREAK_RATE = 0.03   # share of steps followed by a break
ISLANDER_BREAK_S = (5.0, 30.0)
ISLANDER_BREAK_CAP = 0.3     # breaks take at most this share of the solve (fast players)
ISLANDER_SLIP_RATE = 0.005   # steps placed wrong first, corrected a few steps later
ISLANDER_DOT = 1.0           # mean think weight of an island cell of a 1-cell island...
ISLANDER_DOT_GROWTH = 0.25   # ...growing by this much per further cell of the island
ISLANDER_WALL = 0.35         # mean weight of a wall cell around a finished island
ISLANDER_SWEEP = 0.5         # mean weight of a river cell in the final sweeps


def islander_solve(givens, shape, solution, rng, *, total_s: float):
    """One honest solve of a person who works island by island: (t_ms, cell, digit, note).

    Clues in an order mixing size (small first for most people, large first for some) and
    reading position with a per-person weight; each island dotted outwards from its clue
    (breadth-first over the solution's island, neighbours in random order), its river
    border walled as soon as it is complete, the river left over filled in one to three
    reading-order sweeps (row-major, column-major for a quarter of people). Think time per
    cell: gamma(2) around a mean that grows with the island's size; a few per cent of
    steps get a 5-30 s break (at most 30 % of the solve); one cell in 200 is placed wrong
    first and corrected a few steps later. The total is ``total_s``."""
    rows, cols = shape
    givens = np.asarray(givens).reshape(-1)
    sol = np.asarray(solution).reshape(-1)
    nb = _neighbours(rows, cols)
    clues = np.flatnonzero(givens)
    decided = givens != 0
    # the clue order: a random mix of size and position
    size = givens[clues].astype(float)
    small_first = rng.random() < 0.75
    size_rank = np.argsort(np.argsort(size if small_first else -size, kind="stable"))
    w = rng.uniform()
    key = (w * size_rank + (1 - w) * np.arange(clues.size)) / max(clues.size, 1) \
        + rng.normal(0, 0.1, clues.size)
    cells, values, weights = [], [], []
    for clue in clues[np.argsort(key, kind="stable")]:
        # the island: breadth-first from the clue over the solution's island cells
        seen, queue, island = {int(clue)}, [int(clue)], []
        while queue:
            c = queue.pop(0)
            island.append(c)
            for n in rng.permutation(nb[c]).tolist():
                if n not in seen and sol[n] == ISLAND and givens[n] == 0:
                    seen.add(n)
                    queue.append(n)
        mean = ISLANDER_DOT * (1 + ISLANDER_DOT_GROWTH * (givens[clue] - 1))
        for c in island[1:]:
            if not decided[c]:
                decided[c] = True
                cells.append(c), values.append(ISLAND), weights.append(rng.gamma(2.0, mean / 2))
        for c in island:  # the finished island's walls, around it in the order it grew
            for n in nb[c]:
                if not decided[n] and sol[n] == RIVER:
                    decided[n] = True
                    cells.append(n), values.append(RIVER)
                    weights.append(rng.gamma(2.0, ISLANDER_WALL / 2))
    rest = np.flatnonzero(~decided)
    if rng.random() < 0.25:  # column-major reading
        rest = rest[np.lexsort((rest // cols, rest % cols))]
    sweeps = int(rng.integers(1, 4))
    for s in range(sweeps):
        seen_now = rest if s == sweeps - 1 else rest[rng.random(rest.size) < 0.6]
        for c in seen_now.tolist():
            cells.append(c), values.append(int(sol[c]))
            weights.append(rng.gamma(2.0, ISLANDER_SWEEP / 2))
        rest = rest[~np.isin(rest, seen_now)]
    n = len(cells)
    weights = np.array(weights)
    breaks = np.where(rng.random(n) < ISLANDER_BREAK_RATE, rng.uniform(*ISLANDER_BREAK_S, n), 0.0)
    read = _read_s(total_s, rng)
    if breaks.sum() > ISLANDER_BREAK_CAP * total_s:
        breaks *= ISLANDER_BREAK_CAP * total_s / breaks.sum()
    think = weights / weights.sum() * (total_s - read - breaks.sum())
    t = read + np.cumsum(think) + np.concatenate([[0.0], np.cumsum(breaks)[:-1]])
    ev_t, ev_c, ev_v = list(t), list(cells), list(values)
    for k in np.flatnonzero(rng.random(n) < ISLANDER_SLIP_RATE).tolist():
        # the wrong value at the cell's step; the right one a few steps later
        ev_v[k] = RIVER + ISLAND - values[k]
        j = min(k + int(rng.integers(1, 6)), n - 1)
        gap = think[j + 1] if j + 1 < n else 2.0
        ev_t.append(t[j] + min(rng.uniform(0.5, 3.0), 0.5 * gap)), ev_c.append(cells[k])
        ev_v.append(values[k])
    return _move_log(ev_t, ev_c, ev_v)


# ---------------------------------------------------------------------------- nurisolver

# think weight of the first cell a NuriSolver procedure decides in one step (the rest of
# the step's cells cost NS_FOLLOW of it): a harder procedure costs more
NS_COST = {"solve_logic_initial": 1.0, "wrap_full_islands": 1.0, "merge_island_patches": 1.0,
           "merge_sea_patches": 1.0, "extend_islands": 1.5, "extend_seas": 1.5,
           "bridge_islands": 2.0, "unreachable_seas": 2.5, "potential_pools": 4.0,
           "guess": 25.0}
NS_FOLLOW = 0.2
NS_PROCS = tuple(k for k in NS_COST if k != "guess")
# methods whose whole call is one step: the cells set inside form a group
NS_GROUPS = ("wrap_full_island", "four_way", "walk_island", "safe_potential_sea_cutoff")
NS_DEDUCE = ("extend_islands", "wrap_full_islands", "unreachable_seas", "potential_pools",
             "extend_seas", "bridge_islands")
NS_TRANSFORMS = 8            # rotations and mirrors of the puzzle
NS_VARIANTS = 2              # 0: NuriSolver's own order of procedures, 1: a shuffled one
NS_TIMEOUT_S = 30


class NuriSolverFailed(Exception):
    """NuriSolver could not solve the puzzle (variant), or decided a cell wrongly."""


_ns_module = None
_ns_class = None


def _nurisolver():
    """bench/third_party/nurisolver.py, imported once (it needs numpy only)."""
    global _ns_module
    if _ns_module is None:
        spec = importlib.util.spec_from_file_location(
            "nurisolver", BENCH / "third_party" / "nurisolver.py")
        _ns_module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_ns_module)
    return _ns_module


def _recorder():
    """A subclass of NuriSolver's Solver that records which procedure set which cell."""
    global _ns_class
    if _ns_class is not None:
        return _ns_class
    ns = _nurisolver()

    class Recorder(ns.Solver):
        def __init__(self, puzzle, truth_sea, procs):
            self.truth_sea = truth_sea      # (h, w) bool: river in the unique solution
            self.procs = procs              # None: NuriSolver's own solve_logic
            self.events = []                # (y, x, state, procedure, group)
            self._stack = []
            self._group = None
            self._groups = 0
            super().__init__(puzzle, max_guesses=10 ** 6)

        def _new_group(self):
            self._groups += 1
            return self._groups

        def set_cell(self, y, x, state, center=None):
            before = int(self.puzzle[y, x])
            super().set_cell(y, x, state, center=center)
            if int(self.puzzle[y, x]) != before:
                if (state == ns.State.SEA) != bool(self.truth_sea[y, x]):
                    raise NuriSolverFailed("decided a cell wrongly in " + (
                        self._stack[0] if self._stack else "solve_logic_initial"))
                group = self._group if self._group is not None else self._new_group()
                proc = self._stack[0] if self._stack else "solve_logic_initial"
                self.events.append((y, x, state, proc, group))

        def solve_logic(self):
            if self.procs is None:
                return super().solve_logic()
            ops = 0
            for name in self.procs:  # merges (bookkeeping) before the ones that read them
                if name in ("unreachable_seas", "extend_seas", "bridge_islands"):
                    ops += self.merge_island_patches() + self.merge_sea_patches()
                ops += getattr(self, name)()
            return ops + self.merge_island_patches() + self.merge_sea_patches()

        def solve_guess(self):
            # NuriSolver's guess (an island extension, smallest island first, in its own
            # order of candidates), but a lucky one: the first candidate that is island
            # in the solution, where its guess-and-backtrack would end up after refuting
            # the others (a person stuck here tries cells out: a long stall). Its own
            # backtracking leaves most janko puzzles unsolved within 2,000 guesses.
            self._stack.append("guess")
            try:
                islands = sorted(self.islands.items(), key=lambda kv: self.puzzle[kv[0]])
                for center, cells in islands:
                    if self.puzzle[center] <= 0:
                        continue
                    for y, x in self.extension_ways(cells):
                        if not self.truth_sea[y, x]:
                            self._place(y, x, center)
                            return True
                open_ = np.argwhere(self.puzzle == ns.State.UNKNOWN)
                if open_.size:
                    y, x = (int(v) for v in open_[0])
                    self._place(y, x, None)
                    return True
                return False
            finally:
                self._stack.pop()

        def _place(self, y, x, center):
            if self.truth_sea[y, x]:
                self.set_cell(y, x, ns.State.SEA, center=(y, x))
            elif center is not None:
                self.set_cell(y, x, ns.State.ISLAND, center=center)
                self.merge_island_patches()
            else:
                self.set_cell(y, x, ns.State.ISLAND)
                self.walk_island(y, x)
            self.merge_sea_patches()

    def tracked(name, grouped):
        base = getattr(ns.Solver, name)

        def run(self, *args, **kwargs):
            if grouped:
                outer = self._group is None
                if outer:
                    self._group = self._new_group()
                try:
                    return base(self, *args, **kwargs)
                finally:
                    if outer:
                        self._group = None
            self._stack.append(name)
            try:
                return base(self, *args, **kwargs)
            finally:
                self._stack.pop()
        run.__name__ = name
        return run

    for name in NS_PROCS:
        setattr(Recorder, name, tracked(name, False))
    for name in NS_GROUPS:
        setattr(Recorder, name, tracked(name, True))
    _ns_class = Recorder
    return Recorder


def _transform(rows: int, cols: int, t: int) -> np.ndarray:
    """The cell indices of the ``t``-th rotation/mirror of a rows x cols grid: the
    transformed grid's cell (y, x) is the original cell ``src[y, x]``."""
    src = np.arange(rows * cols).reshape(rows, cols)
    if t >= 4:
        src = src.T
    return np.rot90(src, t % 4)


class _Timeout(Exception):
    pass


def _alarm(*_):
    raise _Timeout()


def nurisolver_route(givens, shape, solution, route: int):
    """NuriSolver's order on variant ``route`` of the puzzle, in original cells:
    (cells, values, step_cost, procedure labels), or NuriSolverFailed."""
    ns = _nurisolver()
    rows, cols = shape
    t, variant = divmod(route, NS_VARIANTS)
    src = _transform(rows, cols, t % NS_TRANSFORMS)
    givens = np.asarray(givens).reshape(-1)
    sol = np.asarray(solution).reshape(-1)
    grid = np.where(givens[src] > 0, givens[src], ns.State.UNKNOWN).astype(np.int8)
    procs = None
    if variant:
        procs = list(NS_DEDUCE)
        np.random.default_rng(1000 + route).shuffle(procs)
    solver = _recorder()(grid, sol[src] == RIVER, procs)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(NS_TIMEOUT_S)
    logging.disable(logging.CRITICAL)  # its debug lines and "backtracking failed" warnings
    try:
        solved = solver.solve()
    except _Timeout:
        raise NuriSolverFailed(f"no solution within {NS_TIMEOUT_S} s") from None
    except NuriSolverFailed:
        raise
    except Exception as exc:  # its own asserts and bugs
        raise NuriSolverFailed(f"{type(exc).__name__}: {exc}") from None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        logging.disable(logging.NOTSET)
    if not solved:
        raise NuriSolverFailed("its logic and guessing left cells open")
    cells, values, cost, procs_of = [], [], [], []
    last_group = None
    for y, x, state, proc, group in solver.events:
        cells.append(int(src[y, x]))
        values.append(RIVER if state == ns.State.SEA else ISLAND)
        head = group != last_group
        cost.append(NS_COST[proc] * (1.0 if head else NS_FOLLOW))
        procs_of.append(proc)
        last_group = group
    cells = np.array(cells, np.int64)
    free = np.flatnonzero(givens == 0)
    if cells.size != free.size or not np.array_equal(np.sort(cells), free):
        raise NuriSolverFailed("its decisions do not cover every open cell once")
    return cells, np.array(values, np.int64), np.array(cost), procs_of


def nurisolver_solve(route, rng, *, total_s: float):
    """One honest solve in NuriSolver's order: think time per step from the procedure
    that made it (a guess is a long stall), gamma(2) noise, scaled to ``total_s``."""
    cells, values, cost, _ = route
    w = cost * rng.gamma(2.0, 0.5, cost.size)
    read = _read_s(total_s, rng)
    t = read + np.cumsum(w / w.sum() * (total_s - read))
    return _move_log(t, cells, values)


# ------------------------------------------------------------------------------- solving

def _careful(givens, shape, solution, rng, expected_log_s, sd_log, skill):
    """A careful copy: the fairgrid honest order at an honest total time, even pacing."""
    from fairgrid.analytics.nurikabe import simulate_nurikabe
    sim = simulate_nurikabe(givens, shape, solution, "honest", rng=rng,
                            expected_log_s=expected_log_s, sd_log=sd_log, skill=skill)
    n = sim.cell.size
    gaps = np.exp(rng.normal(0, 0.12, n))
    t = np.cumsum(gaps) / gaps.sum() * sim.duration_ms / 1000.0
    return _move_log(t, sim.cell, sim.digit)


def _log(behaviour, model, givens, shape, solution, rng, expected_log_s, sd_log, skill, routes):
    from fairgrid.analytics.nurikabe import simulate_nurikabe
    if behaviour == "honest" and model != "fairgrid":
        total_s = float(np.exp(expected_log_s - skill + rng.normal(0, sd_log)))
        if model == "islander":
            return islander_solve(givens, shape, solution, rng, total_s=total_s)
        return nurisolver_solve(routes[int(rng.integers(len(routes)))], rng, total_s=total_s)
    if behaviour == "careful":
        return _careful(givens, shape, solution, rng, expected_log_s, sd_log, skill)
    sim = simulate_nurikabe(givens, shape, solution, behaviour, rng=rng,
                            expected_log_s=expected_log_s, sd_log=sd_log, skill=skill)
    return sim.t_ms, sim.cell, sim.digit, sim.note


def _analyse(args):
    """The service's analysis of one Nurikabe puzzle (as the daemon's pool runs it)."""
    j, text, solution, seed = args
    from fairgrid.analytics.puzzle_model import build_typed
    try:
        model, median = build_typed("nurikabe", text, solution, seed)
    except Exception as exc:  # e.g. the rating's exact solution count hits its step cap
        return j, None, f"{type(exc).__name__}: {exc}"
    return j, model.to_json(), median


def _solve_puzzle(args):
    """Simulate every solve of one puzzle and score it as the daemon does at cold start."""
    j, text, solution, median, model_doc, plays, seed, fpr = args
    from fairgrid.analytics.evidence import score_solve
    from fairgrid.analytics.player_verdict import solve_facts
    from fairgrid.analytics.puzzle_model import (PuzzleModel, cells_of, grid_facts,
                                                 scoring_inputs)

    model = PuzzleModel.from_json(model_doc)
    inputs = scoring_inputs(text, 0, solution, median, model, None, None, "nurikabe")
    givens, shape = grid_facts("nurikabe", text)
    sol = cells_of(solution)
    routes, failures, ns_s = [], {}, 0.0
    if any(p[2] == "nurisolver" and p[1] == "honest" for p in plays):
        t0 = time.perf_counter()
        for r in range(NS_TRANSFORMS * NS_VARIANTS):
            try:
                routes.append(nurisolver_route(givens, shape, sol, r))
            except NuriSolverFailed as exc:
                failures[r] = str(exc)
        ns_s = time.perf_counter() - t0
    rng = np.random.default_rng([seed, j])
    out = []
    for pid, behaviour, hm, speed, skill in plays:
        if behaviour == "honest" and hm == "nurisolver" and not routes:
            continue
        t, c, d, n = _log(behaviour, hm, givens, shape, sol, rng, model.expected_log_s,
                          model.sd_log, skill, routes)
        # as daemon.work.scoring.compute_batch scores a player without a fitted skill
        ev = score_solve(inputs.facts_without_skill, inputs.null, t, c, d, n, skill=0.0,
                         fpr=fpr, sources=inputs.sources, history=False, skill_sd=0.0)
        out.append({"player": pid, "behaviour": behaviour, "model": hm, "speed": speed,
                    "skill": round(skill, 3), "anomaly": ev.anomaly,
                    "p": ev.p_value, "flagged": ev.flagged, "rule": ev.rule,
                    "reasons": list(ev.reasons), "duration_s": round(int(t[-1]) / 1000, 1),
                    "moves": int(t.size), "mistakes": ev.counts.mistakes,
                    "complete": ev.counts.complete, "facts": solve_facts("", ev.to_json()),
                    "signals": {s.name: [s.value, s.z, s.p] for s in ev.signals}})
    prov = [r[3] for r in routes]
    guesses = [sum(p == "guess" for p in r) for r in prov]
    info = {"routes_ok": len(routes), "routes_failed": failures,
            "ns_seconds": round(ns_s, 2),
            "ns_guesses_median": float(np.median(guesses)) if guesses else None,
            "null": {k: list(v) for k, v in inputs.null.items()},
            "expected_s": round(float(np.exp(model.expected_log_s)), 1)}
    return j, out, info


def load_puzzles(n: int, max_cells: int, rng) -> tuple[list[dict], str]:
    """``n`` puzzles (id, text, solution in move values as text), and where from."""
    from fairgrid.solvers.puzzle_types import puzzle_type, values_text
    ptype = puzzle_type("nurikabe")
    if DATA.is_file():
        with open(DATA, newline="") as fh:
            rows = [r for r in csv.DictReader(fh, delimiter="\t")
                    if int(r["rows"]) * int(r["cols"]) <= max_cells
                    and min(int(r["rows"]), int(r["cols"])) >= 5]
        pick = sorted(rng.choice(len(rows), min(n, len(rows)), replace=False).tolist())
        out = []
        for i in pick:
            r = rows[i]
            body = r["solution"].split(":", 1)[1]
            sol = np.array([RIVER if ch == "#" else ISLAND for ch in body])
            puzzle = ptype.parse(r["puzzle"])
            if ptype.check(puzzle, sol):
                raise SystemExit(f"error: {r['id']}'s solution breaks the rules")
            out.append({"id": r["id"], "text": r["puzzle"], "solution": values_text(sol),
                        "shape": ptype.shape(puzzle)})
        return out, (f"janko.at ({DATA.name}: {len(out)} drawn from its {len(rows)} of at "
                     f"most {max_cells} cells)")
    from fairgrid.solvers.nurikabe import format_nurikabe, generate_nurikabe
    sizes = [(r, r) for r in range(7, 11) if r * r <= max_cells] or [(5, 5)]
    out = []
    for k in range(n):
        rr, cc = sizes[k % len(sizes)]
        puzzle = generate_nurikabe(rr, cc, int(rng.integers(2 ** 31)))
        out.append({"id": f"gen-{k}", "text": format_nurikabe(puzzle),
                    "solution": values_text(ptype.solution(puzzle)), "shape": (rr, cc)})
    return out, f"the project's generator ({DATA} is missing)"


def _progress(what, done, total, t0):
    every = max(1, total // 10)
    if done % every == 0 or done == total:
        print(f"  {what}: {done}/{total} puzzles, {time.perf_counter() - t0:.0f} s",
              file=sys.stderr, flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--puzzles", type=int, default=40)
    ap.add_argument("--players", type=int, default=25, help="honest players per (model, speed)")
    ap.add_argument("--per-player", type=int, default=10)
    ap.add_argument("--cheaters", type=int, default=10, help="cheating players per behaviour")
    ap.add_argument("--max-cells", type=int, default=144,
                    help="largest puzzle (rows x cols) drawn from the janko file")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--workers", "--jobs", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write the figures as JSON to this file")
    args = ap.parse_args()
    models = tuple(args.models.split(","))
    if set(models) - set(MODELS):
        ap.error(f"--models: choose from {', '.join(MODELS)}")
    fpr, analysis_seed = service_defaults()
    t_start = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    puzzles, source = load_puzzles(args.puzzles, args.max_cells, rng)
    print(f"{len(puzzles)} puzzles from {source}", file=sys.stderr, flush=True)
    failed = {}
    with ProcessPoolExecutor(args.workers) as pool:
        t0 = time.perf_counter()
        futs = [pool.submit(_analyse, (j, p["text"], p["solution"], analysis_seed))
                for j, p in enumerate(puzzles)]
        for done, fut in enumerate(as_completed(futs), 1):
            j, model, median = fut.result()
            if model is None:
                failed[puzzles[j]["id"]] = median
            puzzles[j]["model"], puzzles[j]["median"] = model, median
            _progress("analysis", done, len(puzzles), t0)
    puzzles = [p for p in puzzles if p["model"] is not None]
    n_p = len(puzzles)

    plays_of = {j: [] for j in range(n_p)}
    position = {}  # (player, puzzle): where the puzzle comes in the player's season
    players = []
    for hm in models:
        for speed in SPEEDS:
            for _ in range(args.players):
                pid = len(players)
                skill = float(np.log(speed) + rng.normal(0, SKILL_SD))
                players.append({"id": pid, "model": hm, "speed": speed, "cheat": None})
                for a, j in enumerate(rng.choice(n_p, min(args.per_player, n_p),
                                                 replace=False)):
                    plays_of[int(j)].append((pid, "honest", hm, speed, skill))
                    position[pid, int(j)] = a
    for behaviour in CHEATS:
        for _ in range(args.cheaters):
            pid = len(players)
            skill = float(rng.normal(0, SKILL_SD))
            players.append({"id": pid, "model": None, "speed": 1.0, "cheat": behaviour})
            for a, j in enumerate(rng.choice(n_p, min(args.per_player, n_p),
                                             replace=False)):
                plays_of[int(j)].append((pid, behaviour, None, 1.0, skill))
                position[pid, int(j)] = a

    print(f"{n_p} puzzles analysed; {sum(map(len, plays_of.values()))} solves to "
          f"simulate", file=sys.stderr, flush=True)
    solves, info = [], {}
    with ProcessPoolExecutor(args.workers) as pool:
        t0 = time.perf_counter()
        futs = [pool.submit(_solve_puzzle, (j, p["text"], p["solution"], p["median"],
                                            p["model"], plays_of[j], args.seed, fpr))
                for j, p in enumerate(puzzles)]
        for done, fut in enumerate(as_completed(futs), 1):
            j, out, inf = fut.result()
            info[j] = inf
            for s in out:
                s["j"], s["at"] = j, position[s["player"], j]
            solves.extend(out)
            _progress("solves", done, n_p, t0)
    solves.sort(key=lambda s: (s["j"], s["player"]))
    report = _report(puzzles, players, solves, info, models, args, fpr, source, failed,
                     time.perf_counter() - t_start)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(report, fh, indent=1)
        print(f"wrote {args.out}")
    return 0


def _pct(f: int, n: int) -> str:
    return f"{f:,} of {n:,} ({100 * f / n:.2f} %)" if n else "0 of 0"


def _report(puzzles, players, solves, info, models, args, fpr, source, failed, seconds):
    command = "python bench/nurikabe_detection.py " + " ".join(sys.argv[1:])
    honest = [s for s in solves if s["behaviour"] == "honest"]
    sizes = {}
    for p in puzzles:
        key = "x".join(map(str, p["shape"]))
        sizes[key] = sizes.get(key, 0) + 1
    skipped = [puzzles[j]["id"] for j, inf in info.items()
               if "nurisolver" in models and inf["routes_ok"] == 0]
    fail_routes = sum(len(inf["routes_failed"]) for inf in info.values())
    n_routes = NS_TRANSFORMS * NS_VARIANTS
    report = {"command": command, "machine": machine(), "date": time.strftime("%Y-%m-%d"),
              "seconds": round(seconds), "fpr": fpr, "source": source,
              "puzzles": [p["id"] for p in puzzles], "sizes": sizes,
              "analysis_failed": failed,
              "nurisolver_skipped": skipped, "honest": {}, "reasons": {}, "signals": {},
              "cheats": {}, "examples": {}}
    print(f"\n$ {command}")
    print(f"{machine()}; {time.strftime('%Y-%m-%d')}; {seconds:.0f} s")
    print(f"{len(puzzles)} puzzles from {source}; sizes "
          + ", ".join(f"{k} {v}" for k, v in sorted(sizes.items(), key=lambda kv: -kv[1])))
    for pid, why in failed.items():
        print(f"left out, the service's analysis failed: {pid}: {why}")
    exp_s = [inf["expected_s"] for inf in info.values()]
    print(f"prior expected time: median {np.median(exp_s):.0f} s (range {min(exp_s):.0f}-"
          f"{max(exp_s):.0f} s), sd 1.0 in log time; scored as unrated players at cold "
          f"start, fpr {fpr:g}")
    per = {m: [x for x in honest if x["model"] == m] for m in models}
    print("honest solves: " + ", ".join(
        f"{m} {len(v):,} ({sum(not x['complete'] for x in v)} incomplete, "
        f"{sum(x['mistakes'] > 0 for x in v)} with a slip)" for m, v in per.items())
        + f"; copies: {len(solves) - len(honest):,}; players: "
        f"{sum(p['cheat'] is None for p in players):,} honest, "
        f"{sum(p['cheat'] is not None for p in players):,} copying")
    if "nurisolver" in models:
        solved = [inf for inf in info.values() if inf["routes_ok"]]
        g = [inf["ns_guesses_median"] for inf in solved]
        reasons = {}
        for inf in info.values():
            for why in inf["routes_failed"].values():
                reasons[why] = reasons.get(why, 0) + 1
        print(f"nurisolver: {len(puzzles) - len(skipped)} of {len(puzzles)} puzzles usable "
              f"(skipped: {', '.join(skipped) or 'none'}); {fail_routes} of "
              f"{n_routes * len(puzzles)} variants failed"
              + (f" ({'; '.join(f'{k}: {v}' for k, v in reasons.items())})" if reasons else "")
              + (f"; median lucky guesses per solved variant {np.median(g):.0f}" if g else "")
              + f"; its runs took {sum(inf['ns_seconds'] for inf in info.values()):.0f} s")
        report["nurisolver_failed_variants"] = reasons

    print(f"\n== honest solves flagged (target {fpr:g} = {100 * fpr:.2f} %)")
    head = f"{'model':<11}" + "".join(f"{f'{s:g}x':>24}" for s in SPEEDS) + f"{'all':>24}"
    print(head)
    for hm in models:
        cells = []
        for s in (*SPEEDS, None):
            sel = [x for x in honest if x["model"] == hm and (s is None or x["speed"] == s)]
            f = sum(x["flagged"] for x in sel)
            report["honest"].setdefault(hm, {})["all" if s is None else f"{s:g}x"] = [f, len(sel)]
            cells.append(_pct(f, len(sel)))
        print(f"{hm:<11}" + "".join(f"{c:>24}" for c in cells))
    allf = sum(x["flagged"] for x in honest)
    print(f"{'all models':<11}{'':>{24 * len(SPEEDS)}}{_pct(allf, len(honest)):>24}")
    report["honest"]["all"] = [allf, len(honest)]

    print("\n== why the flagged honest solves were flagged: each signal named among the "
          "reasons; the sets of reasons; the rule")
    canon = ("order_sa", "order_consensus", "unforced", "pace_variation",
             "pacing_difficulty", "switch", "speed", "paste")
    for hm in models:
        fl = [x for x in honest if x["model"] == hm and x["flagged"]]
        named, sets, rules = {}, {}, {}
        for x in fl:
            for r in x["reasons"]:
                named[r] = named.get(r, 0) + 1
            key = "+".join(sorted(x["reasons"], key=canon.index))
            sets[key] = sets.get(key, 0) + 1
            rules[x["rule"]] = rules.get(x["rule"], 0) + 1
        report["reasons"][hm] = {"signals": named, "sets": sets, "rules": rules}
        if not fl:
            print(f"{hm:<11} none")
            continue
        print(f"{hm:<11} " + ", ".join(f"{k} in {v}" for k, v in
                                       sorted(named.items(), key=lambda kv: -kv[1]))
              + f" of {len(fl)}; rule " + ", ".join(f"{k!r} {v}" for k, v in rules.items()))
        print(f"{'':<11} sets: " + ", ".join(f"{k} {v}" for k, v in
                                             sorted(sets.items(), key=lambda kv: -kv[1])))
    fast = {m: [x for x in honest if x["model"] == m and x["duration_s"] < 0.25 * x["moves"]]
            for m in models}
    report["inhumanly_fast"] = {m: [sum(x["flagged"] for x in v), len(v)]
                                for m, v in fast.items()}
    print("honest solves faster than 0.25 s a move on average (a lognormal tail no person "
          "reaches), flagged of them: " + ", ".join(
              f"{m} {sum(x['flagged'] for x in v)} of {len(v)}" for m, v in fast.items()))
    slow = {m: [x for x in honest if x["model"] == m and x["duration_s"] >= 0.25 * x["moves"]]
            for m in models}
    report["honest_humanly_fast"] = {m: [sum(x["flagged"] for x in v), len(v)]
                                     for m, v in slow.items()}
    print("flagged among the rest: " + ", ".join(
        f"{m} {_pct(sum(x['flagged'] for x in v), len(v))}" for m, v in slow.items()))

    names = ("order_sa", "unforced", "pace_variation", "pacing_difficulty", "switch", "speed")
    print("\n== each signal against its null, honest solves: median z (odd side +) / share "
          "with p < 0.05 / p < 0.001")
    print(f"{'model':<11}" + "".join(f"{n:>22}" for n in names) + f"{'combined p<fpr':>16}")
    for hm in (*models, *CHEATS):
        sel = [x for x in solves if (x["model"] == hm if hm in models else x["behaviour"] == hm)
               and (x["behaviour"] == "honest") == (hm in models)]
        row, out = [], {}
        for name in names:
            v = [x["signals"][name] for x in sel if name in x["signals"]]
            if not v:
                row.append(f"{'-':>22}")
                continue
            z = np.median([a[1] for a in v])
            p05 = np.mean([a[2] < 0.05 for a in v])
            p001 = np.mean([a[2] < 1e-3 for a in v])
            out[name] = {"median_value": round(float(np.median([a[0] for a in v])), 4),
                         "median_z": round(float(z), 3), "p_below_0.05": round(float(p05), 4),
                         "p_below_0.001": round(float(p001), 4), "n": len(v)}
            row.append(f"{z:+6.2f} /{100 * p05:5.1f}% /{100 * p001:5.1f}%".rjust(22))
        below = np.mean([x["p"] < fpr for x in sel]) if sel else float("nan")
        out["combined_below_fpr"] = round(float(below), 4)
        report["signals"][hm] = out
        print(f"{hm:<11}" + "".join(row) + f"{100 * below:15.1f}%")

    print("\n== examples of flagged honest solves, one at least 0.25 s a move and one faster "
          "where there are (value; null centre, scale; p)")
    for hm in models:
        picks = []
        for fast_one in (False, True):
            fl = [x for x in honest if x["model"] == hm and x["flagged"]
                  and (x["duration_s"] < 0.25 * x["moves"]) == fast_one]
            picks += [fl[k] for k in np.random.default_rng(0).permutation(len(fl))[:1]]
        report["examples"][hm] = []
        for x in picks:
            p = puzzles[x["j"]]
            null = info[x["j"]]["null"]
            shown = {k: v for k, v in x.items() if k != "facts"}
            report["examples"][hm].append({**shown, "puzzle": p["id"], "null": null})
            print(f"{hm} on {p['id']} ({'x'.join(map(str, p['shape']))}), speed {x['speed']:g}x,"
                  f" {x['duration_s']:.0f} s vs prior {info[x['j']]['expected_s']:.0f} s, "
                  f"{x['moves']} moves, {x['mistakes']} mistakes: rule {x['rule']}, reasons "
                  f"{', '.join(x['reasons'])}, combined p {x['p']:.2g}")
            for name, (v, z, pv) in sorted(x["signals"].items(), key=lambda kv: kv[1][2]):
                c, sc = null.get(name, (float("nan"), float("nan")))
                shown = (f"log {math.log(max(v, 1e-6)):.3f}" if name == "pace_variation"
                         else f"{v:.3f}")
                print(f"    {name:<18} {shown:>12}; null {c:.3f}, {sc:.3f}; z {z:+.2f}, "
                      f"p {pv:.2g}")

    print(f"\n== copies: caught at fpr {fpr:g}, ROC AUC of anomaly against all "
          f"{len(honest):,} honest solves (and per honest model)")
    print(f"{'cheat':<9}{'caught':>26}{'AUC all':>9}"
          + "".join(f"{'AUC ' + m:>16}" for m in models))
    neg = np.array([x["anomaly"] for x in honest])
    for behaviour in CHEATS:
        sel = [x for x in solves if x["behaviour"] == behaviour]
        pos = [x["anomaly"] for x in sel]
        f = sum(x["flagged"] for x in sel)
        per = {m: auc(pos, [x["anomaly"] for x in honest if x["model"] == m]) for m in models}
        a = auc(pos, neg)
        report["cheats"][behaviour] = {"caught": [f, len(sel)], "auc": round(a, 4),
                                  "auc_by_model": {m: round(v, 4) for m, v in per.items()}}
        print(f"{behaviour:<9}{_pct(f, len(sel)):>26}{a:9.3f}"
              + "".join(f"{per[m]:16.3f}" for m in models))
    _season(players, solves, models, report, args.workers)
    print(f"\n{seconds:.0f} s on {machine()}")
    return report


def _season(players, solves, models, report, workers=None) -> None:
    """Players flagged over their season as the service judges a player: the season
    verdict (``analytics.player_verdict``) over their solves in the order played, with
    the shipped player null (the cold start's; the bench has no nightly phase)."""
    from fairgrid.analytics import player_verdict as pv

    seasons = seasons_in_play_order(solves, [s["facts"] for s in solves])
    with ProcessPoolExecutor(workers) as pool:
        got = judge_seasons(seasons, pv.shipped_null(), pool)
    groups = [(m, [pl for pl in players if pl["cheat"] is None and pl["model"] == m])
              for m in models] + [(c, [pl for pl in players if pl["cheat"] == c])
                                  for c in CHEATS]
    report["players"] = {"null": pv.shipped_null().source, "alpha": pv.ALPHA}
    print(f"\n== players flagged by their season verdict (up to "
          f"{max(map(len, seasons.values()))} solves each; the shipped player null)")
    for name, group in groups:
        group = [pl for pl in group if pl["id"] in seasons]
        f = sum(got[pl["id"]][0] is not None for pl in group)
        by = Counter(got[pl["id"]][2] for pl in group if got[pl["id"]][2] is not None)
        report["players"][name] = [int(f), len(group)]
        report["players"][f"{name}_by"] = dict(by)
        print(f"{name:<11}{_pct(f, len(group)):>26}  "
              + ", ".join(f"{k} {n}" for k, n in by.most_common()))


if __name__ == "__main__":
    sys.exit(main())
