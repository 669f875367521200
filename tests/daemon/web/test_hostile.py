"""Hostile and random webhook bodies, signed correctly: never a 5xx, nothing stored."""

from __future__ import annotations

import asyncio
import gzip
import json
import threading
import urllib.error
import urllib.parse
import urllib.request
import zlib

import pytest
from aiohttp import web
from hypothesis import given, settings as hsettings, strategies as st

from fairgrid.daemon.app import create_app
from fairgrid.daemon.web.context import CTX

from ..helpers import ADMIN, query, make_settings, signed, signed_bytes, solve_body

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8),
                                                                       children, max_size=5),
    max_leaves=30)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The real app on 127.0.0.1 in a background thread (hypothesis drives it synchronously)."""
    settings = make_settings(tmp_path_factory.mktemp("hostile"), server_max_body_bytes=64_000)
    app = create_app(settings)
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app)
    ready = threading.Event()
    holder = {}

    def run():
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        holder["port"] = site._server.sockets[0].getsockname()[1]
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(30)
    yield f"http://127.0.0.1:{holder['port']}", app
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(60)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def send(base, raw: bytes, headers) -> tuple[int, dict]:
    req = urllib.request.Request(base + "/v1/webhooks/solves", data=raw, headers=headers,
                                 method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def stored(app) -> int:
    return query(app[CTX].store, "SELECT count(*) FROM submissions")[0][0]


def _mutate(body: dict, path: list, value):
    target = body
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return body


FIELDS = [["type"], ["portal"], ["submission_id"], ["player_id"], ["tournament_id"],
          ["puzzle"], ["puzzle", "id"], ["puzzle", "givens"], ["started_at"], ["moves"],
          ["moves", 0], ["moves", 3, "cell"], ["moves", 3, "digit"], ["moves", 3, "t_ms"],
          ["moves", 3, "kind"], ["client"], ["outcome"]]


@hsettings(max_examples=150)
@given(st.sampled_from(FIELDS), json_values, st.integers(0, 10 ** 9))
def test_mutated_bodies_never_5xx_and_store_nothing_when_rejected(server, path, value, n):
    base, app = server
    before = stored(app)
    body = _mutate(solve_body(f"h-{n}"), path, value)
    raw, headers = signed(body, msg_id=f"h-{n}")
    status, doc = send(base, raw, headers)
    assert status < 500, doc
    if status >= 400:
        assert doc["error"] and "Traceback" not in doc["error"]
        assert stored(app) == before
    else:
        assert status in (200, 202)


@hsettings(max_examples=100)
@given(st.one_of(json_values.map(lambda v: json.dumps(v).encode()),
                 st.binary(max_size=300)), st.integers(0, 10 ** 9))
def test_arbitrary_bodies_never_5xx(server, raw, n):
    base, app = server
    before = stored(app)
    status, doc = send(base, raw, signed_bytes(raw, msg_id=f"a-{n}"))
    assert status < 500 and stored(app) == before


@pytest.mark.parametrize("raw", [
    b'{"type": "solve.completed", "portal": "demo", "portal": "other"}',  # duplicate keys
    b"[" * 5000 + b"]" * 5000,  # deep nesting
    b'{"a": Infinity}',
    b'{"moves": [' + b",".join([b'{"t_ms": 1, "cell": 0, "digit": 1}'] * 4000) + b"]}",
    "{\"player_id\": \"\udcff\"}".encode("utf-8", "surrogatepass"),
    # a valid solve with nesting past what later readers cope with, in the client block
    # and in a move (the fast path's parser raised RecursionError on the second)
    (json.dumps(solve_body("deep-client"))[:-1] + ', "client": ' + "[" * 1000 + "]" * 1000
     + "}").encode(),
    json.dumps(solve_body("deep-move")).replace(
        '"digit": ', '"x": ' + "[" * 1000 + "]" * 1000 + ', "digit": ', 1).encode(),
    # ids that reorder the text around them on a screen
    json.dumps(solve_body("s-\u202e1"), ensure_ascii=False).encode(),
])
def test_nasty_bodies(server, raw):
    base, app = server
    before = stored(app)
    status, doc = send(base, raw, signed_bytes(raw, msg_id="nasty"))
    assert 400 <= status < 500 and "error" in doc and stored(app) == before


# ------------------------------------------------------------- organiser and admin routes

def call(base, method: str, path: str, raw: bytes | None = None, token: str | None = None):
    headers = {"content-type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(base + path, data=raw, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


segment = st.text(min_size=1, max_size=30).map(
    lambda t: urllib.parse.quote(t, safe="")).filter(lambda t: t not in (".", ".."))
query_value = st.text(max_size=30).map(lambda t: urllib.parse.quote(t, safe=""))


@hsettings(max_examples=120)
@given(st.sampled_from([
    ("GET", "/v1/puzzles/{a}"), ("GET", "/v1/submissions/{a}/{b}"),
    ("GET", "/v1/players/{a}/{b}"), ("GET", "/v1/nightly-runs/{a}"), ("GET", "/v1/jobs/{a}"),
    ("GET", "/v1/flags?tournament={q}&fdr={r}"), ("GET", "/v1/flags?limit={r}&cursor={q}"),
    ("GET", "/v1/flags?since={q}&min_anomaly={r}&player={q}"),
    ("POST", "/v1/flags/{a}/review"), ("POST", "/v1/puzzles")]),
    segment, segment, query_value, query_value,
    st.one_of(st.none(), json_values.map(lambda v: json.dumps(v).encode()),
              st.binary(max_size=200)),
    st.sampled_from([None, "admin-token", "organiser-token", "wrong"]))
def test_other_routes_never_5xx(server, route, a, b, q, r, body, token):
    """Random ids, query strings, bodies and tokens on every organiser and admin route:
    4xx with a JSON error or 2xx, never a 5xx or a traceback; nothing stored on a 4xx."""
    base, app = server
    method, template = route
    path = template.format(a=a, b=b, q=q, r=r)
    # (flag_history is not compared: background scoring of earlier tests' solves adds to it)
    before = query(app[CTX].store, "SELECT count(*) FROM puzzles")[0]
    status, raw = call(base, method, path, body if method == "POST" else None, token)
    assert status < 500, (path, raw[:300])
    if status >= 400:
        doc = json.loads(raw)
        assert doc["error"] and "Traceback" not in doc["error"]
        after = query(app[CTX].store, "SELECT count(*) FROM puzzles")[0]
        assert after == before
    if token in (None, "wrong"):
        assert status in (401, 404), (path, status)  # 404: no such route


@pytest.mark.parametrize("method,path,body", [
    ("POST", "/v1/puzzles", {"id": "p-plain", "givens": "0" * 81}),
    ("POST", "/v1/flags/1/review", {"state": "cleared"}),
    ("POST", "/v1/players/demo/p1/review", {"state": "cleared"}),
    ("POST", "/v1/users", {"name": "plain", "role": "organiser"}),
    ("PATCH", "/v1/users/plain", {"role": "admin"}),
    ("POST", "/v1/users/plain/tokens", {"label": "x"}),
    ("PUT", "/v1/portals/demo/notify", {"url": "http://127.0.0.1:9/hook"}),
    ("POST", "/v1/backups", {}),
])
def test_json_routes_refuse_other_content_types(server, method, path, body):
    """Every route that reads a JSON body answers 415 naming the content type when the
    body is labelled otherwise: a browser may post ``text/plain`` across sites without
    asking, so a JSON route that read it would take a forged form."""
    base, app = server
    before = query(app[CTX].store, "SELECT count(*) FROM puzzles")[0]
    import http.client

    host, port = urllib.parse.urlsplit(base).hostname, urllib.parse.urlsplit(base).port
    for ctype in ("text/plain", "application/x-www-form-urlencoded", None):
        headers = {"Authorization": f"Bearer {ADMIN}"}
        if ctype:  # (None: no Content-Type at all, which urllib would add)
            headers["Content-Type"] = ctype
        conn = http.client.HTTPConnection(host, port, timeout=30)
        try:
            conn.request(method, path, body=json.dumps(body).encode(), headers=headers)
            resp = conn.getresponse()
            status, raw = resp.status, resp.read()
        finally:
            conn.close()
        assert status == 415, (path, ctype, status, raw[:200])
        assert json.loads(raw)["field"] == "content-type"
    assert query(app[CTX].store, "SELECT count(*) FROM puzzles")[0] == before


@pytest.mark.parametrize("path,headers,status,field", [
    ("/v1/puzzles/" + "p" * 9_000, {}, 414, None),
    ("/v1/flags?tournament=" + "t" * 16_000, {}, 414, None),
    ("/v1/puzzles/p", {"X-Padding": "h" * 9_000}, 431, "X-Padding"),
    ("/v1/puzzles/p", {"Authorization": "Bearer " + "a" * 16_000}, 431, "Authorization"),
])
def test_a_request_too_long_to_serve_gets_a_json_error(server, path, headers, status, field):
    """A URL or a header value over 8 KiB (up to twice that) is answered in JSON naming
    the problem, like any bad input, not with the HTTP parser's plain-text 400; a URL and
    a cookie just under the limit are served as usual."""
    import http.client

    base, _ = server
    host, port = urllib.parse.urlsplit(base).hostname, urllib.parse.urlsplit(base).port

    def get(p, h):
        conn = http.client.HTTPConnection(host, port, timeout=30)
        try:
            conn.request("GET", p, headers={"Authorization": f"Bearer {ADMIN}", **h})
            resp = conn.getresponse()
            return resp.status, resp.getheader("Content-Type"), resp.read()
        finally:
            conn.close()

    got, ctype, raw = get(path, headers)
    assert got == status and ctype.startswith("application/json"), (got, ctype, raw[:200])
    doc = json.loads(raw)
    assert "bytes long" in doc["error"] and doc.get("field") == field
    got, _, raw = get("/v1/puzzles/" + "p" * 8_000, {"Cookie": "c=" + "k" * 8_188})
    assert got == 404 and json.loads(raw)["error"]


def _cursor(values) -> str:
    import base64
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode()


GIVENS = ("003020600900305001001806400008102900700000008006708200002609500800203009005010300")


@pytest.mark.parametrize("method,path,headers,body,status,says", [
    # header bytes that are not UTF-8: an unknown token, not a failure
    ("GET", "/v1/flags", {"Authorization": b"Bearer \xe9"}, None, 401, "unknown token"),
    ("GET", "/ui/", {"Cookie": b"fairgrid_session=\xe9"}, None, None, None),
    ("POST", "/ui/login", {"Cookie": b"fairgrid_login=abc",
                           "Content-Type": "application/x-www-form-urlencoded"},
     "csrf=%C3%A9&name=a&password=b".encode(), 403, None),
    # a timestamp int() reads but no clock can be set against
    ("POST", "/v1/webhooks/solves", {"webhook-timestamp": "9" * 310}, b"{}", 401,
     "unix seconds"),
    ("POST", "/v1/webhooks/solves", {"webhook-timestamp": "1_700_000_000"}, b"{}", 401,
     "unix seconds"),
    # a body its content-encoding does not decode
    ("POST", "/v1/webhooks/solves", {"Content-Encoding": "gzip"}, b"notgzip", 400,
     "cannot be read"),
    ("POST", "/v1/puzzles", {"Content-Encoding": "deflate", "Authorization": f"Bearer {ADMIN}"},
     b"notdeflate", 400, "cannot be read"),
    # an encoding fairgrid does not decode: named, in JSON (not aiohttp's plain text)
    ("POST", "/v1/webhooks/solves", {"Content-Encoding": "br"}, b"\x0b\x02\x80{}\x03", 415,
     "Content-Encoding gzip or deflate"),
    ("POST", "/v1/webhooks/solves", {"Content-Encoding": "zstd"}, b"(\xb5/\xfd", 415,
     "Content-Encoding gzip or deflate"),
    ("POST", "/v1/webhooks/solves", {"Content-Encoding": "gzip, gzip"}, b"{}", 415,
     "not 'gzip, gzip'"),
    ("POST", "/v1/puzzles", {"Content-Encoding": "compress", "Authorization": f"Bearer {ADMIN}"},
     b"{}", 415, "not 'compress'"),
    # a stream cut short, and one that decodes far past the body limit
    ("POST", "/v1/webhooks/solves", {"Content-Encoding": "deflate"},
     zlib.compress(b'{"portal": "demo"}' * 50)[:-6], 400, "ends early"),
    ("POST", "/v1/webhooks/solves", {"Content-Encoding": "gzip"},
     gzip.compress(b"{}" + b" " * 20_000_000), 413, "once decoded"),
    # cursors the API never returned: a position the store cannot hold
    ("GET", "/v1/flags?cursor=" + _cursor(["2026-01-01T00:00:00+00:00", 1e308]),
     {"Authorization": f"Bearer {ADMIN}"}, None, 400, "cursor"),
    ("GET", "/v1/flags?cursor=" + _cursor(["2026-01-01T00:00:00+00:00", 2 ** 70]),
     {"Authorization": f"Bearer {ADMIN}"}, None, 400, "cursor"),
    ("GET", "/v1/players?cursor=" + _cursor([1, "\ud800", "x"]),
     {"Authorization": f"Bearer {ADMIN}"}, None, 400, "cursor"),
    ("GET", "/v1/players?cursor=" + _cursor([float("nan"), "demo", "x"]),
     {"Authorization": f"Bearer {ADMIN}"}, None, 400, "cursor"),
    # numbers float() reads that nobody typed as one
    ("GET", "/v1/flags?min_anomaly=1_0", {"Authorization": f"Bearer {ADMIN}"}, None, 400,
     "must be a number"),
    ("GET", "/v1/flags?min_anomaly=%EF%BC%95", {"Authorization": f"Bearer {ADMIN}"}, None,
     400, "must be a number"),
    ("GET", "/v1/flags?min_anomaly=nan", {"Authorization": f"Bearer {ADMIN}"}, None, 400,
     "must be a number"),
    ("GET", "/v1/flags?min_anomaly=inf", {"Authorization": f"Bearer {ADMIN}"}, None, 400,
     "must be a number"),
    # a parameter under its new name and its old: which would count is no one's guess
    ("GET", "/v1/flags?min_score=0.5&min_anomaly=0.2", {"Authorization": f"Bearer {ADMIN}"},
     None, 400, "give one of the two"),
    # names the console shows: no character that turns the text around them
    ("POST", "/v1/flags/1/review", {"Authorization": f"Bearer {ADMIN}"},
     json.dumps({"state": "cleared", "actor": "bob\u202egnp.exe"}).encode(), 422,
     "U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("POST", "/v1/users", {"Authorization": f"Bearer {ADMIN}"},
     json.dumps({"name": "careless", "role": "organiser"}).encode(), None, None),
    ("POST", "/v1/users/careless/tokens", {"Authorization": f"Bearer {ADMIN}"},
     json.dumps({"label": "laptop\nadmin"}).encode(), 422, "U+000A"),
    # a charset named in capitals is UTF-8 all the same
    ("POST", "/v1/puzzles", {"Content-Type": "application/json; charset=UTF-8",
                             "Authorization": f"Bearer {ADMIN}"},
     json.dumps({"id": "p-charset", "givens": GIVENS}).encode(), 201, None),
])
def test_what_a_careless_client_sends_is_a_4xx_not_a_failure(server, method, path, headers,
                                                             body, status, says):
    """Header bytes that are not UTF-8, numbers too long for the clock or the store, a
    body that does not decompress, forged cursors: each a 4xx in JSON naming the problem
    (``status`` None: any answer below 500), never the 500 or the 503-and-retry each
    once was."""
    import http.client

    base, _ = server
    host, port = urllib.parse.urlsplit(base).hostname, urllib.parse.urlsplit(base).port
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.putrequest(method, path)
        sent = {k.lower() for k in headers}
        if body is not None and "content-type" not in sent and "/ui/" not in path:
            conn.putheader("Content-Type", "application/json")
        if path.startswith("/v1/webhooks"):
            conn.putheader("webhook-id", "msg-careless")
            conn.putheader("webhook-signature", "v1,AAAA")
        for k, v in headers.items():
            conn.putheader(k, v)
        conn.putheader("Content-Length", str(len(body or b"")))
        conn.endheaders(body)
        resp = conn.getresponse()
        got, ctype, raw = resp.status, resp.getheader("Content-Type") or "", resp.read()
    finally:
        conn.close()
    if status is None:
        assert got < 500, (path, got, raw[:300])
        return
    assert got == status, (path, got, raw[:300])
    if "/ui/" in path:
        return
    assert ctype.startswith("application/json"), (path, ctype)
    if says is not None:
        assert says in json.loads(raw)["error"], raw[:300]


@pytest.mark.parametrize("method,path,body,status,says", [
    ("GET", "/ui/flags?player=" + "x" * 9_000, None, 414, "bytes long"),
    # more fields than aiohttp reads in a form
    ("POST", "/ui/login", "&".join(["csrf=x", "name=a"] + ["flag=1"] * 2_000).encode(), 413,
     "too large"),
])
def test_the_console_answers_people_in_a_page_not_json(server, method, path, body, status,
                                                       says):
    """A request a browser sends to the console that the service refuses before any
    page sees it (a URL too long, a form too large) is answered with the console's error
    page in HTML, as its own errors are."""
    import http.client

    base, _ = server
    host, port = urllib.parse.urlsplit(base).hostname, urllib.parse.urlsplit(base).port
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.request(method, path, body=body,
                     headers={"Content-Type": "application/x-www-form-urlencoded"})
        resp = conn.getresponse()
        got, ctype, raw = resp.status, resp.getheader("Content-Type"), resp.read()
    finally:
        conn.close()
    assert got == status and ctype.startswith("text/html"), (got, ctype, raw[:200])
    assert says in raw.decode(), raw[-600:]
