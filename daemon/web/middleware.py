"""The two middlewares every request passes: metrics by route, and JSON errors."""

from __future__ import annotations

import asyncio
import logging
import uuid

from aiohttp import web

from ..errors import Conflict, ValidationError
from ..ingest.signatures import SignatureError
from ..text import shown
from ..store import QueueFull, StoreError
from .auth import AuthError
from .context import CTX
from .responses import body_encoding, error

log = logging.getLogger("fairgrid")
RETRY_AFTER_S = "5"
# the console's error page, (request, status, message) -> response, which the console
# sets where it is mounted (the web package imports nothing of the console)
ERROR_PAGE = web.AppKey("fairgrid_error_page", object)
MAX_URL_BYTES = 8190       # a longer request target is refused (414), in JSON
MAX_HEADER_BYTES = 8190    # ... and a longer header value (431): aiohttp's own limits
# what aiohttp's parser reads before it answers by itself, in plain text: twice the limits
# the middleware enforces, so that a request a little over them gets a JSON error, while
# a request's headers stay bounded (128 of them: 2 MiB at most)
PARSER_LIMITS = {"max_line_size": 2 * MAX_URL_BYTES, "max_field_size": 2 * MAX_HEADER_BYTES,
                 # bodies are decoded by responses.read_body: aiohttp's parser answers an
                 # encoding it cannot decode (br without Brotli) in plain text itself
                 "auto_decompress": False}


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
    """Every failure becomes a JSON error (on a console path, the console's error page);
    never a traceback, never a partial write."""
    too_long = _too_long(request)
    if too_long is not None:
        return _answer(request, *too_long)
    try:
        body_encoding(request)  # 415 for an encoding no route decodes, before any reads
        return await handler(request)
    except Conflict as exc:  # its message names what it conflicts with
        return _answer(request, exc.status, str(exc), exc.field)
    except ValidationError as exc:
        return _answer(request, exc.status,
                       str(exc) if exc.field is None else f"{exc.field}: {exc}", exc.field)
    except SignatureError as exc:
        return error(401, str(exc))
    except AuthError as exc:
        if exc.status == 403:
            return error(403, str(exc))
        return error(401, str(exc), headers={"WWW-Authenticate": "Bearer"})
    except QueueFull as exc:
        return _answer(request, 503, f"overloaded: {exc}; retry later",
                       headers={"Retry-After": RETRY_AFTER_S})
    except StoreError as exc:
        log.error("storage error: %s", exc)
        return _answer(request, 503, "storage unavailable; retry later",
                       headers={"Retry-After": RETRY_AFTER_S})
    except web.RequestPayloadError as exc:  # a body its content-encoding does not decode
        return _answer(request, 400,
                       f"the request body cannot be read: {shown(str(exc))[:200]}")
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        reason = {413: "request body too large"}.get(exc.status, exc.reason)
        # a 405 names the methods the path takes (RFC 9110 asks for it)
        allow = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None
        return _answer(request, exc.status, reason, headers=allow)
    except asyncio.CancelledError:
        raise
    except Exception:  # noqa: BLE001 - the last line of defence
        # a reference the caller is given and the log holds, so that one failure reported
        # is found among many; with a webhook's id, the portal can send it again. The path
        # and id as escaped text, cut short: a caller's newline must not forge a line
        ref = uuid.uuid4().hex[:12]
        hook = request.headers.get("webhook-id")
        log.exception("unhandled error on %s %s (ref %s%s)", request.method,
                      shown(request.path)[:300], ref,
                      f", webhook-id {shown(hook)[:100]}" if hook else "")
        return _answer(request, 500, f"internal error (ref {ref})")


def _answer(request: web.Request, status: int, message: str, field: str | None = None,
            headers: dict[str, str] | None = None) -> web.Response:
    """The JSON error, or on a console path the console's error page saying the same: a
    person in a browser reads a page, a program the JSON."""
    error_page = request.app.get(ERROR_PAGE)
    if error_page is None or not request.path.startswith("/ui/"):
        return error(status, message, field, headers)
    page = error_page(request, status, message[:1].upper() + message[1:] + ".")
    page.headers.update(headers or {})
    return page


def _too_long(request: web.Request) -> tuple[int, str, str | None] | None:
    """(status, message, field) for a request target or a header line over the limits,
    else None (beyond :data:`PARSER_LIMITS` the parser answers before any middleware)."""
    n = len(request.raw_path)
    if n > MAX_URL_BYTES:
        return 414, f"the URL is {n} bytes long; at most {MAX_URL_BYTES} are served", None
    for name, value in request.raw_headers:
        if len(value) > MAX_HEADER_BYTES:
            shown_name = shown(name.decode("latin-1"))[:64]
            return (431, f"header {shown_name} is {len(value)} bytes long; at most "
                    f"{MAX_HEADER_BYTES} are read", shown_name)
    return None
