"""What every route answers with: strict JSON, the one error shape, downloads, and the
query parameters a route knows."""

from __future__ import annotations

import base64
import json
import math
import unicodedata
import urllib.parse
import zlib

from aiohttp import web

from ..errors import ValidationError
from ..json_out import dumps
from ..ingest.solve import check_keys_once, parse_json
from ..text import file_stem
from .context import CTX


def json_response(value, **kwargs) -> web.Response:
    return web.json_response(value, dumps=dumps, **kwargs)


def check_json_type(request: web.Request) -> None:
    """The body must be labelled JSON in UTF-8 (415 otherwise): a sender labelling it
    anything else is misconfigured, and saying so is clearer than a JSON error. It also
    keeps a browser's cross-site ``text/plain`` form post out of every JSON route."""
    if request.content_type != "application/json" or (
            (request.charset or "utf-8").lower() not in ("utf-8", "utf8")):
        raise ValidationError("content-type", "must be application/json (UTF-8), not "
                              f"{request.headers.get('Content-Type', 'missing')[:100]!r}", 415)


# the Content-Encodings a body may come in (decoded by read_body; aiohttp's own decoding
# is off, for it answers what it cannot decode in plain text, before any middleware)
BODY_ENCODINGS = ("gzip", "x-gzip", "deflate")


def body_encoding(request: web.Request) -> str | None:
    """The body's Content-Encoding (None: as sent); ValidationError (415) for one
    fairgrid does not decode."""
    coding = request.headers.get("Content-Encoding", "").strip().lower()
    if coding in ("", "identity"):
        return None
    if coding not in BODY_ENCODINGS:
        raise ValidationError("content-encoding", "a body may be sent as it is, or with "
                              "Content-Encoding gzip or deflate, not "
                              f"{coding.encode('unicode_escape').decode()[:40]!r}", 415)
    return coding


async def read_body(request: web.Request) -> bytes:
    """The request's body as it was before its Content-Encoding (:func:`body_encoding`):
    ValidationError 400 for a stream that does not decode or ends early, 413 for one
    that decodes past ``server.max_body_bytes`` (aiohttp applies it to the bytes as they
    came)."""
    raw = await request.read()
    coding = body_encoding(request)
    if coding is None:
        return raw
    limit = request.app[CTX].settings.server_max_body_bytes
    if coding == "deflate" and not (len(raw) >= 2 and raw[0] & 0x0F == 8
                                    and int.from_bytes(raw[:2], "big") % 31 == 0):
        wbits = -zlib.MAX_WBITS     # a raw deflate stream, as many senders send one
    else:
        wbits = (16 if coding != "deflate" else 0) + zlib.MAX_WBITS
    out, rest = [], raw
    size = 0
    while True:         # a gzip body may hold several members, one after another
        stream = zlib.decompressobj(wbits)
        try:
            part = stream.decompress(rest, limit + 1 - size)
        except zlib.error as exc:
            raise ValidationError("content-encoding", f"the request body cannot be read: "
                                  f"it is no {coding} stream ({exc})", 400) from None
        size += len(part)
        if size > limit:
            raise ValidationError("content-encoding", f"request body too large: over "
                                  f"{limit} bytes once decoded", 413)
        out.append(part)
        if not stream.eof:
            raise ValidationError("content-encoding", f"the request body cannot be read: "
                                  f"its {coding} stream ends early", 400)
        rest = stream.unused_data
        if not rest or wbits <= zlib.MAX_WBITS:
            return b"".join(out)


async def json_body(request: web.Request, empty: dict | None = None,
                    fields: frozenset[str] | None = None) -> dict:
    """The request's body, a JSON object labelled as such; an empty body is ``empty``
    where the route allows none (``None``: a body is required). A key given twice in
    any object is a 400 (which one counts is no one's guess to make, as for a query
    parameter); a top-level field not in ``fields`` (when given) a 422 naming it: a
    misspelt optional field must not be dropped in silence."""
    body = await read_body(request)
    if not body and empty is not None:
        return empty
    check_json_type(request)
    data = parse_json(body)
    check_keys_once(body)
    if fields is not None:
        unknown = sorted(set(data) - fields)
        if unknown:
            raise ValidationError(unknown[0], "unknown field (known: "
                                  f"{', '.join(sorted(fields))})", 422)
    return data


def error(status: int, message: str, field: str | None = None,
          headers: dict[str, str] | None = None) -> web.Response:
    """The JSON error every failure becomes: ``{"error": ..., "field": ...}``."""
    body = {"error": message}
    if field is not None:
        body["field"] = field
    return json_response(body, status=status, headers=headers)


def attachment(stem: str, suffix: str) -> str:
    """The ``Content-Disposition`` of a download named after ``stem`` (a tournament's
    name, say; :func:`~fairgrid.daemon.text.file_stem`, as the command line names it); the exact
    name as RFC 6266 ``filename*=UTF-8''…``, which browsers prefer, and an ASCII
    ``filename=`` for the others (accents dropped, other letters '_')."""
    name = file_stem(stem) + suffix
    ascii_ = "".join(unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
                     or "_" for ch in name)
    return (f'attachment; filename="{ascii_}"; '
            f"filename*=UTF-8''{urllib.parse.quote(name, safe='')}")


def known_query(request: web.Request, known: frozenset = frozenset()) -> None:
    """400 naming query parameters the route does not know (a typo filters nothing), or
    one given twice (which value would count is no one's guess to make)."""
    unknown = sorted(set(request.query) - known)
    if unknown:
        takes = (f"known: {', '.join(sorted(known))}" if known
                 else "this route takes no query parameters")
        raise ValidationError(unknown[0], f"unknown query parameter ({takes})", 400)
    if len(request.query) != len(set(request.query)):
        twice = next(k for k in request.query if len(request.query.getall(k)) > 1)
        raise ValidationError(twice, "given more than once: give it once", 400)


def cursor(values: list) -> str:
    """An opaque pagination cursor holding ``values`` (JSON in URL-safe base64)."""
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode()


MAX_CURSOR = 1024   # characters; the API's own cursors are a few dozen


def cursor_int(value) -> int:
    """A cursor's integer, as a BIGINT column holds it (ValueError otherwise: a forged
    1e308 or 2**70 is no position, and the store would fail on it)."""
    if isinstance(value, bool) or not isinstance(value, int) or not -2**63 <= value < 2**63:
        raise ValueError
    return value


def cursor_text(value) -> str:
    """A cursor's text, as the store can hold it (ValueError for a lone surrogate, which
    JSON can spell and UTF-8 cannot)."""
    if not isinstance(value, str):
        raise ValueError
    value.encode()  # UnicodeEncodeError is a ValueError
    return value


def cursor_number(value) -> float:
    """A cursor's finite number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value):
        raise ValueError
    return float(value)


def read_cursor(request: web.Request, parse):
    """The request's ``cursor`` read back through ``parse(*values)``; None without one,
    a 400 for a cursor this API did not return."""
    text = request.query.get("cursor")
    if text is None:
        return None
    try:
        if len(text) > MAX_CURSOR:
            raise ValueError
        return parse(*json.loads(base64.urlsafe_b64decode(text.encode())))
    except (ValueError, TypeError, ArithmeticError, RecursionError):
        raise ValidationError("cursor", "is not a cursor this API returned", 400) from None
