"""The relays' edges, each relay against the same cases: a copy of a notification that
arrives while the first is still handled (and then fails), a page body nested past any
parser, and an answer from in front of fairgrid that is no JSON."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from datetime import datetime, timezone

import pytest
from aiohttp import web
from standardwebhooks import Webhook

from ..daemon.helpers import SECRET_A
from .node import PORTAL, need_node, need_npm
from .test_relay import _relay_module

NOTIFY_SECRET = SECRET_A
# the Node relay with a handler that stops at its first event until told on stdin, then
# fails it; the events it took are printed, as is each request's arrival
NODE_HARNESS = """
import { makeServer } from "./relay.mjs";
import { createInterface } from "node:readline";
const lines = createInterface({ input: process.stdin });
const release = new Promise((resolve) => lines.once("line", resolve));
let calls = 0;
const server = makeServer({
  fairgridUrl: process.env.FAIRGRID_URL, portal: "demo", secret: process.env.SECRET,
  notifySecret: process.env.SECRET,
  onEvent: async (event) => {
    calls += 1;
    if (calls === 1) {
      console.log(JSON.stringify({ started: event.id }));
      await release;
      throw new Error("the portal's database is briefly down");
    }
    console.log(JSON.stringify({ handled: event.id }));
  },
});
server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: server.address().port })));
"""


def _signed(msg_id: str, raw: str) -> dict:
    now = datetime.now(timezone.utc)
    return {"webhook-id": msg_id, "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": Webhook(NOTIFY_SECRET).sign(msg_id, now, raw),
            "content-type": "application/json"}


async def _copy_while_handled(post, started, release, handled) -> None:
    """fairgrid delivers an event; the portal's handler is slow, so fairgrid's delivery
    times out and it sends the same event again. The first handling then fails. At
    least once: the event is handled, or no copy was acknowledged."""
    raw = json.dumps({"type": "flag.raised", "id": "ev-1"})
    first = asyncio.ensure_future(post(raw))
    await asyncio.wait_for(started(), 30)
    second = asyncio.ensure_future(post(raw))
    # the copy is answered at once when it is acknowledged blindly; when it waits for the
    # first, it is not answered until the first is over (the wait decides nothing)
    await asyncio.wait({second}, timeout=2)
    await release()
    statuses = [await first, await second]
    acked = any(200 <= s < 300 for s in statuses)
    assert not acked or await handled() == ["ev-1"], (statuses, await handled())
    assert 204 in statuses


async def test_the_python_relay_loses_no_event_a_copy_arrived_for(aiohttp_client):
    relay = _relay_module()
    started, go = asyncio.Event(), asyncio.Event()
    handled = []

    async def on_event(payload):
        if not started.is_set():
            started.set()
            await go.wait()
            raise RuntimeError("the portal's database is briefly down")
        handled.append(payload["id"])

    client = await aiohttp_client(relay.make_app("http://127.0.0.1:9", "demo", SECRET_A,
                                                 NOTIFY_SECRET, on_event=on_event))

    async def post(raw):
        async with client.post("/fairgrid/events", data=raw,
                               headers=_signed("ev-1", raw)) as resp:
            return resp.status

    async def release():
        go.set()

    async def was_handled():
        return handled

    await _copy_while_handled(post, started.wait, release, was_handled)


async def test_the_node_relay_loses_no_event_a_copy_arrived_for(aiohttp_client):
    node, npm = need_node(), need_npm()
    folder = PORTAL / "relay/node"
    if not (folder / "node_modules/standardwebhooks").exists():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=folder, check=True,
                       capture_output=True, timeout=300)
    proc = await asyncio.create_subprocess_exec(
        node, "--input-type=module", "-e", NODE_HARNESS, cwd=folder,
        env={**os.environ, "SECRET": NOTIFY_SECRET, "FAIRGRID_URL": "http://127.0.0.1:9"},
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    said: list[dict] = []
    try:
        port = json.loads(await asyncio.wait_for(proc.stdout.readline(), 30))["port"]

        async def read():
            async for line in proc.stdout:
                said.append(json.loads(line))
        reader = asyncio.ensure_future(read())
        session = await aiohttp_client(web.Application())  # a client session to reuse

        async def post(raw):
            async with session.session.post(f"http://127.0.0.1:{port}/fairgrid/events",
                                            data=raw, headers=_signed("ev-1", raw)) as resp:
                return resp.status

        async def started():
            while not any("started" in s for s in said):
                await asyncio.sleep(0.02)

        async def release():
            proc.stdin.write(b"go\n")
            await proc.stdin.drain()

        async def handled():
            await asyncio.sleep(0.2)  # the line is printed before the answer is sent
            return [s["handled"] for s in said if "handled" in s]

        await _copy_while_handled(post, started, release, handled)
        reader.cancel()
    finally:
        proc.kill()
        await proc.wait()


@pytest.mark.parametrize("answer", [b"<html>502 Bad Gateway</html>", b"[1]", b""])
async def test_the_python_relay_passes_on_an_answer_that_is_no_json(
        aiohttp_client, aiohttp_server, monkeypatch, answer):
    """A proxy in front of fairgrid answers with a page of its own: the relay tells the
    page so in JSON (502), after retrying a 5xx, and never fails with a 500 itself."""
    relay = _relay_module()
    seen = []

    async def proxy(request):
        seen.append(request.path)
        return web.Response(status=502 if answer else 413, body=answer,
                            content_type="text/html")

    app = web.Application()
    app.router.add_post("/v1/webhooks/solves", proxy)
    front = await aiohttp_server(app)

    # the backoff between attempts: a millisecond here
    monkeypatch.setitem(relay.deliver.__kwdefaults__, "base_s", 0.001)
    page = await aiohttp_client(relay.make_app(str(front.make_url("")).rstrip("/"), "demo",
                                               SECRET_A))
    log = {"started_at": "2026-11-21T10:00:00Z", "moves": []}
    resp = await page.post("/solves", json={"puzzle_id": "easy", "log": log})
    doc = await resp.json()
    assert resp.status == 502 and "no JSON object" in doc["fairgrid"]["error"], doc
    assert len(seen) == (6 if answer else 1)  # a 502 retried, a 413 final


async def test_the_python_relay_answers_a_body_nested_past_its_parser_with_a_400(
        aiohttp_client):
    relay = _relay_module()
    client = await aiohttp_client(relay.make_app("http://127.0.0.1:9", "demo", SECRET_A))
    resp = await client.post("/solves", data="[" * 100_000 + "]" * 100_000,
                             headers={"content-type": "application/json"})
    assert resp.status == 400 and "error" in await resp.json()
