"""Delivery of outgoing notifications from the outbox (``store.repository.outbox``).

Events (``flag.raised``, ``flag.reviewed``, ``player.flagged``, ``ratings.updated``) are
written to the outbox in the transaction that makes them happen, so none is lost over a
restart or a kill. This task sends what is due to the portal's endpoint, signed as Standard Webhooks
prescribe (the event id is the ``webhook-id``: receivers deduplicate on it), and records
each attempt. A 2xx is delivered; anything else, a redirect included (it is never
followed: the signed body goes to the URL the admin set and nowhere else), is retried
with exponential backoff and jitter (``notify.backoff_s`` doubling up to
``notify.backoff_max_s``) until ``notify.give_up_hours`` after the event, when it is
marked failed (visible in the API, the CLI and the console, and redeliverable). Only
the first ``ANSWER_BYTES`` of an answer are read.

Each portal's endpoint is delivered to on its own: a round takes up to ``PER_PORTAL``
due events of every portal not already being delivered to, and each portal's share
runs as its own task (``PER_ENDPOINT`` requests at a time) that records its outcomes
as soon as it is done. A slow or absent receiver therefore delays only its own
portal's events, never another portal's, and never ingestion, which shares only the
writer, for one small transaction per portal's share.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import time
from datetime import datetime, timedelta, timezone

import aiohttp

from ..ingest.signatures import sign
from ..text import shown
from ..store.repository import outbox as sql

log = logging.getLogger("fairgrid.notify")
PER_PORTAL = 16      # due events of one portal taken in one round
PER_ENDPOINT = 4     # requests in flight to one portal's endpoint
ANSWER_BYTES = 64 * 1024  # the status is what counts: more of an answer is never read


def backoff_s(attempts: int, base: float, cap: float, rng: random.Random) -> float:
    """The wait before attempt ``attempts + 1``: doubling from ``base`` up to ``cap``, with
    jitter (half to all of it), so receivers coming back are not hit all at once."""
    return min(cap, base * 2 ** max(0, attempts - 1)) * rng.uniform(0.5, 1.0)


async def _read_some(resp: aiohttp.ClientResponse, limit: int) -> None:
    """Read at most ``limit`` bytes of an answer; a longer one's connection is closed
    on release instead of read to its end."""
    while limit > 0:
        chunk = await resp.content.read(limit)
        if not chunk:
            return
        limit -= len(chunk)


class Notifier:
    def __init__(self, store, settings, metrics):
        self._store = store
        self._settings = settings
        self._metrics = metrics
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._portals: dict[str, asyncio.Task] = {}  # portal -> its delivery in flight
        self._session: aiohttp.ClientSession | None = None
        self._rng = random.Random()
        metrics.watch_notifications(lambda: store.read(sql.stats, datetime.now(timezone.utc)))

    async def start(self) -> None:
        # no connection limit across endpoints: one portal's slow receiver must not hold
        # the connections another portal's delivery needs (PER_ENDPOINT bounds each)
        self._session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self._settings.notify_timeout_s),
            connector=aiohttp.TCPConnector(limit=0))
        self._task = asyncio.create_task(self._run(), name="fairgrid-notify")

    async def stop(self) -> None:
        tasks = [t for t in (self._task, *self._portals.values()) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._session is not None:
            await self._session.close()

    def wake(self) -> None:
        """Look for due events now (a redelivery asked for)."""
        self._wake.set()

    async def _run(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._wake.wait(), self._settings.notify_poll_s)
            except asyncio.TimeoutError:
                pass
            self._wake.clear()
            try:
                await self._round()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - delivery retries; the loop must live on
                log.exception("notification delivery failed")

    async def _round(self) -> None:
        """Start a delivery task for every portal with due events and none in flight."""
        now = datetime.now(timezone.utc)
        busy = sorted(p for p, t in self._portals.items() if not t.done())
        rows = await asyncio.to_thread(self._store.read, sql.due, now, PER_PORTAL, busy)
        by_portal: dict[str, list[dict]] = {}
        for row in rows:
            by_portal.setdefault(row["portal"], []).append(row)
        for portal, mine in by_portal.items():
            task = asyncio.create_task(self._portal(mine), name=f"fairgrid-notify-{portal}")
            self._portals[portal] = task
            task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task) -> None:
        for portal, mine in list(self._portals.items()):
            if mine is task:
                del self._portals[portal]

    async def _portal(self, rows: list[dict]) -> None:
        """Deliver one portal's due events, ``PER_ENDPOINT`` at a time, and record them."""
        gate = asyncio.Semaphore(PER_ENDPOINT)

        async def one(row):
            async with gate:
                return await self._deliver(row)
        try:
            results = await asyncio.gather(*(one(r) for r in rows))
            await asyncio.wrap_future(self._store.write(sql.record_attempts, results))
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - the events stay due and are tried again
            log.exception("notification delivery to %s failed", rows[0]["portal"])
            return
        if len(rows) >= PER_PORTAL:
            self._wake.set()  # more of this portal's may be due

    async def _post(self, url: str, body: bytes, headers: dict) -> tuple[int, str | None]:
        """(status, error or None) of one signed POST; redirects are answers, not
        followed."""
        async with self._session.post(url, data=body, headers=headers,
                                      allow_redirects=False) as resp:
            if 200 <= resp.status < 300:
                # only the status counts: an answer cut short after it is still delivered
                with contextlib.suppress(aiohttp.ClientError, asyncio.TimeoutError, OSError):
                    await _read_some(resp, ANSWER_BYTES)
                return resp.status, None
            await _read_some(resp, ANSWER_BYTES)
            if 300 <= resp.status < 400:
                # the receiver's bytes, as text a terminal, a page and UTF-8 storage take
                target = shown(resp.headers.get("Location", "")[:200]) or "nowhere"
                return resp.status, (f"HTTP {resp.status}: a redirect to {target}, not "
                                     f"followed (set the endpoint to the final URL)")
            return resp.status, f"HTTP {resp.status}"

    async def _deliver(self, row: dict) -> tuple:
        status, error = None, None
        if row["url"] is None:
            error = "the portal has no notification endpoint any more"
        else:
            body = row["payload"].encode()
            # the envelope carries the id too, for receivers that log bodies only
            doc = json.loads(body)
            doc["id"] = row["id"]
            body = json.dumps(doc, separators=(",", ":")).encode()
            headers = sign(row["secret"], row["id"], int(time.time()), body)
            try:
                status, error = await self._post(row["url"], body, headers)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - whatever the receiver or its URL
                # does is this attempt's failure, recorded and retried like any other
                error = shown(f"{type(exc).__name__}: {exc}"[:300] if str(exc)
                              else type(exc).__name__)
        now = datetime.now(timezone.utc)
        attempts = row["attempts"] + 1
        s = self._settings
        if error is None:
            self._metrics.notify_attempts.labels("delivered").inc()
            return (row["id"], "delivered", attempts, now, now, status, None, row["retry_from"])
        if now - row["retry_from"] >= timedelta(hours=s.notify_give_up_hours) \
                or row["url"] is None:
            self._metrics.notify_attempts.labels("failed").inc()
            log.warning("notification %s to %s failed for good: %s", row["id"], row["portal"],
                        error)
            return (row["id"], "failed", attempts, now, None, status, error, row["retry_from"])
        self._metrics.notify_attempts.labels("retry").inc()
        wait = backoff_s(attempts, s.notify_backoff_s, s.notify_backoff_max_s, self._rng)
        return (row["id"], "pending", attempts, now + timedelta(seconds=wait), None, status,
                error, row["retry_from"])
