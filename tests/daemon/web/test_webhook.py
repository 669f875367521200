"""The solve webhook against the real app and a real DuckDB file, with real signatures."""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
from datetime import datetime, timezone

import pytest

from fairgrid.daemon.app import create_app

from ...fixtures import EASY, EASY_SOLUTION
from ..helpers import (ADMIN, INSERT_SCORE, ORGANISER, OTHER_SECRET, SECRET_B, URL, bearer,
                       make_settings, query, signed, signed_bytes, solve_body, solve_moves, store,
                       until)


def rows(client, sql, params=None):
    return query(store(client), sql, params, needs_moves=True)


async def post(client, body, **kw):
    raw, headers = signed(body, **kw)
    resp = await client.post(URL, data=raw, headers=headers)
    return resp.status, await resp.json()


async def test_accepted_solve_is_committed_with_every_move(client):
    before = datetime.now(timezone.utc)
    status, body = await post(client, solve_body(started_at="2026-11-21T11:00:00.25+01:00"))
    assert (status, body) == (202, {"status": "accepted"})
    # times are stored exactly, in UTC, whatever offset the portal wrote them with
    [(started, received)] = rows(client, "SELECT started_at, received_at FROM submissions")
    assert started == datetime(2026, 11, 21, 10, 0, 0, 250_000, tzinfo=timezone.utc)
    assert before <= received <= datetime.now(timezone.utc)
    sub = rows(client, "SELECT portal, submission_id, player_id, puzzle_id, n_moves, complete, "
                       "status, tournament_id FROM submissions")
    assert sub == [("demo", "s-1", "p-42", "easy", 49, True, "pending", "t-1")]
    moves = rows(client, "SELECT seq, t_ms, cell, digit, note FROM moves JOIN submissions "
                         "USING (sub_key) WHERE submission_id = 's-1' ORDER BY seq")
    expected = solve_moves()
    assert [(m[1], m[2], m[3]) for m in moves] == [(e["t_ms"], e["cell"], e["digit"])
                                                   for e in expected]
    assert [m[0] for m in moves] == list(range(49)) and {m[4] for m in moves} == {False}
    # the puzzle was registered on the fly, with its solution
    assert rows(client, "SELECT solution FROM puzzles WHERE id = 'easy'") == [(EASY_SOLUTION,)]


async def test_incomplete_log_is_stored_and_marked(client):
    moves = solve_moves()[:-5] + [{"t_ms": 999_999, "cell": 0, "digit": 1, "kind": "note"}]
    status, _ = await post(client, solve_body(moves=moves))
    assert status == 202
    assert rows(client, "SELECT complete, n_moves FROM submissions") == [(False, 45)]
    assert rows(client, "SELECT note FROM moves WHERE seq = 44") == [(True,)]


async def test_duplicates_and_conflicts(client):
    assert (await post(client, solve_body(), msg_id="m1"))[0] == 202
    # the same webhook-id again (a retry)
    assert await post(client, solve_body(), msg_id="m1") == (200, {"status": "duplicate"})
    # an identical resubmission under a new webhook-id, keys in another order
    body = dict(reversed(list(solve_body().items())))
    assert await post(client, body, msg_id="m2") == (200, {"status": "duplicate"})
    # same submission id, other content
    status, err = await post(client, solve_body(player_id="p-43"), msg_id="m3")
    assert status == 409 and err["field"] == "submission_id"
    # another submission under a used webhook-id is not silently dropped
    status, err = await post(client, solve_body("s-other"), msg_id="m1")
    assert status == 409 and err["field"] == "webhook-id" and "'m1'" in err["error"]
    assert rows(client, "SELECT count(*) FROM submissions") == [(1,)]
    assert rows(client, "SELECT count(*) FROM moves") == [(49,)]
    assert rows(client, "SELECT player_id FROM submissions") == [("p-42",)]


async def test_secret_rotation_accepts_both_secrets(client):
    assert (await post(client, solve_body("s-a"), msg_id="a"))[0] == 202
    assert (await post(client, solve_body("s-b"), secret=SECRET_B, msg_id="b"))[0] == 202
    assert rows(client, "SELECT count(*) FROM submissions") == [(2,)]


@pytest.mark.parametrize("case", ["wrong_secret", "old", "future", "tampered", "no_sig",
                                  "no_id", "other_portal", "garbage_sig"])
async def test_bad_signatures_are_401_and_store_nothing(client, case):
    body = solve_body()
    raw, headers = signed(body)
    if case == "wrong_secret":
        raw, headers = signed(body, secret="whsec_" + "d3JvbmcgcG9ydGFsIHNlY3JldCBrZXkgMTIz")
    # ten minutes out, twice the 5-minute tolerance: a second past it raced the clock (the
    # timestamp is whole seconds and the request takes time on a busy machine)
    elif case == "old":
        raw, headers = signed(body, ts=time.time() - 600)
    elif case == "future":
        raw, headers = signed(body, ts=time.time() + 600)
    elif case == "tampered":
        raw = raw.replace(b"p-42", b"p-43")
    elif case == "no_sig":
        del headers["webhook-signature"]
    elif case == "no_id":
        del headers["webhook-id"]
    elif case == "other_portal":  # signed by portal "other", body says "demo"
        raw, headers = signed(body, secret=OTHER_SECRET)
    elif case == "garbage_sig":
        headers["webhook-signature"] = "v1,???? v2,abc"
    resp = await client.post(URL, data=raw, headers=headers)
    assert resp.status == 401
    err = await resp.json()
    assert "error" in err and "whsec" not in json.dumps(err)
    assert rows(client, "SELECT count(*) FROM submissions") == [(0,)]
    assert rows(client, "SELECT count(*) FROM puzzles") == [(0,)]


DEEP = "[" * 1000 + "]" * 1000  # within orjson's bound, far past the body's (as JSON text)


def _deep_client() -> bytes:
    return (json.dumps(solve_body())[:-1] + f', "client": {DEEP}}}').encode()


def _deep_move() -> bytes:
    return json.dumps(solve_body()).replace('"digit": ', f'"x": {DEEP}, "digit": ', 1).encode()


def _with_move(i, **change):
    moves = solve_moves()
    moves[i] = {**moves[i], **change}
    return moves


@pytest.mark.parametrize("body,status,field", [
    (b"{not json", 400, None),
    (b"[1, 2]", 400, None),
    (b'{"type": NaN}', 400, None),
    (solve_body(type="solve.started"), 422, "type"),
    (solve_body(player_id=5), 422, "player_id"),
    (solve_body(moves=_with_move(17, cell=81)), 422, "moves[17].cell"),
    (solve_body(moves=_with_move(17, cell=True)), 422, "moves[17].cell"),
    (solve_body(moves=_with_move(3, digit=10)), 422, "moves[3].digit"),
    (solve_body(moves=_with_move(5, t_ms=1)), 422, "moves[5].t_ms"),
    (solve_body(moves=_with_move(0, cell=2)), 422, "moves[0].cell"),  # r1c3 is a given
    (solve_body(moves=_with_move(0, kind="scribble")), 422, "moves[0].kind"),
    (solve_body(started_at="yesterday"), 422, "started_at"),
    (solve_body(started_at="2099-01-01T00:00:00Z"), 422, "started_at"),  # in the future
    ({**solve_body(), "outcome": "gave_up"}, 422, "outcome"),
    (solve_body(moves=_with_move(48, t_ms=10 ** 10)), 422, "moves[48].t_ms"),  # ends later
    (solve_body(givens=None), 422, "puzzle.givens"),  # unknown puzzle, no givens
    (solve_body(givens="." * 81), 422, "puzzle.givens"),  # not unique
    (solve_body(givens=EASY[:80]), 422, "puzzle.givens"),
    # stored times stay within what every reader represents
    (solve_body(started_at="0001-01-01T00:30:00+01:00"), 422, "started_at"),
    (solve_body(started_at="1999-12-31T23:59:59Z"), 422, "started_at"),
    # ids that would reorder the text around them on a screen
    (solve_body(player_id="p-\u202e42"), 422, "player_id"),
    (solve_body(tournament_id="t\x1b[31m"), 422, "tournament_id"),
    (solve_body(puzzle_id="easy\u2066"), 422, "puzzle.id"),
    # one nesting bound for the whole body, named where it is broken
    (_deep_client(), 422, "client"),
    (_deep_move(), 422, "moves[0].x"),
    (solve_body(client="x"), 422, "client"),
])
async def test_malformed_and_invalid_bodies(client, body, status, field):
    raw, headers = signed(body)
    resp = await client.post(URL, data=raw, headers=headers)
    assert resp.status == status
    err = await resp.json()
    assert err.get("field") == field and err["error"]
    assert "Traceback" not in err["error"]
    assert rows(client, "SELECT count(*) FROM submissions") == [(0,)]


async def test_givens_that_disagree_with_the_registered_puzzle(client):
    assert (await post(client, solve_body("s-1"), msg_id="a"))[0] == 202
    other = "1" + EASY[1:]  # r1c1 given as 1: a different puzzle with the same id
    status, err = await post(client, solve_body("s-2", givens=other), msg_id="b")
    assert status == 422 and err["field"] == "puzzle.givens"
    # a registered puzzle needs no givens
    assert (await post(client, solve_body("s-3", givens=None), msg_id="c"))[0] == 202


async def test_body_over_the_limit_is_413(aiohttp_client, tmp_path):
    client = await aiohttp_client(create_app(make_settings(tmp_path, server_max_body_bytes=2000)))
    raw, headers = signed(solve_body())
    assert len(raw) > 2000
    resp = await client.post(URL, data=raw, headers=headers)
    assert resp.status == 413 and "too large" in (await resp.json())["error"]
    assert rows(client, "SELECT count(*) FROM submissions") == [(0,)]
    # counted once, as every request is (before any portal is known)
    text = await (await client.get("/metrics")).text()
    assert 'fairgrid_webhook_requests_total{outcome="invalid",portal="unknown"} 1.0' in text


async def test_full_write_queue_is_503_with_retry_after(aiohttp_client, tmp_path):
    client = await aiohttp_client(create_app(make_settings(tmp_path, storage_write_queue_size=1)))
    busy, release = threading.Event(), threading.Event()
    writer = store(client).writer
    blocker = writer.call(lambda con: (busy.set(), release.wait(10)))
    await until(lambda: busy.is_set())
    first = asyncio.create_task(post(client, solve_body("s-1"), msg_id="a"))
    await until(lambda: writer.depth() == 1)  # s-1 waits in the queue
    raw, headers = signed(solve_body("s-2"), msg_id="b")
    resp = await client.post(URL, data=raw, headers=headers)
    assert resp.status == 503 and resp.headers["Retry-After"] == "5"
    assert "retry" in (await resp.json())["error"]
    release.set()
    blocker.result(5)
    assert (await first)[0] == 202
    assert rows(client, "SELECT submission_id FROM submissions") == [("s-1",)]


async def test_metrics_count_the_traffic(client):
    await post(client, solve_body(), msg_id="a")
    await post(client, solve_body(), msg_id="a")
    raw, headers = signed(solve_body("s-9"), secret="whsec_" + "d3JvbmcgcG9ydGFsIHNlY3JldCBrZXkgMTIz")
    await client.post(URL, data=raw, headers=headers)
    text = await (await client.get("/metrics")).text()
    assert 'fairgrid_webhook_requests_total{outcome="accepted",portal="demo"} 1.0' in text
    assert 'fairgrid_webhook_duplicates_total{portal="demo"} 1.0' in text
    assert 'fairgrid_webhook_signature_failures_total{reason="bad_signature"} 1.0' in text
    assert "fairgrid_ingest_latency_seconds_count 2.0" in text
    assert "fairgrid_write_batch_size_count" in text and "fairgrid_puzzles{" in text
    assert "p-42" not in text and "easy" not in text  # no player or puzzle ids as labels


async def test_submission_query_needs_a_token_and_returns_the_solve(client):
    await post(client, solve_body())
    url = "/v1/submissions/demo/s-1"
    resp = await client.get(url)
    assert resp.status == 401 and resp.headers["WWW-Authenticate"] == "Bearer"
    assert (await client.get(url, headers=bearer("nope"))).status == 401
    resp = await client.get(url, headers=bearer(ORGANISER))
    doc = await resp.json()
    assert resp.status == 200 and doc["status"] == "pending" and doc["complete"] is True
    assert len(doc["moves"]) == 49 and doc["moves"][0]["t_ms"] == 4000
    assert (await client.get("/v1/submissions/demo/zzz", headers=bearer(ADMIN))).status == 404


async def _flag(client, sid, minutes, anomaly):
    """Insert a flag as the scoring stage will, through the writer."""
    from datetime import datetime, timedelta, timezone

    at = datetime(2026, 11, 21, 12, 0, tzinfo=timezone.utc) + timedelta(minutes=minutes)

    def write(con):
        con.execute(INSERT_SCORE + "('demo', ?, ?, ?, 0.001, true, '{}')",
                    [sid, at, anomaly])
        con.execute("INSERT INTO flags (portal, submission_id, created_at, state, reasons) "
                    "VALUES ('demo', ?, ?, 'open', '[\"order\"]')", [sid, at])

    await asyncio.wrap_future(store(client).writer.call(write))


async def test_flags_are_filtered_and_paginated_newest_first(client):
    for i in range(5):
        body = solve_body(f"s-{i}", player_id="p-1" if i % 2 else "p-2")
        assert (await post(client, body, msg_id=f"m{i}"))[0] == 202
        await _flag(client, f"s-{i}", minutes=i, anomaly=float(i))
    seen, cursor = [], None
    while True:
        url = "/v1/flags?limit=2" + (f"&cursor={cursor}" if cursor else "")
        doc = await (await client.get(url, headers=bearer(ORGANISER))).json()
        seen += [f["submission_id"] for f in doc["flags"]]
        cursor = doc["next_cursor"]
        if cursor is None:
            break
    assert seen == ["s-4", "s-3", "s-2", "s-1", "s-0"]
    for name in ("min_anomaly", "min_score"):  # min_score: min_anomaly's old name
        doc = await (await client.get(f"/v1/flags?player=p-1&{name}=2&tournament=t-1",
                                      headers=bearer(ORGANISER))).json()
        assert [f["submission_id"] for f in doc["flags"]] == ["s-3"]
    doc = await (await client.get("/v1/flags?since=2026-11-21T12:03:00Z",
                                  headers=bearer(ORGANISER))).json()
    assert [f["submission_id"] for f in doc["flags"]] == ["s-4", "s-3"]
    for bad in ("limit=0", "limit=x", "since=yesterday", "cursor=zzz", "min_anomaly=high",
                "min_score=high", "state=pending", "tournamnet=t-1",
                # int() takes these; nobody typed them as a number
                "limit=5_0", "limit=%EF%BC%95", "limit=%D9%A3"):
        resp = await client.get(f"/v1/flags?{bad}", headers=bearer(ORGANISER))
        assert resp.status == 400 and (await resp.json())["field"] == bad.split("=")[0]
    resp = await client.get("/v1/notifications?limit=5_0", headers=bearer(ORGANISER))
    assert resp.status == 400
    # one value a parameter: which of two would count is no one's guess
    resp = await client.get("/v1/flags?state=open&state=bogus", headers=bearer(ORGANISER))
    assert resp.status == 400 and (await resp.json())["field"] == "state"
    # a flag id in another script's digits is no flag id (int() reads it as 1)
    resp = await client.post("/v1/flags/%D9%A1/review", json={"state": "cleared"},
                             headers=bearer(ADMIN))
    assert resp.status == 404
    # the state filter: one flag reviewed as confirmed is not among the open ones
    def confirm(con):
        fid = con.execute("SELECT id FROM flags WHERE submission_id = 's-2'").fetchone()[0]
        con.execute("UPDATE flags SET state = 'confirmed' WHERE id = ?", [fid])
    await asyncio.wrap_future(store(client).writer.call(confirm))
    for state, expected in (("open", ["s-4", "s-3", "s-1", "s-0"]), ("confirmed", ["s-2"])):
        doc = await (await client.get(f"/v1/flags?state={state}",
                                      headers=bearer(ORGANISER))).json()
        assert [f["submission_id"] for f in doc["flags"]] == expected
    assert (await client.get("/v1/flags")).status == 401


def _verdict_row(con, state: str) -> None:
    """Store p-42's season verdict in ``state`` (as the verdict job would)."""
    from fairgrid.analytics.player_verdict import judge

    v = judge([])
    con.execute("INSERT OR REPLACE INTO player_verdicts (portal, player_id, state, flagged, "
                "p_value, solves, verdict, judged_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                ["demo", "p-42", state, state == "flagged", v.p_value, 3,
                 json.dumps(v.to_json()), datetime.now(timezone.utc)])


async def test_player_view(client):
    for i in range(3):
        assert (await post(client, solve_body(f"s-{i}"), msg_id=f"m{i}"))[0] == 202
    await _flag(client, "s-1", minutes=0, anomaly=5.0)
    doc = await (await client.get("/v1/players/demo/p-42", headers=bearer(ORGANISER))).json()
    agg = doc["aggregate"]
    assert (agg["submissions"], agg["complete"], agg["flagged"]) == (3, 3, 1)
    assert agg["stouffer_z"] is not None and agg["player_flag_threshold"] == 4.5
    assert agg["player_flagged"] is False  # no season verdict yet
    assert {s["submission_id"] for s in doc["submissions"]} == {"s-0", "s-1", "s-2"}
    await _flag(client, "s-0", minutes=0, anomaly=5.0)
    await _flag(client, "s-2", minutes=0, anomaly=5.0)
    agg = (await (await client.get("/v1/players/demo/p-42", headers=bearer(ORGANISER))
                  ).json())["aggregate"]
    # three flags standing are numbers beside the verdict: the season verdict alone says
    # whether the player is flagged, so the document never says it two ways
    assert agg["flagged"] == 3 and agg["player_flag_count"] == 3
    assert agg["player_flagged"] is False
    for state, flagged in (("clear", False), ("flagged", True), ("confirmed", True),
                           ("cleared", False)):
        await asyncio.wrap_future(store(client).writer.call(_verdict_row, state))
        doc = await (await client.get("/v1/players/demo/p-42", headers=bearer(ORGANISER))
                     ).json()
        assert doc["verdict"]["state"] == state
        assert doc["aggregate"]["player_flagged"] is flagged
    # a flag a re-score withdrew does not stand
    def withdraw(con):
        con.execute("UPDATE flags SET state = 'withdrawn' WHERE submission_id = 's-0'")
    await asyncio.wrap_future(store(client).writer.call(withdraw))
    agg = (await (await client.get("/v1/players/demo/p-42", headers=bearer(ORGANISER))
                  ).json())["aggregate"]
    assert agg["flagged"] == 2
    assert (await client.get("/v1/players/demo/nobody", headers=bearer(ORGANISER))).status == 404


async def test_an_empty_solve_leaves_the_players_evidence_finite_and_json_strict(client):
    # two flagged solves, then an empty one: the player's Z stays finite and the body is
    # JSON a strict parser reads (no NaN, no Infinity)
    for i in range(2):
        assert (await post(client, solve_body(f"s-{i}"), msg_id=f"m{i}"))[0] == 202
        await _flag(client, f"s-{i}", minutes=i, anomaly=9.0)
    assert (await post(client, solve_body("s-empty", moves=[]), msg_id="m9"))[0] == 202

    def score_empty(con):
        con.execute(INSERT_SCORE + "('demo', 's-empty', now(), 0.0, "
                    "0.9999999999999999, false, '{}')")
    await asyncio.wrap_future(store(client).writer.call(score_empty))
    resp = await client.get("/v1/players/demo/p-42", headers=bearer(ORGANISER))
    text = await resp.text()

    def refuse(name):
        raise AssertionError(f"{name} in a JSON body")
    agg = json.loads(text, parse_constant=refuse)["aggregate"]
    # z 3.09 twice and the empty solve clipped at -1: (6.18 - 1) / sqrt(3 (1 + 2 * 0.2))
    assert math.isfinite(agg["stouffer_z"])
    assert agg["stouffer_z"] == pytest.approx(5.18 / math.sqrt(4.2), abs=0.01)


async def test_unknown_query_parameters_are_named(client):
    for url in ("/v1/players/demo/p-42?sort=new", "/v1/puzzles/easy?verbose=1",
                "/v1/submissions/demo/s-1?fields=all"):
        resp = await client.get(url, headers=bearer(ORGANISER))
        assert resp.status == 400, url
        assert (await resp.json())["field"] == url.split("?")[1].split("=")[0]


async def test_stored_evidence_with_nan_is_served_as_strict_json(client):
    assert (await post(client, solve_body()))[0] == 202

    def score(con):  # evidence written by an older version, NaN and all
        con.execute(INSERT_SCORE + "('demo', 's-1', now(), 1.0, 0.5, false, ?)",
                    ['{"anomaly": NaN, "signals": [{"z": Infinity}]}'])
    await asyncio.wrap_future(store(client).writer.call(score))
    text = await (await client.get("/v1/submissions/demo/s-1",
                                   headers=bearer(ORGANISER))).text()

    def refuse(name):
        raise AssertionError(f"{name} in a JSON body")
    doc = json.loads(text, parse_constant=refuse)
    assert doc["score"]["anomaly"] is None and doc["score"]["signals"][0]["z"] is None


def test_responses_never_carry_nan_or_infinity():
    from fairgrid.daemon.web.responses import dumps
    text = dumps({"a": float("nan"), "b": [float("inf"), 1.5], "c": {"d": -float("inf")}})
    assert json.loads(text) == {"a": None, "b": [None, 1.5], "c": {"d": None}}


async def test_the_webhook_contract_on_headers_numbers_and_length(client):
    """Each rule docs/openapi.yaml states for what is not obviously right or wrong."""
    # the body must be labelled JSON: 415 naming the header, nothing stored
    for content_type in ("text/plain", "application/x-www-form-urlencoded",
                         "application/json; charset=latin-1", None):
        raw, headers = signed(solve_body())
        if content_type is None:
            del headers["content-type"]
        else:
            headers["content-type"] = content_type
        resp = await client.post(URL, data=raw, headers=headers)
        assert resp.status == 415, content_type
        assert (await resp.json())["field"] == "content-type"
    assert rows(client, "SELECT count(*) FROM submissions") == [(0,)]
    # a webhook-id no portal may send is a malformed request, not a signature failure
    for msg_id in ("m" * 201, "m-\u202e1"):
        raw, headers = signed(solve_body(), msg_id=msg_id)
        resp = await client.post(URL, data=raw, headers=headers)
        assert resp.status == 400 and (await resp.json())["field"] == "webhook-id", msg_id
    status, _ = await post(client, solve_body("s-200"), msg_id="m" * 200)
    assert status == 202
    # an integral number is an integer (JSON Schema's rule): 4.0 is the digit 4
    moves = _with_move(0, digit=4.0)
    status, _ = await post(client, solve_body("s-float", moves=moves,
                                              started_at="2026-11-21T10:00:00Z"),
                           msg_id="m-float")
    assert status == 202
    assert rows(client, "SELECT m.digit FROM moves m JOIN submissions s USING (sub_key) "
                        "WHERE s.submission_id = 's-float' AND m.seq = 0") == [(4,)]
    raw, headers = signed(solve_body("s-json", moves=moves), msg_id="m-json")
    headers["content-type"] = "application/json; charset=utf-8"
    assert (await client.post(URL, data=raw, headers=headers)).status == 202
    # long logs are taken whole: pencil marks and second thoughts are a solve's evidence
    empties = [m["cell"] for m in solve_moves()]
    marks = [{"t_ms": 10 * k, "cell": empties[k % len(empties)], "digit": 1 + k % 9,
              "kind": "note"} for k in range(10_000 - 49)]
    long_log = marks + [{**m, "t_ms": m["t_ms"] + 100_000} for m in solve_moves()]
    status, _ = await post(client, solve_body("s-long", moves=long_log), msg_id="m-long")
    assert status == 202
    assert rows(client, "SELECT n_moves, complete FROM submissions "
                        "WHERE submission_id = 's-long'") == [(10_000, True)]


async def test_times_stored_outside_what_python_represents_are_served(client):
    """A start stored before ingestion bounded it (year 1 in UTC+1: year 0 in UTC) is
    read back as the database's text: the submission and its player answer 200."""
    assert (await post(client, solve_body()))[0] == 202

    def backdate(con):
        con.execute("UPDATE submissions SET started_at = '0001-01-01 00:30:00+01' "
                    "WHERE submission_id = 's-1'")
    await asyncio.wrap_future(store(client).writer.call(backdate))
    resp = await client.get("/v1/submissions/demo/s-1", headers=bearer(ORGANISER))
    assert resp.status == 200, await resp.text()
    assert "BC" in (await resp.json())["started_at"]
    resp = await client.get("/v1/players/demo/p-42", headers=bearer(ORGANISER))
    assert resp.status == 200, await resp.text()
    assert "BC" in (await resp.json())["submissions"][0]["started_at"]


async def test_a_malformed_client_block_is_a_422_naming_the_field_and_stores_nothing(client):
    bad = {"version": 1, "hidden": [{"t_ms": 10, "ms": "long"}]}
    status, body = await post(client, solve_body(client=bad))
    assert status == 422 and body["field"] == "client.hidden[0].ms", body
    assert rows(client, "SELECT count(*) FROM submissions") == [(0,)]
    good = {"version": 1, "hidden": [{"t_ms": 10, "ms": 4000}], "input": {"pointer": 49}}
    assert (await post(client, solve_body(client=good)))[0] == 202
    [(raw,)] = rows(client, "SELECT raw FROM submissions")
    assert json.loads(raw)["client"] == good


async def test_a_signature_header_given_twice_is_refused(client):
    """Two webhook-id (or timestamp, or signature) headers: which would count is no
    one's guess to make, so neither does; one header with several signatures is fine."""
    from multidict import CIMultiDict

    raw, headers = signed(solve_body("s-twice"), msg_id="twice")
    for name, other in (("webhook-id", "other"), ("webhook-timestamp", "1"),
                        ("webhook-signature", "v1,AAAA")):
        twice = CIMultiDict(headers)
        twice.add(name, other)
        resp = await client.post(URL, data=raw, headers=twice)
        assert resp.status == 401 and f"{name} header given more than once" in \
            (await resp.json())["error"]
    one = CIMultiDict(headers)
    one["webhook-signature"] = "v1,AAAA " + headers["webhook-signature"]
    assert (await client.post(URL, data=raw, headers=one)).status == 202


@pytest.mark.parametrize("where, key", [("top", "player_id"), ("puzzle", "id"),
                                        ("move", "cell"), ("move", "pressure"),
                                        ("extra", "player_id")])
async def test_a_key_given_twice_is_a_400_naming_it_and_stores_nothing(client, where, key):
    """A body that names a key twice in one object means two things: the parsers here
    keep the last value, a portal's own or an auditor's may keep the first (another
    player, another cell). Neither path picks one. "extra": an unknown field as well,
    so the body takes the checked path."""
    text = json.dumps(solve_body("s-twice", player_id="p-first"))
    if where in ("top", "extra"):
        text = text.replace('"player_id": "p-first"',
                            '"player_id": "p-first", "player_id": "p-second"')
        if where == "extra":
            text = text.replace('"type":', '"portal_note": 1, "type":')
    elif where == "puzzle":
        text = text.replace('"id": "easy"', '"id": "easy", "id": "hard"')
    else:
        first = json.dumps(solve_moves()[0])
        twice = first[:-1] + (', "cell": 0}' if key == "cell"
                              else ', "pressure": 1, "pressure": 2}')
        text = text.replace(first, twice, 1)
    assert text.count(f'"{key}"') >= 2
    raw = text.encode()
    resp = await client.post(URL, data=raw, headers=signed_bytes(raw, msg_id="twice"))
    body = await resp.json()
    assert resp.status == 400 and body["field"] == key and "twice" in body["error"], body
    assert rows(client, "SELECT count(*) FROM submissions") == [(0,)]
    # the same key in two objects is no repeat
    assert (await post(client, solve_body("s-once")))[0] == 202


async def test_a_log_from_a_clock_running_ahead_is_stored_at_the_latest_start_it_allows(
        client):
    """The recorder takes started_at from the player's computer: one ten minutes fast
    got every solve refused (422, which a portal does not retry). A log ending after
    its receipt, within a day, is stored as ending at the receipt; the body is kept as
    sent, so a retry is a duplicate. A day ahead is a wrong date, still refused."""
    from datetime import timedelta

    ahead = datetime.now(timezone.utc) + timedelta(minutes=10)
    body = solve_body("s-ahead", started_at=ahead.isoformat())
    before = datetime.now(timezone.utc)
    assert await post(client, body, msg_id="ahead") == (202, {"status": "accepted"})
    after = datetime.now(timezone.utc)
    [(started, received, raw)] = rows(
        client, "SELECT started_at, received_at, raw FROM submissions")
    last = timedelta(milliseconds=body["moves"][-1]["t_ms"])
    assert started == received - last and before <= received <= after
    assert json.loads(raw)["started_at"] == ahead.isoformat()
    assert await post(client, body, msg_id="ahead") == (200, {"status": "duplicate"})
    metrics = await (await client.get("/metrics")).text()
    assert 'fairgrid_webhook_clock_ahead_total{portal="demo"} 1.0' in metrics
    far = datetime.now(timezone.utc) + timedelta(days=1, minutes=5)
    status, err = await post(client, solve_body("s-far", started_at=far.isoformat()))
    assert (status, err["field"]) == (422, "started_at")


async def test_a_gzipped_body_signed_before_compression_is_taken(client):
    """A portal that compresses its bodies signs the JSON before compressing it, as
    docs/portals.md says: that is the body fairgrid reads and checks."""
    import gzip
    import zlib

    raw, headers = signed(solve_body("s-gz"), msg_id="gz")
    resp = await client.post(URL, data=gzip.compress(raw),
                             headers={**headers, "Content-Encoding": "gzip"})
    assert resp.status == 202, await resp.text()
    # a gzip body may come in several members, and a deflate one as a zlib stream or bare
    raw, headers = signed(solve_body("s-gz3"), msg_id="gz3")
    resp = await client.post(URL, data=gzip.compress(raw[:100]) + gzip.compress(raw[100:]),
                             headers={**headers, "Content-Encoding": "gzip"})
    assert resp.status == 202, await resp.text()
    raw, headers = signed(solve_body("s-gz4"), msg_id="gz4")
    bare = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    resp = await client.post(URL, data=bare.compress(raw) + bare.flush(),
                             headers={**headers, "Content-Encoding": "deflate"})
    assert resp.status == 202, await resp.text()
    raw, headers = signed(solve_body("s-gz5"), msg_id="gz5")
    resp = await client.post(URL, data=zlib.compress(raw),
                             headers={**headers, "Content-Encoding": "deflate"})
    assert resp.status == 202, await resp.text()
    # signed over the compressed bytes instead, it is no signature of the body
    packed = gzip.compress(json.dumps(solve_body("s-gz2")).encode())
    resp = await client.post(URL, data=packed, headers={
        **signed_bytes(packed, msg_id="gz2"), "Content-Encoding": "gzip"})
    assert resp.status == 401


async def test_spellings_of_a_known_puzzle_are_remembered_within_a_bound(client):
    """Each new spelling of a registered puzzle's givens (its whitespace, say) that
    proves to be that puzzle is remembered to save the parse; a portal sending new ones
    without end must not grow the daemon's memory by one per solve."""
    from fairgrid.daemon.web.context import CTX
    from fairgrid.daemon.web.webhook import MATCHING_TEXTS

    for k in range(MATCHING_TEXTS + 8):
        raw, headers = signed(solve_body(submission_id=f"s-{k}", givens=EASY + " " * (k + 1)),
                              msg_id=f"m-{k}")
        resp = await client.post(URL, data=raw, headers=headers)
        assert resp.status == 202, await resp.text()
    info = await client.server.app[CTX].catalog.lookup("demo", "easy")
    assert len(info.matching_texts) == MATCHING_TEXTS
