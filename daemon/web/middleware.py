"""The two middlewares every request passes: metrics by route, and JSON errors."""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web

from ..errors import Conflict, ValidationError
from ..ingest.signatures import SignatureError
from ..text import shown
from ..store import QueueFull, StoreError
from .auth import AuthError
from .context import CTX
from .responses import error

log = logging.getLogger("fairgrid")
RETRY_AFTER_S = "5"


@web.middleware
async def metrics_middleware(request: web.Request, handler):
    """Count every response by route template (never the raw path) and status code."""
    status = 500
    try:
        response = await handler(request)
        status = response.status
        return response
    except web.HTTPException as exc:
        status = exc.status
        raise
    finally:
        resource = request.match_info.route.resource
        route = resource.canonical if resource is not None else "unmatched"
        request.app[CTX].metrics.http_responses.labels(route, str(status)).inc()


@web.middleware
async def errors_middleware(request: web.Request, handler):
    """Every failure becomes a JSON error; never a traceback, never a partial write."""
    try:
        return await handler(request)
    except Conflict as exc:  # its message names what it conflicts with
        return error(exc.status, str(exc), exc.field)
    except ValidationError as exc:
        return error(exc.status, str(exc) if exc.field is None else f"{exc.field}: {exc}",
                     exc.field)
    except SignatureError as exc:
        return error(401, str(exc))
    except AuthError as exc:
        if exc.status == 403:
            return error(403, str(exc))
        return error(401, str(exc), headers={"WWW-Authenticate": "Bearer"})
    except QueueFull as exc:
        return error(503, f"overloaded: {exc}; retry later", headers={"Retry-After": RETRY_AFTER_S})
    except StoreError as exc:
        log.error("storage error: %s", exc)
        return error(503, "storage unavailable; retry later", headers={"Retry-After": RETRY_AFTER_S})
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        reason = {413: "request body too large"}.get(exc.status, exc.reason)
        return error(exc.status, reason)
    except asyncio.CancelledError:
        raise
    except Exception:  # noqa: BLE001 - the last line of defence
        # the path as escaped text, cut short: a caller's newline must not forge a line
        log.exception("unhandled error on %s %s", request.method, shown(request.path)[:300])
        return error(500, "internal error")
