"""A portal's side of fairgrid, in Python: a signing relay and a notification receiver.

Copy this file into your portal's server and adapt ``player_of`` and ``tournament_of``.
The page records the solve (portal/recorder) and POSTs its log here; this server, which
knows who is signed in, adds who solved which puzzle in which tournament and the solve's
id, signs the webhook with the portal's ``whsec_`` secret (the browser never sees it)
and delivers it to fairgrid, retrying what fairgrid asks to be retried. fairgrid's own
notifications (``flag.raised`` ...) arrive at ``/fairgrid/events`` and are taken only
with a valid signature.

    FAIRGRID_URL=http://127.0.0.1:8080 FAIRGRID_PORTAL=demo FAIRGRID_SECRET=whsec_... \
    FAIRGRID_NOTIFY_SECRET=whsec_... python relay.py --port 8090

Needs ``aiohttp`` and ``standardwebhooks`` (PyPI).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import email.utils
import hashlib
import json
import os
import random
from datetime import datetime, timezone

import aiohttp
from aiohttp import web
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

def retryable(status: int) -> bool:
    """Whether an answer is worth another try: any 5xx (fairgrid's, or a proxy's or a
    CDN's in front of it: 507, 520-524) and 429."""
    return status >= 500 or status == 429


SEEN_EVENTS = 10_000  # event ids remembered (keep them in your database to survive restarts)
SESSION = web.AppKey("session", aiohttp.ClientSession)


def retry_after_s(value: str | None) -> float | None:
    """Seconds a Retry-After header asks for (a number, or an HTTP date); None without one."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def submission_id_of(player_id: str, puzzle_id: str, started_at: str) -> str:
    """The solve's id, made here from who solved which puzzle when they started: a page
    that posts the same solve again (its answer lost) makes the same id, which fairgrid
    stores once, and no page can choose an id another player's solve would need (the
    webhook-id is made from it, and fairgrid refuses a used one)."""
    key = "\0".join((player_id, puzzle_id, started_at)).encode("utf-8", "surrogatepass")
    return "s-" + hashlib.sha256(key).hexdigest()[:32]


def webhook_body(portal: str, submission_id: str, player_id: str, puzzle_id: str,
                 log: dict, tournament_id: str | None = None) -> dict:
    """The solve webhook: who and what from the server, the rest from the recorder's log.
    Only the log's three fields are taken from the page."""
    body = {"type": "solve.completed", "portal": portal, "submission_id": submission_id,
            "player_id": player_id, "puzzle": {"id": puzzle_id},
            "started_at": log["started_at"], "moves": log["moves"]}
    if "client" in log:
        body["client"] = log["client"]
    if tournament_id:
        body["tournament_id"] = tournament_id
    return body


async def deliver(session: aiohttp.ClientSession, url: str, secret: str, body: dict, *,
                  attempts: int = 6, base_s: float = 0.5, cap_s: float = 30.0,
                  sleep=asyncio.sleep) -> tuple[int, dict]:
    """POST a signed solve to fairgrid: (status, answer). One webhook-id for every attempt,
    so fairgrid stores it once however often it arrives; a fresh signature each time (the
    timestamp must be recent). 5xx and 429 are retried after Retry-After when fairgrid
    gives one, else after an exponential, jittered backoff; a network error too. Any
    other answer is final: 4xx names the problem in its JSON body."""
    raw = json.dumps(body, separators=(",", ":"))
    msg_id = f"solve-{body['submission_id']}"
    webhook = Webhook(secret)
    for attempt in range(attempts):
        now = datetime.now(timezone.utc)
        headers = {"webhook-id": msg_id, "webhook-timestamp": str(int(now.timestamp())),
                   "webhook-signature": webhook.sign(msg_id, now, raw),
                   "content-type": "application/json"}
        wait = None
        try:
            async with session.post(url.rstrip("/") + "/v1/webhooks/solves", data=raw,
                                    headers=headers) as resp:
                answer = _answer(resp.status, await resp.read())
                if not retryable(resp.status) or attempt == attempts - 1:
                    return resp.status, answer
                # a gateway's "an hour" would hold the page's request as long: the cap
                asked = retry_after_s(resp.headers.get("Retry-After"))
                wait = None if asked is None else min(cap_s, asked)
        except (aiohttp.ClientError, asyncio.TimeoutError):
            if attempt == attempts - 1:
                raise
        if wait is None:
            wait = min(cap_s, base_s * 2 ** attempt) * random.uniform(0.5, 1.0)
        await sleep(wait)
    raise AssertionError("unreachable")


def _answer(status: int, raw: bytes) -> dict:
    """fairgrid's JSON answer; for a body that is none (a proxy's HTML page in front of
    fairgrid), an error saying so: the status still decides whether to retry."""
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = None
    return answer if isinstance(answer, dict) else {
        "error": f"an answer {status} with no JSON object in it (a proxy's?)"}


def player_of(request: web.Request) -> str:
    """Who is signed in. Replace with your session lookup: never trust the page for it.
    (This example reads a header your own front end would not let a player set.)"""
    return request.headers.get("X-Player", "anonymous")


def tournament_of(request: web.Request, puzzle_id: str) -> str | None:
    """Which tournament the puzzle is played in, or None. Replace with your own lookup:
    the page must not decide in which tournament its solve is judged."""
    return None


def make_app(fairgrid_url: str, portal: str, secret: str, notify_secret: str | None = None,
             player=player_of, on_event=None, tournament=tournament_of) -> web.Application:
    async def solve(request: web.Request) -> web.Response:
        try:
            page = await request.json()
            puzzle_id, log = page["puzzle_id"], page["log"]
            started_at = log["started_at"]
            if not (isinstance(puzzle_id, str) and isinstance(started_at, str)
                    and "moves" in log):
                raise TypeError
        except (ValueError, KeyError, TypeError, RecursionError):  # nested past the parser
            return web.json_response(
                {"error": "expected {puzzle_id, log: {started_at, moves, client}}"},
                status=400)
        player_id = player(request)
        submission_id = submission_id_of(player_id, puzzle_id, started_at)
        body = webhook_body(portal, submission_id, player_id, puzzle_id, log,
                            tournament(request, puzzle_id))
        try:
            status, answer = await deliver(request.app[SESSION], fairgrid_url, secret, body)
        except (aiohttp.ClientError, asyncio.TimeoutError):
            return web.json_response({"error": "fairgrid unreachable"}, status=502)
        # fairgrid's answer, passed on: the page shows a 4xx's field to the player's portal
        return web.json_response({"submission_id": submission_id, "status": status,
                                  "fairgrid": answer}, status=200 if status < 300 else 502)

    seen: collections.OrderedDict[str, None] = collections.OrderedDict()  # events taken
    taking: dict[str, asyncio.Future] = {}  # events being handled now, each settled when done

    async def event(request: web.Request) -> web.Response:
        raw = await request.read()
        try:
            payload = Webhook(notify_secret).verify(raw, dict(request.headers))
        except (WebhookVerificationError, ValueError):  # ValueError: not UTF-8, not "v1,..."
            return web.json_response({"error": "bad signature"}, status=401)
        # at least once: a retry (or a replay within the signature's five minutes) of an
        # event already taken is acknowledged, not handled twice. A copy arriving while
        # the first is handled waits for it: acknowledged once that one is taken, handled
        # itself if that one failed (acknowledged at once, it would have lost the event)
        event_id = request.headers.get("webhook-id", "")
        while event_id in taking:
            await asyncio.shield(taking[event_id])
        if event_id in seen:
            return web.Response(status=204)
        done = taking[event_id] = asyncio.get_running_loop().create_future()
        try:
            if on_event is not None:
                await on_event(payload)
            seen[event_id] = None
            if len(seen) > SEEN_EVENTS:
                seen.popitem(last=False)
        finally:
            del taking[event_id]
            done.set_result(None)
        return web.Response(status=204)

    async def session(app: web.Application):
        app[SESSION] = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
        yield
        await app[SESSION].close()

    app = web.Application()
    app.cleanup_ctx.append(session)
    app.router.add_post("/solves", solve)
    if notify_secret:
        app.router.add_post("/fairgrid/events", event)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8090)
    args = parser.parse_args()

    async def show(event: dict) -> None:
        print(json.dumps(event), flush=True)

    app = make_app(os.environ["FAIRGRID_URL"], os.environ["FAIRGRID_PORTAL"],
                   os.environ["FAIRGRID_SECRET"], os.environ.get("FAIRGRID_NOTIFY_SECRET"),
                   on_event=show)
    web.run_app(app, host=args.host, port=args.port, print=None)


if __name__ == "__main__":
    main()
