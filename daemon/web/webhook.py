"""The solve webhook: verify -> validate -> resolve the puzzle -> queue the write -> 202 once
committed. Every request is counted once, by portal and outcome
(``fairgrid_webhook_requests_total``); a failure is raised and answered by
``middleware.errors_middleware``."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from aiohttp import web

from fairgrid.solvers.puzzle_types import DEFAULT_TYPE

from ..errors import Conflict, ValidationError
from ..ingest import check_and_replay, parse_body
from ..ingest.puzzles import PuzzleInfo, canonical_text
from ..ingest.signatures import SignatureError
from ..ingest.solve import EARLIEST_START, SolveEvent
from ..store import QueueFull, StoreError, SubmissionRecord, WriteResult
from .context import CTX
from .responses import check_json_type, read_body


# the two everyday answers, encoded once (json.dumps per webhook cost ~2 % of its time)
_ACCEPTED = b'{"status": "accepted"}'
_DUPLICATE = b'{"status": "duplicate"}'


# a log that ends further ahead of the receipt than this is a wrong date, not a clock off
CLOCK_AHEAD_TAKEN = timedelta(days=1)
# spellings of a known puzzle's givens remembered as matching it (saving the parse): a
# portal that sends new spellings without end must not grow the daemon's memory
MATCHING_TEXTS = 16


def _check_times(event, received_at: datetime, skew_s: int) -> bool:
    """A solve starts within the window fairgrid stores (EARLIEST_START to its receipt
    plus the clock skew) and cannot end after it was received (beyond the skew). A log
    that ends later, but within :data:`CLOCK_AHEAD_TAKEN`, came from a clock running
    ahead (a player's computer, where the page records the solve): its ``started_at`` is
    taken as the latest the log allows, the receipt less the last move's ``t_ms``, and
    True returned. The stored body keeps what was sent, so a retry is a duplicate."""
    latest = received_at + timedelta(seconds=skew_s)
    if event.started_at < EARLIEST_START:
        raise ValidationError("started_at", f"is before {EARLIEST_START.date().isoformat()}"
                              f": {event.started_at.isoformat()}")
    last = timedelta(milliseconds=int(event.t_ms[-1]) if event.t_ms.size else 0)
    if event.started_at + last <= latest:
        return False
    if event.started_at > received_at + CLOCK_AHEAD_TAKEN:
        raise ValidationError("started_at", f"is in the future: {event.started_at.isoformat()} "
                              f"is more than a day after the webhook was received")
    if event.started_at + last > received_at + CLOCK_AHEAD_TAKEN \
            or received_at - last < EARLIEST_START:
        raise ValidationError(f"moves[{event.t_ms.size - 1}].t_ms",
                              "ends in the future: started_at plus t_ms is more than a day "
                              "after the webhook was received")
    event.started_at = received_at - last
    return True


@dataclass(frozen=True, eq=False)
class ResolvedPuzzle:
    """The puzzle a solve is of: a registered one, or one its givens will register."""

    info: PuzzleInfo
    new: tuple[str, int, str, str] | None = None  # (givens, box size, solution, type) to claim


async def handle_solve(request: web.Request) -> web.Response:
    """``POST /v1/webhooks/solves``: verify, validate, queue, 202 once committed."""
    ctx = request.app[CTX]
    received = time.monotonic()
    received_at = datetime.now(timezone.utc)
    portal = "unknown"
    try:
        body = await read_body(request)  # 413 past server.max_body_bytes: counted as invalid
        portal, webhook_id = await _verify(ctx, request.headers, body)
        check_json_type(request)
        event = parse_body(body)
        if event.portal != portal:
            ctx.metrics.signature_failures.labels("wrong_portal").inc()
            raise SignatureError("wrong_portal",
                                 "the body's portal is not the portal that signed it")
        ahead = _check_times(event, received_at, ctx.settings.webhooks_time_skew_s)
        puzzle = await _resolve_puzzle(ctx, portal, event)
        info = puzzle.info
        complete = check_and_replay(event, info.givens_array, info.solution_array,
                                    info.max_value, info.blank)
        ctx.store.erased.check(event.portal, event.player_id)  # 410; no await before submit
        record = SubmissionRecord.of(event, info.id, webhook_id, received_at, complete,
                                     body.decode("utf-8"), puzzle.new)
        result = await ctx.store.writer.submit(record, asyncio.get_running_loop())
    except Exception as exc:
        _count(ctx, portal, _outcome_of(exc))
        raise
    _count(ctx, portal, result.outcome)
    if ahead and result.outcome == "accepted":
        ctx.metrics.clock_ahead.labels(portal).inc()
    ctx.metrics.ingest_latency.observe(result.committed_at - received)
    return _answer(ctx, event, webhook_id, puzzle, result)


async def _verify(ctx, headers, body: bytes) -> tuple[str, str]:
    """(portal, webhook-id) of a body signed by one of a portal's secrets; SignatureError
    (401) otherwise, after looking once more at the secrets' files (a portal added, or a
    secret rotated, since they were read)."""
    verifier = ctx.verifier
    try:
        try:
            return verifier.verify(headers, body, time.time())
        except SignatureError as exc:
            # another request may have reloaded meanwhile: the verifier is then a new one
            if exc.reason != "bad_signature" or not (
                    await asyncio.to_thread(ctx.secrets.reload)
                    or ctx.verifier is not verifier):
                raise
            return ctx.verifier.verify(headers, body, time.time())
    except SignatureError as exc:
        ctx.metrics.signature_failures.labels(exc.reason).inc()
        raise


async def _resolve_puzzle(ctx, portal: str, event: SolveEvent) -> ResolvedPuzzle:
    """The puzzle the portal calls ``event.puzzle_id``, its givens and type checked
    against the body's; a puzzle it does not know yet from the body's givens (checked to
    be unique), to register with the solve; ValidationError naming the field
    otherwise."""
    info = await ctx.catalog.lookup(portal, event.puzzle_id)
    if info is None:
        if event.givens is None:
            raise ValidationError("puzzle.givens",
                                  "unknown puzzle: register it or send its givens")
        type_name = event.puzzle_type or DEFAULT_TYPE
        new = (*await ctx.catalog.check(event.givens, "puzzle.givens", type_name, portal),
               type_name)
        return ResolvedPuzzle(PuzzleInfo(event.puzzle_id, *new), new)
    if event.puzzle_type not in (None, info.puzzle_type):
        raise ValidationError("puzzle.puzzle_type",
                              f"the registered puzzle is {info.puzzle_type}")
    if event.givens is not None and event.givens not in info.matching_texts:
        givens = canonical_text(event.givens, "puzzle.givens", info.puzzle_type)
        if givens != info.givens:
            raise ValidationError("puzzle.givens", "givens disagree with the registered puzzle")
        if len(info.matching_texts) < MATCHING_TEXTS:   # a portal's spellings, bounded
            info.matching_texts.add(event.givens)
    return ResolvedPuzzle(info)


def _answer(ctx, event: SolveEvent, webhook_id: str, puzzle: ResolvedPuzzle,
            result: WriteResult) -> web.Response:
    """The answer to a write's outcome: 202 (and the solve queued for scoring, its
    puzzle for analysis when new), 200 for a duplicate, Conflict (409) otherwise."""
    if result.outcome == "accepted":
        if puzzle.new is not None:
            # not remembered from this request: the writer's claim decided which puzzle
            # the name is, and the next lookup reads it; a puzzle another solve
            # registered first may already be ready, so the solve is queued too
            ctx.analysis.schedule(result.puzzle_id, len(puzzle.info.solution),
                                  WEBHOOK_LANE_SHARE, owner=event.portal)
        ctx.scorer.schedule(result.sub_key)
        return web.Response(body=_ACCEPTED, status=202, content_type="application/json",
                            charset="utf-8")
    if result.outcome == "duplicate":
        ctx.metrics.duplicates.labels(event.portal).inc()
        return web.Response(body=_DUPLICATE, status=200, content_type="application/json",
                            charset="utf-8")
    if result.outcome == "puzzle_conflict":
        raise Conflict("puzzle.givens", f"this portal's puzzle {event.puzzle_id!r} was "
                                        f"registered meanwhile with other givens or another type")
    if result.outcome == "hook_conflict":
        raise Conflict("webhook-id", f"webhook-id {webhook_id!r} was already used for "
                                     f"another message (a retry must resend the same body; "
                                     f"a new message needs a new id)")
    raise Conflict("submission_id", f"submission {event.submission_id!r} was already stored "
                                    f"with other content")


# the share of an analysis lane a webhook's new puzzle is queued into at once; past it the
# sweep queues it, the portals in turn: one portal's flood of new puzzles keeps half the
# lane at most, and the lane takes its puzzles by turns of the portals, so another
# portal's puzzle waits a turn, not the flood
WEBHOOK_LANE_SHARE = 0.5
# the dashboard's outcomes: every kind of conflicting resubmission counts as one
_OUTCOMES = {"hook_conflict": "conflict", "puzzle_conflict": "conflict"}


def _outcome_of(exc: Exception) -> str:
    """How a failed request counts."""
    if isinstance(exc, SignatureError):
        return "unauthorized"
    if isinstance(exc, (QueueFull, StoreError)):
        return "overloaded"
    return "invalid"


def _count(ctx, portal: str, outcome: str) -> None:
    ctx.metrics.webhook_requests.labels(portal, _OUTCOMES.get(outcome, outcome)).inc()
