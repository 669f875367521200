"""The portal-side examples (portal/relay) against a real daemon on 127.0.0.1: a page's
log goes in, a signed solve is stored once through 503s with Retry-After, the flag it
raises comes back as a notification the relay verifies, and a forged one is refused.
The Node relay runs as its own process, with npm's standardwebhooks."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
from datetime import datetime, timedelta, timezone

import aiohttp
import pytest
from aiohttp import web
from standardwebhooks import Webhook

from fairgrid.daemon.testing import EASY, EASY_ROW_COPY, free_port
from fairgrid.daemon.app import create_app
from fairgrid.daemon.web.context import CTX

from ..daemon.helpers import ADMIN, SECRET_A, bearer, make_settings, query
from .node import PORTAL, need_node, need_npm

pytestmark = pytest.mark.slow  # a puzzle analysed and a solve scored, per relay

FAST = dict(notify_backoff_s=0.05, notify_backoff_max_s=0.2, notify_poll_s=0.05)
LOG = {"started_at": (datetime.now(timezone.utc) - timedelta(minutes=5)).isoformat(),
       "moves": EASY_ROW_COPY,
       "client": {"version": 1, "recorder": "fairgrid-recorder/0.1.0", "paste_count": 0,
                  "pastes": [], "hidden": [{"t_ms": 2500, "ms": 9000}], "blur": [],
                  "input": {"keyboard": len(EASY_ROW_COPY)}}}


def _relay_module():
    spec = importlib.util.spec_from_file_location("relay", PORTAL / "relay/python/relay.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Busy:
    """In front of the daemon: answers the first ``busy`` requests 503 with Retry-After,
    as fairgrid does when its writer's queue is full, then passes requests on."""

    def __init__(self, target: str, busy: int = 1):
        self.target, self.busy, self.seen = target, busy, []

    async def handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        self.seen.append((asyncio.get_running_loop().time(), request.headers["webhook-id"]))
        if len(self.seen) <= self.busy:
            return web.json_response({"error": "overloaded; retry later"}, status=503,
                                     headers={"Retry-After": "1"})
        async with aiohttp.ClientSession() as session:
            async with session.post(self.target + request.path, data=raw,
                                    headers=dict(request.headers)) as resp:
                return web.Response(status=resp.status, body=await resp.read(),
                                    content_type="application/json")


@pytest.fixture
async def fairgrid(aiohttp_client, tmp_path):
    client = await aiohttp_client(create_app(make_settings(tmp_path, **FAST)))
    resp = await client.post("/v1/puzzles", json={"puzzles": [{"id": "easy", "givens": EASY}]},
                             headers=bearer(ADMIN))
    assert resp.status in (200, 201, 202), await resp.text()
    return client


async def _until(predicate, timeout=600.0):  # the puzzle's analysis comes first
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def _round_trip(fairgrid, aiohttp_server, start_relay, events):
    """The flow both relays must get right, against the real daemon."""
    busy = Busy(str(fairgrid.make_url("")).rstrip("/"))
    front = await aiohttp_server(_app(busy))
    relay = f"http://127.0.0.1:{free_port()}"
    resp = await fairgrid.put("/v1/portals/demo/notify", json={"url": relay + "/fairgrid/events"},
                              headers=bearer(ADMIN))
    notify_secret = (await resp.json())["secret"]
    await start_relay(str(front.make_url("")).rstrip("/"), notify_secret,
                      int(relay.rsplit(":", 1)[1]))
    # the server decides the id (from who, which puzzle, when) and the tournament: what
    # the page says of them is not taken
    page = {"puzzle_id": "easy", "log": LOG, "submission_id": "someone-elses",
            "tournament_id": "a-tournament-the-page-chose"}
    sid = _relay_module().submission_id_of("p-7", "easy", LOG["started_at"])
    async with aiohttp.ClientSession() as session:
        async with session.post(relay + "/solves", json=page,
                                headers={"X-Player": "p-7"}) as r:
            answer = await r.json()
        assert (r.status, answer["status"], answer["submission_id"]) == (200, 202, sid), answer
        # one 503, then the same webhook-id again once Retry-After had passed
        [(t0, id0), (t1, id1)] = busy.seen
        assert id0 == id1 == f"solve-{sid}" and t1 - t0 >= 0.95
        store = fairgrid.server.app[CTX].store
        [(player, tournament, raw)] = query(
            store, "SELECT player_id, tournament_id, raw FROM submissions")
        assert player == "p-7" and tournament is None
        assert json.loads(raw)["client"] == LOG["client"]
        # the page sends the solve again (its answer lost): the same id, stored once
        async with session.post(relay + "/solves", json=page,
                                headers={"X-Player": "p-7"}) as r:
            answer = await r.json()
        assert (r.status, answer["status"], answer["submission_id"]) == (200, 200, sid)
        assert len(query(store, "SELECT 1 FROM submissions")) == 1
        # the row copy is flagged; the notification arrives and its signature holds
        await _until(lambda: any(e["type"] == "flag.raised" for e in events()))
        [raised] = [e for e in events() if e["type"] == "flag.raised"]
        assert raised["data"]["submission_id"] == sid
        # the same event again (a retry, or a replay within the signature's window) is
        # acknowledged and not handled twice
        async def event(doc):
            body, now = json.dumps(doc), datetime.now(timezone.utc)
            async with session.post(relay + "/fairgrid/events", data=body, headers={
                    "webhook-id": doc["id"], "webhook-timestamp": str(int(now.timestamp())),
                    "webhook-signature": Webhook(notify_secret).sign(doc["id"], now, body),
                    "content-type": "application/json"}) as r:
                assert r.status == 204
        await event(raised)
        # a new event after it: once that one is handled, the copy before it would have been
        await event({**raised, "id": "evt_after_the_copy"})
        await _until(lambda: any(e.get("id") == "evt_after_the_copy" for e in events()))
        assert sum(e.get("id") == raised["id"] for e in events()) == 1
        # a forged notification is refused
        async with session.post(relay + "/fairgrid/events", data=json.dumps(raised),
                                headers={"webhook-id": "x", "webhook-timestamp": "1",
                                         "webhook-signature": "v1,Zm9yZ2Vk",
                                         "content-type": "application/json"}) as r:
            assert r.status == 401
        # a page that sends no log, or a log without its start, gets a 400, and nothing
        # is signed for it
        for bad in ({"puzzle_id": "easy"}, {"puzzle_id": "easy", "log": {}}, [1]):
            async with session.post(relay + "/solves", json=bad) as r:
                assert r.status == 400, bad
        # a body over a webhook's size is refused, and a client gone mid-body costs the
        # relay one request, nothing more
        async with session.post(relay + "/solves", data=b"x" * (2 << 20)) as r:
            assert r.status == 413
        host, port = relay.removeprefix("http://").rsplit(":", 1)
        _, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"POST /solves HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                     b"\r\nContent-Length: 100000\r\n\r\n" + b"{" * 100)
        await writer.drain()
        writer.close()
        await asyncio.sleep(0.5)
        async with session.post(relay + "/solves", json={"puzzle_id": "easy"}) as r:
            assert r.status == 400
        assert len(query(store, "SELECT 1 FROM submissions")) == 1


def _app(busy: Busy) -> web.Application:
    app = web.Application()
    app.router.add_post("/v1/webhooks/solves", busy.handle)
    return app


async def test_the_python_relay_signs_retries_and_verifies(fairgrid, aiohttp_server):
    relay = _relay_module()
    events: list[dict] = []

    async def keep(event):
        events.append(event)

    async def start_relay(fairgrid_url, notify_secret, port):
        app = relay.make_app(fairgrid_url, "demo", SECRET_A, notify_secret, on_event=keep)
        await aiohttp_server(app, port=port)

    await _round_trip(fairgrid, aiohttp_server, start_relay, lambda: events)
    assert relay.retry_after_s("2") == 2.0 and relay.retry_after_s("soon") is None
    assert relay.retry_after_s("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0


async def test_the_node_relay_signs_retries_and_verifies(fairgrid, aiohttp_server):
    node, npm = need_node(), need_npm()
    folder = PORTAL / "relay/node"
    if not (folder / "node_modules/standardwebhooks").exists():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=folder, check=True,
                       capture_output=True, timeout=300)
    procs, lines = [], []

    async def start_relay(fairgrid_url, notify_secret, port):
        env = {**os.environ, "FAIRGRID_URL": fairgrid_url, "FAIRGRID_PORTAL": "demo",
               "FAIRGRID_SECRET": SECRET_A, "FAIRGRID_NOTIFY_SECRET": notify_secret}
        proc = await asyncio.create_subprocess_exec(
            node, "relay.mjs", "--port", str(port), cwd=folder, env=env,
            stdout=asyncio.subprocess.PIPE)
        procs.append(proc)
        first = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        assert first.startswith("relay listening on "), first

        async def read():
            async for line in proc.stdout:
                lines.append(json.loads(line))
        procs.append(asyncio.ensure_future(read()))

    try:
        await _round_trip(fairgrid, aiohttp_server, start_relay, lambda: lines)
    finally:
        procs[0].terminate()
        await procs[0].wait()
        procs[1].cancel()
