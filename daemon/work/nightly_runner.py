"""The nightly job inside the daemon: the APScheduler cron trigger, on-demand runs
(``POST /v1/nightly-runs``), progress for ``GET /v1/nightly-runs/{id}``, metrics."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from datetime import datetime, timedelta, timezone

from ..store.repository import nightly as sql
from .compute import ComputeUnavailable
from .nightly import JOB, NightlyCancelled, new_run_id, run_nightly
from .nightly_db import store_db

log = logging.getLogger("fairgrid.nightly")


class NightlyBusy(Exception):
    """A nightly run is already in progress (409)."""


def last_slot(trigger, now: datetime, grace_s: float) -> datetime | None:
    """The latest time ``trigger`` fired at up to ``now``, within ``grace_s`` of it (a
    slot a stopped daemon may still run), or None."""
    slot, t = None, trigger.get_next_fire_time(None, now - timedelta(seconds=grace_s))
    while t is not None and t <= now:
        slot, t = t, trigger.get_next_fire_time(t, t + timedelta(microseconds=1))
    return slot


class NightlyRunner:
    def __init__(self, store, settings, metrics, executor, scorer, tasks=None):
        self._store = store
        self._settings = settings
        self._metrics = metrics
        self._executor = executor
        self._tasks = tasks  # the per-puzzle work: a cluster's lane, or None (executor)
        self._scorer = scorer
        self._cron = None
        self._task = None
        self._recorded: asyncio.Future | None = None  # the current run's row is written
        self._cancel = False
        self.state: dict = {"run_id": None, "stage": None}

    async def start(self) -> None:
        last = await asyncio.wrap_future(self._store.write(sql.abandon_running, JOB))
        if last is not None:
            self._metrics.job_last_success.labels(JOB).set(last.timestamp())
        await asyncio.to_thread(self._publish_correlations)
        cron = self._settings.nightly_cron.strip()
        self._metrics.job_scheduled.labels(JOB).set(1 if cron else 0)
        if cron:
            from apscheduler.schedulers.asyncio import AsyncIOScheduler
            from apscheduler.triggers.cron import CronTrigger

            trigger = CronTrigger.from_crontab(cron, timezone=timezone.utc)
            now = datetime.now(timezone.utc)
            slot = last_slot(trigger, now, self._settings.nightly_misfire_grace_s)
            missed = slot is not None and await asyncio.to_thread(
                self._store.read, sql.missed, JOB, slot)
            if missed:
                log.warning("the nightly slot of %s passed while the daemon was down; it "
                            "runs now (nightly.misfire_grace_s)", slot.isoformat())
            self._cron = AsyncIOScheduler(timezone=timezone.utc)
            self._cron.add_job(
                self._scheduled, trigger, id=JOB, coalesce=True, max_instances=1,
                misfire_grace_time=self._settings.nightly_misfire_grace_s,
                replace_existing=True, **({"next_run_time": now} if missed else {}))
            self._cron.start()

    async def stop(self) -> None:
        if self._cron is not None:
            self._cron.shutdown(wait=False)
        self._cancel = True
        if self._task is not None and not self._task.done():
            await asyncio.gather(self._task, return_exceptions=True)

    def in_progress(self) -> bool:
        """Whether a run is under way."""
        return self._task is not None and not self._task.done()

    def next_run_time(self):
        job = self._cron.get_job(JOB) if self._cron else None
        return job.next_run_time if job else None

    async def _scheduled(self) -> None:
        try:
            await self.trigger_and_wait()
        except NightlyBusy:
            log.info("nightly run skipped: one is already running")

    def trigger(self) -> str:
        """Start a run now; its id. NightlyBusy while one runs. Its ``job_runs`` row is the
        run's first write: :meth:`run_now` waits for it."""
        if self._task is not None and not self._task.done():
            raise NightlyBusy(f"run {self.state['run_id']} is in progress")
        run_id = new_run_id()
        self.state = {"run_id": run_id, "stage": "starting"}
        self._recorded = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._run(run_id), name="fairgrid-nightly")
        return run_id

    async def run_now(self) -> str:
        """Start a run and return its id once its ``job_runs`` row is committed: a
        daemon killed from then on, even while the run is starting, shows the run as
        ``abandoned`` after its restart, never as unknown."""
        run_id = self.trigger()
        await asyncio.shield(self._recorded)
        return run_id

    async def trigger_and_wait(self) -> dict:
        await self.run_now()
        return await self._task

    def _progress(self, stage: str) -> None:
        if self._cancel:
            raise NightlyCancelled("the daemon is shutting down")
        self.state["stage"] = stage

    async def _record(self, run_id: str) -> None:
        """Write the run's ``running`` row, and tell :meth:`run_now`."""
        try:
            await asyncio.wrap_future(self._store.write(
                sql.start_run, run_id, JOB, datetime.now(timezone.utc)))
        except asyncio.CancelledError:
            self._recorded.cancel()
            raise
        except Exception as exc:
            self._recorded.set_exception(exc)
            raise
        self._recorded.set_result(None)

    async def _run(self, run_id: str) -> dict:
        started = time.perf_counter()
        try:
            await self._record(run_id)
        except Exception:
            self.state["stage"] = "failed"
            log.exception("nightly run %s could not start", run_id)
            raise
        try:
            summary = await asyncio.to_thread(self._run_all_cores, run_id)
        except NightlyCancelled:
            self.state["stage"] = "cancelled"
            raise
        except Exception:
            self.state["stage"] = "failed"
            log.exception("nightly run %s failed", run_id)
            self._scorer.forget_all()  # it may have failed after putting its ratings in force
            raise
        for sub_key in summary["rescore"]:
            self._scorer.schedule(sub_key)
        self._scorer.forget_all()
        self.state["stage"] = "done"
        m = self._metrics
        m.job_last_success.labels(JOB).set(time.time())
        m.job_duration.labels(JOB).set(time.perf_counter() - started)
        for what in ("solves", "puzzles", "players", "consensus_puzzles"):
            m.job_rows.labels(JOB, what).set(summary[what])
        m.job_rows.labels(JOB, "rescored").set(len(summary["rescore"]))
        self._set_correlations(summary["correlations"])
        log.info("nightly run %s: %d solves, %d puzzles, %d players in %.1f s", run_id,
                 summary["solves"], summary["puzzles"], summary["players"],
                 summary["seconds"])
        return summary

    def _run_all_cores(self, run_id: str) -> dict:
        # the daemon runs DuckDB on one thread for cheap ingest commits; the job's scans
        # and aggregations get every core for their length (Store.all_cores)
        tasks = self._executor
        if self._tasks is not None:
            try:
                tasks = self._tasks.connect()
            except ComputeUnavailable as exc:  # the job runs, here
                log.warning("nightly run %s: %s; its per-puzzle work runs locally",
                            run_id, exc)
        with self._store.all_cores():
            return run_nightly(store_db(self._store), self._settings, executor=self._executor,
                               progress=self._progress, run_id=run_id, tasks=tasks,
                               stopped=lambda: self._cancel)

    def _set_correlations(self, corr: dict) -> None:
        """The last run's correlations, and only those: a run that measured none (too
        few solves a puzzle) leaves no gauge of an earlier one standing."""
        gauge = self._metrics.metric_correlation
        gauge.clear()
        for metric, values in corr.items():
            for coefficient, value in values.items():
                if value is not None and math.isfinite(value):
                    gauge.labels(metric, coefficient).set(value)

    def _publish_correlations(self) -> None:
        text = self._store.read(sql.current_correlations)
        if text:
            self._set_correlations(json.loads(text))
