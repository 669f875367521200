"""Player verdicts in the daemon: read each player's season, judge it
(``analytics.player_verdict``), store the verdict with its state and history.

A player is judged again after every scoring batch that holds one of their solves (in
the background, :class:`Verdicts`), after a decision on one of their flags, and by the
nightly job (which first learns each portal's own player-level null from its players,
:func:`learn_nulls`). A player is
``clear`` until the evidence flags them; ``flagged`` then stays until a person decides,
even when later solves dilute the evidence (the organiser was told, and a case that
leaves the queue by itself is a notification nobody can find again; the row's
``flagged`` says what the evidence says now, ``flagging_verdict`` what flagged them),
or until a person clears one of their solve flags that stood, and then none of their
solve flags stands and the season does not flag them by itself (the reviewer dismissed
the evidence). ``confirmed`` stays; ``cleared``
stays until the solves the reviewer did not see flag the player by themselves (the same
evidence never flags a cleared player twice). A player who becomes ``flagged`` gets one
``player.flagged`` notification.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from dataclasses import replace
from datetime import datetime, timezone
from typing import Iterator, NamedTuple

from fairgrid.analytics.player_verdict import (PlayerNull, PlayerVerdict, SeasonPart,
                                               SolveFacts, ends_of, judge, learn_null_from,
                                               priced, season_part, shipped_null,
                                               solve_facts, solved_again, time_spent)
from fairgrid.analytics.puzzle_model import ExpectedTime, RatingRun, time_in_force
from fairgrid.solvers.puzzle_types import DEFAULT_TYPE

from ..documents import UNREADABLE
from ..store.repository import players as sql
from .nightly_db import NightlyDB, store_db
from .pool import in_tasks
from .scoring import rating_run_of

log = logging.getLogger("fairgrid.verdicts")
MIN_NULL_PLAYERS = 30   # a portal's own null needs this many players with 5+ solves...
MIN_NULL_SOLVES = 5
PORTAL_SOURCE = "this portal's players"


def _facts(season: list[sql.SeasonSolve], key: tuple[str, str], run: RatingRun | None,
           reprice: bool = True, backfill: list | None = None) -> list:
    """A stored season's facts; a solve's flag counts only while it stands, and a
    finished solve's pace is measured against its puzzle's expected time under ``run``,
    the rating run in force (:func:`_expected`; not with ``reprice`` False, when that run
    cannot be read). A solve whose season facts are not stored (a score written before
    them) is read from its evidence, and the facts go to ``backfill`` to be stored. A
    solve neither can be read from is logged and left out (the verdict says how many
    solves it rests on). Each puzzle counts once (``solved_again``: the first solve to
    finish it, priced on the time spent on it with the attempts given up before,
    ``time_spent``; else its first attempt)."""
    parsed = []
    for solve in season:
        try:
            if solve.facts is not None:
                facts = SolveFacts.from_json(solve.submission_id, json.loads(solve.facts))
            else:
                facts = solve_facts(solve.submission_id, json.loads(solve.evidence))
                if backfill is not None:
                    backfill.append((key[0], solve.submission_id, solve.scored_at,
                                     json.dumps(facts.to_json())))
        except UNREADABLE as exc:
            log.warning("player %s: the stored %s of solve %s cannot be read (%s: %s); "
                        "the verdict leaves it out", "/".join(key),
                        "evidence" if solve.facts is None else "season facts",
                        solve.submission_id, type(exc).__name__, exc)
            continue
        parsed.append((solve, facts))
    puzzles = [solve.puzzle_id for solve, _ in parsed]
    finished = [facts.finished for _, facts in parsed]
    ends = ends_of([solve.started_at for solve, _ in parsed],
                   [solve.duration_ms for solve, _ in parsed])
    again = solved_again(puzzles, finished, ends)
    spent = time_spent(puzzles, finished, [solve.duration_ms for solve, _ in parsed])
    out = []
    for (solve, facts), repeat, ms in zip(parsed, again, spent):
        if not repeat:
            expected = _expected(solve, run, key) if reprice else None
            out.append(priced(facts, expected, ms, flagged=solve.standing))
    return out


def _expected(solve: sql.SeasonSolve, run: RatingRun | None,
              key: tuple[str, str]) -> ExpectedTime | None:
    """The solve's puzzle's expected time under the run in force, as scoring would price
    it now; None, its pace as scored, where its puzzle row is gone or its stored analysis
    gives no expected time (logged)."""
    if solve.puzzle_type is None:
        return None
    if solve.model_log_s is None or solve.model_sd is None:
        log.warning("player %s: the stored analysis of solve %s's puzzle gives no "
                    "expected time; its pace stays as scored", "/".join(key),
                    solve.submission_id)
        return None
    try:
        return time_in_force(solve.model_log_s, solve.model_sd,
                             None if run is None else run.for_type(solve.puzzle_type,
                                                                   key[0]),
                             solve.difficulty)
    except UNREADABLE as exc:
        log.warning("player %s: the expected time of solve %s's puzzle cannot be read "
                    "(%s: %s); its pace stays as scored", "/".join(key),
                    solve.submission_id, type(exc).__name__, exc)
        return None


def _run_of(seasons: sql.Seasons) -> tuple[RatingRun | None, bool]:
    """The rating run the seasons' difficulties are of (None before any), and whether
    paces can be priced by it: a run whose row cannot be read, or whose fits lack a
    finite offset or residual, is logged and every pace stays as scored (one damaged row
    never stops the verdicts)."""
    if seasons.run is None:
        return None, True
    try:
        run = rating_run_of(seasons.run)
        for kind in (DEFAULT_TYPE, *(run.by_type or {})):
            fit = run.for_type(kind)
            if fit is not None and not (math.isfinite(fit.mu)
                                        and math.isfinite(fit.residual_sd)):
                raise ValueError(f"its {kind} fit has no finite offset and residual sd")
        return run, True
    except UNREADABLE as exc:
        log.warning("the rating run in force cannot be read (%s: %s); paces stay as "
                    "scored", type(exc).__name__, exc)
        return None, False


def unreviewed(stored: dict | None, facts: list) -> tuple[list, int, bool]:
    """The solves a verdict rests on, how many it leaves out, and whether a person who
    cleared the player has seen none of them: once a person cleared the player, only
    those the reviewer did not see (the same evidence never flags a player twice, and a
    case new solves raise rests on them alone, its notification and its end included);
    all of them while there are none (the verdict the reviewer cleared stays on show)."""
    seen = set(json.loads(stored["reviewed_solves"] or "[]")) if stored else set()
    if not seen:
        return facts, 0, True
    new = [f for f in facts if f.submission_id not in seen]
    return (new, len(facts) - len(new), True) if new else (facts, 0, False)


def next_state(stored: dict | None, verdict: PlayerVerdict, fresh: bool,
               after_review: bool = False, standing: bool = False) -> str:
    """The state after a judgement (see the module docstring) of ``verdict``; ``fresh``:
    it rests on solves a person who cleared the player has not seen; ``after_review``:
    judged because a person cleared one of the player's solve flags that stood;
    ``standing``: a flag of theirs still stands (open, undecided, or confirmed), so the
    evidence is not all dismissed and the case stays."""
    state = stored["state"] if stored else "clear"
    if state == "flagged" and after_review and not verdict.flagged and not standing:
        return "clear"
    if state in ("confirmed", "flagged"):
        return state
    if state == "cleared":
        return "flagged" if fresh and verdict.flagged else "cleared"
    return "flagged" if verdict.flagged else "clear"


def judge_players(db: NightlyDB, players: list[tuple[str, str]], alpha: float,
                  now: datetime | None = None, after_review: bool = False,
                  again: list | None = None) -> list[tuple[str, str]]:
    """Judge ``players`` again and store their verdicts (one transaction); the players
    newly flagged. ``after_review``: because a person cleared one of their solve flags.
    The players whose verdict was not stored (their row changed meanwhile: the next
    judgement starts from it) are added to ``again``."""
    block = _read_block(db, players, alpha, now, after_review)
    if block is None:
        return []
    return _store_block(db, _judge_block(block), again)


class Block(NamedTuple):
    """What judging a block of players reads (picklable: a task may judge it)."""

    players: list[tuple[str, str]]
    solves: dict[tuple[str, str], list[sql.SeasonSolve]]
    stored: dict[tuple[str, str], dict]
    nulls: dict[str, PlayerNull]    # the block's portals' own (others: the shipped null)
    run: RatingRun | None
    reprice: bool
    alpha: float
    now: datetime                   # taken before the read: what the save compares
    after_review: bool


class Judged(NamedTuple):
    """A block judged: the verdict rows to store, the season facts to backfill."""

    rows: list[dict]
    backfill: list
    now: datetime


def _read_block(db: NightlyDB, players: list[tuple[str, str]], alpha: float,
                now: datetime | None = None, after_review: bool = False) -> Block | None:
    players = sorted(set(players))
    if not players:
        return None
    now = now or datetime.now(timezone.utc)
    seasons = db.read(sql.seasons, players)
    stored = db.read(sql.current, players)
    portals = {p for p, _ in players}
    nulls = {p: n for p, n in _portal_nulls(db).items() if p in portals}
    run, reprice = _run_of(seasons)
    return Block(players, seasons.solves, stored, nulls, run, reprice, alpha, now,
                 after_review)


def _judge_block(block: Block) -> Judged:
    """Judge a block's players (pure: runs as a task of the nightly job)."""
    rows, backfill = [], []
    for key in block.players:
        facts = _facts(block.solves.get(key, []), key, block.run, block.reprice, backfill)
        if not facts:
            continue
        null = block.nulls.get(key[0]) or shipped_null()
        was = block.stored.get(key)
        judged, left_out, fresh = unreviewed(was, facts)
        try:
            verdict = judge(judged, null, alpha=block.alpha, reviewed=left_out)
            state = next_state(was, verdict, fresh, block.after_review,
                               any(s.standing for s in block.solves.get(key, [])))
        except UNREADABLE as exc:
            log.warning("player %s: not judged (%s: %s); their last verdict stands",
                        "/".join(key), type(exc).__name__, exc, exc_info=True)
            continue
        rows.append({"portal": key[0], "player_id": key[1], "state": state,
                     "flagged": verdict.flagged, "p_value": verdict.p_value,
                     "solves": verdict.solves, "verdict": json.dumps(verdict.to_json()),
                     "summary": verdict.summary,
                     "reviewed_solves": was["reviewed_solves"] if was else None,
                     "judged_solves": json.dumps([f.submission_id for f in facts]),
                     "read": None if was is None else (was["state"], was["reviewed_solves"]),
                     "note": _note(was, state)})
    return Judged(rows, backfill, block.now)


def _store_block(db: NightlyDB, judged: Judged, again: list | None,
                 write_chunk: int | None = None) -> list[tuple[str, str]]:
    """Store a judged block's verdicts, ``write_chunk`` players per transaction (all in
    one without it); the players newly flagged, those left as they were to ``again``."""
    _store_facts(db, judged.backfill)
    flagged, rows = [], judged.rows
    step = write_chunk or max(len(rows), 1)
    for start in range(0, len(rows), step):
        got, skipped = db.write(sql.save, rows[start:start + step], judged.now)
        flagged += got
        if again is not None:
            again.extend(skipped)
    return flagged


# season facts backfilled per transaction: 5,000 rows hold the writer some 50 ms
FACTS_CHUNK = 5000


def _store_facts(db: NightlyDB, rows: list) -> None:
    """Store season facts read from the evidence, a chunk per transaction."""
    for start in range(0, len(rows), FACTS_CHUNK):
        db.write(sql.save_season_facts, rows[start:start + FACTS_CHUNK])


def _note(was: dict | None, state: str) -> str | None:
    """Why fairgrid changed a state a person would otherwise expect to stay."""
    if was and was["state"] == "cleared" and state == "flagged":
        return "new solves since the review flag the player"
    if was and was["state"] == "flagged" and state == "clear":
        return ("a solve flag cleared by a person leaves a season that does not flag "
                "the player")
    return None


def _portal_nulls(db: NightlyDB) -> dict[str, PlayerNull]:
    """Each portal's stored null; one that cannot be read is logged, and that portal's
    players are judged on the shipped null until the nightly job stores a new one."""
    out = {}
    for portal, text in db.read(sql.nulls).items():
        try:
            out[portal] = _stored_null(text)
        except UNREADABLE as exc:
            log.warning("portal %s: its stored player null cannot be read (%s: %s); its "
                        "players are judged on the shipped null", portal,
                        type(exc).__name__, exc)
    return out


def _stored_null(text: str) -> PlayerNull:
    """A portal's stored null with the shipped null's ratio offsets: a portal never learns
    its own (its players include the cheaters the ratios exist for), so the offsets of
    the running release apply, to a null stored before they existed or changed too. A
    null without a tempo (too few of its players met stalls, or it holds a slope on
    another measure of difficulty) takes the shipped one, as a portal does before its
    first null."""
    null = PlayerNull.from_json(json.loads(text))
    return replace(null, llr_offset=shipped_null().llr_offset,
                   tempo=null.tempo or shipped_null().tempo)


def learn_nulls(db: NightlyDB, now: datetime | None = None, tasks=None) -> dict[str, int]:
    """Each portal's own null from its players who are neither flagged nor confirmed
    (when it has :data:`MIN_NULL_PLAYERS` with :data:`MIN_NULL_SOLVES` solves or more;
    otherwise the shipped null stays in force), the screened kinds from those of them it
    does not already find odd (``learn_null``'s ``screen``), each block of seasons read
    as a task of ``tasks`` when given. Returns the players each was learnt on."""
    learnt, used = {}, {}
    for portal in db.read(sql.portals_judged):
        # the ratios' offsets stay the shipped ones, and its players' own pace is
        # screened from the shipped null on: a portal's players include the cheaters
        # nobody has flagged yet. The seasons are read and learnt from a block at a
        # time: a portal's million solves never sit in memory at once
        null = learn_null_from(_honest_parts(db, portal, tasks), PORTAL_SOURCE,
                               shipped_null().llr_offset, screen=shipped_null())
        if null.players < MIN_NULL_PLAYERS:
            continue
        learnt[portal] = json.dumps(null.to_json())
        used[portal] = null.players
    if learnt:
        db.write(sql.save_nulls, learnt, now or datetime.now(timezone.utc))
    return used


def _honest_parts(db: NightlyDB, portal: str, tasks) -> Iterator[SeasonPart]:
    """The null's parts (``season_part``) of the seasons of :data:`MIN_NULL_SOLVES` solves
    or more of the portal's players who are neither flagged nor confirmed,
    :data:`NIGHTLY_READ` players read at a time."""
    players = db.read(sql.honest_players, portal)
    reads = (db.read(sql.seasons, players[start:start + NIGHTLY_READ])
             for start in range(0, len(players), NIGHTLY_READ))
    for parts, backfill in in_tasks(tasks, _null_parts, reads):
        _store_facts(db, backfill)
        yield from parts


def _null_parts(seasons: sql.Seasons) -> tuple[list[SeasonPart], list]:
    """A block of seasons' parts of a portal's null, and the facts to backfill (pure:
    runs as a task of the nightly job)."""
    run, reprice = _run_of(seasons)
    parts, backfill = [], []
    for key, season in seasons.solves.items():
        facts = _facts(season, key, run, reprice, backfill)
        if len(facts) >= MIN_NULL_SOLVES:
            parts.append(season_part(facts, ratios=False, screen=True))
    return parts, backfill


# players whose seasons the nightly job reads at once: each read joins the whole
# submissions table, so the job reads a few large blocks rather than many small ones
NIGHTLY_READ = 2000
# players whose verdicts are stored per transaction at night (the writer serves the
# webhooks between chunks: 100 verdicts hold it for some 25 ms), and judged at once
# after scoring batches
NIGHTLY_CHUNK = 100


def nightly_stage(db: NightlyDB, alpha: float, tasks=None) -> dict:
    """The nightly job's ``verdicts`` stage: learn the nulls, judge every player,
    :data:`NIGHTLY_READ` at a time (each block judged as a task of ``tasks`` when
    given), storing :data:`NIGHTLY_CHUNK` per transaction."""
    used = learn_nulls(db, tasks=tasks)
    players = sorted(set(db.read(sql.judged_players)))
    flagged, todo = [], players
    for _ in range(1 + AGAIN_TRIES):    # then again, those whose row changed meanwhile
        again: list[tuple[str, str]] = []
        reads = (_read_block(db, todo[start:start + NIGHTLY_READ], alpha)
                 for start in range(0, len(todo), NIGHTLY_READ))
        for judged in in_tasks(tasks, _judge_block, reads):
            flagged += _store_block(db, judged, again, NIGHTLY_CHUNK)
        todo = sorted(set(again))
        if not todo:
            break
    return {"player_nulls": used, "players_judged": len(players),
            "players_flagged": len(flagged)}


# times a judgement is made again at once for players whose row changed between its read
# and its write (a decision, or another judgement). A row that keeps changing is being
# judged or decided on elsewhere: the daemon marks the player as after a scoring batch,
# and the nightly stage leaves them to whatever changes it
AGAIN_TRIES = 3
# after a chunk could not be judged, its players are marked again and judging waits this
# long: a failing database is not hammered
RETRY_S = 30.0
# the share of ``server.shutdown_timeout_s`` a stop spends judging the players still
# marked; the rest are found again at the next start
STOP_SHARE = 0.5


class Verdicts:
    """The daemon's judge: after scoring batches (in the background) and flag decisions
    (at once).

    Scoring does not wait for the verdicts of its batches: it marks their players to be
    judged, and one task judges the marked players, a chunk of :data:`NIGHTLY_CHUNK` at
    a time. A judgement reads the whole season, so a busy player's batches mark them
    once, and a burst of scoring is not slowed to the pace of its players' seasons
    (``fairgrid_players_to_judge`` shows the backlog). The marks are kept in memory only:
    a start marks every player with a solve scored since their last judgement (or never
    judged), which finds again what a crash, a kill or a stop cut short left. A chunk
    that fails is marked again and retried after :data:`RETRY_S`, and so are players
    whose row kept changing under :data:`AGAIN_TRIES` judgements (or whose stored verdict
    is dated after the clock, as when the clock was set back): they are not judged again
    at once, over and over. A stop judges the players still marked for at most
    :data:`STOP_SHARE` of the shutdown timeout."""

    def __init__(self, store, settings, metrics):
        self._db = store_db(store)
        self._store = store
        self._settings = settings
        # one judgement at a time: two batches of the same player's solves judged at
        # once could store the one that read fewer solves last
        self._one_at_a_time = asyncio.Lock()
        self._marked: set[tuple[str, str]] = set()
        # players a judgement gave way on AGAIN_TRIES times, or failed: marked again after
        # RETRY_S
        self._deferred: set[tuple[str, str]] = set()
        # players whose next judgement is the one after a person cleared a flag of theirs
        # (which may end a case): kept until that judgement is stored
        self._after_review: set[tuple[str, str]] = set()
        self._wake = asyncio.Event()
        self._stop_by: float | None = None   # loop time a stop stops judging at
        self._task: asyncio.Task | None = None
        metrics.watch_players(lambda: store.read(sql.flagged_count))
        metrics.watch_players_to_judge(lambda: len(self._marked | self._deferred))

    async def start(self) -> None:
        """Mark the players left to judge, and start judging in the background."""
        self._stop_by = None
        self._marked.update(await asyncio.to_thread(self._store.read, sql.left_to_judge))
        self._task = asyncio.create_task(self._judge_marked(), name="fairgrid-verdicts")

    async def stop(self) -> None:
        """Judge the players still marked (scoring has stopped marking) until the stop's
        share of the shutdown timeout is spent, then stop."""
        loop = asyncio.get_running_loop()
        self._stop_by = loop.time() + STOP_SHARE * self._settings.server_shutdown_timeout_s
        self._wake.set()
        task, self._task = self._task, None
        if task is not None:
            # a stop that is itself cancelled leaves the judgement in flight to finish
            await asyncio.shield(task)

    async def after_scoring(self, sub_keys: list[int]) -> None:
        """Mark the players of a scored batch to be judged (see the class docstring)."""
        players = await asyncio.to_thread(self._store.read, sql.players_of, sub_keys)
        self._marked.update(players)
        self._wake.set()

    async def _judge_marked(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            failed = False
            while self._marked and not failed:
                if self._stop_by is not None and loop.time() > self._stop_by:
                    return
                failed = not await self._judge_chunk()
            if self._stop_by is not None:
                return          # what is left, or failed, the next start finds again
            try:
                await asyncio.wait_for(self._wake.wait(), RETRY_S if failed else None)
            except TimeoutError:
                pass
            self._wake.clear()

    async def _judge_chunk(self) -> bool:
        """Judge the first marked players; False, and they stay marked, on a failure."""
        chunk = sorted(self._marked)[:NIGHTLY_CHUNK]
        self._marked.difference_update(chunk)
        try:
            reviewed = [p for p in chunk if p in self._after_review]
            if reviewed:
                await self._judge_now(reviewed, after_review=True)
            await self._judge_now([p for p in chunk if p not in self._after_review])
            return True
        except Exception:  # noqa: BLE001 - a verdict must not stop judging the others
            log.exception("judging %d players failed; they are judged again in %.0f s",
                          len(chunk), RETRY_S)
            self._marked.update(chunk)
            return False

    async def after_flag_review(self, flag_ids: list[int], dismissed: list[int]) -> None:
        """Judge the flags' players again, each once (a bulk decision on a player's many
        flags is one judgement); ``dismissed``: those of the flags the decision cleared
        while they stood, whose players' cases it may end (see the module docstring)."""
        players = await asyncio.to_thread(self._store.read, sql.players_of_flags, flag_ids)
        ended = set(await asyncio.to_thread(self._store.read, sql.players_of_flags,
                                            dismissed)) if dismissed else set()
        if ended:
            await self.judge(sorted(ended), after_review=True)
        rest = [p for p in players if p not in ended]
        if rest:
            await self.judge(rest)

    async def judge(self, players: list[tuple[str, str]], after_review: bool = False
                    ) -> list[tuple[str, str]]:
        """Judge ``players`` now; a failure is logged (scoring and reviews go on) and
        the players are judged again after :data:`RETRY_S`, as after a review when
        this was one."""
        try:
            return await self._judge_now(players, after_review)
        except Exception:  # noqa: BLE001 - a verdict must not stop scoring
            log.exception("judging %d players failed; they are judged again in %.0f s",
                          len(players), RETRY_S)
            self._defer(players)    # (after a review: still marked so, unless decided)
            return []

    async def _judge_now(self, players: list[tuple[str, str]], after_review: bool = False
                         ) -> list[tuple[str, str]]:
        """:func:`judge_players` in a thread, one judgement at a time; raises its errors.
        Players whose row changed between the read and the write (a decision, or the
        nightly job's judgement) are judged again from the row as it is, for a decision
        that cleared a solve flag too (a case it ends must end)."""
        flagged: list[tuple[str, str]] = []
        asked = list(players)
        if after_review:    # until stored; a person's decision meanwhile drops it
            self._after_review.update(asked)
        async with self._one_at_a_time:
            for _ in range(AGAIN_TRIES):
                again: list[tuple[str, str]] = []
                flagged += await asyncio.to_thread(judge_players, self._db, players,
                                                   self._settings.scoring_player_alpha,
                                                   None, after_review, again)
                if after_review:    # a case a person decided on since is theirs now
                    again = [p for p in again if p in self._after_review]
                if not again:
                    break
                players = again
        if after_review:  # done, but for those it gave way on: theirs is still to come
            self._after_review.difference_update(set(asked) - set(again))
        if again:
            self._defer(again)
        return flagged

    def decided(self, portal: str, player: str) -> None:
        """A person decided on the player's case: a judgement still to come after an
        earlier cleared solve flag is an ordinary one now."""
        self._after_review.discard((portal, player))

    def _defer(self, players) -> None:
        """Mark ``players`` to be judged again :data:`RETRY_S` from now."""
        self._deferred.update(players)
        asyncio.get_running_loop().call_later(RETRY_S, self._undefer)

    def _undefer(self) -> None:
        """Mark the players judgements gave way on again, :data:`RETRY_S` after."""
        self._marked.update(self._deferred)
        self._deferred.clear()
        self._wake.set()
