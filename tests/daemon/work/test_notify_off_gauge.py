"""After ``fairgrid notify acme --off``, the portal's events still queued will never go
(they end ``failed``: no endpoint any more), and nobody is waiting for them: they leave
``fairgrid_notifications_oldest_undelivered_seconds``, so FairgridNotificationsStuck,
which reads it, does not fire for good over a stop the operator asked for."""

from __future__ import annotations

import asyncio
import re

from fairgrid.daemon.app import create_app
from fairgrid.daemon.testing import EASY_ROW_COPY as ROW_COPY
from fairgrid.daemon.testing import free_port
from fairgrid.daemon.web.context import CTX

from ..helpers import (ADMIN, ORGANISER, bearer, make_settings, signed,
                                  solve_body, until)

FAST = dict(notify_backoff_s=0.05, notify_backoff_max_s=0.2, notify_poll_s=0.05)


async def _notes(client):
    resp = await client.get("/v1/notifications", headers=bearer(ORGANISER))
    return (await resp.json())["notifications"]


async def _oldest(client) -> float:
    text = await (await client.get("/metrics")).text()
    return float(re.search(r"^fairgrid_notifications_oldest_undelivered_seconds (\S+)$",
                           text, re.M).group(1))


async def test_turning_a_portals_notifications_off_does_not_leave_an_alert_for_ever(
        aiohttp_client, tmp_path):
    client = await aiohttp_client(create_app(make_settings(tmp_path, **FAST)))
    dead = f"http://127.0.0.1:{free_port()}/hook"  # the receiver is down
    resp = await client.put("/v1/portals/demo/notify", json={"url": dead},
                            headers=bearer(ADMIN))
    assert resp.status == 200
    raw, headers = signed(solve_body(submission_id="copy", moves=ROW_COPY), msg_id="copy")
    assert (await client.post("/v1/webhooks/solves", data=raw, headers=headers)).status == 202

    async def tried():
        notes = await _notes(client)
        return notes and notes[0]["attempts"] >= 1
    await until(tried)

    # the operator gives up on this portal's receiver: its events stop
    resp = await client.delete("/v1/portals/demo/notify", headers=bearer(ADMIN))
    assert resp.status == 200

    async def settled():
        return [n["state"] for n in await _notes(client)] != ["pending"]
    await until(settled, 60)
    note = (await _notes(client))[0]

    # two hours later (the event's clock moved back instead of waiting)
    store = client.app[CTX].store
    await asyncio.wrap_future(store.write(lambda con: con.execute(
        "UPDATE outbox SET created_at = created_at - INTERVAL 2 HOUR")))
    assert note["state"] == "failed"
    assert await _oldest(client) == 0, (
        "an event that will never go (the portal's notifications are off) kept "
        "FairgridNotificationsStuck firing")
    # turned on again, the same event waits for that endpoint, and counts again
    resp = await client.put("/v1/portals/demo/notify", json={"url": dead},
                            headers=bearer(ADMIN))
    assert resp.status == 200
    assert await _oldest(client) > 3600
