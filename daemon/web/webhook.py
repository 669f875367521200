"""The solve webhook: verify -> validate -> queue the write -> 202 once committed."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta, timezone

from aiohttp import web

from ..ingest import ValidationError, check_and_replay, parse_body
from ..ingest.puzzles import SUDOKU, PuzzleInfo, canonical_text, check_puzzle
from ..ingest.signatures import SignatureError
from ..ingest.solve import EARLIEST_START
from ..store import SubmissionRecord
from .context import CTX, json_response


# the two everyday answers, encoded once (json.dumps per webhook cost ~2 % of its time)
_ACCEPTED = b'{"status": "accepted"}'
_DUPLICATE = b'{"status": "duplicate"}'


def _check_content_type(request: web.Request) -> None:
    """The body must be labelled JSON in UTF-8 (415 otherwise): a sender labelling it
    anything else is misconfigured, and saying so is clearer than a JSON error."""
    if request.content_type != "application/json" or (
            request.charset not in (None, "utf-8", "utf8")):
        raise ValidationError("content-type", "must be application/json (UTF-8), not "
                              f"{request.headers.get('Content-Type', 'missing')[:100]!r}", 415)


def _check_times(event, received_at: datetime, skew_s: int) -> None:
    """A solve starts within the window fairgrid stores (EARLIEST_START to its receipt
    plus the clock skew) and cannot end after it was received (beyond the skew)."""
    latest = received_at + timedelta(seconds=skew_s)
    if event.started_at < EARLIEST_START:
        raise ValidationError("started_at", f"is before {EARLIEST_START.date().isoformat()}"
                              f": {event.started_at.isoformat()}")
    if event.started_at > latest:
        raise ValidationError("started_at", f"is in the future: {event.started_at.isoformat()} "
                              f"is more than {skew_s} s after the webhook was received")
    if event.t_ms.size and event.started_at + timedelta(
            milliseconds=int(event.t_ms[-1])) > latest:
        raise ValidationError(f"moves[{event.t_ms.size - 1}].t_ms",
                              f"ends in the future: started_at plus t_ms is more than "
                              f"{skew_s} s after the webhook was received")


async def handle_solve(request: web.Request) -> web.Response:
    """``POST /v1/webhooks/solves``: verify, validate, queue, 202 once committed."""
    ctx = request.app[CTX]
    received = time.monotonic()
    received_at = datetime.now(timezone.utc)
    body = await request.read()  # 413 past server.max_body_bytes
    try:
        verifier = ctx.verifier
        try:
            portal, webhook_id = verifier.verify(request.headers, body, time.time())
        except SignatureError as exc:
            # a portal added (or a secret rotated) since the start: look at the file again
            # (or another request already did: the verifier is then a new one)
            if exc.reason != "bad_signature" or not (
                    await asyncio.to_thread(ctx.reload_portals) or ctx.verifier is not verifier):
                raise
            portal, webhook_id = ctx.verifier.verify(request.headers, body, time.time())
    except SignatureError as exc:
        ctx.metrics.signature_failures.labels(exc.reason).inc()
        ctx.metrics.webhook_requests.labels("unknown", "unauthorized").inc()
        raise
    except ValidationError:  # a malformed webhook-id
        ctx.metrics.webhook_requests.labels("unknown", "invalid").inc()
        raise
    try:
        _check_content_type(request)
        event = parse_body(body)
        if event.portal != portal:
            ctx.metrics.signature_failures.labels("wrong_portal").inc()
            raise SignatureError("wrong_portal",
                                 "the body's portal is not the portal that signed it")
        _check_times(event, received_at, ctx.settings.webhooks_time_skew_s)
        info = await ctx.puzzles.lookup(portal, event.puzzle_id)
        new_puzzle = None
        if info is None:
            if event.givens is None:
                raise ValidationError("puzzle.givens",
                                      "unknown puzzle: register it or send its givens")
            kind = event.puzzle_type or SUDOKU
            new_puzzle = (*await asyncio.to_thread(check_puzzle, event.givens,
                                                   "puzzle.givens", kind), kind)
            info = PuzzleInfo(event.puzzle_id, *new_puzzle)
        else:
            if event.puzzle_type not in (None, info.puzzle_type):
                raise ValidationError("puzzle.puzzle_type",
                                      f"the registered puzzle is {info.puzzle_type}")
            if event.givens is not None and event.givens not in info.matching_texts:
                givens = canonical_text(event.givens, "puzzle.givens", info.puzzle_type)
                if givens != info.givens:
                    raise ValidationError("puzzle.givens",
                                          "givens disagree with the registered puzzle")
                info.matching_texts.add(event.givens)
        complete = check_and_replay(event, info.givens_array, info.solution_array,
                                    info.max_value, info.blank)
    except (ValidationError, SignatureError) as exc:
        outcome = "unauthorized" if isinstance(exc, SignatureError) else "invalid"
        ctx.metrics.webhook_requests.labels(portal, outcome).inc()
        raise
    ctx.store.erased.check(event.portal, event.player_id)  # 410; no await before submit
    record = SubmissionRecord.of(event, info.id, webhook_id, received_at, complete,
                                 body.decode("utf-8"), new_puzzle)
    try:
        fut = ctx.store.writer.submit(record, asyncio.get_running_loop())
    except Exception:
        ctx.metrics.webhook_requests.labels(portal, "overloaded").inc()
        raise
    result = await fut
    ctx.metrics.ingest_latency.observe(result.committed_at - received)
    # every kind of conflicting resubmission counts as one outcome on the dashboard
    ctx.metrics.webhook_requests.labels(
        portal, "conflict" if result.outcome in ("hook_conflict", "puzzle_conflict")
        else result.outcome).inc()
    if result.outcome == "accepted":
        if new_puzzle is not None:
            # not remembered from this request: the writer's claim decided which puzzle
            # the name is, and the next lookup reads it; a puzzle another solve
            # registered first may already be ready, so the solve is queued too
            ctx.puzzles.schedule(result.puzzle_id, len(info.solution))
        ctx.scorer.schedule(result.sub_key)
        return web.Response(body=_ACCEPTED, status=202, content_type="application/json",
                            charset="utf-8")
    if result.outcome == "duplicate":
        ctx.metrics.duplicates.labels(portal).inc()
        return web.Response(body=_DUPLICATE, status=200, content_type="application/json",
                            charset="utf-8")
    if result.outcome == "puzzle_conflict":
        raise ValidationError("puzzle.givens",
                              f"this portal's puzzle {event.puzzle_id!r} was registered "
                              f"meanwhile with other givens or another type", 409)
    if result.outcome == "hook_conflict":
        return json_response(
            {"error": f"webhook-id {webhook_id!r} was already used for another message "
                      f"(a retry must resend the same body; a new message needs a new id)",
             "field": "webhook-id"}, status=409)
    return json_response(
        {"error": f"submission {event.submission_id!r} was already stored with other content",
         "field": "submission_id"}, status=409)
