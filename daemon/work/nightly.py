"""The nightly rating refresh: fit, recalibrate, consensus orders, re-score.

:func:`run_nightly` is one run of the job against a :class:`NightlyDB`, the daemon's store
(reads on cursors, writes through the single writer) or a file opened directly by
``fairgrid recompute`` when no daemon runs. It loads, calls ``analytics``, and writes:

1. **load** the unflagged, complete solves (no ``open`` or ``confirmed`` flag) of ready
   puzzles, with each puzzle's metric-based prior (its calibrated expected log-time);
2. **fit** ``log t = μ + p_j + δ_j − s_i`` (``analytics.ratings.fit_ratings``) in the
   process pool, and each portal's own difficulty of a puzzle several portals solved;
3. **recalibrate** (``analytics.recalibration``): on puzzles with at least
   ``nightly.min_solves`` solves, refit the metrics → log-time model on the fitted
   difficulties, with every metric's correlation with the median human time;
4. **consensus** (``analytics.consensus``): the median fill rank per cell and its spread
   over the unflagged solves of every puzzle with at least ``nightly.min_solves``
   solves (a portal counting at most as many as all the others together), and the
   null of each solve's correlation with it; per-level honest nulls
   from a seeded sample of real solves;
5. **write** everything in **one transaction** that also points ``current_rating`` at the
   new run and marks the solves of the last ``nightly.rescore_days`` days ``rescore``: a
   crash or kill before the commit leaves the previous ratings in force, one after it
   leaves the new ones with their solves for the daemon's sweep to re-score;
6. **retention** (when ``storage.moves_retention_days`` is set): drop the move logs of
   older solves, never those re-scoring reads;
7. **re-score**: hand the submissions marked ``rescore`` to the scorer;
8. **verdicts** (``work.verdicts``): learn each portal's player-level null from its
   players and judge every player's season again.

Each stage is one function (``_load`` … ``_write``, in :data:`STAGES` order) that takes
what it needs and returns a small frozen result (:class:`Loaded`, :class:`Fits`,
:class:`Recalibrated`, :class:`Orders`, :class:`Written`) the later stages read; the
repository's rows are its named tuples. Each run is a ``job_runs`` row (``running`` →
``success`` / ``failed``, or ``abandoned`` when the daemon's stop ends it; rows left
``running`` by a killed process become ``abandoned`` at the next start).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Callable, Iterable, Iterator, NamedTuple

import numpy as np

from fairgrid.analytics import recalibration
from fairgrid.analytics.consensus import Consensus, consensus
from fairgrid.analytics.expected_time import Calibration, load_default
from fairgrid.analytics.puzzle_model import (cells_of, complete_metrics, grid_facts,
                                             hardest_rung_for, level_key,
                                             order_centre_of, per_cell, type_level)
from fairgrid.analytics.ratings import Fit, fit_ratings
from fairgrid.analytics.recalibration import Recalibration
from fairgrid.analytics.signals import PuzzleFacts
from fairgrid.analytics.types import type_model
from fairgrid.solvers.puzzle_types import DEFAULT_TYPE

from ..documents import UNREADABLE
from ..store.repository import lifecycle
from ..store.repository import nightly as sql
from .nightly_db import NightlyDB
from .pool import in_tasks
from .verdicts import nightly_stage

log = logging.getLogger("fairgrid.nightly")

STAGES = ("load", "fit", "recalibrate", "consensus", "write", "retention", "rescore",
          "verdicts")
JOB = "nightly"
# the type whose expected time is the calibration fitted to human times (the default
# type, Sudoku): the job refits that calibration, and its fit's figures are a run's
# top-level ones (what runs from before puzzle types held)
CALIBRATED = DEFAULT_TYPE
LEVEL_SAMPLE = 4000        # unflagged solves whose signals make the per-level nulls, shared
LEVEL_PORTAL_SAMPLE = 1000  # by the portals (what one leaves, the others take), >= this each
LEVEL_SAMPLE_SEED = 7
CONSENSUS_CHUNK = 50_000   # solves per fill-rank read: bounds its memory
LEVEL_TASK = 250           # sampled solves per level-null task


class NightlyCancelled(Exception):
    """The daemon is shutting down: the run stops at its next stage, before its write
    commits. A stop is no failure: the run is recorded ``abandoned``, as a killed one is."""


class Stopping:
    """The run's ``tasks``, refusing new work once ``stopped()``: a stage that works in
    chunks (the consensus orders, the level nulls, the players' verdicts, minutes on a
    big portal) ends at its next chunk, within the stop's grace, not at its own end."""

    def __init__(self, tasks, stopped: Callable[[], bool]):
        self._tasks, self._stopped = tasks, stopped

    @property
    def workers(self):
        return getattr(self._tasks, "workers", None)

    def check(self) -> None:
        """NightlyCancelled once stopped (``pool.in_tasks`` asks before each item)."""
        if self._stopped():
            raise NightlyCancelled("the daemon is shutting down")

    def submit(self, fn, *args, **kwargs):
        self.check()
        return self._tasks.submit(fn, *args, **kwargs)


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S-") + uuid.uuid4().hex[:6]


def current_calibration(db: NightlyDB, shipped: Calibration) -> Calibration:
    """The metrics → log-time model in force: the last run's recalibration, else the
    ``shipped`` one; also the shipped one when it reads other features than the last
    run's (a new fairgrid ships a new model: a portal starts again from it)."""
    text = db.read(sql.current_calibration)
    if not text:
        return shipped
    last = Calibration.from_json(text)
    return last if last.features == shipped.features else shipped


# ------------------------------------------------------------------------------- the run

def run_nightly(db: NightlyDB, settings, *, executor=None, progress: Callable[[str], None]
                = lambda stage: None, run_id: str | None = None, tasks=None,
                stopped: Callable[[], bool] | None = None) -> dict:
    """One run of the nightly job; returns its summary (row counts, timings, keys to
    re-score). Raises on failure, or a stop, after recording it in ``job_runs``.

    ``executor`` runs the fit (one task); ``tasks`` (default: ``executor``) the
    per-puzzle work, consensus orders and level-null signals, in chunks: the local pool,
    or a Dask cluster's lane. The result is the same whatever runs it. ``stopped``: the
    daemon is stopping; the run ends at its next stage or chunk of tasks."""
    run_id = run_id or new_run_id()
    tasks = tasks if tasks is not None else executor
    if stopped is not None and tasks is not None:
        tasks = Stopping(tasks, stopped)
    t0 = time.perf_counter()
    db.write(sql.start_run, run_id, JOB, datetime.now(timezone.utc))
    committed: dict = {}
    stage_seconds: dict[str, float] = {}
    began = [None, t0]   # the stage running, and when it began

    def timed(stage: str) -> None:
        now = time.perf_counter()
        if began[0] is not None:
            stage_seconds[began[0]] = round(now - began[1], 2)
        began[:] = [stage, now]
        progress(stage)

    try:
        summary = _run(db, settings, executor, timed, run_id, tasks, committed)
    except BaseException as exc:
        status = "abandoned" if isinstance(exc, NightlyCancelled) else "failed"
        error = f"{type(exc).__name__}: {exc}"
        if committed.get("in_force"):
            error += (" (after its write stage: its ratings are in force, and its solves "
                      "are re-scored by the daemon's sweep)")
        try:
            db.write(sql.finish_run, run_id, status, datetime.now(timezone.utc),
                     {"error": error, "in_force": bool(committed.get("in_force"))})
        except Exception:  # noqa: BLE001 - the original error matters more
            pass
        raise
    summary["seconds"] = time.perf_counter() - t0
    if began[0] is not None:
        stage_seconds[began[0]] = round(time.perf_counter() - began[1], 2)
    summary["stage_seconds"] = stage_seconds   # where the run's time went
    summary["run_id"] = run_id
    rows = {k: v for k, v in summary.items() if k != "rescore"}
    db.write(sql.finish_run, run_id, "success", datetime.now(timezone.utc), rows)
    return summary


def _run(db: NightlyDB, s, executor, progress, run_id: str, tasks=None,
         committed: dict | None = None) -> dict:
    """The stages of :data:`STAGES` in order, each announced to ``progress`` as it
    starts (``retention`` only when move logs expire); the run's summary.
    ``committed["in_force"]`` is set once the write stage put the run in force."""
    committed = {} if committed is None else committed
    progress("load")
    loaded = _load(db)
    progress("fit")
    fits = _fit(loaded, s.nightly_lambda_puzzle, s.nightly_lambda_player, executor)
    progress("recalibrate")
    recal = _recalibrate(loaded, fits, s.nightly_min_solves, run_id)
    progress("consensus")
    orders = _consensus(db, loaded, fits, s.nightly_min_solves, tasks)
    progress("write")
    written = _write(db, run_id, loaded, fits, recal, orders, s.nightly_rescore_days,
                     s.nightly_min_solves)
    committed["in_force"] = True
    retained = 0
    if s.storage_moves_retention_days > 0:
        progress("retention")
        retained = _retention(db, written.at, s.storage_moves_retention_days,
                              s.nightly_rescore_days)
    progress("rescore")
    rescore = db.read(sql.to_rescore)
    progress("verdicts")
    verdicts = nightly_stage(db, s.scoring_player_alpha, tasks)
    return {**_summary(loaded, fits, recal, orders, written, retained, rescore), **verdicts}


def _summary(loaded: Loaded, fits: Fits, recal: Recalibrated, orders: Orders,
             written: Written, retained: int, rescore: list[int]) -> dict:
    """What the API, the CLI and the metrics read of a run (:func:`run_nightly` adds
    its seconds and id); the top-level ``mu`` and ``residual_sd`` are Sudoku's."""
    r = recal.recalibration
    return {"solves": int(loaded.log_t.size), "puzzles": len(loaded.ids),
            "players": len(loaded.players), "move_logs_dropped": retained,
            "recalibrated_on": r.puzzles, "consensus_puzzles": len(orders.consensus),
            "mu": fits.sudoku.mu, "null_levels": sorted(orders.level_nulls),
            "portal_null_levels": {q: sorted(n) for q, n in orders.portal_level_nulls.items()},
            "by_type": written.by_type, "residual_sd": fits.sudoku.residual_sd,
            "correlations": r.correlations, "rescore": rescore}


# ---------------------------------------------------------------------------------- load

@dataclass(frozen=True, eq=False)
class Priors:
    """Each rated puzzle's metrics and prior, and the models whose metrics were
    completed for the calibration in force (to store)."""

    metrics: list[dict]
    prior: np.ndarray               # expected log seconds
    prior_sd: np.ndarray            # how sure that is (log seconds)
    completed: list[tuple[str, str]]  # (model JSON, id), as sql.save_puzzle_metrics takes
    readable: np.ndarray            # per puzzle: its stored analysis gave a finite prior


@dataclass(frozen=True, eq=False)
class Loaded:
    """The load stage's result: the rated puzzles by id (a solve's ``j``), each player
    of each type by portal, id and type (a solve's ``i``), and the eligible solves."""

    calibration: Calibration        # the metrics → log-time model in force
    shipped: Calibration            # fairgrid's own (the recalibration's prior)
    ids: list[str]
    types: np.ndarray               # each puzzle's type (object)
    metrics: list[dict]             # each puzzle's metrics (Sudoku's completed)
    prior: np.ndarray               # each puzzle's expected log seconds
    prior_sd: np.ndarray
    players: list[sql.EligiblePlayer]
    player_types: np.ndarray        # each player's type (object)
    j: np.ndarray                   # per solve: its puzzle's index (int64)
    i: np.ndarray                   # per solve: its player's index (int64)
    log_t: np.ndarray               # per solve: log seconds


def _load(db: NightlyDB) -> Loaded:
    """The load stage: the calibration in force, the rated puzzles and their priors
    (storing the metrics completed for it), the eligible players and solves."""
    shipped = load_default()
    cal = current_calibration(db, shipped)
    puzzles, solves, players = db.read(sql.snapshot)
    priors = _priors(cal, puzzles)
    if priors.completed:
        db.write(sql.save_puzzle_metrics, priors.completed)
    if not priors.readable.all():   # left out, with their solves: the others are fitted
        keep = priors.readable
        on = keep[np.asarray(solves["j"], dtype=np.int64)]
        solves = {k: np.asarray(v)[on] for k, v in solves.items()}
        solves["j"] = (np.cumsum(keep) - 1)[solves["j"]]
        puzzles = [p for p, k in zip(puzzles, keep) if k]
        priors = Priors([m for m, k in zip(priors.metrics, keep) if k], priors.prior[keep],
                        priors.prior_sd[keep], priors.completed, keep[keep])
    return Loaded(
        calibration=cal, shipped=shipped, ids=[p.id for p in puzzles],
        types=np.array([p.puzzle_type for p in puzzles], dtype=object),
        metrics=priors.metrics, prior=priors.prior, prior_sd=priors.prior_sd,
        players=players,
        player_types=np.array([p.puzzle_type for p in players], dtype=object),
        j=np.asarray(solves["j"], dtype=np.int64),
        i=np.asarray(solves["i"], dtype=np.int64),
        log_t=np.log(np.asarray(solves["duration_ms"], dtype=float) / 1000.0))


def _priors(cal: Calibration, puzzles: list[sql.RatedPuzzle]) -> Priors:
    """The metrics and prior of each of ``puzzles``: a Sudoku puzzle's from ``cal``, on
    its metrics completed with those ``cal`` reads and it lacks (a puzzle analysed
    before the calibration read a metric gets it rated now, and kept, so that it is
    rated once); other types keep the prior their analysis stored. A puzzle whose stored
    analysis cannot be read, or gives no finite prior, is logged and marked unreadable
    (the fit leaves it out: one damaged row must not stop every portal's ratings)."""
    metrics, completed, prior, prior_sd, readable = [], [], [], [], []
    for p in puzzles:
        try:
            doc = json.loads(p.model)
            have = doc["metrics"]
            if not type_model(p.puzzle_type).calibrated:
                got = have, float(doc["expected_log_s"]), float(doc["sd_log"]), None
            else:
                full = complete_metrics(p.givens, have, cal.metrics_needed)
                got = (full, float(cal.expected_log_time(full)), float(cal.residual_sd),
                       (json.dumps({**doc, "metrics": full}), p.id)
                       if len(full) != len(have) else None)
            if not (np.isfinite(got[1]) and np.isfinite(got[2]) and got[2] > 0):
                raise ValueError(f"its prior is {got[1]!r} (sd {got[2]!r})")
            odd = [k for k, v in got[0].items() if not np.isfinite(float(v))]
            if odd:     # the recalibration fits on them: one NaN spoils every puzzle's fit
                raise ValueError(f"metrics {', '.join(map(str, odd))} are no numbers")
        except UNREADABLE as exc:
            log.warning("puzzle %s: its stored analysis cannot be read (%s: %s); the fit "
                        "leaves it and its solves out", p.id, type(exc).__name__, exc)
            metrics.append({})
            prior.append(np.nan)
            prior_sd.append(np.nan)
            readable.append(False)
            continue
        metrics.append(got[0])
        prior.append(got[1])
        prior_sd.append(got[2])
        readable.append(True)
        if got[3] is not None:
            completed.append(got[3])
    return Priors(metrics, np.array(prior, dtype=float), np.array(prior_sd, dtype=float),
                  completed, np.array(readable, dtype=bool))


# ----------------------------------------------------------------------------------- fit

@dataclass(frozen=True, eq=False)
class Fits:
    """The fit stage's result: each type's fit, and every puzzle's difficulty and every
    (player, type)'s skill joined from them in the order loaded."""

    by_type: dict[str, Fit]         # Sudoku's first, always (if empty), then by name
    difficulty: np.ndarray          # per puzzle: log seconds of an average player
    skill: np.ndarray               # per player of a type
    # (puzzle index, portal, its own difficulty, its solves) of each puzzle solved on
    # more than one portal, as ``puzzle_portal_ratings`` rows hold them
    portal_pairs: list[tuple[int, str, float, int]]
    portals: list[str]              # the portals' names by code (each fit's groups)

    @property
    def sudoku(self) -> Fit:
        """Sudoku's fit, whose figures are a run's top-level ones."""
        return self.by_type[CALIBRATED]


def _fit(loaded: Loaded, lambda_puzzle: float, lambda_player: float, executor) -> Fits:
    """The fit stage: each puzzle type's fit (one task each on ``executor``), joined."""
    names, portal = _portals(loaded)
    by_type = _fit_by_type(loaded, lambda_puzzle, lambda_player, executor, portal)
    difficulty, skill = _join_fits(by_type, loaded)
    return Fits(by_type, difficulty, skill, _portal_pairs(by_type, loaded, names), names)


def _fit_by_type(loaded: Loaded, lambda_puzzle: float, lambda_player: float,
                 executor, portal: np.ndarray) -> dict[str, Fit]:
    """One fit per puzzle type (Sudoku's always, if empty), each on its own puzzles and
    players, so that a player's skill at one type says nothing of another. A type's
    puzzle shrinkage scales with how sure its prior is: Sudoku's calibrated prior gets
    ``lambda_puzzle``, a prior ``k`` times as wide ``1/k²`` of it. Each solve's portal
    (``portal``: each player's portal's code, :func:`_portals`) is its group: a portal's
    own difficulty of a shared puzzle is shrunk towards the fit's by ``lambda_puzzle``
    solves whatever the type (``fit_ratings``)."""
    fits = {}
    types = loaded.types
    portal_of_solve = portal[loaded.i]
    for type_name in [CALIBRATED] + sorted(set(types.tolist()) - {CALIBRATED}):
        pz = np.flatnonzero(types == type_name)
        pl = np.flatnonzero(loaded.player_types == type_name)
        mine = np.isin(loaded.j, pz)
        lam = lambda_puzzle
        if type_name != CALIBRATED and pz.size:
            lam *= (loaded.shipped.residual_sd / float(np.median(loaded.prior_sd[pz]))) ** 2
        task = FitTask(loaded.log_t[mine], np.searchsorted(pz, loaded.j[mine]),
                       np.searchsorted(pl, loaded.i[mine]), loaded.prior[pz], pl.size, lam,
                       lambda_player, portal_of_solve[mine], lambda_puzzle,
                       loaded.prior_sd[pz])
        fits[type_name] = (executor.submit(_fit_one, task).result() if executor is not None
                           else _fit_one(task))
    return fits


class FitTask(NamedTuple):
    """One type's fit, as a pool task (``analytics.ratings.fit_ratings``'s arguments)."""

    log_t: np.ndarray
    puzzle: np.ndarray              # per solve: the puzzle's index among the type's
    player: np.ndarray              # per solve: the player's index among the type's
    prior: np.ndarray               # per puzzle of the type
    n_players: int
    lambda_puzzle: float
    lambda_player: float
    portal: np.ndarray              # per solve: its portal's code (:func:`_portals`)
    lambda_portal: float
    prior_sd: np.ndarray            # per puzzle of the type: how sure its prior is


def _fit_one(task: FitTask) -> Fit:
    return fit_ratings(task.log_t, task.puzzle, task.player, task.prior, task.n_players,
                       lambda_puzzle=task.lambda_puzzle, lambda_player=task.lambda_player,
                       group=task.portal, lambda_group=task.lambda_portal,
                       prior_sd=task.prior_sd)


def _portals(loaded: Loaded) -> tuple[list[str], np.ndarray]:
    """The portals' names, sorted, and per player loaded its portal's index among them."""
    names, code = np.unique(np.array([p.portal for p in loaded.players], dtype=object),
                            return_inverse=True)
    return names.tolist(), code.ravel().astype(np.int64)


def _portal_pairs(fits: dict[str, Fit], loaded: Loaded,
                  names: list[str]) -> list[tuple[int, str, float, int]]:
    """Each (puzzle, portal) a fit priced on its own, as (the puzzle's index loaded,
    the portal, its difficulty there, its solves there); ``names``: the portals by code
    (:func:`_portals`)."""
    out = []
    for type_name, fit in fits.items():
        pz = np.flatnonzero(loaded.types == type_name)
        out += [(int(pz[j]), names[int(q)], float(d), int(n)) for j, q, d, n in zip(
            fit.pair_puzzle, fit.pair_group, fit.pair_difficulty, fit.pair_solves)]
    return out


def _join_fits(fits: dict[str, Fit], loaded: Loaded) -> tuple[np.ndarray, np.ndarray]:
    """Every puzzle's fitted difficulty and every (player, type)'s skill, in the
    order of the puzzles and players loaded."""
    difficulty = loaded.prior.astype(float)
    skill = np.zeros(len(loaded.players))
    for type_name, fit in fits.items():
        difficulty[loaded.types == type_name] = fit.difficulty
        skill[loaded.player_types == type_name] = fit.skill
    return difficulty, skill


# --------------------------------------------------------------------------- recalibrate

@dataclass(frozen=True, eq=False)
class Recalibrated:
    """The recalibrate stage's result: each puzzle's solves and median log-time, and
    the metrics → log-time model refitted on the fitted difficulties."""

    counts: np.ndarray              # per puzzle: eligible solves
    medians: np.ndarray             # per puzzle: their median log seconds (NaN: none)
    recalibration: Recalibration


def _recalibrate(loaded: Loaded, fits: Fits, min_solves: int, run_id: str) -> Recalibrated:
    """The recalibrate stage: Sudoku's calibration refitted on its puzzles with at
    least ``min_solves`` solves (other types keep their prior), with every metric's
    correlation with the median human time."""
    counts, medians = recalibration.puzzle_medians(loaded.log_t, loaded.j, len(loaded.ids))
    sudoku = loaded.types == CALIBRATED
    recal = recalibration.recalibrate(
        loaded.calibration, [m for m, k in zip(loaded.metrics, sudoku) if k],
        fits.sudoku.difficulty, counts[sudoku], medians[sudoku], min_solves=min_solves,
        source=f"nightly run {run_id}", prior=loaded.shipped)
    return Recalibrated(counts, medians, recal)


# ----------------------------------------------------------------------------- consensus

@dataclass(frozen=True, eq=False)
class Orders:
    """The consensus stage's result: the consensus fill orders, every puzzle's level,
    and the per-level honest nulls."""

    consensus: dict[str, Consensus]  # by puzzle id, of puzzles with enough solves
    levels: np.ndarray              # per puzzle (int64)
    level_nulls: dict               # level key -> signal -> [centre, scale]
    # portal -> its own level nulls, learnt from its solves alone (with several portals)
    portal_level_nulls: dict


def _consensus(db: NightlyDB, loaded: Loaded, fits: Fits, min_solves: int, tasks) -> Orders:
    """The consensus stage: the consensus order of every puzzle with at least
    ``min_solves`` solves, each puzzle's level, and each level's honest nulls from a
    seeded sample of real solves (the per-puzzle work as tasks of ``tasks``)."""
    consensus_of = _consensus_orders(db, min_solves, tasks)
    levels = _levels(loaded.calibration, fits.by_type, loaded.types, fits.difficulty)
    level_of = {pid: level_key(type_name, lvl)
                for pid, type_name, lvl in zip(loaded.ids, loaded.types, levels.tolist())}
    return Orders(consensus_of, levels, *_level_nulls(db, level_of, tasks))


def _levels(cal: Calibration, fits: dict[str, Fit], types, difficulty) -> np.ndarray:
    """Each puzzle's level on its type's cut points (Sudoku's: the calibration's)
    shifted by the type's fitted offset, so that a level keeps its quantile meaning
    whatever the portal's players' speed."""
    sudoku = types == CALIBRATED
    levels = np.zeros(len(types), dtype=np.int64)
    levels[sudoku] = recalibration.levels(cal, difficulty[sudoku],
                                          float(fits[CALIBRATED].mu))
    for k in np.flatnonzero(~sudoku):
        levels[k] = type_level(types[k], float(np.exp(difficulty[k])),
                               float(fits[types[k]].mu))
    return levels


def _level_nulls(db: NightlyDB, level_of: dict[str, str], tasks) -> tuple[dict, dict]:
    """The honest nulls of each level (``level_of``: each puzzle's level key) learnt
    from a seeded sample of real solves of each portal, :data:`LEVEL_TASK` solves a
    task: every portal's together (a portal counting no more than all the others
    beyond a floor, ``recalibration.pool_level_values``), and, with several portals,
    each portal's own, which its solves are judged by where it has enough of a level
    (portal -> nulls)."""
    samples = list(_sample_solves(db, level_of))
    chunks = [samples[k:k + LEVEL_TASK] for k in range(0, len(samples), LEVEL_TASK)]
    parts = in_tasks(tasks, recalibration.level_values, chunks)
    by_portal: dict[str, dict] = {}
    for (portal, level), band in recalibration.join_level_values(parts).items():
        by_portal.setdefault(portal, {})[level] = band
    pooled = recalibration.fit_level_nulls(recalibration.pool_level_values(by_portal))
    own = {}
    if len(by_portal) > 1:
        own = {q: nulls for q in sorted(by_portal)
               if (nulls := recalibration.fit_level_nulls(by_portal[q]))}
    return pooled, own


# --------------------------------------------------------------------------------- write

@dataclass(frozen=True, eq=False)
class Written:
    """The write stage's result."""

    at: datetime                    # finished_at: retention and re-scoring count from it
    by_type: dict                   # per type with solves, as stored (see _by_type)


def _write(db: NightlyDB, run_id: str, loaded: Loaded, fits: Fits, recal: Recalibrated,
           orders: Orders, rescore_days: int, min_solves: int = 0) -> Written:
    """The write stage: the run's row, its puzzles' and players' ratings, the pointer
    that puts it in force, and the submissions of the ``rescore_days`` days before
    left to re-score (the rescore stage hands them to the caller), in one
    transaction. A type's fit is in force only on ``min_solves`` solves (:func:`_by_type`)."""
    now = datetime.now(timezone.utc)
    by_type = _by_type(fits, min_solves, _offsets(loaded, fits))
    db.write(sql.write_rating_run,
             _run_row(run_id, now, loaded, fits, recal, orders, by_type),
             _puzzle_rows(run_id, loaded, fits, recal, orders),
             _player_rows(run_id, loaded, fits, by_type), now - timedelta(days=rescore_days),
             _portal_rows(run_id, loaded, fits))
    return Written(now, by_type)


MIN_FIT_PLAYERS = 3  # players a type's fit needs (with nightly.min_solves solves)


def _offsets(loaded: Loaded, fits: Fits) -> dict[str, float]:
    """Per type, what to add to the expected log-time a puzzle's analysis stored (the
    shipped calibration's, for Sudoku) to price a puzzle this run did not fit: the
    fit's offset ``mu`` is from the priors of the calibration in force, which from the
    second run on is a refit that already holds the last run's offset, so the mean
    distance of those priors from the shipped ones is added back."""
    out = {}
    for type_name, fit in fits.by_type.items():
        offset = float(fit.mu)
        pz = np.flatnonzero(loaded.types == type_name)
        if type_name == CALIBRATED and pz.size:
            try:
                shipped = np.array([loaded.shipped.expected_log_time(loaded.metrics[k])
                                    for k in pz.tolist()])
            except (KeyError, TypeError, ValueError):  # a metric the shipped one reads
                log.warning("the shipped calibration cannot price the puzzles fitted; "
                            "a new puzzle is priced on the run's offset alone")
            else:
                offset += float(np.mean(loaded.prior[pz] - shipped))
        out[type_name] = offset
    return out


def _by_type(fits: Fits, min_solves: int, offsets: dict[str, float]) -> dict:
    """Each type whose fit rests on enough data (``min_solves`` solves from
    :data:`MIN_FIT_PLAYERS` players): its offset, the offset of a puzzle it did not fit
    (:func:`_offsets`), residual and skill spreads, solves, and each portal's offset
    from the fit's (``portals``, where the fit had several).
    A type without is scored on its prior, as before any run: a fit of a few solves,
    one portal's perhaps, would set the residual every portal's solves of the type are
    judged by."""
    return {type_name: {"mu": float(f.mu), "offset": offsets[type_name],
                        "residual_sd": float(f.residual_sd),
                   "skill_sd": float(np.std(f.skill, ddof=1)) if f.skill.size > 1 else 0.0,
                   "solves": int(f.puzzle_solves.sum()),
                   **_portal_offsets(f, fits.portals)}
            for type_name, f in fits.by_type.items()
            if f.puzzle_solves.sum() >= max(min_solves, 1)
            and np.count_nonzero(f.player_solves) >= MIN_FIT_PLAYERS}


def _portal_offsets(fit: Fit, names: list[str]) -> dict:
    """A fit's portal offsets as ``by_type`` keeps them (none with one portal): each
    portal's g_q (``analytics.ratings``), which its prices add, and ``unseen``, what a
    portal the fit did not see (a new one) adds: the median of the portals' own paces
    (each portal one vote, its solves' pace unshrunk), which a portal of many odd
    players does not set while the portals like it are fewer than the others."""
    if not fit.group_offset.size:
        return {}
    in_fit = np.flatnonzero(fit.group_solves > 0)
    return {"portals": {names[q]: float(fit.group_offset[q]) for q in in_fit.tolist()},
            "unseen": float(np.median(fit.group_pace[in_fit]))}


def _run_row(run_id: str, now: datetime, loaded: Loaded, fits: Fits, recal: Recalibrated,
             orders: Orders, by_type: dict) -> sql.RatingRunRow:
    """The run's ``rating_runs`` row (its ``mu`` and ``residual_sd``: Sudoku's)."""
    r = recal.recalibration
    return sql.RatingRunRow(
        run_id=run_id, finished_at=now, solves=int(loaded.log_t.size),
        puzzles=len(loaded.ids), players=len(loaded.players), mu=fits.sudoku.mu,
        residual_sd=fits.sudoku.residual_sd, calibration=r.calibration.to_json(),
        correlations=json.dumps(r.correlations), level_nulls=json.dumps(orders.level_nulls),
        by_type=json.dumps(by_type),
        portal_level_nulls=json.dumps(orders.portal_level_nulls))


def _puzzle_rows(run_id: str, loaded: Loaded, fits: Fits, recal: Recalibrated,
                 orders: Orders) -> dict[str, np.ndarray]:
    """The run's ``puzzle_ratings`` rows as columns, in the order loaded."""
    ids, consensus_of = loaded.ids, orders.consensus
    lists = {p: c.as_lists() for p, c in consensus_of.items()}
    return {
        "run_id": np.array([run_id] * len(ids), dtype=object),
        "puzzle_id": np.array(ids, dtype=object),
        "difficulty": fits.difficulty,
        "prior": loaded.prior + np.array([float(fits.by_type[k].mu) for k in loaded.types]),
        "expected_time_s": np.exp(fits.difficulty),
        "level": orders.levels.astype(np.int64),
        "solves": recal.counts.astype(np.int64),
        "median_log_t": recal.medians,
        "consensus_fill_rank": np.array(
            [json.dumps(lists[p][0]) if p in lists else None for p in ids], dtype=object),
        "consensus_fill_spread": np.array(
            [json.dumps({"spread": lists[p][1],
                         "null": list(consensus_of[p].null) if consensus_of[p].null
                         else None}) if p in lists else None for p in ids], dtype=object),
    }


def _portal_rows(run_id: str, loaded: Loaded, fits: Fits) -> dict[str, np.ndarray]:
    """The run's ``puzzle_portal_ratings`` rows as columns."""
    pairs = fits.portal_pairs
    return {
        "run_id": np.array([run_id] * len(pairs), dtype=object),
        "puzzle_id": np.array([loaded.ids[j] for j, *_ in pairs], dtype=object),
        "portal": np.array([q for _, q, *_ in pairs], dtype=object),
        "difficulty": np.array([d for *_, d, _ in pairs], dtype=float),
        "solves": np.array([n for *_, n in pairs], dtype=np.int64),
    }


def _player_rows(run_id: str, loaded: Loaded, fits: Fits,
                 in_force: Iterable[str]) -> dict[str, np.ndarray]:
    """The run's ``player_ratings`` rows as columns, in the order loaded: of the types
    ``in_force`` only, as a skill fitted beside an offset that is not in force would
    judge a solve against the wrong expected time."""
    keep = np.isin(loaded.player_types, list(in_force))
    players = [p for p, k in zip(loaded.players, keep) if k]
    return {
        "run_id": np.array([run_id] * len(players), dtype=object),
        "portal": np.array([p.portal for p in players], dtype=object),
        "player_id": np.array([p.player_id for p in players], dtype=object),
        "skill": np.asarray(fits.skill)[keep],
        "solves": np.bincount(loaded.i, minlength=len(loaded.players)).astype(np.int64)[keep],
        "puzzle_type": np.array([p.puzzle_type for p in players], dtype=object),
    }


# ----------------------------------------------------------------- retention and rescore

def _retention(db: NightlyDB, now: datetime, retention_days: int, rescore_days: int) -> int:
    """The retention stage: drop the move logs of solves older than ``retention_days``
    (never within ``rescore_days``: re-scoring reads them); the solves whose log went."""
    days = max(retention_days, rescore_days)
    return db.write(lifecycle.apply_retention, now - timedelta(days=days))


# ------------------------------------------------------------- consensus orders' reads

def _runs(keys: np.ndarray) -> Iterator[tuple[int, int]]:
    """(start, stop) of each run of equal values in ``keys`` (sorted columns)."""
    if not len(keys):
        return
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    yield from zip(starts.tolist(), np.r_[starts[1:], len(keys)].tolist())


def _compact(rows: dict) -> dict:
    """One read of fill ranks as numbers and a short list of ids: the rows repeat each
    puzzle's id and order (millions of Python strings), which would make most of a
    task's transfer."""
    runs = list(_runs(rows["puzzle_id"]))
    return {"pids": [rows["puzzle_id"][a] for a, _ in runs],
            "ncells": [int(rows["ncells"][a]) for a, _ in runs],
            "bounds": np.array([a for a, _ in runs] + [len(rows["puzzle_id"])], np.int64),
            "sub_key": np.asarray(rows["sub_key"]), "cell": np.asarray(rows["cell"]),
            "r": np.asarray(rows["r"])}


def _consensus_chunk(part: dict) -> dict[str, Consensus]:
    """The consensus of every puzzle in one compacted read of fill ranks (a task)."""
    out = {}
    b = part["bounds"]
    for k, pid in enumerate(part["pids"]):
        lo, hi = b[k], b[k + 1]
        out[pid] = consensus(part["sub_key"][lo:hi], part["cell"][lo:hi], part["r"][lo:hi],
                             part["ncells"][k])
    return out


def _consensus_orders(db: NightlyDB, min_solves: int, tasks=None) -> dict[str, Consensus]:
    """The consensus of every puzzle with at least ``min_solves`` eligible solves, read
    in id ranges of about :data:`CONSENSUS_CHUNK` solves so that memory stays bounded
    whatever the size of the moves table; each range is a task of ``tasks``."""
    big = db.read(sql.consensus_candidates, min_solves)
    ranges: list[tuple[str, str]] = []
    chunk: list[str] = []
    total = 0
    for k, candidate in enumerate(big):
        chunk.append(candidate.puzzle_id)
        total += candidate.solves
        if total >= CONSENSUS_CHUNK or k == len(big) - 1:
            ranges.append((chunk[0], chunk[-1]))
            chunk, total = [], 0
    reads = (_compact(db.read(sql.fill_ranks, lo, hi, min_solves, min_solves))
             for lo, hi in ranges)
    out: dict[str, Consensus] = {}
    for part in in_tasks(tasks, _consensus_chunk, reads):
        out.update(part)
    return out


def _sample_solves(db: NightlyDB, level_of: dict[str, str]) -> Iterator[tuple]:
    """A seeded sample of each portal's real unflagged solves as ((portal, level),
    facts, order centre, t_ms, cell, digit, note), for the per-level nulls
    (``recalibration.level_values``)."""
    moves = db.read(sql.sample_moves, LEVEL_SAMPLE, LEVEL_SAMPLE_SEED, LEVEL_PORTAL_SAMPLE)
    if not len(moves["sub_key"]):
        return
    facts, centre = {}, {}
    # only the puzzles fitted tonight (a puzzle whose stored analysis cannot be read is not)
    for p in db.read(sql.puzzle_texts, sorted(set(moves["puzzle_id"].tolist())
                                             & set(level_of))):
        if p.fill_rank_median is not None:
            centre[p.id] = order_centre_of(json.loads(p.ratings or "{}"))
            cells, shape = grid_facts(p.puzzle_type, p.givens)
            solution = cells_of(p.solution)
            facts[p.id] = PuzzleFacts(cells, p.box_size, solution,
                                      per_cell(json.loads(p.fill_rank_median)), 0.0, 1.0,
                                      None, p.puzzle_type, shape,
                                      hardest_rung_for(cells, solution, p.box_size,
                                                       p.puzzle_type))
    # each portal's in its sample's order (random), so that a portal capped in every
    # portal's nulls keeps a random part of its sample, not its oldest solves
    for a, b in sorted(_runs(moves["sub_key"]), key=lambda run: int(moves["place"][run[0]])):
        pid = moves["puzzle_id"][a]
        if pid in facts and pid in level_of:
            yield ((moves["portal"][a], level_of[pid]), facts[pid], centre[pid],
                   moves["t_ms"][a:b],
                   moves["cell"][a:b], moves["digit"][a:b], moves["note"][a:b])
