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
import json
import logging
import time
from datetime import datetime, timezone

import numpy as np

from .metrics import Metrics
from .settings import Settings
from .store import Store

log = logging.getLogger("fairgrid.scoring")
SWEEP_S = 30.0
NULL_SOLVES = 120


def scoring_model(givens: str, solution: str, median_rank: list, seed: int) -> dict:
    """Ratings and honest nulls of one puzzle (runs in a pool process)."""
    from fairgrid.analytics.calibration import honest_null
    from fairgrid.analytics.expected_time import load_default
    from fairgrid.analytics.signals import PuzzleFacts
    from fairgrid.solvers import parse
    from fairgrid.solvers.rate import rate

    puzzle = parse(givens)
    sol = np.array([int(ch, 36) for ch in solution.replace(".", "0")], dtype=np.int64)
    ratings = rate(puzzle, rng=seed, only=("human",))
    cal = load_default()
    described = cal.describe(ratings.metrics)
    expected_log_s = float(np.log(described["expected_time_s"]))
    rank = np.array([np.nan if v is None else float(v) for v in median_rank])
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
        givens = np.array([0 if ch in ".0" else int(ch, 36) for ch in row["givens"]])
        solution = np.array([int(ch, 36) for ch in row["solution"]])
        median = json.loads(row["order_median"])
        rank = np.array([np.nan if v is None else float(v) for v in median])
        self.null = {k: tuple(v) for k, v in ratings["null"].items()}
        expected, sd, consensus = ratings["expected_log_s"], ratings["sd_log"], None
        self.unrated_sd = sd
        if run is not None:
            expected = (row["difficulty"] if row["difficulty"] is not None
                        else expected + run["mu"])
            sd = run["residual_sd"]
            self.unrated_sd = float(np.hypot(sd, run["skill_sd"]))
            self.null["speed"] = (0.0, 1.0)
            band = run.get("band_nulls", {}).get(str(row["level"]))
            for name, value in (band or {}).items():  # learnt from real honest solves
                self.null[name] = tuple(value)
            if row["consensus_order"] is not None:
                extra = json.loads(row["consensus_spread"])
                if extra.get("null"):
                    consensus = np.array([np.nan if v is None else float(v)
                                          for v in json.loads(row["consensus_order"])])
                    self.null["order_consensus"] = tuple(extra["null"])
        self.facts = PuzzleFacts(givens, order, solution, rank, expected, sd, consensus)
        self.rated = run is not None


class Scorer:
    """Queue, worker and sweeper that score committed submissions."""

    def __init__(self, store: Store, settings: Settings, metrics: Metrics):
        self._store = store
        self._settings = settings
        self._metrics = metrics
        self._queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue(maxsize=100_000)
        self._queued: set[tuple[str, str]] = set()
        self._facts: dict[tuple, _Facts] = {}
        self._runs: dict[str, dict] = {}
        self._tasks: list[asyncio.Task] = []

    async def start(self) -> None:
        self._tasks = [asyncio.create_task(self._worker(), name="fairgrid-scoring"),
                       asyncio.create_task(self._sweeper(), name="fairgrid-scoring-sweep")]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def schedule(self, portal: str, submission_id: str) -> None:
        key = (portal, submission_id)
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
            self._store.read, "SELECT portal, submission_id FROM submissions "
            "WHERE puzzle_id = ? AND status = 'pending'", [puzzle_id])
        for portal, sid in rows:
            self.schedule(portal, sid)

    async def _sweeper(self) -> None:
        while True:
            rows = await asyncio.to_thread(
                self._store.read, "SELECT s.portal, s.submission_id FROM submissions s "
                "JOIN puzzles p ON p.id = s.puzzle_id WHERE s.status = 'pending' AND "
                "p.status = 'ready' ORDER BY s.committed_at LIMIT 10000")
            for portal, sid in rows:
                self.schedule(portal, sid)
            await asyncio.sleep(SWEEP_S)

    async def _worker(self) -> None:
        while True:
            key = await self._queue.get()
            try:
                await self.score(*key)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - one bad submission must not stop scoring
                log.exception("scoring of %s/%s failed", *key)
            finally:
                self._queued.discard(key)

    async def score(self, portal: str, submission_id: str) -> dict | None:
        """Score one submission now; None when its puzzle is not ready yet."""
        started = time.perf_counter()
        rows = await asyncio.to_thread(
            self._store.read_dicts,
            "SELECT s.sub_key, s.puzzle_id, s.raw, p.status AS puzzle_status, p.givens, "
            "p.puzzle_order, p.solution, p.order_median, p.ratings, c.run_id, "
            "pr.difficulty, pr.level, pr.consensus_order, pr.consensus_spread, pl.skill "
            "FROM submissions s JOIN puzzles p ON p.id = s.puzzle_id "
            "LEFT JOIN current_rating c ON c.id = 1 "
            "LEFT JOIN puzzle_ratings pr ON pr.run_id = c.run_id AND pr.puzzle_id = s.puzzle_id "
            "LEFT JOIN player_ratings pl ON pl.run_id = c.run_id AND pl.portal = s.portal "
            "AND pl.player_id = s.player_id WHERE s.portal = ? AND s.submission_id = ?",
            [portal, submission_id])
        if not rows or rows[0]["puzzle_status"] != "ready" or rows[0]["ratings"] is None:
            return None
        row = rows[0]
        run = None
        if row["run_id"] is not None:
            run = self._runs.get(row["run_id"])
            if run is None:
                run = self._runs[row["run_id"]] = await asyncio.to_thread(
                    self._run_info, row["run_id"])
        key = (row["puzzle_id"], row["run_id"])
        facts = self._facts.get(key)
        if facts is None:
            facts = self._facts[key] = _Facts(row, run)
        skill = float(row["skill"]) if row["skill"] is not None else 0.0
        moves = await asyncio.to_thread(
            self._store.read, "SELECT t_ms, cell, digit, note FROM moves WHERE sub_key = ? "
            "ORDER BY seq", [row["sub_key"]])
        client = json.loads(row["raw"]).get("client")
        evidence = await asyncio.to_thread(self._compute, facts, moves, client, skill,
                                           row["skill"] is None)
        await self._write(portal, submission_id, evidence)
        elapsed = time.perf_counter() - started
        self._metrics.scoring_duration.observe(elapsed)
        self._metrics.anomaly.observe(evidence["anomaly"])
        self._metrics.submissions_scored.inc()
        return evidence

    def _run_info(self, run_id: str) -> dict:
        row = self._store.read("SELECT r.mu, r.residual_sd, (SELECT coalesce(stddev(skill), 0) "
                               "FROM player_ratings WHERE run_id = r.run_id), r.band_nulls "
                               "FROM rating_runs r WHERE r.run_id = ?", [run_id])[0]
        return {"mu": row[0], "residual_sd": row[1], "skill_sd": row[2],
                "band_nulls": json.loads(row[3]) if row[3] else {}}

    def _compute(self, facts: _Facts, moves, client, skill: float, unrated: bool) -> dict:
        import dataclasses

        from fairgrid.analytics.evidence import score_solve
        arr = np.array(moves, dtype=np.int64).reshape(-1, 4)
        puzzle_facts = facts.facts
        if facts.rated and unrated:  # no skill estimate yet: allow for the skill spread
            puzzle_facts = dataclasses.replace(puzzle_facts, sd_log=facts.unrated_sd)
        return score_solve(puzzle_facts, facts.null, arr[:, 0], arr[:, 1], arr[:, 2],
                           arr[:, 3].astype(bool), skill=skill,
                           client=client if isinstance(client, dict) else None,
                           fpr=self._settings.scoring_fpr)

    async def _write(self, portal: str, sid: str, ev: dict) -> None:
        now = datetime.now(timezone.utc)
        new_reasons: list[str] = []

        def write(con):
            con.execute("DELETE FROM scores WHERE portal = ? AND submission_id = ?",
                        [portal, sid])
            con.execute("INSERT INTO scores VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [portal, sid, now, ev["anomaly"], ev["p_value"], ev["flagged"],
                         json.dumps(ev)])
            flag = con.execute("SELECT id, state FROM flags WHERE portal = ? AND "
                               "submission_id = ?", [portal, sid]).fetchone()
            reasons = json.dumps(ev["reasons"])
            if ev["flagged"] and flag is None:
                fid = con.execute("INSERT INTO flags (portal, submission_id, created_at, "
                                  "state, reasons) VALUES (?, ?, ?, 'open', ?) RETURNING id",
                                  [portal, sid, now, reasons]).fetchone()[0]
                con.execute("INSERT INTO flag_history VALUES (?, ?, 'open', ?, 'fairgrid')",
                            [fid, now, "raised by scoring: " + ", ".join(ev["reasons"])])
                new_reasons.extend(ev["reasons"])
            elif flag is not None and flag[1] in ("open", "withdrawn"):
                state = "open" if ev["flagged"] else "withdrawn"
                if state != flag[1]:
                    con.execute("INSERT INTO flag_history VALUES (?, ?, ?, ?, 'fairgrid')",
                                [flag[0], now, state, "re-scored"])
                if ev["flagged"]:
                    con.execute("UPDATE flags SET state = ?, reasons = ? WHERE id = ?",
                                [state, reasons, flag[0]])
                else:  # keep the reasons it was raised for
                    con.execute("UPDATE flags SET state = ? WHERE id = ?", [state, flag[0]])
            con.execute("UPDATE submissions SET status = 'scored' WHERE portal = ? AND "
                        "submission_id = ?", [portal, sid])

        await asyncio.wrap_future(self._store.writer.call(write))
        for reason in new_reasons:
            self._metrics.flags.labels(reason).inc()
