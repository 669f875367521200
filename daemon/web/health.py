"""``/healthz``, ``/readyz`` and ``/metrics``."""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ..store import StoreError
from ..store.repository import puzzles as sql
from .context import CTX, error, json_response, read


async def healthz(request: web.Request) -> web.Response:
    return json_response({"status": "alive"})


async def readyz(request: web.Request) -> web.Response:
    try:
        await read(request, sql.ping)
    except StoreError:
        return error(503, "database unavailable")
    if not request.app[CTX].puzzles.running():
        return error(503, "puzzle analysis is not running")
    return json_response({"status": "ready"})


async def metrics(request: web.Request) -> web.Response:
    data = generate_latest(request.app[CTX].metrics.registry)
    return web.Response(body=data, headers={"Content-Type": CONTENT_TYPE_LATEST})
