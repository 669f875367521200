"""The review desk against a real app (aiohttp on 127.0.0.1, a real DuckDB file, signed
webhooks scored for real): queue cards in words, filters and sorts, substring search,
the flow from one decision to the next flag, bulk decisions, a page for every solve,
the puzzles list, one predicted order and the small things."""

from __future__ import annotations

import asyncio
import json
import re
import urllib.parse
from datetime import datetime, timedelta, timezone

import pytest

from fairgrid.daemon.testing import EASY, EASY_SOLUTION
from fairgrid.daemon.testing import EASY_ROW_COPY as ROW_COPY
from fairgrid.daemon.console.flags import age, standing_words
from fairgrid.daemon.app import create_app
from fairgrid.daemon.store.repository.players import listing
from fairgrid.daemon.web.context import CTX

from ..daemon.helpers import (ADMIN, SECRET_A, add_user, bearer, make_settings,
                              post_flagged, query, sign_in, store)

PLAYERS = ["SIM-player-00011", "sim-player-00012", "other-3"]
ROW_COPY_CELLS = len(ROW_COPY)


@pytest.fixture
async def desk(aiohttp_client, tmp_path):
    """Three flagged copies by three players in two tournaments; alice signed in."""
    client = await aiohttp_client(create_app(make_settings(tmp_path)))
    flags = []
    for i, player in enumerate(PLAYERS):
        flags.append(await post_flagged(client, "demo", f"copy-{i}", SECRET_A, player_id=player,
                                    tournament_id="cup-a" if i < 2 else "cup-b"))
    await add_user(client, "alice", portals=["demo"])
    assert (await sign_in(client, "alice")).status == 303
    return client, flags


async def _csrf(client, path: str) -> str:
    """The session's CSRF token, from a console page's form."""
    html = await (await client.get(path)).text()
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


async def _text(client, path: str, status: int = 200) -> str:
    resp = await client.get(path)
    assert resp.status == status, (path, resp.status)
    return await resp.text()


def _flag_links(html: str) -> list[int]:
    return [int(x) for x in re.findall(r'class="flaglink" href="/ui/flags/(\d+)', html)]


async def test_queue_cards_filters_sorts_and_substring_search(desk):
    client, flags = desk
    html = await _text(client, "/ui/flags")
    assert sorted(_flag_links(html)) == sorted(flags)
    card = html[html.index('class="card flagcard"'):]
    card = card[:card.index("</li>")]
    # strength in words, reasons as chips in words, time against expected, standing, age
    assert re.search(r"below 1 in a million|about 1 in [\d,]+ honest solves", card)
    chips = re.findall(r'<span class="chip" data-reason="(\w+)">([^<]+)</span>', card)
    assert chips and all("_" not in words for _, words in chips)
    assert "took 0:" in card and "1 flag standing" in card and "raised <time" in card
    assert re.search(r'<time datetime="[^"]+" title="[^"]+ UTC">', card)
    # player search: any part, any case
    for text, expected in (("sim-PLAYER", {0, 1}), ("00011", {0}), ("R-3", {2}),
                           ("nobody", set())):
        html = await _text(client, "/ui/flags?player=" + urllib.parse.quote(text))
        assert set(_flag_links(html)) == {flags[i] for i in expected}, text
    html = await _text(client, "/ui/search?q=" + urllib.parse.quote("sim-PLAYER"))
    assert html.count('class="solvelink"') == 2
    # filters: reason, level, tournament; sorts
    reason = chips[0][0]
    assert set(_flag_links(await _text(client, f"/ui/flags?reason={reason}"))) == set(flags)
    other = next(r for r in ("paste", "switch", "speed") if r != reason)
    assert "No flags match." in await _text(client, f"/ui/flags?reason={other}&state=any")
    assert "No flags match." in await _text(client, "/ui/flags?level=5")
    html = await _text(client, "/ui/flags?sort=tournament")
    assert _flag_links(html) == [flags[1], flags[0], flags[2]]  # cup-a newest first, cup-b
    assert (await client.get("/ui/flags?reason=bogus")).status == 400
    assert (await client.get("/ui/flags?level=x")).status == 400
    # "²" is a digit to str.isdigit() and no number to int(): a bad request, or ignored
    assert (await client.get("/ui/flags?level=%C2%B2")).status == 400
    for notice in ("decided", "bulk"):
        await _text(client, f"/ui/flags?{notice}=%C2%B2")
    # a page number no query can reach is a bad request, not a store failure
    for url in ("/ui/flags?page=1000000000000000000", "/ui/players?page=1000000000000000000",
                "/ui/flags?page=0"):
        resp = await client.get(url)
        assert resp.status == 400 and "page number" in await resp.text(), url
    # a page past the end says so, with a way back
    html = await _text(client, "/ui/flags?page=99")
    assert "past the end" in html and "No flags match." not in html


async def test_a_decision_opens_the_next_flag_and_a_repeat_adds_nothing(desk):
    client, flags = desk
    queue = "sort=oldest"
    first, second, third = flags  # oldest first: the order they were raised
    page = await _text(client, f"/ui/flags/{first}?{queue}")
    assert f'href="/ui/flags/{second}?{queue}" id="next-flag"' in page
    assert 'name="queue" value="sort=oldest"' in page
    csrf = await _csrf(client, f"/ui/flags/{first}?{queue}")
    # confirming cheating needs a note
    resp = await client.post(f"/ui/flags/{first}/review",
                             data={"csrf": csrf, "state": "confirmed", "queue": queue})
    assert resp.status == 400 and "needs a note" in await resp.text()
    resp = await client.post(f"/ui/flags/{first}/review",  # one nobody can read
                             data={"csrf": csrf, "state": "confirmed", "queue": queue,
                                   "note": " \u200b\u202e "})
    assert resp.status == 400 and "needs a note" in await resp.text()
    resp = await client.post(f"/ui/flags/{first}/review", allow_redirects=False, data={
        "csrf": csrf, "state": "cleared", "note": "fast, known", "queue": queue})
    assert resp.status == 303
    assert resp.headers["Location"] == f"/ui/flags/{second}?sort=oldest&decided={first}"
    html = await _text(client, resp.headers["Location"])
    assert f"Flag {first} is cleared." in html
    # the decided flag has left the open queue; its neighbours close up
    assert f'href="/ui/flags/{third}?{queue}" id="next-flag"' in html
    assert 'id="prev-flag"' not in html
    # the same state again (a second click, the form sent again): no history row, from
    # the console, with the state the page showed or without, or the API
    for seen in ({}, {"seen": "open"}):
        resp = await client.post(f"/ui/flags/{first}/review", allow_redirects=False, data={
            "csrf": csrf, "state": "cleared", "note": "again", "queue": queue, **seen})
        assert resp.status == 303, seen
    resp = await client.post(f"/v1/flags/{first}/review", headers=bearer(ADMIN),
                             json={"state": "cleared", "note": "and again"})
    assert resp.status == 200
    rows = (await resp.json())["history"]
    assert [r["state"] for r in rows] == ["open", "cleared"], rows
    # the history reads in words: the raising note names no internal signal
    html = await _text(client, f"/ui/flags/{first}")
    raised = re.search(r"raised by scoring: ([^<]+)<", html).group(1)
    assert "_" not in raised and raised.strip()
    # the last flag of the queue goes back to the queue
    csrf = await _csrf(client, f"/ui/flags/{third}?{queue}")
    resp = await client.post(f"/ui/flags/{third}/review", allow_redirects=False, data={
        "csrf": csrf, "state": "confirmed", "note": "copied", "queue": queue})
    assert resp.headers["Location"] == f"/ui/flags?sort=oldest&decided={third}"


async def test_bulk_decisions_take_one_note(desk):
    client, flags = desk
    csrf = await _csrf(client, "/ui/flags")
    data = [("csrf", csrf), ("state", "confirmed"), ("queue", "")]
    data += [("flag", str(f)) for f in flags[:2]]
    resp = await client.post("/ui/flags/review", data=data)
    assert resp.status == 400 and "needs a note" in await resp.text()
    resp = await client.post("/ui/flags/review", allow_redirects=False,
                             data=data + [("note", "one ring of copiers")])
    assert resp.status == 303 and resp.headers["Location"].startswith("/ui/flags?bulk=2-")
    assert "2 flags decided." in await _text(client, resp.headers["Location"])
    # the notice is this session's to show: a link cannot say decisions were recorded
    forged = resp.headers["Location"].replace("bulk=2-", "bulk=40-")
    for link in ("/ui/flags?bulk=40", "/ui/flags?bulk=2", forged):
        assert "flags decided" not in await _text(client, link), link
    for f in flags[:2]:
        html = await _text(client, f"/ui/flags/{f}")
        assert "one ring of copiers" in html and 'class="tag confirmed"' in html
    assert _flag_links(await _text(client, "/ui/flags")) == [flags[2]]
    # the same decision sent again (the Back button) changes nothing, and says so
    resp = await client.post("/ui/flags/review", allow_redirects=False,
                             data=data + [("note", "a second note")])
    assert resp.status == 303 and resp.headers["Location"].startswith("/ui/flags?bulk=0-")
    assert "Nothing changed" in await _text(client, resp.headers["Location"])
    assert "a second note" not in await _text(client, f"/ui/flags/{flags[0]}")
    # a flag that is not there decides none of them
    resp = await client.post("/ui/flags/review", data=[
        ("csrf", csrf), ("state", "cleared"), ("flag", str(flags[2])), ("flag", "999")])
    assert resp.status == 404
    assert _flag_links(await _text(client, "/ui/flags")) == [flags[2]]
    # nor a queue read before another decision: the ticked flags carry the state shown
    assert f'name="flag" value="{flags[2]}:open"' in await _text(client, "/ui/flags")
    await client.post(f"/v1/flags/{flags[0]}/review", headers=bearer(ADMIN),
                      json={"state": "open", "note": "reopened by the API"})
    resp = await client.post("/ui/flags/review", data=[
        ("csrf", csrf), ("state", "cleared"), ("flag", f"{flags[0]}:confirmed"),
        ("flag", f"{flags[2]}:open")])
    text = await resp.text()
    assert resp.status == 409 and f"flag {flags[0]} was confirmed and is open now" in text
    assert 'class="tag open"' in await _text(client, f"/ui/flags/{flags[2]}")
    await client.post(f"/v1/flags/{flags[0]}/review", headers=bearer(ADMIN),
                      json={"state": "confirmed", "note": "confirmed again"})
    # nor does a queue the page could not show afterwards, or an id that is no number
    for bad in ([("queue", "level=%C2%B2"), ("flag", str(flags[2]))],
                [("queue", ""), ("flag", "\u00b2")],
                [("queue", ""), ("flag", "9" * 30)],
                [("queue", ""), ("flag", f"{flags[2]}:guilty")]):
        resp = await client.post("/ui/flags/review", data=[
            ("csrf", csrf), ("state", "cleared"), *bad])
        assert resp.status == 400, (bad, resp.status)
    assert _flag_links(await _text(client, "/ui/flags")) == [flags[2]]


async def test_every_solve_has_a_page_linked_from_search_player_and_puzzle(desk):
    client, flags = desk
    path = "/ui/submissions/demo/copy-1"
    html = await _text(client, path)
    assert "Solve <bdi>copy-1</bdi>" in html and f'href="/ui/flags/{flags[1]}"' in html
    assert 'id="replay-data"' in html
    await _text(client, "/ui/submissions/demo/nope", 404)
    await _text(client, "/ui/submissions/other/copy-1", 404)
    for page in ("/ui/search?q=copy-1", "/ui/players/demo/sim-player-00012",
                 "/ui/puzzles/" + urllib.parse.quote(await _puzzle_id(client), safe="")):
        assert f'href="{path}"' in await _text(client, page), page
    # a solve with no score (not scored yet, or unscorable) replays on its puzzle's givens
    await asyncio.wrap_future(store(client).writer.call(lambda con: (
        con.execute("DELETE FROM flags WHERE submission_id = 'copy-2'"),
        con.execute("DELETE FROM scores WHERE submission_id = 'copy-2'"),
        con.execute("UPDATE submissions SET status = 'unscorable' "
                    "WHERE submission_id = 'copy-2'"))))
    html = await _text(client, "/ui/submissions/demo/copy-2")
    data = json.loads(re.search(r'id="replay-data">(.*?)</script>', html, re.S).group(1))
    assert data["givens"] == [int(c) for c in EASY]


async def test_a_solve_page_reads_stored_evidence_of_any_version(desk):
    """The pages read the typed evidence: a document from before versions (0-based
    orders, no ``version``) shows as the current one does; one fairgrid did not write
    shows no evidence rather than an error."""
    client, flags = desk
    path = "/ui/submissions/demo/copy-0"

    def shown(html):  # the verdict, the evidence table, the boards, the replay
        return [re.search(pattern, html, re.S).group(0) for pattern in (
            r'<p class="verdict">.*?</p>', r'<table class="signals">.*?</table>',
            r'<div class="boards">.*?</div>', r'id="replay-data">.*?</script>')]

    now = shown(await _text(client, path))
    (text,), = query(store(client), "SELECT evidence FROM scores WHERE submission_id = ?",
                     ["copy-0"])
    old = json.loads(text)
    assert old.pop("version") >= 2
    for key in ("predicted_order", "actual_order"):
        old[key] = [[None if r is None else r - 1 for r in row] for row in old[key]]

    async def store_evidence(doc: str):
        await asyncio.wrap_future(store(client).writer.call(lambda con: con.execute(
            "UPDATE scores SET evidence = ? WHERE submission_id = 'copy-0'", [doc])))

    await store_evidence(json.dumps(old))
    assert shown(await _text(client, path)) == now
    await store_evidence('{"verdict": "hand-edited"}')
    for page in (path, f"/ui/flags/{flags[0]}"):
        html = await _text(client, page)
        assert "This solve has no score yet." in html and "hand-edited" not in html
        assert 'class="signals"' not in html


async def _puzzle_id(client) -> str:
    doc = await (await client.get("/v1/submissions/demo/copy-1", headers=bearer(ADMIN))).json()
    return doc["puzzle_id"]


async def test_puzzles_list_favicon_and_navigation(desk):
    client, _ = desk
    html = await _text(client, "/ui/puzzles")
    pid = await _puzzle_id(client)
    assert f'href="/ui/puzzles/{urllib.parse.quote(pid, safe="")}"' in html
    assert "analysed" in html or "waiting for analysis" in html
    nav = re.search(r'<nav aria-label="Main">(.*?)</nav>', html, re.S).group(1)
    assert re.findall(r">(\w+)</a>", nav) == ["Overview", "Flags", "Players", "Puzzles",
                                              "Search", "Notifications"]
    resp = await client.get("/favicon.ico")
    assert resp.status == 200 and (await resp.read())[:4] == b"\0\0\1\0"


async def test_the_flag_page_says_each_thing_once(desk):
    client, flags = desk
    html = await _text(client, f"/ui/flags/{flags[0]}")
    verdict = re.search(r'<p class="verdict">([^<]+)</p>', html).group(1)
    assert html.count(verdict) == 1
    assert "Flagged because" not in html
    # one predicted order: every free cell has its own rank, as on the puzzle page
    start = html.index('<svg', html.index('id="order"'))
    board = html[start:html.index("</svg>", start)]
    ranks = [int(r) for r in re.findall(r"filled (\d+)", board)]
    assert len(ranks) == len(set(ranks)) == ROW_COPY_CELLS
    replay = json.loads(re.search(r'id="replay-data">(.*?)</script>', html, re.S).group(1)
                        .replace("<\\/", "</"))
    # the replay knows which placements the evidence is about
    marked = [m for m in replay["moves"] if "unforced" in m[4] or "unproven" in m[4]]
    assert marked and all(not m[3] and m[2] for m in marked)
    assert "agree" in await _text(client, "/ui/puzzles/" + urllib.parse.quote(
        await _puzzle_id(client), safe=""))


def test_ages_and_standing_in_words():
    now = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)
    assert [age(now - timedelta(seconds=s), now) for s in (5, 300, 7200, 86400, 3 * 86400)] \
        == ["just now", "5 min ago", "2 h ago", "1 day ago", "3 days ago"]
    assert [standing_words(n) for n in (0, 1, 2)] == [
        "0 flags standing", "1 flag standing", "2 flags standing"]


def test_the_replay_marks_what_the_evidence_says_of_each_move():
    from fairgrid.daemon.console.solves import _marks, replay_moves
    from fairgrid.daemon.documents import stored_evidence

    timeline = [{"t_ms": 1000, "cell": 0, "technique": "naked single", "proof": "naked single"},
                {"t_ms": 2000, "cell": 1, "technique": "not deducible", "unproven": True},
                {"t_ms": 4000, "cell": 2, "technique": "hidden single"}]  # an old placement
    # a document from before versions, as scores.evidence holds it
    ev = stored_evidence(json.dumps({"anomaly": 1.0, "p_value": 0.5, "flagged": False,
                                     "predicted_order": [], "actual_order": [],
                                     "switch": {"from_placement": 3}, "timeline": timeline}))
    marks = _marks(ev)
    assert marks == [[], ["unforced", "unproven"], ["pace"]]
    moves = [(500, 5, 3, True), (1000, 0, 4, False), (1500, 1, 0, False),
             (2000, 1, 7, False), (4000, 2, 9, False)]
    out = replay_moves(moves, ev.timeline, marks, solution=[4, 6, 9, 0, 0, 0])
    assert [m[4] for m in out] == [["note"], [], ["erase"], ["wrong", "unforced", "unproven"],
                                   ["pace"]]
    assert out[1][5] == "proved by naked single" and out[3][5] is None and out[4][5] is None
    # a placement at a stall says how far it was from the board as it stood
    timeline[1]["stall_look"] = ("no number of rounds of eliminations up to locked "
                                 "candidates proves it")
    ev = stored_evidence(json.dumps({"anomaly": 1.0, "p_value": 0.5, "flagged": False,
                                     "predicted_order": [], "actual_order": [],
                                     "timeline": timeline}))
    out = replay_moves(moves, ev.timeline, _marks(ev), solution=[4, 6, 9, 0, 0, 0])
    assert out[3][5] == ("at a stall: no number of rounds of eliminations up to locked "
                         "candidates proves it")
    # what a quick placement needed reads in words, in stored documents old and new
    for stored, words in (("x-wing", "needed an x-wing"), ("naked pair", "needed a naked pair"),
                          ("forcing", "needed more than an xy-chain (a forcing chain, or a "
                                      "guess)"),
                          ("a fish (x-wing, swordfish, skyscraper, kite, empty rectangle)",
                           "needed a fish (x-wing, swordfish, skyscraper, kite, empty "
                           "rectangle)"),
                          ("a single", None), ("hidden single box", None), (None, None)):
        timeline[2]["needed"] = stored
        ev = stored_evidence(json.dumps({"anomaly": 1.0, "p_value": 0.5, "flagged": True,
                                         "predicted_order": [], "actual_order": [],
                                         "timeline": timeline}))
        assert replay_moves(moves, ev.timeline, _marks(ev), solution=None)[4][5] == words


async def test_a_decision_on_a_page_gone_stale_is_not_recorded(desk):
    """Alice clears a flag while bob reads it; bob's 'confirmed', sent from the page as
    it was, is a 409 that names alice's decision and keeps bob's in the form, not a
    silent overturn. Read again, his decision is recorded."""
    from aiohttp.test_utils import TestClient

    client, flags = desk
    flag = flags[0]
    await add_user(client, "bob", portals=["demo"])
    bob = TestClient(client.server)
    await bob.start_server()
    try:
        assert (await sign_in(bob, "bob")).status == 303
        page = await _text(bob, f"/ui/flags/{flag}")
        assert 'name="seen" value="open"' in page
        bob_csrf = await _csrf(bob, f"/ui/flags/{flag}")
        csrf = await _csrf(client, f"/ui/flags/{flag}")
        resp = await client.post(f"/ui/flags/{flag}/review", allow_redirects=False, data={
            "csrf": csrf, "state": "cleared", "note": "fast, known", "seen": "open"})
        assert resp.status == 303
        resp = await bob.post(f"/ui/flags/{flag}/review", allow_redirects=False, data={
            "csrf": bob_csrf, "state": "confirmed", "note": "copied rows", "seen": "open"})
        html = await resp.text()
        assert resp.status == 409, html[-400:]
        assert "Not recorded" in html and "is cleared now, by alice" in html
        assert 'value="confirmed" required checked' in html and ">copied rows</textarea>" in html
        assert 'name="seen" value="cleared"' in html
        resp = await bob.post(f"/ui/flags/{flag}/review", allow_redirects=False, data={
            "csrf": bob_csrf, "state": "confirmed", "note": "x", "seen": "<b>guilty</b>"})
        assert resp.status == 400 and "<b>guilty" not in await resp.text()
        rows = query(store(client), "SELECT state, actor FROM flag_history WHERE flag_id = ? "
                     "ORDER BY changed_at", [flag])
        assert [r[0] for r in rows] == ["open", "cleared"] and rows[-1][1] == "alice", rows
        resp = await bob.post(f"/ui/flags/{flag}/review", allow_redirects=False, data={
            "csrf": bob_csrf, "state": "confirmed", "note": "copied rows", "seen": "cleared"})
        assert resp.status == 303
    finally:
        await bob.close()


async def test_the_same_decision_by_another_reviewer_since_is_a_409_keeping_the_note(desk):
    """Bob confirms a flag alice is reading; alice confirms it too, with a reason of her
    own: recorded as nothing ("the same decision again"), her note was lost while she
    was told the flag is confirmed. It is a 409 naming bob, her note kept; her own
    decision sent again (a retry) is still nothing."""
    client, flags = desk
    flag = flags[0]
    bob = await add_user(client, "bob", portals=["demo"])
    csrf = await _csrf(client, f"/ui/flags/{flag}")
    resp = await client.post(f"/v1/flags/{flag}/review", headers=bearer(bob),
                             json={"state": "confirmed", "note": "bob: copied from row"})
    assert resp.status == 200
    resp = await client.post(f"/ui/flags/{flag}/review", allow_redirects=False, data={
        "csrf": csrf, "state": "confirmed", "note": "alice: a reason of mine", "seen": "open"})
    html = await resp.text()
    assert resp.status == 409 and "is confirmed now, by bob" in html, html[-400:]
    assert ">alice: a reason of mine</textarea>" in html
    resp = await client.post(f"/ui/flags/{flag}/review", allow_redirects=False, data={
        "csrf": csrf, "state": "cleared", "note": "alice: seen it", "seen": "confirmed"})
    assert resp.status == 303
    again = await client.post(f"/ui/flags/{flag}/review", allow_redirects=False, data={
        "csrf": csrf, "state": "cleared", "note": "alice: seen it", "seen": "confirmed"})
    assert again.status == 303
    rows = query(store(client), "SELECT state, actor FROM flag_history WHERE flag_id = ? "
                 "ORDER BY changed_at", [flag])
    assert [r[0] for r in rows] == ["open", "confirmed", "cleared"], rows


async def test_queue_hover_time_is_utc_whatever_the_servers_zone(desk):
    """A queue card's time on hover is labelled UTC: it was the time as DuckDB hands it
    over, in the server's own zone."""
    client, _ = desk

    def set_zone(cur):
        cur.execute("SET GLOBAL TimeZone = 'America/New_York'")
    store(client).read(set_zone)
    html = await (await client.get("/ui/flags")).text()
    m = re.search(r'raised <time datetime="([^"]+)" title="([^"]+) UTC">', html)
    assert m, html
    at = datetime.fromisoformat(m.group(1)).astimezone(timezone.utc)
    assert m.group(2) == at.strftime("%Y-%m-%d %H:%M:%S"), (m.group(1), m.group(2))


async def test_a_form_refused_by_a_rule_comes_back_with_the_note(desk):
    """A decision a rule refuses (confirming with no note, a note too long) shows the
    form again holding what the reviewer typed; line breaks the browser sends as CRLF
    count once, as the textarea's own limit counts them."""
    client, flags = desk
    csrf = await _csrf(client, f"/ui/flags/{flags[0]}")
    typed = "\r\n".join(["x" * 199] * 20)            # 4,000 characters in the textarea
    resp = await client.post(f"/ui/flags/{flags[0]}/review", data={
        "csrf": csrf, "state": "confirmed", "note": typed + "y" * 30})
    html = await resp.text()
    assert resp.status == 400 and "at most 4,000 characters" in html
    assert "y" * 30 + "</textarea>" in html and 'value="confirmed" required checked' in html
    resp = await client.post(f"/ui/flags/{flags[0]}/review", allow_redirects=False,
                             data={"csrf": csrf, "state": "confirmed", "note": typed})
    assert resp.status == 303
    stored = query(store(client), "SELECT note FROM flag_history WHERE flag_id = ? "
                   "AND state = 'confirmed'", [flags[0]])
    assert stored == [("\n".join(["x" * 199] * 20),)]


def test_the_replay_says_what_proved_a_move_in_one_phrase():
    """A Sudoku placement is "proved by" a technique; a Nurikabe cell's words already say
    it ("forced by a rule"), as does a cell the chain search had no budget for."""
    from fairgrid.daemon.console.solves import proved
    from fairgrid.analytics.deduction import RUNG_WORDS
    from fairgrid.solvers.puzzle_types import puzzle_type

    assert proved(RUNG_WORDS[1]) == "proved by locked candidates"
    assert proved("the player's own notes") == "proved by the player's own notes"
    nurikabe = puzzle_type("nurikabe").words.techniques[0]
    assert proved(nurikabe) == "forced by a rule"
    assert proved("not searched (the chain budget was spent)").startswith("not searched")


async def test_the_player_queue_reads_one_page_of_rows(desk):
    client, _ = desk
    await client.app[CTX].scorer.verdicts.judge([("demo", p) for p in PLAYERS])

    def pad(con):  # 60 more players, each a copy of a judged one's verdict
        con.execute("INSERT INTO player_verdicts SELECT * EXCLUDE (i) REPLACE ("
                    "'pad-' || lpad(CAST(i AS VARCHAR), 3, '0') AS player_id, "
                    "0.5 + i / 1000.0 AS p_value) FROM player_verdicts, range(60) t(i) "
                    "WHERE player_id = ?", [PLAYERS[0]])
    await asyncio.wrap_future(store(client).writer.call(pad))
    # the store hands out the rows asked for, not every row before them
    ranked = [r["player_id"] for r in store(client).read(listing, state=None, limit=100)]
    rows = store(client).read(listing, state=None, limit=10, offset=50)
    assert [r["player_id"] for r in rows] == ranked[50:60] and len(ranked) == 63
    shown = [re.findall(r'href="/ui/players/demo/([^"/]+)/case"', await _text(
        client, f"/ui/players?state=any&page={n}")) for n in (1, 2)]
    assert len(shown[0]) == 50 and len(shown[1]) == 13
    assert sorted(shown[0] + shown[1]) == sorted(PLAYERS + [f"pad-{i:03d}" for i in range(60)])
    assert 'rel="next"' in await _text(client, "/ui/players?state=any")
    assert 'rel="next"' not in await _text(client, "/ui/players?state=any&page=2")
    assert "past the end" in await _text(client, "/ui/players?state=any&page=3")


def test_the_overview_counts_the_puzzles_the_organiser_may_see(tmp_path):
    from fairgrid.daemon.store import Store
    from fairgrid.daemon.store.repository.console import backlogs

    store = Store(str(tmp_path / "o.duckdb"))
    try:
        def insert(con):  # waiting for analysis: one puzzle each portal's, one shared
            for pid, owner in (("mine", "demo"), ("shared", None), ("theirs", "other")):
                con.execute("INSERT INTO puzzles (id, givens, box_size, solution, status, "
                            "registered_at, owner) VALUES (?, ?, 3, ?, 'pending', now(), ?)",
                            [pid, EASY, EASY_SOLUTION, owner])
        store.write(insert).result(30)
        assert store.read(backlogs, ["demo"])["analysis"] == 2
        assert store.read(backlogs, [])["analysis"] == 1
        assert store.read(backlogs, None)["analysis"] == 3      # an admin sees them all
    finally:
        store.close()


async def test_a_path_asked_with_a_method_it_does_not_take_is_a_405(desk):
    client, _ = desk
    for method, path, allow in (("PUT", "/ui/flags", "GET,HEAD"),
                                ("GET", "/ui/logout", "POST"),
                                ("DELETE", "/v1/flags", "GET,HEAD")):
        resp = await client.request(method, path, allow_redirects=False,
                                    headers=bearer(ADMIN) if path.startswith("/v1") else None)
        assert resp.status == 405 and resp.headers["Allow"] == allow, (method, path)
    assert (await client.get("/ui/no-such-page")).status == 404
    client.session.cookie_jar.clear()   # signed out: the sign-in comes first, as anywhere
    resp = await client.put("/ui/flags", allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"].startswith("/ui/login?")
