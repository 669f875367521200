"""Player verdicts in the daemon: a player who copies one puzzle in three is judged after
each scoring batch and shows in the API's queue, the console's Players queue with the case
in words, and ``fairgrid players --flagged``; one ``player.flagged`` notification; a
cleared player is not flagged again by the same solves, only by new ones; erasure takes
the verdict with it."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from fairgrid.analytics.simulate import simulate
from fairgrid.daemon.cli import main as cli
from fairgrid.daemon.testing import EASY_ROW_COPY as ROW_COPY
from fairgrid.daemon.app import create_app
from fairgrid.daemon.web.context import CTX
from fairgrid.solvers import parse

from ...fixtures import EASY, EASY_SOLUTION
from ..helpers import ADMIN, ORGANISER, bearer, make_settings, query, signed, solve_body

PASSWORD = "a long password"
START = datetime(2026, 11, 1, 18, 0, tzinfo=timezone.utc)


@pytest.fixture
async def client(aiohttp_client, tmp_path):
    return await aiohttp_client(create_app(make_settings(tmp_path, nightly_cron="")))


def _honest(seed: int) -> list[dict]:
    sim = simulate(parse(EASY), np.array([int(c) for c in EASY_SOLUTION]), "honest",
                   rng=seed, expected_log_s=6.0, skill=0.0)
    return sim.moves()


async def _post(client, sid: str, player: str, moves: list[dict], day: int,
                later: timedelta = timedelta(0)) -> None:
    """A solve of the day's puzzle (the same grid every day, a puzzle of its own: a
    puzzle solved again is left out of a season), started ``later`` in the day."""
    body = solve_body(submission_id=sid, moves=moves, player_id=player,
                      puzzle_id=f"easy-{day}",
                      started_at=(START + timedelta(days=day) + later).isoformat())
    raw, headers = signed(body, msg_id=sid)
    resp = await client.post("/v1/webhooks/solves", data=raw, headers=headers)
    assert resp.status == 202, await resp.text()


async def _scored(client, sids, timeout=400.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    for sid in sids:
        while True:
            doc = await (await client.get(f"/v1/submissions/demo/{sid}",
                                          headers=bearer(ORGANISER))).json()
            if doc["status"] == "scored":
                break
            assert asyncio.get_running_loop().time() < deadline, f"{sid} not scored"
            await asyncio.sleep(0.2)


async def _judged(client, player: str, solves: int, timeout=120.0) -> dict:
    """The player's document once their verdict counts ``solves`` scored solves (the
    verdict is judged in the background after a scoring batch is written)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        doc = await _player(client, player)
        if doc["verdict"] is not None and doc["verdict"]["solves"] == solves:
            return doc
        assert asyncio.get_running_loop().time() < deadline, f"{player} not judged"
        await asyncio.sleep(0.2)


async def _player(client, player):
    resp = await client.get(f"/v1/players/demo/{player}", headers=bearer(ORGANISER))
    assert resp.status == 200
    return await resp.json()


async def _events(client):
    store = client.app[CTX].store
    return await asyncio.to_thread(query, store, "SELECT subject FROM outbox WHERE "
                                   "type = 'player.flagged' ORDER BY created_at")


async def _sign_in(client, name):
    await client.post("/v1/users", headers=bearer(ADMIN), json={
        "name": name, "role": "organiser", "portals": ["demo"], "password": PASSWORD})
    form = await (await client.get("/ui/login")).text()
    token = re.search(r'name="csrf" value="([^"]+)"', form)
    resp = await client.post("/ui/login", data={"csrf": token.group(1), "name": name,
                                                "password": PASSWORD, "next": "/ui/players"},
                             allow_redirects=False)
    assert resp.status == 303


async def test_a_selective_cheater_is_flagged_shown_notified_once_and_cleared(
        client, capsys):
    resp = await client.put("/v1/portals/demo/notify", json={"url": "http://127.0.0.1:9/h"},
                            headers=bearer(ADMIN))
    assert resp.status == 200
    # one puzzle in three copied row by row, the rest solved as a person does
    cheat = [(f"c-{k}", ROW_COPY if k % 3 == 1 else _honest(100 + k)) for k in range(9)]
    fair = [(f"h-{k}", _honest(200 + k)) for k in range(6)]
    for day, (sid, moves) in enumerate(cheat):
        await _post(client, sid, "selective", moves, day)
    for day, (sid, moves) in enumerate(fair):
        await _post(client, sid, "fair", moves, day)
    await _scored(client, [s for s, _ in cheat + fair])
    await _judged(client, "selective", 9)
    await _judged(client, "fair", 6)
    # scoring stores, beside each evidence, the compact facts the verdict reads of it
    from fairgrid.analytics.player_verdict import solve_facts
    stored = await asyncio.to_thread(query, client.app[CTX].store, "SELECT submission_id, "
                                     "evidence, season_facts FROM scores")
    assert len(stored) == 15 and all(
        json.loads(facts) == solve_facts(sid, json.loads(ev)).to_json()
        for sid, ev, facts in stored)

    flagged = await (await client.get("/v1/players?state=flagged",
                                      headers=bearer(ORGANISER))).json()
    assert [(p["portal"], p["player_id"]) for p in flagged["players"]] == [
        ("demo", "selective")], flagged
    assert flagged["players"][0]["summary"].startswith("Flagged for review.")
    doc = await _player(client, "selective")
    verdict = doc["verdict"]
    assert verdict["state"] == "flagged" and verdict["solves"] == 9
    top = verdict["findings"][0]
    assert top["p"] < 1e-3 and set(top["solves"]) == {"c-1", "c-4", "c-7"}
    assert "Over 9 solves, 3" in top["sentence"]
    # the stored evidence carries each finished solve's pace: the season compares them
    own = next(f for f in verdict["findings"] if f["kind"] == "own_pace")
    assert own["of"] == 9 and "usual pace" in own["sentence"]
    assert verdict["history"][0]["state"] == "flagged"
    assert (await _player(client, "fair"))["verdict"]["state"] == "clear"
    metrics = await (await client.get("/metrics")).text()
    assert "fairgrid_players_flagged 1.0" in metrics
    assert await _events(client) == [("player:selective",)]

    # the command line's queue, from the running daemon
    url = str(client.make_url("")).rstrip("/")
    code = await asyncio.to_thread(cli, ["players", "--flagged", "--url", url,
                                         "--token", ORGANISER])
    out = capsys.readouterr().out
    assert code == 0 and "1 player flagged" in out and "demo/selective" in out
    code = await asyncio.to_thread(cli, ["player", "demo", "selective", "--url", url,
                                         "--token", ORGANISER])
    out = capsys.readouterr().out
    assert code == 0 and "Season verdict: FLAGGED" in out and "c-1, c-4, c-7" in out
    assert "Judged at 20" in out
    assert out.startswith("demo/selective: season verdict FLAGGED;")

    # the console's Players queue and the case, solves one click away
    await _sign_in(client, "alice")
    queue = await (await client.get("/ui/players")).text()
    assert "/ui/players/demo/selective/case" in queue
    assert "/ui/players/demo/fair/case" not in queue
    case = await (await client.get("/ui/players/demo/selective/case")).text()
    assert "Over 9 solves, 3" in case and 'href="#solve-c-4"' in case
    # the player's page states the season verdict and leads to the case
    page = await (await client.get("/ui/players/demo/selective")).text()
    assert "flagged: Flagged for review." in page
    assert 'href="/ui/players/demo/selective/case"' in page
    # flags standing and Z are numbers beside the verdict, never a second verdict
    assert "worth a look from 3" in page and "Stouffer's Z" in page
    assert "enough" not in page and "the player is flagged at" not in page
    fair = await (await client.get("/ui/players/demo/fair")).text()
    assert "Season verdict</span> <strong>clear: Not flagged" in fair
    assert 'id="solve-c-4"' in case and "/ui/flags/" in case
    assert (await client.get("/ui/players?state=bogus")).status == 400
    assert (await client.get("/ui/players/other/selective/case")).status == 404

    # judged again (a re-score): still one notification
    await client.app[CTX].scorer.score("demo", "c-0")
    assert await _events(client) == [("player:selective",)]

    # a person clears the player: the same solves do not flag them again
    review = "/v1/players/demo/selective/review"
    assert (await client.post(review, json={"state": "cleared"},
                              headers=bearer(ORGANISER))).status == 403
    bad = await client.post(review, json={"state": "innocent"}, headers=bearer(ADMIN))
    assert bad.status == 422 and (await bad.json())["field"] == "state"
    assert (await client.post("/v1/players/demo/nobody/review", json={"state": "cleared"},
                              headers=bearer(ADMIN))).status == 404
    # a decision made on a verdict judged again since is refused, naming the new one
    read_at = (await _player(client, "selective"))["verdict"]["judged_at"]
    await client.app[CTX].scorer.verdicts.judge([("demo", "selective")])
    judged_at = (await _player(client, "selective"))["verdict"]["judged_at"]
    assert judged_at != read_at
    stale = await client.post(review, json={"state": "cleared", "judged_at": read_at},
                              headers=bearer(ADMIN))
    assert stale.status == 409 and (await stale.json())["field"] == "judged_at"
    assert "judged again" in (await stale.json())["error"]
    # the command line names the verdict it decides on too, and is refused the same way
    code = await asyncio.to_thread(cli, ["review-player", "demo", "selective", "--state",
                                         "cleared", "--judged-at", read_at, "--url", url,
                                         "--token", ADMIN])
    assert code == 2 and "judged again" in capsys.readouterr().err
    # ... and the state it read: the case is flagged, not the clear it was read as
    code = await asyncio.to_thread(cli, ["review-player", "demo", "selective", "--state",
                                         "cleared", "--seen", "clear", "--url", url,
                                         "--token", ADMIN])
    assert code == 2 and "409" in capsys.readouterr().err
    bad = await client.post(review, json={"state": "cleared", "judged_at": "yesterday"},
                            headers=bearer(ADMIN))
    assert bad.status == 422 and (await bad.json())["field"] == "judged_at"
    # the same instant in another spelling is the same verdict
    judged_at = datetime.fromisoformat(judged_at).astimezone(timezone.utc).isoformat() \
        .replace("+00:00", "Z")
    # as if c-8 had been scored after the verdict was last judged: the reviewer never saw
    # it weighed, so clearing does not take it as seen
    store = client.app[CTX].store
    await asyncio.wrap_future(store.writer.call(lambda con: con.execute(
        "UPDATE player_verdicts SET judged_solves = ? WHERE player_id = 'selective'",
        [json.dumps([f"c-{k}" for k in range(8)])])))
    resp = await client.post(review, json={"state": "cleared", "note": "known speedster",
                                           "actor": "Alice", "judged_at": judged_at},
                             headers=bearer(ADMIN))
    doc = await resp.json()
    assert resp.status == 200 and doc["verdict"]["state"] == "cleared"
    assert doc["verdict"]["history"][-1]["actor"].endswith("for Alice")
    # a decision made on the state before that one is refused, and writes nothing
    stale = await client.post(review, json={"state": "confirmed", "seen": "flagged"},
                              headers=bearer(ADMIN))
    assert stale.status == 409 and (await stale.json())["field"] == "seen"
    assert "is cleared now" in (await stale.json())["error"]
    # so is the same decision by another reviewer, whose note would be lost unseen; the
    # reviewer's own decision again (a retry whose answer was lost) changes nothing
    same = await client.post(review, json={"state": "cleared", "seen": "flagged",
                                           "actor": "Bob", "note": "mine"},
                             headers=bearer(ADMIN))
    assert same.status == 409 and "for Alice" in (await same.json())["error"]
    retry = await client.post(review, json={"state": "cleared", "note": "known speedster",
                                            "actor": "Alice", "seen": "flagged"},
                              headers=bearer(ADMIN))
    assert retry.status == 200
    assert [h["state"] for h in (await retry.json())["verdict"]["history"]][-1:] == \
        ["cleared"] and len((await retry.json())["verdict"]["history"]) == \
        len(doc["verdict"]["history"])
    # clearing remembers the solves the verdict judged
    seen = await asyncio.to_thread(query, store, "SELECT reviewed_solves FROM "
                                   "player_verdicts WHERE player_id = 'selective'")
    assert sorted(json.loads(seen[0][0])) == [f"c-{k}" for k in range(8)]
    await client.app[CTX].scorer.score("demo", "c-4")
    await client.app[CTX].scorer.verdicts.judge([("demo", "selective")])
    assert (await _player(client, "selective"))["verdict"]["state"] == "cleared"
    assert len(await _events(client)) == 1
    # an honest new solve does not either; new copies do. From the clearing on, the
    # verdict rests on the solves the reviewer did not clear (c-8 on), and says so
    await _post(client, "c-9", "selective", _honest(300), 9)
    await _scored(client, ["c-9"])
    doc = await _judged(client, "selective", 2)
    assert doc["verdict"]["state"] == "cleared"
    assert "leaving out the 8 a person cleared the player on" in \
        doc["verdict"]["rests_on"]
    for k in (10, 11, 12):
        await _post(client, f"c-{k}", "selective", ROW_COPY, k)
    await _scored(client, ["c-10", "c-11", "c-12"])
    doc = await _judged(client, "selective", 5)
    assert doc["verdict"]["state"] == "flagged"
    assert doc["verdict"]["history"][-1]["note"] == "new solves since the review flag the player"
    assert len(await _events(client)) == 2
    # the case, and what its notification said, rest on the new solves alone
    cleared_on = {f"c-{k}" for k in range(8)}
    assert not cleared_on & {s for f in doc["verdict"]["flagging"]["findings"]
                             for s in f["solves"]}

    # a person confirms the case from the console; the history names them. A form read
    # before the verdict was judged again is sent back to be read again
    case = await (await client.get("/ui/players/demo/selective/case")).text()
    csrf = re.search(r'name="csrf" value="([^"]+)"', case).group(1)
    read_at = re.search(r'name="judged_at" value="([^"]+)"', case).group(1)
    await client.app[CTX].scorer.verdicts.judge([("demo", "selective")])
    resp = await client.post("/ui/players/demo/selective/review", allow_redirects=False,
                             data={"csrf": csrf, "state": "confirmed", "judged_at": read_at,
                                   "note": "typed before a re-judge"})
    page = await resp.text()
    assert resp.status == 409 and "judged again while you read it" in page
    # the case is shown again, with the reviewer's decision and note kept
    assert "What the season shows" in page and "typed before a re-judge</textarea>" in page
    assert re.search(r'value="confirmed" required checked', page)
    assert (await _player(client, "selective"))["verdict"]["state"] == "flagged"
    case = await (await client.get("/ui/players/demo/selective/case")).text()
    resp = await client.post("/ui/players/demo/selective/review", allow_redirects=False,
                             data={"csrf": csrf, "state": "guilty", "note": "admitted"})
    assert resp.status == 400 and "choose clear, confirm or reopen" in await resp.text()
    # confirming cheating needs a note, as on a flag: the form comes back as it was
    resp = await client.post("/ui/players/demo/selective/review", allow_redirects=False,
                             data={"csrf": csrf, "state": "confirmed", "note": " "})
    page = await resp.text()
    assert resp.status == 400 and "needs a note" in page
    assert re.search(r'value="confirmed" required checked', page)
    resp = await client.post("/ui/players/demo/selective/review", allow_redirects=False,
                             data={"csrf": csrf, "state": "confirmed", "note": "admitted"})
    assert resp.status == 303 and resp.headers["Location"].endswith("/case#history")
    verdict = (await _player(client, "selective"))["verdict"]
    assert verdict["state"] == "confirmed" and verdict["history"][-1]["actor"] == "alice"
    # a second reviewer's page, read while the case was still flagged, does not overturn
    # that decision unseen: it is sent back naming it
    assert 'name="seen" value="flagged"' in case
    resp = await client.post("/ui/players/demo/selective/review", allow_redirects=False,
                             data={"csrf": csrf, "state": "cleared", "seen": "flagged",
                                   "note": "looked fine to me"})
    page = await resp.text()
    assert resp.status == 409 and "was flagged and is confirmed now, by alice" in page
    assert (await _player(client, "selective"))["verdict"]["state"] == "confirmed"

    # erasure takes the verdict and its history
    resp = await client.post("/v1/players/demo/selective/erase", headers=bearer(ADMIN))
    assert resp.status == 200, await resp.text()
    for table in ("player_verdicts", "player_verdict_history"):
        rows = await asyncio.to_thread(query, store, f"SELECT count(*) FROM {table} WHERE "
                                       "player_id = 'selective'")
        assert rows == [(0,)]
    assert await _events(client) == []


async def test_scoring_does_not_wait_for_the_verdicts(aiohttp_client, tmp_path, monkeypatch):
    """Scoring marks its batches' players to be judged and goes on: while every
    judgement is held, batch after batch (more than there are scoring workers) is scored,
    the backlog shows the players marked since, and once judging goes on every player
    gets their verdict. The players still marked when the daemon stops are judged
    before its store closes."""
    import threading

    from fairgrid.daemon.work import verdicts

    from ..helpers import count

    gate, real = threading.Event(), verdicts.judge_players

    def held(*args, **kwargs):
        assert gate.wait(120), "judging held too long"
        return real(*args, **kwargs)
    monkeypatch.setattr(verdicts, "judge_players", held)
    client = await aiohttp_client(create_app(make_settings(tmp_path, nightly_cron="")))
    try:
        sids = [f"b-{k}" for k in range(5)]
        for day, sid in enumerate(sids):        # one batch each: 2 scoring workers
            await _post(client, sid, f"player-{day}", _honest(600 + day), day)
            await _scored(client, [sid])
        for k in range(5):
            assert (await _player(client, f"player-{k}"))["verdict"] is None
        metrics = await (await client.get("/metrics")).text()
        waiting = float(re.search(r"^fairgrid_players_to_judge (\S+)$", metrics,
                                  re.M).group(1))
        assert 1 <= waiting <= 4                 # the first batch's player is being judged
        await _sign_in(client, "olive")          # the console's overview counts all five
        overview = await (await client.get("/ui/")).text()
        assert re.search(r"Players waiting to be judged[^<]*</span> <strong>5</strong>",
                         overview), overview
        gate.set()
        for k in range(5):
            await _judged(client, f"player-{k}", 1)

        # players still marked at a stop are judged before the store closes
        gate.clear()
        for day in (5, 6):
            await _post(client, f"b-{day}", f"player-{day}", _honest(600 + day), day)
            await _scored(client, [f"b-{day}"])
        deadline = asyncio.get_running_loop().time() + 120
        while "fairgrid_players_to_judge 1.0" not in await (await client.get("/metrics")).text():
            assert asyncio.get_running_loop().time() < deadline, "player-6 never marked"
            await asyncio.sleep(0.1)
    finally:
        gate.set()
    await client.close()
    assert count(str(tmp_path / "fairgrid.duckdb"), "SELECT count(*) FROM player_verdicts "
                 "WHERE player_id IN ('player-5', 'player-6') AND solves = 1") == 2


async def test_players_left_unjudged_are_judged_at_the_next_start(aiohttp_client, tmp_path,
                                                                 monkeypatch):
    """The players to judge are kept in memory: a daemon killed, or a stop whose time ran
    out, leaves scored solves no verdict has read. The next start finds every player with
    a solve scored since their last judgement, or never judged, and judges them."""
    from fairgrid.daemon.work import verdicts

    real = verdicts.judge_players
    monkeypatch.setattr(verdicts, "judge_players", lambda *args, **kwargs: [])  # lost
    settings = make_settings(tmp_path, nightly_cron="")
    client = await aiohttp_client(create_app(settings))
    for day, player in enumerate(("lost-a", "lost-b")):
        await _post(client, f"l-{day}", player, _honest(700 + day), day)
    await _scored(client, ["l-0", "l-1"])
    await client.close()
    monkeypatch.setattr(verdicts, "judge_players", real)
    client = await aiohttp_client(create_app(settings))
    for player in ("lost-a", "lost-b"):
        await _judged(client, player, 1)


async def test_a_judgement_that_fails_is_tried_again(aiohttp_client, tmp_path, monkeypatch,
                                                     caplog):
    """A chunk of players whose judgement fails stays marked and is judged again after a
    pause: a verdict is never dropped because the database failed once."""
    from fairgrid.daemon.work import verdicts

    real, failures = verdicts.judge_players, [RuntimeError("the disk went away")]

    def flaky(*args, **kwargs):
        if failures:
            raise failures.pop()
        return real(*args, **kwargs)
    monkeypatch.setattr(verdicts, "judge_players", flaky)
    monkeypatch.setattr(verdicts, "RETRY_S", 0.2)
    client = await aiohttp_client(create_app(make_settings(tmp_path, nightly_cron="")))
    await _post(client, "f-0", "flaky", _honest(800), 0)
    await _scored(client, ["f-0"])
    await _judged(client, "flaky", 1)
    assert not failures and "judging 1 players failed" in caplog.text


async def test_the_queue_validates_and_pages(client):
    for k, player in enumerate(("a", "b", "c")):
        await _post(client, f"s-{player}", player, _honest(k), k)
    await _scored(client, ["s-a", "s-b", "s-c"])
    for player in ("a", "b", "c"):
        await _judged(client, player, 1)
    resp = await client.get("/v1/players?state=guilty", headers=bearer(ORGANISER))
    assert resp.status == 400 and (await resp.json())["field"] == "state"
    # cursors this API did not return: text, a number no float holds, a deep nesting,
    # one far longer than any it returns
    import base64
    import json

    def b64(text):
        return base64.urlsafe_b64encode(text.encode()).decode()

    for bad in ("nope", b64(json.dumps(["1" + "0" * 400, "a", "b"]).replace('"1', "1")
                            .replace('0",', "0,")),
                b64("[" * 3000 + "]" * 3000), "A" * 5000):
        resp = await client.get("/v1/players", params={"cursor": bad},
                                headers=bearer(ORGANISER))
        assert resp.status == 400 and (await resp.json())["field"] == "cursor"
    seen, cursor = [], None
    while True:
        page = await (await client.get("/v1/players", params={
            "limit": 2, **({"cursor": cursor} if cursor else {})},
            headers=bearer(ORGANISER))).json()
        seen += [p["player_id"] for p in page["players"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert sorted(seen) == ["a", "b", "c"] and len(seen) == 3
    doc = await _player(client, "a")
    assert doc["verdict"]["state"] == "clear" and "too few" in doc["verdict"]["rests_on"]


def test_a_portal_null_takes_the_shipped_ratio_offsets():
    """A portal never learns its own ratio offsets: a null stored before they existed, or
    with those of an older release, reads with the running release's."""
    import json

    from fairgrid.analytics.player_verdict import shipped_null
    from fairgrid.daemon.work.verdicts import _stored_null

    doc = shipped_null().to_json()
    doc.pop("llr_offset")
    doc["source"] = "this portal's players"
    old = _stored_null(json.dumps(doc))
    assert old.llr_offset == shipped_null().llr_offset and "hints" in old.llr_offset
    assert old.source == "this portal's players"
    doc["llr_offset"] = {"stall_look": 0.02}
    assert _stored_null(json.dumps(doc)).llr_offset == shipped_null().llr_offset


def test_a_portal_null_without_a_tempo_takes_the_shipped_one():
    """A portal whose null has no tempo (too few players met stalls, or the null holds a
    slope on another measure of difficulty) is judged on the shipped tempo, as before its
    first null; one with its own keeps it."""
    import json

    from fairgrid.analytics.player_verdict import shipped_null
    from fairgrid.daemon.work.verdicts import _stored_null

    doc = shipped_null().to_json()
    doc.pop("stall_tempo")
    doc["slope"] = [0.53, 0.25, 0.97]
    assert _stored_null(json.dumps(doc)).tempo == shipped_null().tempo
    doc["stall_tempo"] = [[2.1, 0.5]]
    assert _stored_null(json.dumps(doc)).tempo == ((2.1, 0.5),)


def test_a_portals_unflagged_copiers_do_not_teach_its_null_their_pace(tmp_path):
    """The nightly job learns a portal's null from its players nobody has flagged, copiers
    among them: one player in ten whose copies run three times their own pace must not
    make that pace normal. Learning from everyone would more than triple the honest
    players' rate of solves far quicker than one's own pace; what it stores is less than
    half of that."""
    from fairgrid.analytics.player_verdict import OWN_PACE, PlayerNull, SolveFacts, learn_null
    from fairgrid.daemon.store import connect
    from fairgrid.daemon.work.nightly_db import direct_db
    from fairgrid.daemon.work.verdicts import learn_nulls

    rng = np.random.default_rng(7)
    rows, seasons = [], []
    for j in range(330):
        paces = rng.normal(0, 0.35, 20)
        if j >= 300:
            at = rng.choice(20, size=7, replace=False)
            paces[at] -= np.log(rng.uniform(2.5, 4.5, at.size))
        season = [SolveFacts(f"u{j}-{i}", {}, False, pace=float(v),
                             pace_group="sudoku/calibration", finished=True)
                  for i, v in enumerate(paces)]
        seasons.append(season)
        rows += [(f"u{j}", f, START + timedelta(days=i)) for i, f in enumerate(season)]
    con = connect(str(tmp_path / "v.duckdb"))
    cols = list(zip(*[(k, sid.submission_id, f"w{k}", player, at)
                      for k, (player, sid, at) in enumerate(rows)]))
    con.execute("INSERT INTO submissions (sub_key, portal, submission_id, webhook_id, "
                "tournament_id, player_id, puzzle_id, started_at, received_at, "
                "committed_at, n_moves, duration_ms, complete, status, raw) SELECT k, "
                "'demo', sid, w, 't', player, 'p' || split_part(sid, '-', 2), ts, ts, ts, 1, "
                "600000, true, 'scored', "
                "'{}' FROM (SELECT unnest(?) AS k, unnest(?) AS sid, unnest(?) AS w, "
                "unnest(?) AS player, unnest(?) AS ts)", [list(c) for c in cols])
    con.execute("INSERT INTO scores (portal, submission_id, scored_at, anomaly, p_value, "
                "flagged, evidence, season_facts) SELECT 'demo', sid, ts, 0, 0.5, false, "
                "'{}', facts FROM (SELECT unnest(?) AS sid, unnest(?) AS ts, "
                "unnest(?) AS facts)",
                [[f.submission_id for _, f, _ in rows], [at for *_, at in rows],
                 [json.dumps(f.to_json()) for _, f, _ in rows]])

    assert learn_nulls(direct_db(con)) == {"demo": 330}
    stored = PlayerNull.from_json(json.loads(con.execute(
        "SELECT null_json FROM player_nulls WHERE portal = 'demo'").fetchone()[0]))
    honest = learn_null(seasons[:300], "honest").kind(OWN_PACE).strong
    everyone = learn_null(seasons, "everyone").kind(OWN_PACE).strong
    assert everyone > 3 * honest
    assert stored.kind(OWN_PACE).strong < 0.5 * everyone


def test_an_unreadable_stored_row_leaves_out_only_itself(tmp_path, caplog):
    """A portal's null or a solve's evidence that cannot be read is logged and left out:
    the player's other solves, the other players and the other portals are judged as
    ever (one damaged row must not stop every portal's verdicts)."""
    import json

    from fairgrid.analytics.player_verdict import shipped_null
    from fairgrid.daemon.store import connect
    from fairgrid.daemon.work.nightly_db import direct_db
    from fairgrid.daemon.work.verdicts import judge_players

    from ..helpers import COLUMNS, INSERT_SCORE

    con = connect(str(tmp_path / "v.duckdb"))
    good = json.dumps({"signals": [{"name": "order", "family": "order", "p": 0.4}],
                       "flagged": False, "p_value": 0.4, "timeline": []})
    damaged = {"a-1": "{not json", "a-3": json.dumps({"signals": [{"p": 0.5}]})}
    seasons = {("demo", "a"): ["a-0", "a-1", "a-2", "a-3"], ("other", "b"): ["b-0", "b-1"]}
    key = 0
    for (portal, player), sids in seasons.items():
        for day, sid in enumerate(sids):
            at = START + timedelta(days=day)
            # a puzzle each (a puzzle counts once in a season)
            con.execute(f"INSERT INTO submissions {COLUMNS} VALUES (?, ?, ?, ?, 't', ?, "
                        "?, ?, ?, ?, 1, 1, true, 'scored', '{}')",
                        [key, portal, sid, f"w{key}", player, f"p-{sid}", at, at, at])
            con.execute(INSERT_SCORE + "(?, ?, ?, 0, 0.4, false, ?)",
                        [portal, sid, at, damaged.get(sid, good)])
            key += 1
    theirs = {**shipped_null().to_json(), "source": "this portal's players"}
    con.execute("INSERT INTO player_nulls VALUES ('demo', ?, '{\"kinds\": 3}'), "
                "('other', ?, ?)", [START, START, json.dumps(theirs)])

    judge_players(direct_db(con), list(seasons), alpha=1e-3)

    rows = {r[0]: r[1:] for r in con.execute(
        "SELECT player_id, solves, verdict FROM player_verdicts").fetchall()}
    assert rows["a"][0] == 2 and rows["b"][0] == 2
    assert json.loads(rows["a"][1])["null_source"] == shipped_null().source
    assert json.loads(rows["b"][1])["null_source"] == "this portal's players"
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "portal demo: its stored player null cannot be read" in said
    assert "solve a-1 cannot be read" in said and "solve a-3 cannot be read" in said
    # the readable solves' season facts, scored before they were stored, are stored now;
    # stored facts that cannot be read leave out only their solve
    stored = dict(con.execute("SELECT submission_id, season_facts IS NOT NULL FROM scores"
                              ).fetchall())
    assert stored == {"a-0": True, "a-1": False, "a-2": True, "a-3": False, "b-0": True,
                      "b-1": True}
    con.execute("UPDATE scores SET season_facts = '{\"facts\": 1}' WHERE submission_id = 'a-2'")
    caplog.clear()
    judge_players(direct_db(con), [("demo", "a")], alpha=1e-3)
    assert con.execute("SELECT solves FROM player_verdicts WHERE player_id = 'a'"
                       ).fetchone()[0] == 1
    assert "solve a-2 cannot be read" in caplog.text

    # a judgement that read the row before a person's decision does not undo it
    from fairgrid.daemon.store.repository import players as sql

    db = direct_db(con)
    stale = {("other", "b"): db.read(sql.current, [("other", "b")])[("other", "b")]}
    db.write(sql.review, "other", "b", "cleared", "known to us", "alice", START)
    assert db.read(sql.verdict, "other", "b")["state"] == "cleared"
    real = sql.current
    try:
        sql.current = lambda cur, players: stale     # as read before the decision
        con.execute("UPDATE scores SET evidence = ?, season_facts = NULL "
                    "WHERE submission_id = 'b-1'",
                    [json.dumps({"signals": [{"name": "order", "p": 1e-12}],
                                 "flagged": True})])
        judge_players(db, [("other", "b")], alpha=1e-3)
    finally:
        sql.current = real
    row = db.read(sql.verdict, "other", "b")
    assert row["state"] == "cleared" and json.loads(row["reviewed_solves"]) == ["b-0", "b-1"]

    # a judgement that started before the stored one (the nightly job judges beside the
    # daemon) never writes over it
    before = db.read(sql.verdict, "other", "b")["judged_at"]
    judge_players(db, [("other", "b")], alpha=1e-3, now=before - timedelta(minutes=5))
    assert db.read(sql.verdict, "other", "b")["judged_at"] == before

    # a verdict judged before the solves it judged were kept: clearing it remembers the
    # player's scored solves
    con.execute("UPDATE player_verdicts SET judged_solves = NULL, state = 'flagged' "
                "WHERE player_id = 'a'")
    db.write(sql.review, "demo", "a", "cleared", "known to us", "alice", START)
    assert json.loads(db.read(sql.verdict, "demo", "a")["reviewed_solves"]) == [
        "a-0", "a-1", "a-2", "a-3"]


def test_a_judgement_gives_way_to_any_change_of_the_row_meanwhile():
    """Between a judgement's read of a player's row and its write: a person's decision
    (clearing, confirming, reopening, clearing again) or another judgement that changed
    the state (flagged the player, or ended the case after a solve flag was cleared)
    keeps the row, so that a sticky flag is never written over a case a person ended and
    no second notification goes out; another judgement that left the row as it was does
    not, so the later verdict is stored."""
    from fairgrid.daemon.store.repository.players import _decided_meanwhile as decided

    cleared = ("cleared", '["a"]')
    assert not decided(None, None) and not decided(("clear", None), ("clear", None))
    assert not decided(cleared, cleared) and not decided(("flagged", None), ("flagged", None))
    assert decided(None, ("flagged", None))              # another judgement flagged first
    assert decided(("clear", None), ("flagged", None))
    assert decided(("flagged", None), ("clear", None))  # a cleared solve flag ended it
    assert decided(("flagged", None), cleared) and decided(("flagged", None), ("confirmed", None))
    assert decided(cleared, ("flagged", None))          # reopened
    assert decided(cleared, ("cleared", '["a", "b"]'))  # cleared again, more solves seen


def test_paces_are_priced_against_the_rating_run_in_force(tmp_path, caplog):
    """A nightly fit moves puzzles' expected times, and solves older than its re-scoring
    window keep, in their evidence, the pace priced under the run in force when they were
    scored. The verdict prices every finished solve as scoring would now: against its
    puzzle's fitted difficulty, or, for a puzzle the run did not fit, the calibrated
    time plus the run's offset. So an honest player's solves of puzzles an old fit
    thought three times harder are not "quicker than their own pace"; a copier's solves
    that are quicker are. A puzzle whose stored analysis cannot be read, or a run in
    force that cannot be, leaves the paces as scored and every verdict judged."""
    from fairgrid.analytics.player_verdict import judge, shipped_null, solve_facts
    from fairgrid.daemon.store import connect
    from fairgrid.daemon.store.repository import players as sql
    from fairgrid.daemon.work.nightly_db import direct_db
    from fairgrid.daemon.work.verdicts import _facts, _run_of, judge_players

    from ..helpers import COLUMNS, INSERT_SCORE

    con = connect(str(tmp_path / "v.duckdb"))
    rng = np.random.default_rng(5)
    puzzles, mu = 21, 0.5
    fitted = {f"p{j}": 6.0 + float(rng.normal(0, 0.4)) for j in range(1, puzzles)}
    now_d = {**fitted, "p0": 5.8 + mu}    # p0: analysed after the run, not in its fit
    for j in range(puzzles):
        con.execute("INSERT INTO puzzles (id, givens, box_size, solution, status, "
                    "registered_at, ratings, fill_rank_median) VALUES (?, 'x', 3, 'y', "
                    "'ready', ?, ?, '[]')",
                    [f"p{j}", START, json.dumps({"expected_log_s": 5.8, "sd_log": 0.16})])
    fits = {"sudoku": {"mu": mu, "residual_sd": 0.35, "skill_sd": 0.4, "solves": 900}}
    con.execute("INSERT INTO rating_runs (run_id, finished_at, solves, puzzles, players, mu, "
                "residual_sd, by_type) VALUES ('r2', ?, 900, ?, 60, ?, 0.35, ?)",
                [START, puzzles, mu, json.dumps(fits)])
    con.execute("INSERT INTO current_rating VALUES (1, 'r2')")
    con.executemany("INSERT INTO puzzle_ratings (run_id, puzzle_id, difficulty, prior, "
                    "expected_time_s, level, solves) VALUES ('r2', ?, ?, 6.3, 400, 2, 60)",
                    [[p, d] for p, d in fitted.items()])
    old_fit = {p: d + (1.2 if int(p[1:]) < 7 else 0.0) for p, d in now_d.items()}
    key, log_t = 0, {}
    for player, quicker in (("honest", set()), ("copier", set(range(1, puzzles, 3)))):
        for j in range(puzzles):
            pid = f"p{j}"
            sid, at = f"{player}-{j}", START + timedelta(days=j)
            ms = int(1000 * np.exp(now_d[pid] + rng.normal(0, 0.2)
                                   - (1.2 if j in quicker else 0.0)))
            log_t[sid] = np.log(ms / 1000)
            # the honest player's first seven were scored under an old fit
            scored_on = old_fit[pid] if player == "honest" else now_d[pid]
            evidence = {"signals": [], "flagged": False, "p_value": 0.5, "timeline": [],
                        "puzzle_type": "sudoku", "counts": {"complete": True},
                        "pace": round(log_t[sid] - scored_on, 4),
                        "pace_basis": "portal fit"}
            con.execute(f"INSERT INTO submissions {COLUMNS} VALUES (?, 'demo', ?, ?, 't', ?, "
                        "?, ?, ?, ?, 81, ?, true, 'scored', '{}')",
                        [key, sid, f"w{key}", player, pid, at, at, at, ms])
            con.execute(INSERT_SCORE + "('demo', ?, ?, 0, 0.5, false, ?)",
                        [sid, at, json.dumps(evidence)])
            key += 1
    db = direct_db(con)

    # as stored, the honest player's old solves read 3.3x quicker than their own pace
    read = db.read(sql.seasons, [("demo", "honest")])
    stored = read.solves[("demo", "honest")]
    as_stored = judge([solve_facts(s.submission_id, json.loads(s.evidence)) for s in stored],
                      shipped_null())
    own = next(f for f in as_stored.findings if f.kind == "own_pace")
    assert own.odd >= 4 and set(own.solves) <= {f"honest-{j}" for j in range(7)}
    # priced now: against each puzzle's fitted difficulty, p0 against 5.8 + the offset
    run, reprice = _run_of(read)
    paces = {f.submission_id: f.pace for f in _facts(stored, ("demo", "honest"), run, reprice)}
    assert paces == pytest.approx({f"honest-{j}": log_t[f"honest-{j}"] - now_d[f"p{j}"]
                                   for j in range(puzzles)}, abs=1e-3)

    judge_players(db, [("demo", "honest"), ("demo", "copier")], alpha=1e-3)
    rows = {r[0]: (r[1], json.loads(r[2])) for r in con.execute(
        "SELECT player_id, flagged, verdict FROM player_verdicts").fetchall()}
    assert not rows["honest"][0]
    assert not any(f["kind"] == "own_pace" and f["odd"] for f in rows["honest"][1]["findings"])
    assert rows["copier"][0]
    copied = next(f for f in rows["copier"][1]["findings"] if f["kind"] == "own_pace")
    assert copied["odd"] >= 5
    assert set(copied["solves"]) <= {f"copier-{j}" for j in range(1, puzzles, 3)}

    # a puzzle whose stored analysis is not JSON: its solves keep their stored pace, the
    # rest are priced, and the other players are judged
    con.execute("UPDATE puzzles SET ratings = '{not json' WHERE id = 'p1'")
    read = db.read(sql.seasons, [("demo", "honest"), ("demo", "copier")])
    paces = {f.submission_id: f.pace
             for f in _facts(read.solves[("demo", "honest")], ("demo", "honest"), run)}
    assert paces["honest-1"] == pytest.approx(log_t["honest-1"] - old_fit["p1"], abs=1e-3)
    assert paces["honest-2"] == pytest.approx(log_t["honest-2"] - now_d["p2"], abs=1e-3)
    assert "solve honest-1's puzzle gives no expected time" in caplog.text

    # a run in force that cannot be read, or holds a fit without a residual, is logged,
    # and every pace stays as scored
    for by_type in ("{not json", json.dumps({**fits, "nurikabe": {"mu": 0.1}})):
        con.execute("UPDATE rating_runs SET by_type = ?", [by_type])
        caplog.clear()
        judge_players(db, [("demo", "honest")], alpha=1e-3)
        verdict = json.loads(db.read(sql.verdict, "demo", "honest")["verdict"])
        assert next(f for f in verdict["findings"] if f["kind"] == "own_pace")["odd"] >= 4
        assert "the rating run in force cannot be read" in caplog.text


def test_the_nightly_stage_stores_verdicts_a_chunk_at_a_time(tmp_path, monkeypatch):
    """At night every player is judged again, and stored a chunk per transaction: the
    writer serves webhooks in between (one transaction for 2,000 players held it for
    52 s). Every player still gets a verdict."""
    from fairgrid.daemon.store import connect
    from fairgrid.daemon.store.repository import players as sql
    from fairgrid.daemon.work import verdicts
    from fairgrid.daemon.work.nightly_db import NightlyDB, direct_db

    from ..helpers import COLUMNS, INSERT_SCORE

    con = connect(str(tmp_path / "v.duckdb"))
    good = json.dumps({"signals": [{"name": "order", "family": "order", "p": 0.4}],
                       "flagged": False, "p_value": 0.4, "timeline": []})
    for key in range(5):
        sid, at = f"s-{key}", START + timedelta(days=key)
        con.execute(f"INSERT INTO submissions {COLUMNS} VALUES (?, 'demo', ?, ?, 't', ?, "
                    "'p', ?, ?, ?, 1, 1, true, 'scored', '{}')",
                    [key, sid, f"w{key}", f"u{key}", at, at, at])
        con.execute(INSERT_SCORE + "('demo', ?, ?, 0, 0.4, false, ?)",
                    [sid, at, good])
    inner, saves = direct_db(con), []

    def write(fn, *args):
        if fn is sql.save:
            saves.append(len(args[0]))
        return inner.write(fn, *args)
    monkeypatch.setattr(verdicts, "NIGHTLY_CHUNK", 2)
    summary = verdicts.nightly_stage(NightlyDB(inner.read, write), alpha=1e-3)
    assert summary["players_judged"] == 5 and saves == [2, 2, 1]
    assert con.execute("SELECT count(*) FROM player_verdicts").fetchone()[0] == 5


async def test_a_flagged_player_stays_flagged_until_a_person_decides(client, capsys):
    """Once the evidence flags a player, the case waits for a person: when the season no
    longer flags them by itself (here every copy's evidence re-scored as an honest
    solve's, as a nightly re-score under a new null may do; later solves diluting a
    selective copier's evidence do the same), the player stays in the queue, and the
    API, the console and the command line show what flagged them beside what the
    season shows now, and the queue ranks the case by what flagged them. Confirming a
    solve flag or reopening the player keeps the case; a person who clears their last
    standing solve flag, leaving nothing that flags them, ends it, and the history says
    why. One ``player.flagged`` notification throughout."""
    resp = await client.put("/v1/portals/demo/notify", json={"url": "http://127.0.0.1:9/h"},
                            headers=bearer(ADMIN))
    assert resp.status == 200
    for day, (sid, moves) in enumerate(
            [(f"d-{k}", ROW_COPY if k % 2 else _honest(400 + k)) for k in range(6)]):
        await _post(client, sid, "diluted", moves, day)
    await _scored(client, [f"d-{k}" for k in range(6)])
    await _judged(client, "diluted", 6)
    assert (await _player(client, "diluted"))["verdict"]["state"] == "flagged"

    store = client.app[CTX].store
    await asyncio.wrap_future(store.writer.call(lambda con: con.execute(
        "UPDATE scores SET evidence = d.evidence, season_facts = d.season_facts, "
        "p_value = 0.5, flagged = false FROM (SELECT evidence, season_facts FROM scores "
        "WHERE submission_id = 'd-0') d WHERE submission_id IN ('d-1', 'd-3', 'd-5')")))
    await asyncio.wrap_future(store.writer.call(lambda con: con.execute(
        "UPDATE flags SET state = 'withdrawn' WHERE submission_id IN ('d-1', 'd-3')")))
    await client.app[CTX].scorer.verdicts.judge([("demo", "diluted")])

    verdict = (await _player(client, "diluted"))["verdict"]
    assert verdict["state"] == "flagged" and verdict["flagged"] is False
    assert verdict["summary"].startswith("Not flagged")
    then = verdict["flagging"]
    assert then["p_value"] < 1e-3 and then["summary"].startswith("Flagged for review.")
    assert {"d-1", "d-3", "d-5"} <= set(then["findings"][0]["solves"])
    assert [h["state"] for h in verdict["history"]] == ["flagged"]
    queue = await (await client.get("/v1/players?state=flagged",
                                    headers=bearer(ORGANISER))).json()
    row = next(p for p in queue["players"] if p["player_id"] == "diluted")
    assert row["flagging"]["summary"] == then["summary"] and "findings" not in row["flagging"]
    # ranked by the verdict that flagged the player, before any player flagged less surely
    ranked = await (await client.get("/v1/players?limit=1", headers=bearer(ORGANISER))).json()
    assert ranked["players"][0]["player_id"] == "diluted"
    assert [e for (e,) in await _events(client)] == ["player:diluted"]

    url = str(client.make_url("")).rstrip("/")
    assert await asyncio.to_thread(cli, ["players", "--flagged", "--url", url,
                                         "--token", ORGANISER]) == 0
    out = capsys.readouterr().out
    assert "demo/diluted" in out and "when flagged, over 6 solves: Flagged for review." in out
    assert await asyncio.to_thread(cli, ["player", "demo", "diluted", "--url", url,
                                         "--token", ORGANISER]) == 0
    out = capsys.readouterr().out
    assert "Season verdict: FLAGGED — when flagged" in out and "d-1, d-3, d-5" in out
    assert "no longer flags the player; the case waits for a person" in out

    await _sign_in(client, "bob")
    card = await (await client.get("/ui/players")).text()
    assert "When flagged, over 6 solves: Flagged for review." in card
    case = await (await client.get("/ui/players/demo/diluted/case")).text()
    assert "What flagged the player" in case and "What the season shows now" in case
    assert "(when flagged)" in case and 'href="#solve-d-3"' in case
    page = await (await client.get("/ui/players/demo/diluted")).text()
    assert "when flagged, over 6 solves; by itself the season of 6 solves no longer" in page

    # confirming the solve flag still standing, or reopening the player, keeps the case
    flag = await asyncio.to_thread(query, store, "SELECT id FROM flags WHERE "
                                   "submission_id = 'd-5' AND state = 'open'")
    review = f"/v1/flags/{flag[0][0]}/review"
    for decision in ("confirmed", "open"):
        resp = await client.post(review, json={"state": decision}, headers=bearer(ADMIN))
        assert resp.status == 200
        assert (await _player(client, "diluted"))["verdict"]["state"] == "flagged"
    resp = await client.post("/v1/players/demo/diluted/review", json={"state": "open"},
                             headers=bearer(ADMIN))
    assert resp.status == 200 and (await resp.json())["verdict"]["state"] == "flagged"
    # a reviewer clears that solve flag: nothing flags the player now
    resp = await client.post(review, json={"state": "cleared"}, headers=bearer(ADMIN))
    assert resp.status == 200
    verdict = (await _player(client, "diluted"))["verdict"]
    assert verdict["state"] == "clear" and verdict["flagging"] == then
    assert verdict["history"][-1]["state"] == "clear"
    assert "solve flag cleared by a person" in verdict["history"][-1]["note"]
    assert [e for (e,) in await _events(client)] == ["player:diluted"]


async def test_a_puzzle_solved_again_counts_once_in_the_season(client):
    """The same player's second finished solve of a puzzle (a replay, remembered) is
    scored and flagged on its own but left out of the season."""
    for sid, moves, day, later in (("r-0", _honest(300), 0, 0), ("r-1", ROW_COPY, 0, 2),
                                   ("r-2", _honest(301), 1, 0)):
        await _post(client, sid, "replayer", moves, day, timedelta(hours=later))
    await _scored(client, ["r-0", "r-1", "r-2"])
    # judged now, on all three (a judgement after an earlier batch may have seen fewer)
    await client.app[CTX].scorer.verdicts.judge([("demo", "replayer")])
    doc = await _player(client, "replayer")
    assert doc["verdict"]["state"] == "clear" and doc["verdict"]["solves"] == 2
    judged = await asyncio.to_thread(query, client.app[CTX].store, "SELECT judged_solves "
                                     "FROM player_verdicts WHERE player_id = 'replayer'")
    assert json.loads(judged[0][0]) == ["r-0", "r-2"]
    replay = await (await client.get("/v1/submissions/demo/r-1", headers=bearer(ORGANISER))
                    ).json()
    assert replay["score"]["flagged"]
    # the case file lists every solve and says which the season leaves out, and why
    await _sign_in(client, "rita")
    html = await (await client.get("/ui/players/demo/replayer/case")).text()
    rows = re.findall(r'<tr id="solve-(r-\d)">(.*?)</tr>', html, re.S)
    assert [sid for sid, _ in rows] == ["r-0", "r-1", "r-2"]
    assert ["counts once" in row for _, row in rows] == [False, True, False]


DECOY_START = datetime(2026, 11, 1, 18, 0, tzinfo=timezone.utc)


def test_a_copy_finished_first_is_not_left_out_as_a_replay(tmp_path):
    """Two sessions of one puzzle: a decoy started at 18:00 and finished at 18:30, and a
    copy started at 18:05 and finished at 18:08. In the season's order (by start) the
    decoy counted as the first finish and the copy, finished 22 minutes before it, was
    left out as a replay: a cheater who opened a decoy first took every copy out of the
    season."""
    from fairgrid.analytics.player_verdict import SolveFacts
    from fairgrid.daemon.store import connect
    from fairgrid.daemon.work.nightly_db import direct_db
    from fairgrid.daemon.work.verdicts import judge_players

    con = connect(str(tmp_path / "v.duckdb"))
    # (sid, puzzle, started, duration)
    solves = [(f"h{i}", f"p{i}", DECOY_START + timedelta(days=i), 600_000) for i in range(1, 4)]
    solves += [("decoy", "p0", DECOY_START, 30 * 60_000),
               ("copy", "p0", DECOY_START + timedelta(minutes=5), 3 * 60_000)]
    for key, (sid, puzzle, at, ms) in enumerate(solves):
        facts = SolveFacts(sid, {}, False, pace=0.0, pace_group="sudoku/calibration",
                           finished=True)
        con.execute("INSERT INTO submissions (sub_key, portal, submission_id, webhook_id, "
                    "tournament_id, player_id, puzzle_id, started_at, received_at, "
                    "committed_at, n_moves, duration_ms, complete, status, raw) VALUES "
                    "(?, 'demo', ?, ?, 't', 'x', ?, ?, ?, ?, 1, ?, true, 'scored', '{}')",
                    [key, sid, f"w{key}", puzzle, at, at, at, ms])
        con.execute("INSERT INTO scores (portal, submission_id, scored_at, anomaly, "
                    "p_value, flagged, evidence, season_facts) VALUES "
                    "('demo', ?, ?, 0, 0.5, false, '{}', ?)",
                    [sid, at + timedelta(milliseconds=ms), json.dumps(facts.to_json())])
    judge_players(direct_db(con), [("demo", "x")], alpha=1e-3)
    judged = json.loads(con.execute("SELECT judged_solves FROM player_verdicts").fetchone()[0])
    assert "copy" in judged, judged


def test_a_finish_after_ones_own_given_up_attempt_is_priced_on_the_time_spent():
    """A player gives up (or times out) and finishes the puzzle in a new attempt,
    remembering its hard steps: priced on its own, the finish read as three times the
    player's pace, and a few such in a season flagged an honest player by own_pace. It
    is priced on the time spent on the puzzle, the attempt's included, and the attempt
    is part of it."""
    import math

    from fairgrid.analytics.player_verdict import SolveFacts
    from fairgrid.daemon.store.repository.players import SeasonSolve
    from fairgrid.daemon.work.verdicts import _facts

    def solve(sid, puzzle, finished, ms, hours):
        facts = SolveFacts(sid, {}, False, pace=0.0, pace_group="sudoku/calibration",
                           finished=finished)
        return SeasonSolve(sid, DECOY_START, json.dumps(facts.to_json()), None, False, ms,
                           "sudoku", math.log(600), 0.3, None, puzzle,
                           DECOY_START + timedelta(hours=hours))
    season = [solve("a", "p0", False, 400_000, 0), solve("f", "p0", True, 200_000, 1),
              solve("g", "p1", True, 600_000, 2)]
    kept = _facts(season, ("demo", "x"), None)
    assert [f.submission_id for f in kept] == ["f", "g"]
    assert kept[0].pace == pytest.approx(math.log(600) - math.log(600), abs=1e-3)
    assert kept[1].pace == pytest.approx(0.0, abs=1e-3)
