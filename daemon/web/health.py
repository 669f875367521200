"""``/healthz``, ``/readyz`` and ``/metrics``."""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ..settings import SettingsError, metrics_token
from ..store import StoreError
from ..store.repository import puzzles as sql
from ..text import same_secret
from .auth import AuthError
from .context import CTX, read
from .responses import error, json_response

log = logging.getLogger("fairgrid.web")


async def healthz(request: web.Request) -> web.Response:
    return json_response({"status": "alive"})


async def readyz(request: web.Request) -> web.Response:
    try:
        await read(request, sql.ping)
    except StoreError:
        return error(503, "database unavailable")
    if not request.app[CTX].analysis.running():
        return error(503, "puzzle analysis is not running")
    return json_response({"status": "ready"})


async def metrics(request: web.Request) -> web.Response:
    """The exposition; with ``metrics.token_file`` set, only for its bearer token (read
    at every scrape: a new token in the file works at once)."""
    settings = request.app[CTX].settings
    if settings.metrics_token_file:
        try:
            expected = await asyncio.to_thread(metrics_token, settings.metrics_token_file)
        except SettingsError as exc:  # fail closed: no token to compare with, no metrics
            log.error("/metrics refused: %s", exc)
            return error(503, "the metrics token cannot be read (metrics.token_file)")
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not same_secret(given.strip(), expected):
            raise AuthError("/metrics needs the metrics token (metrics.token_file)")
    # the collectors read the database, which an erasure's file rewrite holds for
    # seconds: off the event loop, so that webhooks and /healthz are answered meanwhile
    data = await asyncio.to_thread(generate_latest, request.app[CTX].metrics.registry)
    return web.Response(body=data, headers={"Content-Type": CONTENT_TYPE_LATEST})
