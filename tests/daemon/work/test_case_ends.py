"""When a reviewer's decision on a solve flag ends a player's case: only clearing a flag
that stood (open or confirmed; a flag a re-score withdrew is no evidence any more), and
only once none of the player's flags stands and their season does not flag them by
itself; and reopening, which a case so ended allows and a player no verdict ever
flagged does not. Seasons are written straight into a real DuckDB file; the daemon
judges them.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta, timezone

import pytest

from fairgrid.daemon.app import create_app
from fairgrid.daemon.web.context import CTX
from ..helpers import ADMIN, COLUMNS, INSERT_SCORE, ORGANISER, bearer, \
    make_settings, query

START = datetime(2026, 11, 1, 18, 0, tzinfo=timezone.utc)


def _evidence(p: float, flagged: bool) -> str:
    return json.dumps({"signals": [{"name": "order", "family": "hints", "p": p}],
                       "flagged": flagged, "p_value": p, "timeline": []})


def _season(con, player: str, n: int, cheats: set[int]) -> None:
    """``n`` scored solves of ``player``, each of its own puzzle; the ``cheats`` scored
    as flagged with an open flag."""
    base = con.execute("SELECT coalesce(max(sub_key), -1) + 1 FROM submissions").fetchone()[0]
    for k in range(n):
        sid, at, cheat = f"{player}-{k}", START + timedelta(days=k), k in cheats
        con.execute(f"INSERT INTO submissions {COLUMNS} VALUES (?, 'demo', ?, ?, 't', ?, ?, "
                    "?, ?, ?, 1, 1, true, 'scored', '{}')",
                    [base + k, sid, f"w-{sid}", player, f"p-{sid}", at, at, at])
        p = 1e-9 if cheat else 0.5
        con.execute(INSERT_SCORE + "('demo', ?, ?, 0, ?, ?, ?)",
                    [sid, at, p, cheat, _evidence(p, cheat)])
        if cheat:
            con.execute("INSERT INTO flags (portal, submission_id, created_at, state, "
                        "reasons) VALUES ('demo', ?, ?, 'open', '[]')", [sid, at])


async def _write(client, fn):
    return await asyncio.wrap_future(client.app[CTX].store.writer.call(fn))


async def _verdict(client, player):
    resp = await client.get(f"/v1/players/demo/{player}", headers=bearer(ORGANISER))
    assert resp.status == 200
    return (await resp.json())["verdict"]


async def _rescored_case(client, withdrawn: str):
    """Player x flagged on three flagged solves (x-1, x-3, x-5); then a re-score under
    which the season no longer flags them by itself, withdrawing the flags of the solves
    ``withdrawn`` (an SQL condition) selects. The verdict before a decision."""
    await _write(client, lambda con: _season(con, "x", 6, {1, 3, 5}))
    verdicts = client.app[CTX].scorer.verdicts
    await verdicts.judge([("demo", "x")])
    flagging = await _verdict(client, "x")
    assert flagging["state"] == "flagged"
    assert {"x-3", "x-5"} <= {s for f in flagging["findings"] for s in f["solves"]}

    def rescore(con):
        con.execute("UPDATE scores SET evidence = ?, season_facts = NULL, p_value = 0.5, "
                    "flagged = false", [_evidence(0.5, False)])
        con.execute(f"UPDATE flags SET state = 'withdrawn' WHERE {withdrawn}")
    await _write(client, rescore)
    await verdicts.judge([("demo", "x")])
    before = await _verdict(client, "x")
    assert before["state"] == "flagged" and before["flagged"] is False  # the case stays
    return before


async def _clear(client, sid: str) -> None:
    (flag_id,), = await asyncio.to_thread(query, client.app[CTX].store,
                                          "SELECT id FROM flags WHERE submission_id = ?",
                                          [sid])
    resp = await client.post(f"/v1/flags/{flag_id}/review", json={"state": "cleared"},
                             headers=bearer(ADMIN))
    assert resp.status == 200


async def test_clearing_a_withdrawn_flag_does_not_end_a_case(aiohttp_client, tmp_path):
    """A reviewer tidies the queue: a flag every re-score withdrew is marked cleared. It
    stood against nobody, and the season the verdict reads is unchanged."""
    client = await aiohttp_client(create_app(make_settings(tmp_path, nightly_cron="")))
    before = await _rescored_case(client, "true")
    await _clear(client, "x-1")
    after = await _verdict(client, "x")
    assert after["p_value"] == pytest.approx(before["p_value"])  # same evidence
    assert after["state"] == "flagged", [(h["state"], h["note"]) for h in after["history"]]


async def test_clearing_one_of_two_standing_flags_does_not_end_the_case(aiohttp_client,
                                                                          tmp_path):
    """x-1's flag withdrawn, x-3's and x-5's still open: a reviewer clears x-3's; x-5's,
    also behind the case, waits undecided, and so does the case."""
    client = await aiohttp_client(create_app(make_settings(tmp_path, nightly_cron="")))
    await _rescored_case(client, "submission_id = 'x-1'")
    await _clear(client, "x-3")
    standing = await asyncio.to_thread(query, client.app[CTX].store,
                                       "SELECT submission_id FROM flags WHERE state = 'open'")
    assert standing == [("x-5",)]
    after = await _verdict(client, "x")
    assert after["state"] == "flagged", [(h["state"], h["note"]) for h in after["history"]]


async def test_reopening_a_player_nothing_flagged_is_refused_after_a_decision_too(
        aiohttp_client, tmp_path):
    client = await aiohttp_client(create_app(make_settings(tmp_path, nightly_cron="")))
    await _write(client, lambda con: _season(con, "h", 6, set()))   # an honest season
    await client.app[CTX].scorer.verdicts.judge([("demo", "h")])
    first = await _verdict(client, "h")
    assert first["state"] == "clear" and first["flagged"] is False
    review = "/v1/players/demo/h/review"
    assert (await client.post(review, json={"state": "open"},
                              headers=bearer(ADMIN))).status == 409
    # a reviewer records the honest player as cleared (allowed), then reopens
    resp = await client.post(review, json={"state": "cleared", "note": "looked at it"},
                             headers=bearer(ADMIN))
    assert resp.status == 200
    for decided in ("cleared", "confirmed"):
        resp = await client.post(review, json={"state": decided}, headers=bearer(ADMIN))
        assert resp.status == 200
        resp = await client.post(review, json={"state": "open"}, headers=bearer(ADMIN))
        body = await resp.json()
        assert resp.status == 409 and body["field"] == "state", body
    queue = await (await client.get("/v1/players?state=flagged",
                                    headers=bearer(ORGANISER))).json()
    assert queue["players"] == []


async def test_a_case_a_dismissal_ended_can_be_reopened(aiohttp_client, tmp_path):
    client = await aiohttp_client(create_app(make_settings(tmp_path, nightly_cron="")))
    await _write(client, lambda con: _season(con, "x", 6, {1, 3, 5}))
    await client.app[CTX].scorer.verdicts.judge([("demo", "x")])
    assert (await _verdict(client, "x"))["state"] == "flagged"
    # evidence that weakened (as a re-score may leave it) under flags still open
    await _write(client, lambda con: con.execute(
        "UPDATE scores SET evidence = ?, season_facts = NULL, p_value = 0.5, flagged = false",
        [_evidence(0.5, False)]))
    flags = await asyncio.to_thread(query, client.app[CTX].store, "SELECT id FROM flags")
    for (flag_id,) in flags:     # every solve flag behind the case dismissed
        resp = await client.post(f"/v1/flags/{flag_id}/review", json={"state": "cleared"},
                                 headers=bearer(ADMIN))
        assert resp.status == 200
    assert (await _verdict(client, "x"))["state"] == "clear"
    resp = await client.post("/v1/players/demo/x/review", json={"state": "open"},
                             headers=bearer(ADMIN))
    assert resp.status == 200, await resp.json()
    queue = await (await client.get("/v1/players?state=flagged",
                                    headers=bearer(ORGANISER))).json()
    row = next(p for p in queue["players"] if p["player_id"] == "x")
    assert row["flagging"] is not None
