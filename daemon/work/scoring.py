"""Scoring: a committed solve → analytics → score and flag rows.

:class:`Scorer` scores a submission right after its commit (or when its puzzle becomes
ready; the queue's sweep catches anything missed, e.g. after a restart). A batch is read
with two statements, scored in a pool process (``analytics.evidence.score_solve`` against
``analytics.puzzle_model.ScoringInputs``), and written in one transaction by the single
writer: scores, new or changed flags with their history (the state machine is in
``store.repository.scores``), and the submissions' ``scored`` status.

A submission that cannot be scored (a stored body that no longer reads, an error in the
analytics) fails alone: it ends ``unscorable`` with the reason, is counted, is not tried
again, and the rest of its batch is scored. A failure of the batch itself (the database,
the pool) leaves every submission of it for the sweep to retry.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time

import numpy as np

from fairgrid.analytics.calibration import STRONG_P as COPY_P
from fairgrid.analytics.calibration import skill_uncertainty
from fairgrid.analytics.evidence import signal_name
from fairgrid.analytics.log_match import Earlier, from_bytes, pair_p, timing_print, to_bytes
from fairgrid.analytics.puzzle_model import (PuzzleModel, PuzzleRating, RatingRun, ScoreTask,
                                             ScoringInputs, scoring_inputs)
from fairgrid.solvers.puzzle_types import DEFAULT_TYPE

from ..documents import UNREADABLE
from ..ingest.solve import ValidationError, scoring_fields
from ..metrics import Metrics
from ..settings import Settings
from ..store import Store
from ..store.records import utc_now
from ..store.repository import scores as sql
from .queue import WorkQueue

log = logging.getLogger("fairgrid.scoring")
BATCH = 128          # submissions scored (and written) together: a write of 128 holds the
                     # single writer ~15 ms; 256 held it ~30-50 ms, a stall every ingest
                     # commit behind it waited out
BATCH_WAIT_S = 0.05  # how long the first of a batch waits for company
YIELD_S = 0.05       # while ingestion keeps the writer busy, scoring waits this long...
MAX_YIELD_S = 5.0    # ...but no longer than this in all: a busy daemon still scores
IDLE_SHARE = 0.25    # "busy": the writer was idle less than this share of the last YIELD_S
MAX_REASON = 500  # characters of a failure's reason kept with the submission
# a log is compared with at most this many of its puzzle's solves before it (1.5 ms a
# solve at this many on one core; bench/log_match.py), and as many after it...
MAX_COMPARED = 2_000
# ...and a batch reads at most this much of prints in all (a batch of many popular
# puzzles, or of Nurikabe grids of 1,500 cells, compares each with fewer)
MAX_PRINT_BYTES = 64 * 2**20


def compute_batch(payload: tuple) -> list[tuple[dict | None, str]]:
    """The analytics of a batch of submissions: per submission, the summary the writer
    needs (``Evidence.summary``) and the whole evidence as JSON text, or (None, why it could
    not be scored). ``payload`` is the batch's moves as columns (sorted by ``sub_key``,
    then ``seq``), one job per submission, the stored timing prints of their puzzles
    (``sql.nearby_prints``' columns) and the prints of solves being scored now
    (:func:`prints_of`, the batch's own among them). Runs in a pool process, which also
    cuts each submission's moves out of the columns, reads each raw body's ``client`` and
    ``outcome`` as ingestion read them, compares each log with the other solves of its
    puzzle and encodes the evidence: none of that per-submission work is on the event
    loop."""
    moves, jobs, stored, fresh = payload
    prints = Prints(stored, fresh, jobs)
    out = []
    for job, log_ in zip(jobs, _logs(moves, jobs)):
        try:
            summary, doc = _score_one(job, log_, prints.earlier(job), prints.own(job))
            summary["copies"] = prints.later_copies(job)
            out.append((summary, doc))
        except MemoryError:  # the process's trouble, not the submission's: fail the batch
            raise
        except Exception as exc:  # noqa: BLE001 - one submission must not stop the others
            out.append((None, unscorable_reason(exc)))
    return out


def print_windows(jobs: list[ScoreTask]) -> list[tuple[str, int, int, int]]:
    """Per puzzle of a batch, the stored prints it reads (``sql.nearby_prints``): the
    solves before its latest and after its first, MAX_COMPARED of each at most, and
    MAX_PRINT_BYTES for the batch in all."""
    spans: dict[str, list[int]] = {}
    cells = {}
    for job in jobs:
        span = spans.setdefault(job.puzzle_key, [job.sub_key, job.sub_key])
        span[0], span[1] = min(span[0], job.sub_key), max(span[1], job.sub_key)
        cells[job.puzzle_key] = len(job.facts.givens)
    out = []
    for key, (lo, hi) in sorted(spans.items()):
        most = MAX_PRINT_BYTES // (2 * len(spans) * 8 * max(cells[key], 1))
        out.append((key, lo, hi, int(max(1, min(MAX_COMPARED, most)))))
    return out


def _logs(moves: dict, jobs: list[ScoreTask]) -> list[dict[str, np.ndarray]]:
    """Each job's moves, cut out of the batch's columns."""
    keys = np.asarray(moves["sub_key"])
    cols = {c: np.asarray(moves[c], dtype=np.int64) for c in ("t_ms", "cell", "digit", "note")}
    out = []
    for job in jobs:
        lo = np.searchsorted(keys, job.sub_key)
        hi = np.searchsorted(keys, job.sub_key, side="right")
        out.append({c: v[lo:hi] for c, v in cols.items()})
    return out


def prints_of(moves: dict, jobs: list[ScoreTask]) -> dict[int, tuple]:
    """The timing print of each job's log as the scorer keeps it while the job is scored:
    sub_key → (sub_key, portal, submission_id, player_id, puzzle_key, print bytes). A log
    that gives none is left out (its scoring says what is wrong)."""
    out = {}
    for job, log_ in zip(jobs, _logs(moves, jobs)):
        try:
            tp = timing_print(log_["t_ms"], log_["cell"], log_["digit"],
                              log_["note"].astype(bool), len(job.facts.givens))
        except Exception:  # noqa: BLE001 - its scoring reports what is wrong
            continue
        out[job.sub_key] = (job.sub_key, job.portal, job.submission_id, job.player_id,
                            job.puzzle_key, to_bytes(tp))
    return out


class Prints:
    """The timing prints a batch compares its logs with: those of solves being scored now
    (the batch's own among them: a repeated log may be scored beside its source) and the
    stored ones of its puzzles."""

    def __init__(self, stored: dict, fresh: list[tuple], jobs: list[ScoreTask]):
        # a job without its puzzle's key (no puzzle row) is compared with nothing
        cells = {job.puzzle_key: len(job.facts.givens) for job in jobs if job.puzzle_key}
        rows = list(fresh) + list(zip(*(
            stored.get(c, ()) for c in ("sub_key", "portal", "submission_id", "player_id",
                                        "puzzle_key", "timing_print"))))
        self._own = {int(r[0]): r[5] for r in fresh}
        # one print a solve, one being scored now before a stored one (a re-score's is new)
        by_puzzle: dict[str, list] = {}
        seen = set()
        for key, portal, sid, player, puzzle, blob in rows:
            tp = from_bytes(blob, cells[puzzle]) if puzzle in cells else None
            if tp is not None and int(key) not in seen:
                seen.add(int(key))
                by_puzzle.setdefault(puzzle, []).append((int(key), portal, sid, player, tp))
        self._puzzles = {
            pu: (np.array([r[0] for r in got], dtype=np.int64),
                 np.array([r[1] for r in got], dtype=object),
                 np.array([r[2] for r in got], dtype=object),
                 np.array([r[3] for r in got], dtype=object),
                 np.stack([r[4] for r in got]))
            for pu, got in by_puzzle.items()}

    def own(self, job: ScoreTask) -> bytes | None:
        """The job's print as stored, None when its log gave none."""
        return self._own.get(job.sub_key)

    def _others(self, job: ScoreTask):
        """(keys, same portal, submission ids, prints) of other players' solves of the
        job's puzzle: a person's second solve of a puzzle is no copy of anyone's."""
        got = self._puzzles.get(job.puzzle_key) if job.puzzle_key else None
        if got is None or got[4].shape[1:] != (2, len(job.facts.givens)):
            return None
        keys, portals, sids, players, prints = got
        here = portals == job.portal
        use = (keys != job.sub_key) & ~(here & (players == job.player_id))
        return keys[use], here[use], sids[use], prints[use]

    def earlier(self, job: ScoreTask) -> Earlier:
        """The other players' solves of the job's puzzle committed before it."""
        others = self._others(job)
        if others is None:
            return Earlier(np.zeros((0, 2, len(job.facts.givens)), np.float32), ())
        keys, here, sids, prints = others
        before = keys < job.sub_key
        # the evidence names an earlier solve of the same portal only: a portal never
        # reads another's ids
        return Earlier(prints[before], tuple(sid if h else None for sid, h in
                                             zip(sids[before], here[before])))

    def later_copies(self, job: ScoreTask) -> list[int]:
        """Other players' solves committed after the job's whose log repeats its log
        beyond anything two people do: scored before this one could be compared with,
        they are scored again (after its first scoring only)."""
        others, tp = self._others(job), self._own.get(job.sub_key)
        if others is None or tp is None:
            return []
        keys, _, _, prints = others
        after = keys > job.sub_key
        if not after.any():
            return []
        p = pair_p(from_bytes(tp, len(job.facts.givens)), prints[after])
        return [int(k) for k in keys[after][p < COPY_P]]


def _score_one(job: ScoreTask, moves: dict[str, np.ndarray], earlier: Earlier,
               own_print: bytes | None) -> tuple[dict, str]:
    """(summary, evidence JSON) of one submission, the summary with the compact facts the
    player verdict reads (``season_facts``) and the log's timing print
    (``timing_print``); raises what stops it being scored."""
    from fairgrid.analytics.evidence import score_solve
    from fairgrid.analytics.player_verdict import solve_facts
    client, reported = scoring_fields(job.raw)
    ev = score_solve(job.facts, job.null, moves["t_ms"], moves["cell"], moves["digit"],
                     moves["note"].astype(bool), skill=job.skill, client=client,
                     fpr=job.fpr, sources=job.sources, history=job.history,
                     skill_sd=job.skill_sd, reported=reported, earlier=earlier)
    doc = ev.to_json()
    try:
        facts = json.dumps(solve_facts("", doc).to_json())
    except Exception:  # noqa: BLE001 - never a reason to leave a solve unscored
        log.exception("the season facts of submission %d could not be built; the "
                      "player verdict reads its evidence instead", job.sub_key)
        facts = None
    return {**ev.summary, "season_facts": facts, "timing_print": own_print}, json.dumps(doc)


def unscorable_reason(exc: Exception) -> str:
    """The outcome shown for a submission scoring failed on: "could not be scored: ..."."""
    if isinstance(exc, ValidationError):
        what = f"{exc.field}: {exc}" if exc.field else str(exc)
    else:
        what = f"{type(exc).__name__}: {exc}"
    return f"could not be scored: {what}"[:MAX_REASON]


def rating_run_of(row: tuple) -> RatingRun:
    """A stored rating run (``sql.rating_run``'s row) as scoring reads it."""
    mu, residual_sd, skill_sd, level_nulls, by_type, portal_nulls = row
    return RatingRun(mu, residual_sd, skill_sd, json.loads(level_nulls) if level_nulls else {},
                     json.loads(by_type) if by_type is not None else None,
                     portal_level_nulls=json.loads(portal_nulls) if portal_nulls else {})


def _inputs_key(row: dict) -> tuple:
    """What a solve's scoring inputs are cached under: its puzzle, the rating run it is
    scored with, and its portal (whose own difficulty of a shared puzzle it is priced
    on)."""
    return row["puzzle_id"], row["run_id"], row["portal"]


def _inputs(row: dict, run: RatingRun | None, portal: str | None = None) -> ScoringInputs:
    """A ready puzzle's scoring inputs from its stored row (``sql.puzzle_for_scoring``),
    for ``portal``'s solves."""
    rating = None
    if run is not None:
        extra = json.loads(row["consensus_fill_spread"] or "null") or {}
        rating = PuzzleRating(row["difficulty"], row["level"],
                              json.loads(row["consensus_fill_rank"] or "null"),
                              extra.get("null"))
    return scoring_inputs(row["givens"], row["box_size"], row["solution"],
                          json.loads(row["fill_rank_median"]),
                          PuzzleModel.from_json(json.loads(row["ratings"])), run, rating,
                          row["puzzle_type"], portal)


class Scorer:
    """Queue, workers and sweep that score committed submissions (by ``sub_key``)."""

    def __init__(self, store: Store, settings: Settings, metrics: Metrics, executor=None):
        self._executor = executor
        self._store = store
        self._settings = settings
        self._metrics = metrics
        self._queue: WorkQueue[int] = WorkQueue(100_000, self._due)
        self._inputs: dict[tuple, ScoringInputs] = {}
        self._runs: dict[str, RatingRun] = {}
        self._tasks: list[asyncio.Task] = []
        # the timing prints of solves being scored, until their scores are written: a
        # batch compares its logs with these as well as with the stored ones
        self._fresh: dict[int, tuple] = {}
        # solves found to repeat another while they were being scored themselves (so
        # not yet compared with it): scored again once their scoring is done
        self._again: set[int] = set()
        # judges the players of each batch written (work.verdicts; the app sets it)
        self.verdicts = None
        metrics.scoring_backlog.set_function(self._queue.pending)

    async def start(self) -> None:
        # one batch in flight per pool process, plus one: while a batch is read or
        # written, the pool works on another
        workers = (self._settings.analysis_workers or os.cpu_count() or 1) + 1
        self._tasks = [asyncio.create_task(self._worker(), name=f"fairgrid-scoring-{k}")
                       for k in range(workers)]
        self._tasks.append(asyncio.create_task(self._queue.sweep_forever(),
                                               name="fairgrid-scoring-sweep"))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _due(self) -> list[int]:
        await self.puzzle_invalid()  # and solves sent since of puzzles already invalid
        return await asyncio.to_thread(self._store.read, sql.due)

    async def puzzle_invalid(self, puzzle_id: str | None = None) -> None:
        """End every waiting submission of an ``invalid`` puzzle ``unscorable`` with the
        puzzle's error: it will never be analysed, and waiting would say nothing."""
        stuck = await asyncio.to_thread(self._store.read, sql.pending_of_invalid)
        if stuck:
            await self._mark_unscorable([
                (row, f"puzzle {row['puzzle_id']!r} is invalid: {row['error'] or 'unknown'}")
                for row in stuck])

    def schedule(self, sub_key: int) -> None:
        """Queue a stored submission for scoring (by its ``submissions.sub_key``)."""
        self._queue.schedule(int(sub_key))

    def forget_puzzle(self, puzzle_id: str) -> None:
        for key in [k for k in self._inputs if k[0] == puzzle_id]:
            del self._inputs[key]

    def forget_all(self) -> None:
        """Drop cached inputs (a nightly run changed difficulties, skills, consensus)."""
        self._inputs.clear()
        self._runs.clear()

    async def puzzle_ready(self, puzzle_id: str) -> None:
        """Queue every pending submission of a puzzle that has just become ready."""
        self.forget_puzzle(puzzle_id)
        for sub_key in await asyncio.to_thread(self._store.read, sql.pending_of_puzzle,
                                               puzzle_id):
            self.schedule(sub_key)

    async def _worker(self) -> None:
        while True:
            keys = [await self._queue.get()]
            await asyncio.sleep(BATCH_WAIT_S)  # let a burst gather: one transaction for all
            # ingestion first: a batch starts only when the writer has had idle time
            # lately (the pool already runs at idle priority; this keeps the reads, the
            # score writes and the event-loop work of scoring out of a burst's way). The
            # queue's depth is no test: it is empty for a moment after every batch.
            await self._wait_for_room()
            self._queue.take(keys, BATCH)
            try:
                await self.score_many(keys)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - one bad batch must not stop scoring
                log.exception("scoring of %d submissions failed", len(keys))
            finally:
                self._done(keys)

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
        yet (or there is no such submission, or it could not be scored)."""
        key = await asyncio.to_thread(self._store.read, sql.sub_key_of, portal, submission_id)
        if key is None:
            return None
        done = await self.score_many([key])
        if key in self._again:  # found to repeat another while it was scored here (a
            self.schedule(key)  # worker holding it too queues it again when done)
        if not done:
            return None
        # as stored: the write takes out an id erased while it was scored
        stored = await asyncio.to_thread(self._store.read, sql.stored_evidence, portal,
                                         submission_id)
        return json.loads(stored or done[(portal, submission_id)][1])

    async def score_many(self, sub_keys: list[int]) -> dict:
        """Score submissions in one go: one read of their rows, one of their moves, the
        analytics (and the evidence's JSON) in a pool process, and one write transaction
        for all the results (ingestion shares the single writer, so per-submission
        transactions would starve it). Returns {(portal, submission_id): (summary,
        evidence JSON)} for those whose puzzle is ready."""
        started = time.perf_counter()
        rows = await asyncio.to_thread(self._store.read, sql.submissions_to_score, sub_keys)
        # each puzzle's inputs are read and prepared once per rating run, then cached
        missing = {_inputs_key(r) for r in rows} - self._inputs.keys()
        invalid, broken = False, {}
        for key in sorted(missing, key=str):
            try:
                invalid |= await self._load_inputs(*key) == "invalid"
            except UNREADABLE as exc:  # its solves fail alone, not the batch they are in
                broken[key] = (
                    f"the stored analysis of puzzle {key[0]!r} (or its rating run) "
                    f"cannot be read: {type(exc).__name__}: {exc}")
                log.error("puzzle %s: %s", key[0], broken[key])
        if invalid:  # a solve sent after its puzzle failed analysis ends now, not at a sweep
            await self.puzzle_invalid()
        if broken:
            await self._mark_unscorable(
                [(row, broken[key]) for row in rows
                 if (key := _inputs_key(row)) in broken])
        ready = [(row, self._inputs[_inputs_key(row)]) for row in rows
                 if self._inputs.get(_inputs_key(row)) is not None]
        if not ready:
            return {}
        moves = await asyncio.to_thread(self._store.read, sql.moves_of,
                                        [row["sub_key"] for row, _ in ready])
        jobs = [self._job(row, inputs) for row, inputs in ready]
        fresh = await asyncio.to_thread(prints_of, moves, jobs)
        self._fresh.update(fresh)
        try:
            results, keys = await self._compute_and_write(ready, moves, jobs)
        finally:
            for key, row in fresh.items():  # unless another batch has it in flight now
                if self._fresh.get(key) is row:
                    del self._fresh[key]
        if not results:
            return {}
        if self.verdicts is not None:
            await self.verdicts.after_scoring(keys)
        per = (time.perf_counter() - started) / len(results)
        for row, _ in ready:
            if (row["portal"], row["submission_id"]) not in results:
                continue
            summary, _ = results[(row["portal"], row["submission_id"])]
            self._metrics.scoring_duration.observe(per)
            if row["status"] == "pending":  # a re-score is not a new scored submission
                self._metrics.anomaly.observe(summary["anomaly"])
                self._metrics.submissions_scored.inc()
            else:
                self._metrics.submissions_rescored.inc()
        return results

    async def _compute_and_write(self, ready: list, moves: dict, jobs: list[ScoreTask]
                                 ) -> tuple[dict, list[int]]:
        """Score a batch in the pool and write what it found (see :meth:`score_many`):
        the results and the keys of the solves scored."""
        puzzles = sorted({job.puzzle_key for job in jobs})
        # the solves being scored now first, then the stored prints: one whose batch
        # writes and leaves ``_fresh`` in between is in the stored ones. Of two batches
        # scored at once, the one that gathers second sees the other's prints; where it
        # holds the earlier solve, ``later_copies`` has the later one scored again.
        fresh = [row for row in self._fresh.values() if row[4] in puzzles]
        stored = await asyncio.to_thread(self._store.read, sql.nearby_prints,
                                         print_windows(jobs))
        payload = (moves, jobs, stored, fresh)
        loop = asyncio.get_running_loop()
        if self._executor is not None:  # another process: the event loop keeps the GIL
            evidence = await loop.run_in_executor(self._executor, compute_batch, payload)
        else:
            evidence = await asyncio.to_thread(compute_batch, payload)
        scored = [(row, ev) for (row, _), ev in zip(ready, evidence) if ev[0] is not None]
        failed = [(row, ev[1]) for (row, _), ev in zip(ready, evidence) if ev[0] is None]
        if failed:
            await self._mark_unscorable(failed)
        results = {(row["portal"], row["submission_id"]): ev for row, ev in scored}
        if not results:
            return {}, []
        keys = [int(row["sub_key"]) for row, _ in scored]
        # only a first scoring's print is new to the solves after it: a re-score's later
        # repeats compared with its stored print already, and re-scoring them would have
        # each re-score of a ring of repeated logs set off the re-scores of the rest
        copies = sorted({k for row, (summary, _) in scored if row["status"] == "pending"
                         for k in summary["copies"]} - set(keys))
        await self._write_all(results, keys, [row["run_id"] for row, _ in scored],
                              [int(row["repeat_marks"] or 0) for row, _ in scored],
                              rescored=any(row["status"] != "pending" for row, _ in scored),
                              copies=copies)
        for key in copies:  # marked ``rescore`` with the scores: the sweep finds them too
            if key in self._fresh:  # being scored now, maybe without this batch's print
                self._again.add(key)
            self.schedule(key)
        return results, keys

    def _done(self, keys: list[int]) -> None:
        """The scoring of ``keys`` is over: those found to repeat another meanwhile are
        queued again."""
        self._queue.done(*keys)
        for key in [k for k in keys if k in self._again]:
            self._again.discard(key)
            self.schedule(key)

    async def _mark_unscorable(self, failed: list[tuple[dict, str]]) -> None:
        """Record why submissions could not be scored (status ``unscorable``: the sweep
        leaves them), count and log those this call marked (two batches may find the
        same solves of an invalid puzzle)."""
        marked = await asyncio.wrap_future(self._store.write(
            sql.mark_unscorable, [int(row["sub_key"]) for row, _ in failed],
            [reason for _, reason in failed]))
        failed = [(row, reason) for row, reason in failed if int(row["sub_key"]) in marked]
        self._metrics.submissions_unscorable.inc(len(failed))
        for row, reason in failed:
            log.warning("submission %r of portal %r: %s", row["submission_id"],
                        row["portal"], reason)

    def _job(self, row: dict, inputs: ScoringInputs) -> ScoreTask:
        rated = row["skill"] is not None
        skill_sd = (skill_uncertainty(int(row["skill_solves"] or 0),
                                      self._settings.nightly_lambda_player) if rated else 0.0)
        return ScoreTask(inputs.facts if rated else inputs.facts_without_skill, inputs.null,
                        int(row["sub_key"]), row["raw"],
                        float(row["skill"]) if rated else 0.0, self._settings.scoring_fpr,
                        inputs.sources, rated, skill_sd, row["portal"],
                        row["submission_id"], row["player_id"], row["puzzle_key"] or "")

    async def _load_inputs(self, puzzle_id: str, run_id: str | None,
                           portal: str) -> str | None:
        """Cache a puzzle's scoring inputs for a portal's solves under the rating run
        (None: not ready yet, and not cached, so the next batch looks again); the
        puzzle's status (None: no such puzzle)."""
        run = None
        if run_id is not None:
            run = self._runs.get(run_id)
            if run is None:
                run = self._runs[run_id] = rating_run_of(
                    await asyncio.to_thread(self._store.read, sql.rating_run, run_id))
        row = await asyncio.to_thread(self._store.read, sql.puzzle_for_scoring, puzzle_id,
                                      run_id, portal)
        if row is not None and row["status"] == "ready" and row["ratings"] is not None:
            self._inputs[(puzzle_id, run_id, portal)] = _inputs(row, run, portal)
        return None if row is None else row["status"]

    async def _write_all(self, results: dict, sub_keys: list[int], runs: list,
                         marks: list[int], rescored: bool, copies: list[int] = ()) -> None:
        """Scores, flags and flag history of a batch in one writer transaction;
        ``sub_keys`` (in ``results``' order) find the submissions' rows, ``runs`` the
        rating run each was scored with, ``marks`` its repeat marks when read."""
        items = list(results.items())
        batch = {
            "sub_key": np.array(sub_keys, dtype=np.int64),
            "portal": np.array([k[0] for k, _ in items], dtype=object),
            "submission_id": np.array([k[1] for k, _ in items], dtype=object),
            "anomaly": np.array([ev["anomaly"] for _, (ev, _) in items], dtype=float),
            "p_value": np.array([ev["p_value"] for _, (ev, _) in items], dtype=float),
            "flagged": np.array([ev["flagged"] for _, (ev, _) in items], dtype=bool),
            "evidence": np.array([text for _, (_, text) in items], dtype=object),
            "season_facts": np.array([ev["season_facts"] for _, (ev, _) in items],
                                     dtype=object),
            "timing_print": np.array([ev["timing_print"] for _, (ev, _) in items],
                                     dtype=object),
            "reasons": np.array([json.dumps(ev["reasons"]) for _, (ev, _) in items],
                                dtype=object),
            "note": np.array([_raised_note(ev) for _, (ev, _) in items], dtype=object),
            "run_id": np.array(runs, dtype=object),
            "marks_read": np.array(marks, dtype=object),
        }
        created = await asyncio.wrap_future(self._store.write(
            sql.write_scores, batch, utc_now(), rescored, copies))
        for key in created:
            for reason in results[key][0]["reasons"]:
                self._metrics.flags.labels(reason).inc()


def _raised_note(evidence: dict) -> str:
    """The history note of a flag scoring raised: its reasons in words."""
    kind = evidence.get("puzzle_type") or DEFAULT_TYPE
    return "raised by scoring: " + "; ".join(signal_name(r, kind)
                                             for r in evidence["reasons"])
