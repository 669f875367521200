"""``/metrics`` behind its own bearer token (``metrics.token_file``), against the real app."""

from __future__ import annotations

import asyncio
import json

from fairgrid.daemon.app import create_app

from ..helpers import ADMIN, bearer, make_settings


async def test_metrics_needs_the_token_of_its_file(aiohttp_client, tmp_path):
    token = tmp_path / "metrics-token"
    token.write_text("scrape-1\n")  # Prometheus reads it with the blanks dropped, as here
    client = await aiohttp_client(create_app(make_settings(
        tmp_path, metrics_token_file=str(token))))
    for headers in ({}, bearer("wrong"), bearer(ADMIN), {"Authorization": "Basic x"}):
        resp = await client.get("/metrics", headers=headers)
        assert resp.status == 401 and (await resp.json())["error"], headers
        assert resp.headers["WWW-Authenticate"] == "Bearer"
    resp = await client.get("/metrics", headers=bearer("scrape-1"))
    assert resp.status == 200 and "fairgrid_webhook_requests" in await resp.text()
    # a new token in the file works at the next scrape; the old one no longer
    token.write_text("scrape-2")
    assert (await client.get("/metrics", headers=bearer("scrape-1"))).status == 401
    assert (await client.get("/metrics", headers=bearer("scrape-2"))).status == 200
    # a token of bytes that are not UTF-8 is a wrong token, not a failure
    reader, writer = await asyncio.open_connection(client.host, client.port)
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \xe9\r\n"
                 b"Connection: close\r\n\r\n")
    answer = await reader.read()
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 401") and json.loads(body)["error"], answer[:300]
    # no file, no metrics: refused, never open
    token.unlink()
    resp = await client.get("/metrics", headers=bearer("scrape-2"))
    assert resp.status == 503 and "metrics.token_file" in (await resp.json())["error"]
    # health checks stay open for the load balancer
    assert (await client.get("/healthz")).status == 200


async def test_without_a_token_file_metrics_stay_open(aiohttp_client, tmp_path):
    client = await aiohttp_client(create_app(make_settings(tmp_path)))
    assert (await client.get("/metrics")).status == 200
