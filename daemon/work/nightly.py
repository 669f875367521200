"""The nightly rating refresh: fit, recalibrate, consensus orders, re-score.

:func:`run_nightly` is one run of the job against a :class:`JobDB`, the daemon's store
(reads on cursors, writes through the single writer) or a file opened directly by
``fairgrid recompute`` when no daemon runs. It loads, calls ``analytics``, and writes:

1. **load** the unflagged, complete solves (no ``open`` or ``confirmed`` flag) of ready
   puzzles, with each puzzle's metric-based prior (its calibrated expected log-time);
2. **fit** ``log t = μ + p_j + δ_j − s_i`` (``analytics.ratings.fit_ratings``) in the
   process pool;
3. **recalibrate** (``analytics.recalibration``): on puzzles with at least
   ``nightly.min_solves`` solves, refit the metrics → log-time model on the fitted
   difficulties, with every metric's correlation with the median human time;
4. **consensus** (``analytics.consensus``): the median fill rank per cell and its spread
   over the unflagged solves of every puzzle with at least ``nightly.min_solves``
   solves, and the null of each solve's correlation with it; per-level honest nulls
   from a seeded sample of real solves;
5. **write** everything in **one transaction** that also points ``current_rating`` at the
   new run: a crash or kill before the commit leaves the previous ratings in force;
6. **re-score** the submissions of the last ``nightly.rescore_days`` days.

Each run is a ``job_runs`` row (``running`` → ``success`` / ``failed``, or
``abandoned`` when the daemon's stop ends it; rows left ``running`` by a killed process
become ``abandoned`` at the next start).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Callable, Iterator

import numpy as np

from fairgrid.analytics import recalibration
from fairgrid.analytics.consensus import Consensus, consensus
from fairgrid.analytics.expected_time import Calibration, load_default
from fairgrid.analytics.puzzle_model import (cells_of, complete_metrics, grid_facts,
                                             level_key, per_cell, type_level)
from fairgrid.analytics.signals import PuzzleFacts

from ..store.connection import in_transaction
from ..store.repository import lifecycle
from ..store.repository import nightly as sql

log = logging.getLogger("fairgrid.jobs")

STAGES = ("load", "fit", "recalibrate", "consensus", "write", "retention", "rescore")
JOB = "nightly"
SUDOKU = "sudoku"
LEVEL_SAMPLE = 4000        # unflagged solves whose signals make the per-level honest nulls
LEVEL_SAMPLE_SEED = 7
CONSENSUS_CHUNK = 50_000   # solves per fill-rank read: bounds its memory
LEVEL_TASK = 250           # sampled solves per level-null task


class JobCancelled(Exception):
    """The daemon is shutting down: the run stops at its next stage, before its write
    commits. A stop is no failure: the run is recorded ``abandoned``, as a killed one is."""


@dataclass
class JobDB:
    """What the job needs from a database: repository reads and one-transaction writes."""

    read: Callable          # (fn, *args) -> fn(cursor, *args)
    write: Callable         # (fn, *args) -> fn(con, *args), in one transaction


def direct_db(con) -> JobDB:
    """A JobDB on a DuckDB connection owned by this process (no daemon runs)."""
    return JobDB(lambda fn, *args: fn(con, *args),
                 lambda fn, *args: in_transaction(con, fn, *args))


def store_db(store) -> JobDB:
    return JobDB(store.read, lambda fn, *args: store.write(fn, *args).result())


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S-") + uuid.uuid4().hex[:6]


def _fit_job(args):
    from fairgrid.analytics.ratings import fit_ratings
    return fit_ratings(*args[:5], lambda_puzzle=args[5], lambda_player=args[6])


def current_calibration(db: JobDB, shipped: Calibration) -> Calibration:
    """The metrics → log-time model in force: the last run's recalibration, else the
    ``shipped`` one; also the shipped one when it reads other features than the last
    run's (a new fairgrid ships a new model: a portal starts again from it)."""
    text = db.read(sql.current_calibration)
    if not text:
        return shipped
    last = Calibration.from_json(text)
    return last if last.features == shipped.features else shipped


def _fit_by_type(kinds, player_kinds, log_t, j, i, prior, prior_sd, sudoku_sd, s,
                 executor) -> dict:
    """One fit per puzzle type (Sudoku's always, if empty), each on its own puzzles and
    players, so that a player's skill at one type says nothing of another. A type's
    puzzle shrinkage scales with how sure its prior is: Sudoku's calibrated prior gets
    ``nightly.lambda_puzzle``, a prior ``k`` times as wide ``1/k²`` of it."""
    fits = {}
    for kind in [SUDOKU] + sorted(set(kinds.tolist()) - {SUDOKU}):
        pz = np.flatnonzero(kinds == kind)
        pl = np.flatnonzero(player_kinds == kind)
        mine = np.isin(j, pz)
        local_j = np.searchsorted(pz, j[mine])
        local_i = np.searchsorted(pl, i[mine])
        lam = s.nightly_lambda_puzzle
        if kind != SUDOKU and pz.size:
            lam *= (sudoku_sd / float(np.median(prior_sd[pz]))) ** 2
        args = (log_t[mine], local_j, local_i, prior[pz], pl.size, lam,
                s.nightly_lambda_player)
        fits[kind] = (executor.submit(_fit_job, args).result() if executor is not None
                      else _fit_job(args))
    return fits


def _join_fits(fits: dict, kinds, players, prior) -> tuple[np.ndarray, np.ndarray]:
    """Every puzzle's fitted difficulty and every (player, type)'s skill, in the
    order of the puzzles and players read."""
    difficulty = prior.astype(float)
    skill = np.zeros(len(players))
    player_kinds = np.array([p[2] for p in players], dtype=object)
    for kind, fit in fits.items():
        difficulty[kinds == kind] = fit.difficulty
        skill[player_kinds == kind] = fit.skill
    return difficulty, skill


def _levels(cal: Calibration, fits: dict, kinds, difficulty) -> np.ndarray:
    """Each puzzle's level on its type's cut points (Sudoku's: the calibration's)
    shifted by the type's fitted offset, so that a level keeps its quantile meaning
    whatever the portal's players' speed."""
    sudoku = kinds == SUDOKU
    levels = np.zeros(len(kinds), dtype=np.int64)
    levels[sudoku] = recalibration.levels(cal, difficulty[sudoku], float(fits[SUDOKU].mu))
    for k in np.flatnonzero(~sudoku):
        levels[k] = type_level(kinds[k], float(np.exp(difficulty[k])),
                               float(fits[kinds[k]].mu))
    return levels


def run_nightly(db: JobDB, settings, *, executor=None, progress: Callable[[str], None]
                = lambda stage: None, run_id: str | None = None, tasks=None) -> dict:
    """One run of the nightly job; returns its summary (row counts, timings, keys to
    re-score). Raises on failure, or a stop, after recording it in ``job_runs``.

    ``executor`` runs the fit (one task); ``tasks`` (default: ``executor``) the
    per-puzzle work, consensus orders and level-null signals, in chunks: the local pool,
    or a Dask cluster's lane. The result is the same whatever runs it."""
    run_id = run_id or new_run_id()
    t0 = time.perf_counter()
    db.write(sql.start_run, run_id, JOB, datetime.now(timezone.utc))
    try:
        summary = _run(db, settings, executor, progress, run_id,
                       tasks if tasks is not None else executor)
    except BaseException as exc:
        status = "abandoned" if isinstance(exc, JobCancelled) else "failed"
        try:
            db.write(sql.finish_run, run_id, status, datetime.now(timezone.utc),
                     {"error": f"{type(exc).__name__}: {exc}"})
        except Exception:  # noqa: BLE001 - the original error matters more
            pass
        raise
    summary["seconds"] = time.perf_counter() - t0
    summary["run_id"] = run_id
    rows = {k: v for k, v in summary.items() if k != "rescore"}
    db.write(sql.finish_run, run_id, "success", datetime.now(timezone.utc), rows)
    return summary


def _run(db: JobDB, s, executor, progress, run_id: str, tasks=None) -> dict:
    progress("load")
    shipped = load_default()
    cal = current_calibration(db, shipped)
    puzzles = db.read(sql.rated_puzzles)
    ids = [pid for pid, _, _, _ in puzzles]
    kinds = np.array([kind for _, _, _, kind in puzzles], dtype=object)
    # a Sudoku puzzle analysed before the calibration in force read a metric gets it
    # rated now, and kept, so that it is rated once; other types keep their own prior
    metrics, completed, prior, prior_sd = [], [], [], []
    for pid, model, givens, kind in puzzles:
        doc = json.loads(model)
        have = doc["metrics"]
        if kind != SUDOKU:
            metrics.append(have)
            prior.append(doc["expected_log_s"])
            prior_sd.append(doc["sd_log"])
            continue
        full = complete_metrics(givens, have, cal.metrics_needed)
        metrics.append(full)
        prior.append(cal.expected_log_time(full))
        prior_sd.append(cal.residual_sd)
        if len(full) != len(have):
            completed.append((json.dumps({**doc, "metrics": full}), pid))
    if completed:
        db.write(sql.save_puzzle_metrics, completed)
    prior = np.array(prior, dtype=float)
    solves = db.read(sql.eligible_solves)
    players = db.read(sql.eligible_players)
    j = np.asarray(solves["j"], dtype=np.int64)
    i = np.asarray(solves["i"], dtype=np.int64)
    log_t = np.log(np.asarray(solves["duration_ms"], dtype=float) / 1000.0)

    progress("fit")
    fits = _fit_by_type(kinds, np.array([p[2] for p in players], dtype=object), log_t, j, i,
                        prior, np.array(prior_sd, dtype=float), shipped.residual_sd, s,
                        executor)
    fit = fits[SUDOKU]
    difficulty, skill = _join_fits(fits, kinds, players, prior)

    progress("recalibrate")
    counts, medians = recalibration.puzzle_medians(log_t, j, len(ids))
    sudoku = kinds == SUDOKU  # the calibration is Sudoku's: other types keep their prior
    recal = recalibration.recalibrate(cal, [m for m, k in zip(metrics, sudoku) if k],
                                      fit.difficulty, counts[sudoku], medians[sudoku],
                                      min_solves=s.nightly_min_solves,
                                      source=f"nightly run {run_id}", prior=shipped)

    progress("consensus")
    consensus_of = _consensus_orders(db, s.nightly_min_solves, tasks)
    levels = _levels(cal, fits, kinds, difficulty)
    samples = list(_sample_solves(db, {pid: level_key(kind, lvl) for pid, kind, lvl in
                                       zip(ids, kinds, levels.tolist())}))
    parts = _in_tasks(tasks, recalibration.level_values,
                    [samples[k:k + LEVEL_TASK] for k in range(0, len(samples), LEVEL_TASK)])
    level_nulls = recalibration.fit_level_nulls(recalibration.join_level_values(parts))

    progress("write")
    now = datetime.now(timezone.utc)
    lists = {p: c.as_lists() for p, c in consensus_of.items()}
    puzzle_rows = {
        "run_id": np.array([run_id] * len(ids), dtype=object),
        "puzzle_id": np.array(ids, dtype=object),
        "difficulty": difficulty,
        "prior": prior + np.array([float(fits[k].mu) for k in kinds]),
        "expected_time_s": np.exp(difficulty),
        "level": levels.astype(np.int64),
        "solves": counts.astype(np.int64),
        "median_log_t": medians,
        "consensus_fill_rank": np.array(
            [json.dumps(lists[p][0]) if p in lists else None for p in ids], dtype=object),
        "consensus_fill_spread": np.array(
            [json.dumps({"spread": lists[p][1],
                         "null": list(consensus_of[p].null) if consensus_of[p].null
                         else None}) if p in lists else None for p in ids], dtype=object),
    }
    player_rows = {
        "run_id": np.array([run_id] * len(players), dtype=object),
        "portal": np.array([p[0] for p in players], dtype=object),
        "player_id": np.array([p[1] for p in players], dtype=object),
        "skill": skill,
        "solves": np.bincount(i, minlength=len(players)).astype(np.int64),
        "puzzle_type": np.array([p[2] for p in players], dtype=object),
    }
    by_type = {kind: {"mu": float(f.mu), "residual_sd": float(f.residual_sd),
                      "skill_sd": float(np.std(f.skill, ddof=1)) if f.skill.size > 1 else 0.0,
                      "solves": int(f.puzzle_solves.sum())}
               for kind, f in fits.items() if f.puzzle_solves.sum() > 0}
    run = (run_id, now, int(log_t.size), len(ids), len(players), fit.mu, fit.residual_sd,
           recal.calibration.to_json(), json.dumps(recal.correlations),
           json.dumps(level_nulls), json.dumps(by_type))
    db.write(sql.write_rating_run, run, puzzle_rows, player_rows, run_id)

    retained = 0
    if s.storage_moves_retention_days > 0:
        progress("retention")
        days = max(s.storage_moves_retention_days, s.nightly_rescore_days)
        retained = db.write(lifecycle.apply_retention, now - timedelta(days=days))

    progress("rescore")
    rescore = db.read(sql.recent_scored, now - timedelta(days=s.nightly_rescore_days))
    return {"solves": int(log_t.size), "puzzles": len(ids), "players": len(players),
            "move_logs_dropped": retained,
            "recalibrated_on": recal.puzzles, "consensus_puzzles": len(consensus_of),
            "mu": fit.mu, "band_null_levels": sorted(level_nulls), "by_type": by_type,
            "residual_sd": fit.residual_sd, "correlations": recal.correlations,
            "rescore": rescore}


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


def _consensus_orders(db: JobDB, min_solves: int, tasks=None) -> dict[str, Consensus]:
    """The consensus of every puzzle with at least ``min_solves`` eligible solves, read
    in id ranges of about :data:`CONSENSUS_CHUNK` solves so that memory stays bounded
    whatever the size of the moves table; each range is a task of ``tasks``."""
    big = db.read(sql.consensus_candidates, min_solves)
    ranges: list[tuple[str, str]] = []
    chunk: list[str] = []
    total = 0
    for k, (pid, n) in enumerate(big):
        chunk.append(pid)
        total += n
        if total >= CONSENSUS_CHUNK or k == len(big) - 1:
            ranges.append((chunk[0], chunk[-1]))
            chunk, total = [], 0
    reads = (_compact(db.read(sql.fill_ranks, lo, hi, min_solves)) for lo, hi in ranges)
    out: dict[str, Consensus] = {}
    for part in _in_tasks(tasks, _consensus_chunk, reads):
        out.update(part)
    return out


def _in_tasks(tasks, fn, items):
    """``fn(x)`` for each of ``items`` (an iterator, consumed only as tasks free up, for
    the reads behind it are big), as tasks of ``tasks`` when given, a few per worker in
    flight; yielded in input order."""
    if tasks is None:
        for x in items:
            yield fn(x)
        return
    limit = 2 * max(1, getattr(tasks, "workers", 1) or 1)
    window = []
    for x in items:
        window.append(tasks.submit(fn, x))
        if len(window) >= limit:
            yield window.pop(0).result()
    for f in window:
        yield f.result()


def _sample_solves(db: JobDB, level_of: dict[str, str]) -> Iterator[tuple]:
    """A seeded sample of real unflagged solves as (level, facts, t_ms, cell, digit,
    note), for the per-level nulls."""
    moves = db.read(sql.sample_moves, LEVEL_SAMPLE, LEVEL_SAMPLE_SEED)
    if not len(moves["sub_key"]):
        return
    facts = {}
    for pid, givens, solution, order, median, kind in db.read(
            sql.puzzle_texts, sorted(set(moves["puzzle_id"].tolist()))):
        if median is not None:
            cells, shape = grid_facts(kind, givens)
            facts[pid] = PuzzleFacts(cells, order, cells_of(solution),
                                     per_cell(json.loads(median)), 0.0, 1.0, None, kind,
                                     shape)
    for a, b in _runs(moves["sub_key"]):
        pid = moves["puzzle_id"][a]
        if pid in facts and pid in level_of:
            yield (level_of[pid], facts[pid], moves["t_ms"][a:b], moves["cell"][a:b],
                   moves["digit"][a:b], moves["note"][a:b])
