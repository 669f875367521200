"""Scoring in the daemon: a committed solve → analytics → score and flag rows.

* When a puzzle is analysed, :func:`scoring_model` (in the process pool) adds what
  scoring needs to its ``ratings``: the human-like model's metrics, the expected time and
  level from the shipped calibration, and the honest null of every signal from simulated
  honest solves of that puzzle.
* :class:`Scorer` scores a submission right after its commit (or when its puzzle becomes
  ready; a sweep every 30 s catches anything missed, e.g. after a restart). The score,
  a new or changed flag and its history, and the submission's ``scored`` status are
  written in one transaction by the single writer.
* A flag whose submission no longer qualifies on re-scoring is not deleted: it moves to
  ``withdrawn`` with a history row. Reviews (``cleared`` / ``confirmed``) are kept as
  they are; re-scoring never overrides a human decision.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import time
from datetime import datetime, timezone

import numpy as np

from .metrics import Metrics
from .settings import Settings
from .store import Store

log = logging.getLogger("fairgrid.scoring")
SWEEP_S = 30.0
NULL_SOLVES = 120
BATCH = 128          # submissions scored (and written) together: a write of 128 holds the
                     # single writer ~15 ms; 256 held it ~30-50 ms, a stall every ingest
                     # commit behind it waited out
BATCH_WAIT_S = 0.05  # how long the first of a batch waits for company
YIELD_S = 0.05       # while ingestion keeps the writer busy, scoring waits this long...
MAX_YIELD_S = 5.0    # ...but no longer than this in all: a busy daemon still scores
IDLE_SHARE = 0.25    # "busy": the writer was idle less than this share of the last YIELD_S


def cells_of(text: str) -> np.ndarray:
    """A one-line grid (digits and letters in base 36, '.' or '0' empty) as an int array."""
    return np.array([0 if ch in ".0" else int(ch, 36) for ch in text], dtype=np.int64)


def per_cell(values: list) -> np.ndarray:
    """A stored per-cell JSON list (null where a cell has no value) as floats, NaN for null."""
    return np.array([np.nan if v is None else float(v) for v in values])


def scoring_model(givens: str, solution: str, median_rank: list, seed: int) -> dict:
    """Ratings and honest nulls of one puzzle (runs in a pool process)."""
    from fairgrid.analytics.calibration import honest_null
    from fairgrid.analytics.expected_time import load_default
    from fairgrid.analytics.signals import PuzzleFacts
    from fairgrid.solvers import parse
    from fairgrid.solvers.rate import rate

    puzzle = parse(givens)
    sol = cells_of(solution)
    ratings = rate(puzzle, rng=seed, only=("human",))
    cal = load_default()
    described = cal.describe(ratings.metrics)
    expected_log_s = float(np.log(described["expected_time_s"]))
    rank = per_cell(median_rank)
    facts = PuzzleFacts(puzzle.givens, puzzle.order, sol, rank, expected_log_s,
                        cal.residual_sd)
    null = honest_null(facts, rng=seed, n=NULL_SOLVES)
    return {"metrics": ratings.metrics, "expected_time_s": described["expected_time_s"],
            "expected_log_s": expected_log_s, "sd_log": cal.residual_sd,
            "level": described["level"], "level_name": described["level_name"],
            "null": {k: list(v) for k, v in null.items()}, "null_solves": NULL_SOLVES}


class _Facts:
    """A ready puzzle's scoring inputs (cached per puzzle and rating run).

    Before any nightly run: the calibrated expected time and the simulated honest nulls.
    After one: the fitted difficulty (expected log-time of an average player of this
    portal), the fit's residual sd with a speed null of N(0, 1), the consensus order with
    its null when the puzzle has enough solves, and, for the order, deducibility and pacing
    signals, nulls learnt from real unflagged solves of puzzles of the same level once a
    level has enough of them (``daemon.jobs._band_nulls``)."""

    def __init__(self, row: dict, run: dict | None):
        from fairgrid.analytics.signals import PuzzleFacts
        ratings = json.loads(row["ratings"])
        order = row["puzzle_order"]
        givens = cells_of(row["givens"])
        solution = cells_of(row["solution"])
        rank = per_cell(json.loads(row["order_median"]))
        self.null = {k: tuple(v) for k, v in ratings["null"].items()}
        expected, sd, consensus = ratings["expected_log_s"], ratings["sd_log"], None
        unrated_sd = sd
        if run is not None:
            expected = (row["difficulty"] if row["difficulty"] is not None
                        else expected + run["mu"])
            sd = run["residual_sd"]
            unrated_sd = float(np.hypot(sd, run["skill_sd"]))
            self.null["speed"] = (0.0, 1.0)
            band = run.get("band_nulls", {}).get(str(row["level"]))
            for name, value in (band or {}).items():  # learnt from real honest solves
                self.null[name] = tuple(value)
            if row["consensus_order"] is not None:
                extra = json.loads(row["consensus_spread"])
                if extra.get("null"):
                    consensus = per_cell(json.loads(row["consensus_order"]))
                    self.null["order_consensus"] = tuple(extra["null"])
        self.facts = PuzzleFacts(givens, order, solution, rank, expected, sd, consensus)
        # for players the rating run has no skill for: the speed signal allows for the
        # spread of skills (one object per puzzle, so a batch pickles it once)
        self.facts_without_skill = (self.facts if run is None else
                                    dataclasses.replace(self.facts, sd_log=unrated_sd))


SUMMARY = ("anomaly", "p_value", "flagged", "reasons")


def compute_batch(payload: tuple[dict, list]) -> list[tuple[dict, str]]:
    """The analytics of a batch of submissions: per submission, the summary the writer
    needs (:data:`SUMMARY`) and the whole evidence as JSON text. ``payload`` is the
    batch's moves as columns (sorted by ``sub_key``, then ``seq``) and one entry per
    submission. Runs in a pool process, which also cuts each submission's moves out of
    the columns, parses each raw body for the portal's optional ``client`` signals and
    encodes the evidence: none of that per-submission work is on the event loop."""
    from fairgrid.analytics.evidence import score_solve
    moves, items = payload
    keys = np.asarray(moves["sub_key"])
    cols = {c: np.asarray(moves[c], dtype=np.int64) for c in ("t_ms", "cell", "digit", "note")}
    out = []
    for facts, null, sub_key, raw, skill, fpr in items:
        lo, hi = np.searchsorted(keys, sub_key), np.searchsorted(keys, sub_key, side="right")
        client = json.loads(raw).get("client")
        ev = score_solve(facts, null, cols["t_ms"][lo:hi], cols["cell"][lo:hi],
                         cols["digit"][lo:hi], cols["note"][lo:hi].astype(bool), skill=skill,
                         client=client if isinstance(client, dict) else None, fpr=fpr)
        out.append(({k: ev[k] for k in SUMMARY}, json.dumps(ev)))
    return out


def _these_keys(column: str, sub_keys) -> str:
    """SQL selecting rows whose ``column`` is one of ``sub_keys`` (integers, inlined).
    Keys arrive in commit order, so the range lets DuckDB skip every other row group."""
    keys = sorted({int(k) for k in sub_keys})
    return (f"{column} BETWEEN {keys[0]} AND {keys[-1]} AND {column} IN "
            f"({', '.join(map(str, keys))})")


class Scorer:
    """Queue, worker and sweeper that score committed submissions (by ``sub_key``)."""

    def __init__(self, store: Store, settings: Settings, metrics: Metrics, executor=None):
        self._executor = executor
        self._store = store
        self._settings = settings
        self._metrics = metrics
        self._queue: asyncio.Queue[int] = asyncio.Queue(maxsize=100_000)
        self._queued: set[int] = set()
        self._facts: dict[tuple, _Facts] = {}
        self._runs: dict[str, dict] = {}
        self._tasks: list[asyncio.Task] = []
        metrics.scoring_backlog.set_function(lambda: len(self._queued))

    async def start(self) -> None:
        # one batch in flight per pool process, plus one: while a batch is read or
        # written, the pool works on another
        workers = (self._settings.analysis_workers or os.cpu_count() or 1) + 1
        self._tasks = [asyncio.create_task(self._worker(), name=f"fairgrid-scoring-{k}")
                       for k in range(workers)]
        self._tasks.append(asyncio.create_task(self._sweeper(), name="fairgrid-scoring-sweep"))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def schedule(self, sub_key: int) -> None:
        """Queue a stored submission for scoring (by its ``submissions.sub_key``)."""
        key = int(sub_key)
        if key in self._queued:
            return
        try:
            self._queue.put_nowait(key)
            self._queued.add(key)
        except asyncio.QueueFull:
            pass  # the sweep finds it later

    def forget_puzzle(self, puzzle_id: str) -> None:
        for key in [k for k in self._facts if k[0] == puzzle_id]:
            del self._facts[key]

    def forget_all(self) -> None:
        """Drop cached inputs (a nightly run changed difficulties, skills, consensus)."""
        self._facts.clear()
        self._runs.clear()

    async def puzzle_ready(self, puzzle_id: str) -> None:
        """Queue every pending submission of a puzzle that has just become ready."""
        self.forget_puzzle(puzzle_id)
        rows = await asyncio.to_thread(
            self._store.read, "SELECT sub_key FROM submissions "
            "WHERE puzzle_id = ? AND status = 'pending'", [puzzle_id])
        for (sub_key,) in rows:
            self.schedule(sub_key)

    async def _sweeper(self) -> None:
        while True:
            rows = await asyncio.to_thread(
                self._store.read, "SELECT s.sub_key FROM submissions s "
                "JOIN puzzles p ON p.id = s.puzzle_id WHERE s.status IN ('pending', 'rescore') AND "
                "p.status = 'ready' ORDER BY s.sub_key LIMIT 10000")
            for (sub_key,) in rows:
                self.schedule(sub_key)
            await asyncio.sleep(SWEEP_S)

    async def _worker(self) -> None:
        while True:
            keys = [await self._queue.get()]
            await asyncio.sleep(BATCH_WAIT_S)  # let a burst gather: one transaction for all
            # ingestion first: a batch starts only when the writer has had idle time
            # lately (the pool already runs at idle priority; this keeps the reads, the
            # score writes and the event-loop work of scoring out of a burst's way). The
            # queue's depth was the test before, but it is empty for a moment after every
            # batch the writer takes, so scoring went on during bursts.
            await self._wait_for_room()
            while len(keys) < BATCH and not self._queue.empty():
                keys.append(self._queue.get_nowait())
            try:
                await self.score_many(keys)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - one bad batch must not stop scoring
                log.exception("scoring of %d submissions failed", len(keys))
            finally:
                for key in keys:
                    self._queued.discard(key)

    async def _wait_for_room(self) -> None:
        """Return once the writer was idle for IDLE_SHARE of the last YIELD_S, or after
        MAX_YIELD_S in all."""
        writer = self._store.writer
        waited = 0.0
        while waited < MAX_YIELD_S:
            start, idle = time.perf_counter(), writer.idle_seconds()
            await asyncio.sleep(YIELD_S)
            waited += YIELD_S
            share = (writer.idle_seconds() - idle) / max(time.perf_counter() - start, 1e-9)
            if share >= IDLE_SHARE and writer.depth() == 0:
                return

    async def score(self, portal: str, submission_id: str) -> dict | None:
        """Score one submission now: its evidence, or None when its puzzle is not ready
        yet (or there is no such submission)."""
        rows = await asyncio.to_thread(
            self._store.read, "SELECT sub_key FROM submissions WHERE portal = ? AND "
            "submission_id = ?", [portal, submission_id])
        if not rows:
            return None
        done = await self.score_many([rows[0][0]])
        return json.loads(done[(portal, submission_id)][1]) if done else None

    async def score_many(self, sub_keys: list[int]) -> dict:
        """Score submissions in one go: one read of their rows, one of their moves, the
        analytics (and the evidence's JSON) in a pool process, and one write transaction
        for all the results (ingestion shares the single writer, so per-submission
        transactions would starve it). Returns {(portal, submission_id): (summary,
        evidence JSON)} for those whose puzzle is ready."""
        started = time.perf_counter()
        rows = await asyncio.to_thread(
            self._store.read_dicts,
            "SELECT s.portal, s.submission_id, s.sub_key, s.puzzle_id, s.raw, s.status, "
            "c.run_id, pl.skill FROM submissions s LEFT JOIN current_rating c ON c.id = 1 "
            "LEFT JOIN player_ratings pl ON pl.run_id = c.run_id AND pl.portal = s.portal "
            f"AND pl.player_id = s.player_id WHERE {_these_keys('s.sub_key', sub_keys)}")
        # each puzzle's inputs are read and prepared once per rating run, then cached
        missing = {(r["puzzle_id"], r["run_id"]) for r in rows} - self._facts.keys()
        for puzzle_id, run_id in sorted(missing, key=str):
            await self._load_facts(puzzle_id, run_id)
        jobs = [(row, self._facts[(row["puzzle_id"], row["run_id"])]) for row in rows
                if self._facts.get((row["puzzle_id"], row["run_id"])) is not None]
        rows = [row for row, _ in jobs]
        if not rows:
            return {}
        moves = await asyncio.to_thread(
            self._store.read_numpy,
            f"SELECT sub_key, t_ms, cell, digit, note FROM moves WHERE "
            f"{_these_keys('sub_key', [row['sub_key'] for row in rows])} ORDER BY sub_key, seq")
        payload = self._payload(jobs, moves)
        loop = asyncio.get_running_loop()
        if self._executor is not None:  # another process: the event loop keeps the GIL
            evidence = await loop.run_in_executor(self._executor, compute_batch, payload)
        else:
            evidence = await asyncio.to_thread(compute_batch, payload)
        results = {(row["portal"], row["submission_id"]): ev
                   for (row, _), ev in zip(jobs, evidence)}
        await self._write_all(results, [int(row["sub_key"]) for row, _ in jobs],
                              rescored=any(row["status"] != "pending" for row, _ in jobs))
        per = (time.perf_counter() - started) / len(results)
        for summary, _ in results.values():
            self._metrics.scoring_duration.observe(per)
            self._metrics.anomaly.observe(summary["anomaly"])
            self._metrics.submissions_scored.inc()
        return results

    def _payload(self, jobs, moves) -> tuple[dict, list]:
        """Picklable inputs of :func:`compute_batch`: the moves as read, one entry per
        submission (the pool process does the per-submission slicing)."""
        out = []
        for row, facts in jobs:
            puzzle_facts = facts.facts if row["skill"] is not None else facts.facts_without_skill
            out.append((puzzle_facts, facts.null, int(row["sub_key"]), row["raw"],
                        float(row["skill"]) if row["skill"] is not None else 0.0,
                        self._settings.scoring_fpr))
        return moves, out

    async def _load_facts(self, puzzle_id: str, run_id: str | None) -> None:
        """Cache a puzzle's scoring inputs under the rating run (None: not ready yet, and
        not cached, so the next batch looks again)."""
        run = None
        if run_id is not None:
            run = self._runs.get(run_id)
            if run is None:
                run = self._runs[run_id] = await asyncio.to_thread(self._run_info, run_id)
        found = await asyncio.to_thread(
            self._store.read_dicts,
            "SELECT p.status, p.givens, p.puzzle_order, p.solution, p.order_median, p.ratings, "
            "pr.difficulty, pr.level, pr.consensus_order, pr.consensus_spread FROM puzzles p "
            "LEFT JOIN puzzle_ratings pr ON pr.run_id = ? AND pr.puzzle_id = p.id "
            "WHERE p.id = ?", [run_id, puzzle_id])
        if found and found[0]["status"] == "ready" and found[0]["ratings"] is not None:
            self._facts[(puzzle_id, run_id)] = _Facts(found[0], run)

    def _run_info(self, run_id: str) -> dict:
        row = self._store.read("SELECT r.mu, r.residual_sd, (SELECT coalesce(stddev(skill), 0) "
                               "FROM player_ratings WHERE run_id = r.run_id), r.band_nulls "
                               "FROM rating_runs r WHERE r.run_id = ?", [run_id])[0]
        return {"mu": row[0], "residual_sd": row[1], "skill_sd": row[2],
                "band_nulls": json.loads(row[3]) if row[3] else {}}

    async def _write_all(self, results: dict, sub_keys: list[int], rescored: bool) -> None:
        """Scores, flags and flag history of a batch in one writer transaction, with a
        handful of set-based statements (DuckDB statements cost ~1 ms each whatever
        their size, and ingestion waits for the same writer). Old scores and flags can
        only exist for submissions scored before (a score and the ``scored`` status commit
        together), so a batch of first scores (not ``rescored``) skips looking for them;
        ``sub_keys`` (in ``results``' order) find the submissions' rows."""
        now = datetime.now(timezone.utc)
        items = list(results.items())
        batch = {
            "sub_key": np.array(sub_keys, dtype=np.int64),
            "portal": np.array([k[0] for k, _ in items], dtype=object),
            "submission_id": np.array([k[1] for k, _ in items], dtype=object),
            "anomaly": np.array([ev["anomaly"] for _, (ev, _) in items], dtype=float),
            "p_value": np.array([ev["p_value"] for _, (ev, _) in items], dtype=float),
            "flagged": np.array([ev["flagged"] for _, (ev, _) in items], dtype=bool),
            "evidence": np.array([text for _, (_, text) in items], dtype=object),
            "reasons": np.array([json.dumps(ev["reasons"]) for _, (ev, _) in items],
                                dtype=object),
            "note": np.array(["raised by scoring: " + ", ".join(ev["reasons"])
                              for _, (ev, _) in items], dtype=object),
        }
        new_reasons: list[str] = []

        def write(con):
            # DuckDB reads the batch by this local name (a replacement scan): cheaper than
            # a register()/unregister() pair on the writer ingestion waits for
            score_batch = batch  # noqa: F841
            existing = []
            if rescored:
                con.execute("DELETE FROM scores USING score_batch b WHERE scores.portal = "
                            "b.portal AND scores.submission_id = b.submission_id")
                existing = con.execute(
                    "SELECT f.id, f.state, f.portal, f.submission_id, b.flagged, b.reasons "
                    "FROM flags f JOIN score_batch b ON b.portal = f.portal AND "
                    "b.submission_id = f.submission_id").fetchall()
            con.execute("INSERT INTO scores SELECT portal, submission_id, ?, anomaly, "
                        "p_value, flagged, evidence FROM score_batch", [now])
            created = []
            if batch["flagged"].any():
                created = con.execute(
                    "INSERT INTO flags (portal, submission_id, created_at, state, reasons) "
                    "SELECT b.portal, b.submission_id, ?, 'open', b.reasons FROM "
                    "score_batch b WHERE b.flagged AND NOT EXISTS (SELECT 1 FROM flags f "
                    "WHERE f.portal = b.portal AND f.submission_id = b.submission_id) "
                    "RETURNING id, portal, submission_id", [now]).fetchall()
            if created:
                con.execute(
                    "INSERT INTO flag_history SELECT f.id, ?, 'open', b.note, 'fairgrid' "
                    "FROM flags f JOIN score_batch b ON b.portal = f.portal AND "
                    "b.submission_id = f.submission_id WHERE list_contains(?, f.id)",
                    [now, [c[0] for c in created]])
                for _, portal, sid in created:
                    new_reasons.extend(results[(portal, sid)][0]["reasons"])
            for fid, state, _portal, _sid, flagged, reasons in existing:
                if state not in ("open", "withdrawn"):
                    continue  # a human decision: re-scoring never overrides it
                target = "open" if flagged else "withdrawn"
                if target != state:
                    con.execute("INSERT INTO flag_history VALUES (?, ?, ?, 're-scored', "
                                "'fairgrid')", [fid, now, target])
                if flagged:
                    con.execute("UPDATE flags SET state = ?, reasons = ? WHERE id = ?",
                                [target, reasons, fid])
                else:  # keep the reasons it was raised for
                    con.execute("UPDATE flags SET state = ? WHERE id = ?", [target, fid])
            con.execute("UPDATE submissions SET status = 'scored' WHERE sub_key BETWEEN ? "
                        "AND ? AND sub_key IN (SELECT sub_key FROM score_batch)",
                        [min(sub_keys), max(sub_keys)])

        await asyncio.wrap_future(self._store.writer.call(write))
        for reason in new_reasons:
            self._metrics.flags.labels(reason).inc()
