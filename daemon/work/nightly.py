"""The nightly rating refresh (issue 6): fit, recalibrate, consensus orders, re-score.

:func:`run_nightly` is one run of the job against a :class:`JobDB` — the daemon's store
(reads on cursors, writes through the single writer) or a file opened directly by
``fairgrid recompute`` when no daemon runs. Stages:

1. **load** the unflagged, complete solves (no ``open`` or ``confirmed`` flag) of ready
   puzzles, with each puzzle's metric-based prior (its calibrated expected log-time);
2. **fit** ``log t = μ + p_j + δ_j − s_i`` (``analytics.ratings.fit_ratings``) in the
   process pool;
3. **recalibrate**: on puzzles with at least ``nightly.min_solves`` solves, refit the
   metrics → log-time model on the fitted difficulties, and compute every metric's
   Pearson and Spearman against the median human time (thesis Table 3.1, live);
4. **consensus**: the median fill rank per cell and its spread over the unflagged solves
   of every puzzle with at least ``nightly.min_solves`` solves, plus the null of each
   solve's rank correlation with it (for the ``order_consensus`` signal);
5. **write** everything in **one transaction** that also points ``current_rating`` at the
   new run: a crash or kill before the commit leaves the previous ratings in force;
6. **re-score** the submissions of the last ``nightly.rescore_days`` days.

Each run is a ``job_runs`` row (``running`` → ``success`` / ``failed``; rows left
``running`` by a killed process become ``abandoned`` at the next start).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Callable

import numpy as np

log = logging.getLogger("fairgrid.jobs")

STAGES = ("load", "fit", "recalibrate", "consensus", "write", "rescore")
JOB = "nightly"


@dataclass
class JobDB:
    """What the job needs from a database: bulk reads and one-transaction writes."""

    read: Callable          # (sql, params) -> list[tuple]
    read_numpy: Callable    # (sql, params) -> dict of arrays
    write: Callable         # (fn(con) -> T) -> T, in one transaction


def direct_db(con) -> JobDB:
    """A JobDB on a DuckDB connection owned by this process (no daemon runs)."""
    def write(fn):
        con.execute("BEGIN TRANSACTION")
        try:
            out = fn(con)
            con.execute("COMMIT")
            return out
        except BaseException:
            con.execute("ROLLBACK")
            raise
    return JobDB(lambda sql, p=None: con.execute(sql, p or []).fetchall(),
                 lambda sql, p=None: con.execute(sql, p or []).fetchnumpy(), write)


def store_db(store) -> JobDB:
    return JobDB(store.read, store.read_numpy, lambda fn: store.writer.call(fn).result())


ELIGIBLE = """
    SELECT s.sub_key, s.puzzle_id, s.portal, s.player_id, s.duration_ms
    FROM submissions s JOIN puzzles p ON p.id = s.puzzle_id
    WHERE s.complete AND s.duration_ms > 0 AND p.status = 'ready' AND p.ratings IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM flags f WHERE f.portal = s.portal
                      AND f.submission_id = s.submission_id
                      AND f.state IN ('open', 'confirmed'))
"""


def _fit_job(args):
    from fairgrid.analytics.ratings import fit_ratings
    return fit_ratings(*args[:5], lambda_puzzle=args[5], lambda_player=args[6])


def current_calibration(db: JobDB):
    """The metrics → log-time model in force: the last run's recalibration, else shipped."""
    from fairgrid.analytics.expected_time import Calibration, load_default
    rows = db.read("SELECT r.calibration FROM current_rating c JOIN rating_runs r "
                   "ON r.run_id = c.run_id")
    if rows and rows[0][0]:
        return Calibration.from_json(rows[0][0])
    return load_default()


def run_nightly(db: JobDB, settings, *, executor=None, progress: Callable[[str], None]
                = lambda stage: None, run_id: str | None = None) -> dict:
    """One run of the nightly job; returns its summary (row counts, timings, keys to
    re-score). Raises on failure after recording it in ``job_runs``."""
    run_id = run_id or datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S-") + \
        uuid.uuid4().hex[:6]
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    db.write(lambda con: con.execute(
        "INSERT INTO job_runs VALUES (?, ?, ?, NULL, 'running', NULL)", [run_id, JOB, started]))
    try:
        summary = _run(db, settings, executor, progress, run_id)
    except BaseException as exc:
        msg = f"{type(exc).__name__}: {exc}"
        try:
            db.write(lambda con: con.execute(
                "UPDATE job_runs SET status = 'failed', finished_at = ?, rows = ? WHERE id = ?",
                [datetime.now(timezone.utc), json.dumps({"error": msg}), run_id]))
        except Exception:  # noqa: BLE001 - the original error matters more
            pass
        raise
    summary["seconds"] = time.perf_counter() - t0
    summary["run_id"] = run_id
    rows = {k: v for k, v in summary.items() if k != "rescore"}
    db.write(lambda con: con.execute(
        "UPDATE job_runs SET status = 'success', finished_at = ?, rows = ? WHERE id = ?",
        [datetime.now(timezone.utc), json.dumps(rows), run_id]))
    return summary


def _run(db: JobDB, s, executor, progress, run_id: str) -> dict:
    from fairgrid.analytics.expected_time import fit as fit_calibration
    from fairgrid.analytics.ratings import correlations

    progress("load")
    cal = current_calibration(db)
    puzzles = db.read("SELECT id, ratings FROM puzzles WHERE status = 'ready' "
                      "AND ratings IS NOT NULL ORDER BY id")
    ids = [r[0] for r in puzzles]
    ratings = [json.loads(r[1]) for r in puzzles]
    prior = np.array([cal.expected_log_time(r["metrics"]) for r in ratings], dtype=float)
    solves = db.read_numpy(
        f"WITH e AS ({ELIGIBLE}), pz AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS j "
        "FROM puzzles WHERE status = 'ready' AND ratings IS NOT NULL), "
        "pl AS (SELECT portal, player_id, row_number() OVER (ORDER BY portal, player_id) - 1 "
        "AS i FROM (SELECT DISTINCT portal, player_id FROM e)) "
        "SELECT pz.j, pl.i, e.duration_ms FROM e JOIN pz ON pz.id = e.puzzle_id "
        "JOIN pl ON pl.portal = e.portal AND pl.player_id = e.player_id")
    players = db.read(f"WITH e AS ({ELIGIBLE}) SELECT DISTINCT portal, player_id FROM e "
                      "ORDER BY portal, player_id")
    j = np.asarray(solves["j"], dtype=np.int64)
    i = np.asarray(solves["i"], dtype=np.int64)
    log_t = np.log(np.asarray(solves["duration_ms"], dtype=float) / 1000.0)

    progress("fit")
    args = (log_t, j, i, prior, len(players), s.nightly_lambda_puzzle, s.nightly_lambda_player)
    fit = executor.submit(_fit_job, args).result() if executor is not None else _fit_job(args)

    progress("recalibrate")
    counts = np.bincount(j, minlength=len(ids)) if ids else np.zeros(0, int)
    medians = np.full(len(ids), np.nan)
    if j.size:
        order = np.argsort(j, kind="stable")
        bounds = np.searchsorted(j[order], np.arange(len(ids) + 1))
        for k in np.flatnonzero(counts):
            medians[k] = np.median(log_t[order[bounds[k]:bounds[k + 1]]])
    enough = np.flatnonzero(counts >= s.nightly_min_solves)
    new_cal = cal
    corr = {}
    if enough.size >= max(10, 2 * len(cal.features) + 2):
        rows = [ratings[k]["metrics"] for k in enough]
        new_cal = fit_calibration(cal.features, rows, np.exp(fit.difficulty[enough]),
                                  source=f"nightly run {run_id}: {enough.size} puzzles")
        names = sorted(set().union(*(r.keys() for r in rows)))
        corr = correlations({n: np.array([r.get(n, np.nan) for r in rows]) for n in names},
                            medians[enough])
        corr["fitted_difficulty"] = correlations({"d": fit.difficulty[enough]},
                                                 medians[enough]).get("d", {})

    progress("consensus")
    consensus = _consensus(db, s.nightly_min_solves)
    shift = float(fit.mu)
    bounds_log = np.log(np.asarray(cal.level_bounds_s)) + shift
    levels = 1 + np.searchsorted(bounds_log, fit.difficulty, side="right")
    band_nulls = _band_nulls(db, dict(zip(ids, levels.tolist())))

    progress("write")
    now = datetime.now(timezone.utc)


    puzzle_rows = {
        "run_id": np.array([run_id] * len(ids), dtype=object),
        "puzzle_id": np.array(ids, dtype=object),
        "difficulty": fit.difficulty.astype(float),
        "prior": prior + shift,
        "expected_time_s": np.exp(fit.difficulty),
        "level": levels.astype(np.int64),
        "solves": counts.astype(np.int64),
        "median_log_t": medians,
        "consensus_order": np.array(
            [json.dumps(_per_cell(consensus[p]["median"], consensus[p]["ncells"]))
             if p in consensus else None for p in ids], dtype=object),
        "consensus_spread": np.array(
            [json.dumps({"spread": _per_cell(consensus[p]["spread"], consensus[p]["ncells"]),
                         "null": consensus[p]["null"]})
             if p in consensus else None for p in ids], dtype=object),
    }
    player_rows = {
        "run_id": np.array([run_id] * len(players), dtype=object),
        "portal": np.array([p[0] for p in players], dtype=object),
        "player_id": np.array([p[1] for p in players], dtype=object),
        "skill": np.asarray(fit.skill, dtype=float),
        "solves": np.bincount(i, minlength=len(players)).astype(np.int64),
    }
    cal_json = new_cal.to_json() if new_cal is not cal else None

    def write(con):
        con.execute("INSERT INTO rating_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [run_id, now, int(log_t.size), len(ids), len(players), fit.mu,
                     fit.residual_sd, cal_json if cal_json else cal.to_json(),
                     json.dumps(corr), json.dumps(band_nulls)])
        if ids:
            con.register("new_puzzle_ratings", puzzle_rows)
            con.execute("INSERT INTO puzzle_ratings SELECT * FROM new_puzzle_ratings")
            con.unregister("new_puzzle_ratings")
        if players:
            con.register("new_player_ratings", player_rows)
            con.execute("INSERT INTO player_ratings SELECT * FROM new_player_ratings")
            con.unregister("new_player_ratings")
        con.execute("INSERT INTO current_rating VALUES (1, ?) ON CONFLICT (id) DO UPDATE "
                    "SET run_id = excluded.run_id", [run_id])

    db.write(write)

    progress("rescore")
    since = now - timedelta(days=s.nightly_rescore_days)
    rescore = db.read("SELECT sub_key FROM submissions WHERE status = 'scored' "
                      "AND committed_at >= ? ORDER BY committed_at", [since])
    return {"solves": int(log_t.size), "puzzles": len(ids), "players": len(players),
            "recalibrated_on": int(enough.size) if new_cal is not cal else 0,
            "consensus_puzzles": len(consensus), "mu": fit.mu,
            "band_null_levels": sorted(band_nulls),
            "residual_sd": fit.residual_sd, "correlations": corr,
            "rescore": [r[0] for r in rescore]}


def _per_cell(values: dict, ncells: int) -> list:
    """A {cell: value} map as a list over every cell (None where no value), rounded."""
    out = [None] * ncells
    for cell, v in values.items():
        if 0 <= cell < ncells:
            out[cell] = round(float(v), 2)
    return out


BAND_SAMPLE = 4000       # unflagged solves whose signals make the per-level honest nulls
BAND_MIN = 100           # solves a level needs before its learnt null is used
BAND_SIGNALS = ("order_sa", "deducible", "pacing_cv", "pacing_difficulty")


def _band_nulls(db: JobDB, level_of: dict) -> dict:
    """Honest nulls per fairgrid level from a seeded sample of real unflagged solves."""
    from fairgrid.analytics.calibration import fit_null
    from fairgrid.analytics.fill_order import fill_order
    from fairgrid.analytics.signals import PuzzleFacts, compute

    from .scoring import cells_of, per_cell

    moves = db.read_numpy(
        f"WITH smp AS (SELECT sub_key, puzzle_id FROM ({ELIGIBLE}) "
        f"USING SAMPLE reservoir({BAND_SAMPLE} ROWS) REPEATABLE (7)) "
        "SELECT m.sub_key, smp.puzzle_id, m.t_ms, m.cell, m.digit, m.note FROM moves m "
        "JOIN smp USING (sub_key) ORDER BY m.sub_key, m.seq")
    if not len(moves["sub_key"]):
        return {}
    pids = sorted(set(moves["puzzle_id"].tolist()))
    facts = {}
    for pid, givens, solution, order, median in db.read(
            "SELECT id, givens, solution, puzzle_order, order_median FROM puzzles "
            "WHERE list_contains(?, id)", [pids]):
        if median is None:
            continue
        facts[pid] = PuzzleFacts(cells_of(givens), order, cells_of(solution),
                                 per_cell(json.loads(median)), 0.0, 1.0)
    keys = moves["sub_key"]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    ends = np.r_[starts[1:], keys.size]
    samples: dict = {}
    for a, b in zip(starts, ends):
        pid = moves["puzzle_id"][a]
        if pid not in facts or pid not in level_of:
            continue
        f = facts[pid]
        fill = fill_order(moves["t_ms"][a:b], moves["cell"][a:b], moves["digit"][a:b],
                          moves["note"][a:b], f.givens, f.solution)
        values = compute(f, fill, int(moves["t_ms"][b - 1]))
        band = samples.setdefault(str(level_of[pid]), {})
        for name in BAND_SIGNALS:
            if name in values:
                band.setdefault(name, []).append(values[name])
    out = {}
    for level, values in samples.items():
        if min((len(v) for v in values.values()), default=0) >= BAND_MIN:
            null = fit_null(values)
            out[level] = {k: list(v) for k, v in null.items() if k in BAND_SIGNALS}
    return out


CONSENSUS_CHUNK = 50_000  # solves per consensus query: bounds the query's memory


def _consensus(db: JobDB, min_solves: int) -> dict:
    """Median fill rank and IQR per cell, and the null of the rank correlation of each
    solve with that consensus, for puzzles with at least ``min_solves`` eligible solves.

    For a complete solve the last move on each cell places its final, correct digit, so
    the fill order is the order of each cell's last move (ties by sequence). Puzzles are
    processed in id ranges of about :data:`CONSENSUS_CHUNK` solves, so memory stays
    bounded whatever the size of the moves table."""
    big = db.read(f"WITH e AS ({ELIGIBLE}) SELECT puzzle_id, count(*) FROM e "
                  "GROUP BY puzzle_id HAVING count(*) >= ? ORDER BY puzzle_id", [min_solves])
    out: dict = {}
    chunk: list[str] = []
    total = 0
    for k, (pid, n) in enumerate(big):
        chunk.append(pid)
        total += n
        if total >= CONSENSUS_CHUNK or k == len(big) - 1:
            _consensus_chunk(db, chunk[0], chunk[-1], min_solves, out)
            chunk, total = [], 0
    return out


def _consensus_chunk(db: JobDB, first: str, last: str, min_solves: int, out: dict) -> None:
    base = (f"WITH e AS ({ELIGIBLE} AND s.puzzle_id BETWEEN ? AND ?), "
            "big AS (SELECT puzzle_id FROM e GROUP BY puzzle_id HAVING count(*) >= ?), "
            "es AS (SELECT e.sub_key, e.puzzle_id FROM e JOIN big USING (puzzle_id)), "
            "last AS (SELECT m.sub_key, m.cell, max(m.seq) AS seq, arg_max(m.t_ms, m.seq) AS t "
            "FROM moves m JOIN es USING (sub_key) WHERE NOT m.note GROUP BY m.sub_key, m.cell), "
            "ranked AS (SELECT es.puzzle_id, l.sub_key, l.cell, "
            "rank() OVER (PARTITION BY l.sub_key ORDER BY l.t, l.seq) AS r "
            "FROM last l JOIN es USING (sub_key)), "
            "cons AS (SELECT puzzle_id, cell, median(r) AS med, "
            "quantile_cont(r, 0.75) - quantile_cont(r, 0.25) AS iqr FROM ranked "
            "GROUP BY puzzle_id, cell), "
            "cons_rank AS (SELECT puzzle_id, cell, med, iqr, "
            "rank() OVER (PARTITION BY puzzle_id ORDER BY med) AS cr FROM cons) ")
    params = [first, last, min_solves]
    cells = db.read_numpy(base + "SELECT c.puzzle_id, c.cell, c.med, c.iqr, "
                          "p.puzzle_order FROM cons_rank c JOIN puzzles p ON p.id = c.puzzle_id",
                          params)
    if not len(cells["puzzle_id"]):
        return
    nulls = db.read(base + ", per AS (SELECT r.puzzle_id, r.sub_key, corr(r.r, c.cr) AS rho "
                    "FROM ranked r JOIN cons_rank c USING (puzzle_id, cell) "
                    "GROUP BY r.puzzle_id, r.sub_key), "
                    "centre AS (SELECT puzzle_id, median(rho) AS c FROM per GROUP BY puzzle_id) "
                    "SELECT per.puzzle_id, any_value(centre.c), median(abs(per.rho - centre.c)) "
                    "FROM per JOIN centre USING (puzzle_id) GROUP BY per.puzzle_id", params)
    for pid, cell, med, iqr, order in zip(cells["puzzle_id"], cells["cell"], cells["med"],
                                          cells["iqr"], cells["puzzle_order"]):
        entry = out.setdefault(pid, {"median": {}, "spread": {}, "ncells": int(order) ** 4,
                                     "null": None})
        entry["median"][int(cell)] = float(med)
        entry["spread"][int(cell)] = float(iqr)
    for pid, centre, mad in nulls:
        if pid in out and centre is not None:
            out[pid]["null"] = [float(centre), max(float(1.4826 * (mad or 0.0)), 0.03)]


class JobBusy(Exception):
    """A nightly run is already in progress (409)."""


class JobCancelled(Exception):
    """The daemon is shutting down; the run's transaction was never committed."""


class NightlyRunner:
    """The nightly job inside the daemon: the APScheduler cron trigger, on-demand runs
    (``POST /v1/jobs/nightly``), progress for ``GET /v1/jobs/{id}``, metrics."""

    def __init__(self, store, settings, metrics, executor, scorer):
        self._store = store
        self._settings = settings
        self._metrics = metrics
        self._executor = executor
        self._scorer = scorer
        self._scheduler = None
        self._task = None
        self._cancel = False
        self.state: dict = {"run_id": None, "stage": None}

    async def start(self) -> None:
        import asyncio

        def tidy(con):
            con.execute("UPDATE job_runs SET status = 'abandoned' WHERE status = 'running'")
            return con.execute("SELECT max(finished_at) FROM job_runs WHERE job = ? AND "
                               "status = 'success'", [JOB]).fetchone()[0]

        last = await asyncio.wrap_future(self._store.writer.call(tidy))
        if last is not None:
            self._metrics.job_last_success.labels(JOB).set(last.timestamp())
        await asyncio.to_thread(self._publish_correlations)
        cron = self._settings.nightly_cron.strip()
        if cron:
            from apscheduler.schedulers.asyncio import AsyncIOScheduler
            from apscheduler.triggers.cron import CronTrigger

            self._scheduler = AsyncIOScheduler(timezone=timezone.utc)
            self._scheduler.add_job(
                self._scheduled, CronTrigger.from_crontab(cron, timezone=timezone.utc),
                id=JOB, coalesce=True, max_instances=1,
                misfire_grace_time=self._settings.nightly_misfire_grace_s,
                replace_existing=True)
            self._scheduler.start()

    async def stop(self) -> None:
        import asyncio
        if self._scheduler is not None:
            self._scheduler.shutdown(wait=False)
        self._cancel = True
        if self._task is not None and not self._task.done():
            await asyncio.gather(self._task, return_exceptions=True)

    def next_run_time(self):
        job = self._scheduler.get_job(JOB) if self._scheduler else None
        return job.next_run_time if job else None

    async def _scheduled(self) -> None:
        try:
            await self.trigger_and_wait()
        except JobBusy:
            log.info("nightly run skipped: one is already running")

    def trigger(self) -> str:
        """Start a run now; its id. JobBusy while one runs."""
        import asyncio
        if self._task is not None and not self._task.done():
            raise JobBusy(f"run {self.state['run_id']} is in progress")
        run_id = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S-") + uuid.uuid4().hex[:6]
        self.state = {"run_id": run_id, "stage": "starting"}
        self._task = asyncio.create_task(self._run(run_id), name="fairgrid-nightly")
        return run_id

    async def trigger_and_wait(self) -> dict:
        self.trigger()
        return await self._task

    def _progress(self, stage: str) -> None:
        if self._cancel:
            raise JobCancelled("the daemon is shutting down")
        self.state["stage"] = stage

    async def _run(self, run_id: str) -> dict:
        import asyncio
        started = time.perf_counter()
        try:
            summary = await asyncio.to_thread(self._run_all_cores, run_id)
        except JobCancelled:
            self.state["stage"] = "cancelled"
            raise
        except Exception:
            self.state["stage"] = "failed"
            log.exception("nightly run %s failed", run_id)
            raise
        for sub_key in summary["rescore"]:
            self._scorer.schedule(sub_key)
        self._scorer.forget_all()
        self.state["stage"] = "done"
        m = self._metrics
        m.job_last_success.labels(JOB).set(time.time())
        m.job_duration.labels(JOB).set(time.perf_counter() - started)
        for kind in ("solves", "puzzles", "players", "consensus_puzzles"):
            m.job_rows.labels(JOB, kind).set(summary[kind])
        m.job_rows.labels(JOB, "rescored").set(len(summary["rescore"]))
        self._set_correlations(summary["correlations"])
        log.info("nightly run %s: %d solves, %d puzzles, %d players in %.1f s", run_id,
                 summary["solves"], summary["puzzles"], summary["players"],
                 summary["seconds"])
        return summary

    def _run_all_cores(self, run_id: str) -> dict:
        # the daemon runs DuckDB on one thread for cheap ingest commits; the job's scans
        # and aggregations get every core for their length (Store.all_cores)
        with self._store.all_cores():
            return run_nightly(store_db(self._store), self._settings, executor=self._executor,
                               progress=self._progress, run_id=run_id)

    def _set_correlations(self, corr: dict) -> None:
        for metric, values in corr.items():
            for kind, value in values.items():
                self._metrics.metric_correlation.labels(metric, kind).set(value)

    def _publish_correlations(self) -> None:
        rows = self._store.read("SELECT r.correlations FROM current_rating c JOIN "
                                "rating_runs r ON r.run_id = c.run_id")
        if rows and rows[0][0]:
            self._set_correlations(json.loads(rows[0][0]))
