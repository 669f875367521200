"""What the request handlers share: one typed AppKey holding the daemon's parts."""

from __future__ import annotations

import asyncio
import hmac
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aiohttp import web

from ..ingest.signatures import Verifier
from ..metrics import Metrics
from ..settings import Settings
from ..store import Store

if TYPE_CHECKING:
    from ..work.analysis import PuzzleRegistry
    from ..work.scheduler import NightlyRunner
    from ..work.scoring import Scorer


@dataclass
class Context:
    settings: Settings
    metrics: Metrics
    verifier: Verifier
    store: Store | None = None
    puzzles: "PuzzleRegistry | None" = None
    scorer: "Scorer | None" = None
    jobs: "NightlyRunner | None" = None


CTX = web.AppKey("fairgrid_context", Context)


def error(status: int, message: str, field: str | None = None,
          headers: dict[str, str] | None = None) -> web.Response:
    """The JSON error every failure becomes: ``{"error": ..., "field": ...}``."""
    body = {"error": message}
    if field is not None:
        body["field"] = field
    return web.json_response(body, status=status, headers=headers)


async def read(request: web.Request, fn, *args, **kwargs):
    """A repository read on a worker thread (the event loop never waits on DuckDB)."""
    return await asyncio.to_thread(request.app[CTX].store.read, fn, *args, **kwargs)


async def write(request: web.Request, fn, *args):
    """A repository write in one transaction of the single writer."""
    return await asyncio.wrap_future(request.app[CTX].store.write(fn, *args))


class AuthError(Exception):
    """Missing or wrong bearer token (401)."""


def require_token(request: web.Request, *, admin: bool) -> None:
    """Check ``Authorization: Bearer <token>``: admin tokens, or organiser/admin tokens."""
    settings = request.app[CTX].settings
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise AuthError("missing bearer token")
    allowed = settings.admin_tokens if admin else settings.organiser_tokens + settings.admin_tokens
    ok = False
    for candidate in allowed:  # compare with every token: no early exit to time
        ok |= hmac.compare_digest(candidate.encode(), token.strip().encode())
    if not ok:
        raise AuthError("this route needs an admin token" if admin else "unknown token")
