"""Delivery of outgoing notifications from the outbox (``store.repository.outbox``).

Events (``flag.raised``, ``flag.reviewed``, ``ratings.updated``) are written to the
outbox in the transaction that makes them happen, so none is lost over a restart or a
kill. This task sends what is due to the portal's endpoint, signed as Standard Webhooks
prescribe (the event id is the ``webhook-id``: receivers deduplicate on it), and records
each attempt. A 2xx is delivered; anything else is retried with exponential backoff and
jitter (``notify.backoff_s`` doubling up to ``notify.backoff_max_s``) until
``notify.give_up_hours`` after the event, when it is marked failed (visible in the API,
the CLI and the console, and redeliverable). Delivery runs on the event loop with
bounded concurrency and a timeout per attempt: a slow or absent receiver never holds up
ingestion, which shares only the writer, for one small transaction per batch.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from datetime import datetime, timedelta, timezone

import aiohttp

from ..ingest.signatures import sign
from ..store.repository import outbox as sql

log = logging.getLogger("fairgrid.notify")
BATCH = 64
CONCURRENCY = 8


def backoff_s(attempts: int, base: float, cap: float, rng: random.Random) -> float:
    """The wait before attempt ``attempts + 1``: doubling from ``base`` up to ``cap``, with
    jitter (half to all of it), so receivers coming back are not hit all at once."""
    return min(cap, base * 2 ** max(0, attempts - 1)) * rng.uniform(0.5, 1.0)


class Notifier:
    def __init__(self, store, settings, metrics):
        self._store = store
        self._settings = settings
        self._metrics = metrics
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._session: aiohttp.ClientSession | None = None
        self._rng = random.Random()
        metrics.watch_notifications(lambda: store.read(sql.stats, datetime.now(timezone.utc)))

    async def start(self) -> None:
        self._session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self._settings.notify_timeout_s))
        self._task = asyncio.create_task(self._run(), name="fairgrid-notify")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
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
                if await self._round() >= BATCH:
                    self._wake.set()  # more may be due
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - delivery retries; the loop must live on
                log.exception("notification delivery failed")

    async def _round(self) -> int:
        now = datetime.now(timezone.utc)
        rows = await asyncio.to_thread(self._store.read, sql.due, now, BATCH)
        if not rows:
            return 0
        gate = asyncio.Semaphore(CONCURRENCY)

        async def one(row):
            async with gate:
                return await self._deliver(row)
        results = await asyncio.gather(*(one(r) for r in rows))
        await asyncio.wrap_future(self._store.write(sql.record_attempts, results))
        return len(rows)

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
                async with self._session.post(row["url"], data=body, headers=headers) as resp:
                    status = resp.status
                    await resp.read()
                    if not 200 <= status < 300:
                        error = f"HTTP {status}"
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
                error = f"{type(exc).__name__}: {exc}"[:300] or type(exc).__name__
        now = datetime.now(timezone.utc)
        attempts = row["attempts"] + 1
        s = self._settings
        if error is None:
            self._metrics.notify_attempts.labels("delivered").inc()
            return (row["id"], "delivered", attempts, now, now, status, None)
        if now - row["retry_from"] >= timedelta(hours=s.notify_give_up_hours) \
                or row["url"] is None:
            self._metrics.notify_attempts.labels("failed").inc()
            log.warning("notification %s to %s failed for good: %s", row["id"], row["portal"],
                        error)
            return (row["id"], "failed", attempts, now, None, status, error)
        self._metrics.notify_attempts.labels("retry").inc()
        wait = backoff_s(attempts, s.notify_backoff_s, s.notify_backoff_max_s, self._rng)
        return (row["id"], "pending", attempts, now + timedelta(seconds=wait), None, status,
                error)
