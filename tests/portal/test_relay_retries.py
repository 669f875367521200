"""What the relays retry, and how long they wait: any 5xx (fairgrid's, or a CDN's or a
proxy's in front of it: 507, 520-524) and 429 are retried, where only 500-504 were, so a
front's error lost the solve; a Retry-After is obeyed up to the backoff's cap, where a
gateway's "an hour" held the page's request an hour, six times over. And the Node relay
signs with a secret read from a file, which ends in a new line, as the Python one does
(it answered every solve 502 "fairgrid unreachable")."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess

import pytest
from aiohttp import web

from ..daemon.helpers import SECRET_A
from .node import PORTAL, need_node, need_npm
from .test_relay import _relay_module

BODY = {"type": "solve.completed", "portal": "demo", "submission_id": "s-1",
        "player_id": "p", "puzzle": {"id": "easy"}, "started_at": "2026-11-21T10:00:00Z",
        "moves": []}
NODE_DELIVER = """
import { deliver } from "./relay.mjs";
const r = await deliver(process.env.URL, process.env.SECRET, JSON.parse(process.env.BODY),
                        { baseS: 0.001 });
console.log(JSON.stringify(r));
"""


def _front(statuses, retry_after=None):
    """fairgrid behind a front: answers the given statuses in turn, then 202."""
    seen = []

    async def handle(request):
        await request.read()
        seen.append(request.headers["webhook-id"])
        if len(seen) <= len(statuses):
            headers = {"Retry-After": retry_after} if retry_after else {}
            return web.Response(status=statuses[len(seen) - 1], text="<html>origin down</html>",
                                content_type="text/html", headers=headers)
        return web.json_response({"status": "accepted"}, status=202)
    app = web.Application()
    app.router.add_post("/v1/webhooks/solves", handle)
    return app, seen


async def _python_deliver(aiohttp_server, aiohttp_client, app, waits=None):
    server = await aiohttp_server(app)
    client = await aiohttp_client(web.Application())   # a session

    async def sleep(s):
        if waits is not None:
            waits.append(s)
    return await _relay_module().deliver(client.session, str(server.make_url("")), SECRET_A,
                                         BODY, sleep=sleep)


async def _node_deliver(aiohttp_server, app, secret=SECRET_A) -> dict:
    node, npm = need_node(), need_npm()
    folder = PORTAL / "relay/node"
    if not (folder / "node_modules/standardwebhooks").exists():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=folder, check=True,
                       capture_output=True, timeout=300)
    server = await aiohttp_server(app)
    proc = await asyncio.create_subprocess_exec(
        node, "--input-type=module", "-e", NODE_DELIVER, cwd=folder,
        env={**os.environ, "URL": str(server.make_url("")), "SECRET": secret,
             "BODY": json.dumps(BODY)}, stdout=asyncio.subprocess.PIPE)
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return json.loads(out)


@pytest.mark.parametrize("status", [507, 520, 522, 524])
async def test_the_python_relay_retries_every_5xx(aiohttp_server, aiohttp_client, status):
    app, seen = _front([status])
    got, answer = await _python_deliver(aiohttp_server, aiohttp_client, app)
    assert got == 202 and len(seen) == 2, (status, answer)


@pytest.mark.parametrize("status", [520, 524])
async def test_the_node_relay_retries_every_5xx(aiohttp_server, status):
    app, seen = _front([status])
    result = await _node_deliver(aiohttp_server, app)
    assert result["status"] == 202 and len(seen) == 2, (status, result)


async def test_the_python_relay_bounds_the_wait_a_retry_after_asks_for(aiohttp_server,
                                                                       aiohttp_client):
    for asked in ("3600", "1e999"):     # a gateway's hour; infinity
        waits = []
        app, _ = _front([429], retry_after=asked)
        got, _ = await _python_deliver(aiohttp_server, aiohttp_client, app, waits)
        assert got == 202 and max(waits) <= 30.0, (asked, waits)


async def test_the_node_relay_signs_with_a_secret_that_ends_in_a_new_line(aiohttp_server):
    app, seen = _front([])
    result = await _node_deliver(aiohttp_server, app, secret=SECRET_A + "\n")
    assert result["status"] == 202 and len(seen) == 1, result
