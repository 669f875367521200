"""A review's body as a careless client or a stale page sends it: a decision the flag
state machine has no arrow for, and fields the route does not know."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone

from ..helpers import ADMIN, SECRET_A, add_user, bearer, post_flagged, query, store


async def _withdraw(client, flag_id: int) -> None:
    """What a re-score that no longer flags the solve does to the flag scoring raised
    (``repository.scores.write_scores``): state ``withdrawn``, a history row by fairgrid."""
    def withdraw(con):
        con.execute("UPDATE flags SET state = 'withdrawn' WHERE id = ?", [flag_id])
        con.execute("INSERT INTO flag_history VALUES (?, ?, 'withdrawn', 're-scored', "
                    "'fairgrid')", [flag_id, datetime.now(timezone.utc)])
    await asyncio.wrap_future(store(client).write(withdraw))


async def test_a_withdrawn_flag_cannot_be_reopened_through_the_api(client):
    """The flag state machine (repository/scores.py, docs/architecture.md) reopens only a
    decided flag (cleared or confirmed: an appeal); the console offers no "Reopen" on a
    withdrawn flag. The API must refuse it too: a person's ``open`` is never withdrawn
    again by re-scoring, so the solve scoring no longer flags would stand against the
    player with nobody having decided anything."""
    flag = await post_flagged(client, "demo", "w-1", SECRET_A, player_id="pw")
    await _withdraw(client, flag)
    before = query(store(client), "SELECT count(*) FROM flag_history WHERE flag_id = ?",
                   [flag])[0][0]
    resp = await client.post(f"/v1/flags/{flag}/review", headers=bearer(ADMIN),
                             json={"state": "open", "note": "looks odd"})
    body = await resp.json()
    assert resp.status in (409, 422), (resp.status, body)
    assert "withdrawn" in body["error"], body
    assert query(store(client), "SELECT state FROM flags WHERE id = ?", [flag])[0][0] \
        == "withdrawn"
    assert query(store(client), "SELECT count(*) FROM flag_history WHERE flag_id = ?",
                 [flag])[0][0] == before


async def test_a_review_field_the_route_does_not_know_is_a_422_naming_it(client):
    """A misspelt ``seen`` (or ``judged_at``, ``note``) must not be dropped in silence: the
    decision would go through without the stale-page guard the reviewer asked for, and
    overturn another reviewer's decision unseen (the users' routes, the notification
    route and every query string already refuse what they do not know)."""
    flag = await post_flagged(client, "demo", "u-1", SECRET_A, player_id="pu")
    alice, bob = await add_user(client, "alice"), await add_user(client, "bob")
    # alice clears the flag; bob, reading the page from before, confirms with a typo
    resp = await client.post(f"/v1/flags/{flag}/review", headers=bearer(alice),
                             json={"state": "cleared", "note": "honest"})
    assert resp.status == 200
    resp = await client.post(f"/v1/flags/{flag}/review", headers=bearer(bob),
                             json={"state": "confirmed", "note": "copied",
                                   "seen_state": "open"})
    body = await resp.json()
    assert resp.status == 422 and body.get("field") == "seen_state", (resp.status, body)
    assert query(store(client), "SELECT state FROM flags WHERE id = ?", [flag])[0][0] \
        == "cleared"
    # the same on a player's decision: "judgedAt" is no judged_at
    resp = await client.post("/v1/players/demo/pu/review", headers=bearer(ADMIN),
                             json={"state": "cleared", "judgedAt": "2020-01-01T00:00:00Z"})
    body = await resp.json()
    assert resp.status == 422 and body.get("field") == "judgedAt", (resp.status, body)


async def test_a_decision_naming_its_state_twice_is_refused(client):
    """``{"state": "cleared", "state": "confirmed"}``: which of the two a parser keeps is
    no one's guess to make (the rule the API already applies to a query parameter given
    twice); the JSON parser keeps the last in silence and the flag is confirmed."""
    flag = await post_flagged(client, "demo", "d-1", SECRET_A, player_id="pd")
    resp = await client.post(f"/v1/flags/{flag}/review",
                             headers={**bearer(ADMIN), "Content-Type": "application/json"},
                             data=b'{"state": "cleared", "note": "honest", '
                                  b'"state": "confirmed"}')
    body = await resp.json()
    assert 400 <= resp.status < 500 and "state" in body["error"], (resp.status, body)
    assert query(store(client), "SELECT state FROM flags WHERE id = ?", [flag])[0][0] == "open"


async def _verdict_state(client, portal, player, timeout=120.0):
    """The player's verdict once judged (judging runs after the scoring batch)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        resp = await client.get(f"/v1/players/{portal}/{player}", headers=bearer(ADMIN))
        if resp.status == 200:
            doc = await resp.json()
            if doc["verdict"] is not None:
                return doc["verdict"]
        assert asyncio.get_running_loop().time() < deadline, "no verdict"
        await asyncio.sleep(0.3)


async def test_reopening_a_player_nobody_flagged_is_refused(client):
    """A player is ``clear`` until the evidence flags them; reopening makes a case
    ``flagged`` *again*. Reopening a clear player put them in the flagged queue with no
    verdict that flagged them (``flagged_at`` null), and no later judgement takes a
    flagged player out: a case with nothing in it, for good."""
    await post_flagged(client, "demo", "c-1", SECRET_A, player_id="never")
    assert (await _verdict_state(client, "demo", "never"))["state"] == "clear"
    resp = await client.post("/v1/players/demo/never/review", headers=bearer(ADMIN),
                             json={"state": "open", "note": "reopen"})
    body = await resp.json()
    assert resp.status == 409 and body["field"] == "state" and "clear" in body["error"], body
    assert query(store(client), "SELECT state FROM player_verdicts WHERE portal = 'demo' "
                 "AND player_id = 'never'") == [("clear",)]
    assert query(store(client), "SELECT count(*) FROM player_verdict_history") == [(0,)]
    queue = await (await client.get("/v1/players?state=flagged", headers=bearer(ADMIN))).json()
    assert queue["players"] == []
    # a person may still decide on a clear player outright
    resp = await client.post("/v1/players/demo/never/review", headers=bearer(ADMIN),
                             json={"state": "confirmed", "note": "admitted it"})
    assert resp.status == 200, await resp.json()
