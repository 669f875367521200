"""A portal taken out of the configuration keeps its notification endpoint, and its
events go on, until an operator turns them off: ``fairgrid notify X --off`` (DELETE
/v1/portals/X/notify) works for such a portal, which is no longer configured."""

from __future__ import annotations

import asyncio

from fairgrid.daemon.app import create_app
from fairgrid.daemon.testing import SECRET_A
from fairgrid.daemon.web.context import CTX

from ..helpers import ADMIN, OTHER_SECRET, bearer, make_settings, query


async def test_a_portal_taken_out_of_the_config_gets_no_more_events(aiohttp_client,
                                                                    tmp_path):
    both = {"demo": (SECRET_A,), "other": (OTHER_SECRET,)}
    first = await aiohttp_client(create_app(make_settings(tmp_path, portals=both,
                                                          nightly_cron="")))
    resp = await first.put("/v1/portals/other/notify",
                           json={"url": "https://other.example/fairgrid-events"},
                           headers=bearer(ADMIN))
    assert resp.status == 200
    await first.close()

    # "other" leaves: the daemon restarts without it
    client = await aiohttp_client(create_app(make_settings(
        tmp_path, portals={"demo": (SECRET_A,)}, nightly_cron="", notify_poll_s=3600.0)))
    off = await client.delete("/v1/portals/other/notify", headers=bearer(ADMIN))
    runner = client.app[CTX].nightly
    resp = await client.post("/v1/nightly-runs", headers=bearer(ADMIN))
    assert resp.status == 202
    await asyncio.wait_for(asyncio.gather(runner._task, return_exceptions=True), 120)
    events = query(client.app[CTX].store,
                   "SELECT type, payload FROM outbox WHERE portal = 'other'")
    assert events == [], (
        f"`fairgrid notify other --off` answered {off.status} "
        f"{(await off.json()).get('error')!r}, and the nightly run queued {events} "
        f"for the removed portal's URL")
