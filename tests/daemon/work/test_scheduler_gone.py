"""The scheduler goes away (a crash, a restart, a network cut) while the daemon's client
is connected: a puzzle registered then waits ``pending`` with ``waiting_for`` until the
cluster is back (docs/scaling.md), never ``invalid``. The client is "connecting" then,
which is no connection, and a call that finds the scheduler gone since the check says
the cluster is unavailable, not that the puzzle failed."""

from __future__ import annotations

import asyncio

import pytest

from fairgrid.daemon.app import create_app
from fairgrid.daemon.testing import free_port

from ...fixtures import EASY, MEDIUM
from ..helpers import ADMIN, ORGANISER, bearer, make_settings, until

pytestmark = pytest.mark.slow


async def test_a_puzzle_registered_just_after_the_scheduler_went_away_stays_pending(
        aiohttp_client, tmp_path):
    from distributed import LocalCluster

    port = free_port()
    cluster = await asyncio.to_thread(LocalCluster, n_workers=1, threads_per_worker=1,
                                      processes=False, protocol="tcp://",
                                      scheduler_port=port, dashboard_address=":0",
                                      silence_logs=40)
    client = await aiohttp_client(create_app(make_settings(
        tmp_path, compute_scheduler=f"tcp://127.0.0.1:{port}", compute_retry_s=0.5)))
    try:
        async def status(pid):
            return await (await client.get(f"/v1/puzzles/{pid}",
                                           headers=bearer(ORGANISER))).json()

        resp = await client.post("/v1/puzzles", json={"id": "first", "givens": EASY},
                                 headers=bearer(ADMIN))
        assert resp.status == 201

        async def first_ready():
            return (await status("first"))["status"] == "ready"
        await until(first_ready, 180)  # analysed on the cluster: the client is connected

        await asyncio.to_thread(cluster.close)  # the scheduler goes away
        cluster = None
        resp = await client.post("/v1/puzzles", json={"id": "second", "givens": MEDIUM},
                                 headers=bearer(ADMIN))
        assert resp.status == 201
        seen = []

        async def decided():
            doc = await status("second")
            seen.append(doc)
            return doc["status"] != "pending" or doc.get("waiting_for")
        await until(decided, 60)
        doc = seen[-1]
        assert doc["status"] == "pending", f"{doc['status']}: {doc.get('error')}"
        assert doc["waiting_for"]
    finally:
        await client.close()
        if cluster is not None:
            await asyncio.to_thread(cluster.close)
