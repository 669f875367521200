"""Scoring in the daemon: committed solves get a score, copies get a flag, reviews keep history."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from fairgrid.analytics.simulate import simulate
from fairgrid.daemon.app import create_app
from fairgrid.solvers import parse

from ...fixtures import EASY, EASY_SOLUTION
from ..helpers import (ADMIN, ORGANISER, OTHER_SECRET, SECRET_A, bearer, make_settings, query,
                       sign_in_as_admin, signed, solve_body, solve_moves, store, wait_ready,
                       wait_scored)


async def _post(client, sid, moves, msg_id=None, **extra):
    raw, headers = signed({**solve_body(submission_id=sid, moves=moves), **extra},
                          msg_id=msg_id or sid)
    resp = await client.post("/v1/webhooks/solves", data=raw, headers=headers)
    assert resp.status == 202, await resp.text()


async def test_an_abandoned_solve_is_its_own_outcome(client):
    puzzle = parse(EASY)
    sol = np.array([int(c) for c in EASY_SOLUTION])
    sim = simulate(puzzle, sol, "honest", rng=5, expected_log_s=6.0, skill=0.0)
    # the player gave up after a third of it, and the portal says so
    await _post(client, "gave-up", sim.moves()[:16], outcome="abandoned")
    gave_up = (await wait_scored(client, "gave-up"))["score"]
    assert gave_up["outcome"] == "unfinished" and gave_up["reported_outcome"] == "abandoned"
    assert gave_up["verdict"].startswith("Unfinished:") and not gave_up["flagged"]


async def test_copy_is_flagged_honest_is_not_and_reviews_keep_history(client, tmp_path):
    # the first solve of an unknown puzzle registers it; it is scored once analysed
    row_copy = [{"t_ms": 3000 + 400 * k, "cell": c, "digit": int(EASY_SOLUTION[c])}
                for k, c in enumerate(i for i, ch in enumerate(EASY) if ch == "0")]
    await _post(client, "copy", row_copy)
    doc = await wait_ready(client, "easy")
    assert doc["status"] == "ready"
    ratings = doc["ratings"]
    assert 1 <= ratings["level"] <= 5 and ratings["expected_time_s"] > 0
    assert {"order_sa", "unforced", "pace_variation", "speed"} <= set(ratings["null"])

    copy = await wait_scored(client, "copy")
    score = copy["score"]
    assert copy["status"] == "scored" and score["flagged"]
    assert score["p_value"] < 1e-3 and score["reasons"] and score["rule"]
    assert score["verdict"].startswith("Flagged for review")
    names = {s["name"] for s in score["signals"]}
    assert {"order_sa", "unforced", "speed", "pace_variation"} <= names
    assert all(s["explanation"] and s["unusual"] and s["population"]
               for s in score["signals"])
    assert len(score["predicted_order"]) == 9 and len(score["actual_order"][0]) == 9
    assert score["actual_order"][0][0] == 1  # r1c1 was filled first (ranks are 1-based)
    assert len(score["timeline"]) == 49 and score["flag"]["state"] == "open"

    # an honest simulated solve of the same puzzle, at the expected pace
    puzzle = parse(EASY)
    sol = np.array([int(c) for c in EASY_SOLUTION])
    sim = simulate(puzzle, sol, "honest", rng=4, expected_log_s=ratings["expected_log_s"],
                   sd_log=ratings["sd_log"], skill=0.0)
    await _post(client, "honest", sim.moves())
    honest = await wait_scored(client, "honest")
    assert honest["score"] is not None and not honest["score"]["flagged"]
    assert honest["score"]["flag"] is None
    assert honest["score"]["outcome"] == "finished"

    flags = await (await client.get("/v1/flags", headers=bearer(ORGANISER))).json()
    assert [f["submission_id"] for f in flags["flags"]] == ["copy"]
    fid = flags["flags"][0]["id"]
    metrics = await (await client.get("/metrics")).text()
    assert "fairgrid_submissions_scored_total 2.0" in metrics
    assert "fairgrid_score_anomaly_count 2.0" in metrics
    assert 'fairgrid_flags_total{reason="' in metrics
    assert 'fairgrid_flag_states{state="open"} 1.0' in metrics
    assert "fairgrid_submissions_rescored_total 0.0" in metrics
    assert "_created" not in metrics  # no second series per counter

    # reviews: admin only, validated, history kept
    url = f"/v1/flags/{fid}/review"
    assert (await client.post(url, json={"state": "cleared"},
                              headers=bearer(ORGANISER))).status == 403
    bad = await client.post(url, json={"state": "guilty"}, headers=bearer(ADMIN))
    assert bad.status == 422 and (await bad.json())["field"] == "state"
    assert (await client.post("/v1/flags/999/review", json={"state": "cleared"},
                              headers=bearer(ADMIN))).status == 404
    resp = await client.post(url, json={"state": "cleared", "note": "known fast solver"},
                             headers=bearer(ADMIN))
    doc = await resp.json()
    assert resp.status == 200 and doc["state"] == "cleared"
    assert [h["state"] for h in doc["history"]] == ["open", "cleared"]
    assert doc["history"][1]["note"] == "known fast solver"
    # a decision made on a state the flag has left since is refused, and writes nothing
    stale = await client.post(url, json={"state": "confirmed", "seen": "open"},
                              headers=bearer(ADMIN))
    err = await stale.json()
    assert stale.status == 409 and err["field"] == "seen" and "is cleared now" in err["error"]
    bad = await client.post(url, json={"state": "confirmed", "seen": "guilty"},
                            headers=bearer(ADMIN))
    assert bad.status == 422 and (await bad.json())["field"] == "seen"

    # re-scoring never overrides a human decision
    await client.app[CTX_KEY()].scorer.score("demo", "copy")
    again = await wait_scored(client, "copy")
    assert again["score"]["flag"]["state"] == "cleared"
    # an appeal: the flag can be reopened, and the history says who and why
    resp = await client.post(url, json={"state": "open", "note": "appeal by the player",
                                        "seen": "cleared"}, headers=bearer(ADMIN))
    doc = await resp.json()
    assert resp.status == 200 and doc["state"] == "open"
    assert [h["state"] for h in doc["history"]] == ["open", "cleared", "open"]
    # a re-score leaves a person's reopening alone, whatever it finds
    await client.app[CTX_KEY()].scorer.score("demo", "copy")
    again = await wait_scored(client, "copy")
    assert again["score"]["flag"]["state"] == "open"

    # Benjamini-Hochberg over the tournament's scored submissions
    doc = await (await client.get("/v1/flags?tournament=t-1&fdr=0.05",
                                  headers=bearer(ORGANISER))).json()
    assert doc["bh"]["scored"] == 2
    assert [r["submission_id"] for r in doc["bh"]["rejected"]] == ["copy"]
    bad = await client.get("/v1/flags?fdr=0.05", headers=bearer(ORGANISER))
    assert bad.status == 400 and (await bad.json())["field"] == "fdr"

    player = await (await client.get("/v1/players/demo/p-42", headers=bearer(ORGANISER))).json()
    assert player["aggregate"]["scored"] == 2 and player["aggregate"]["stouffer_z"] is not None


async def _status(client, portal, sid, *, until, timeout=120.0) -> dict:
    """The submission's document once its status is one of ``until`` (or the deadline)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        doc = await (await client.get(f"/v1/submissions/{portal}/{sid}",
                                      headers=bearer(ADMIN))).json()
        if doc["status"] in until or asyncio.get_running_loop().time() > deadline:
            return doc
        await asyncio.sleep(0.2)


async def _console_page(client, path: str) -> str:
    """A console page's HTML, as a signed-in admin sees it."""
    if not any(c.key == "fairgrid_session" for c in client.session.cookie_jar):
        await sign_in_as_admin(client)
    resp = await client.get(path)
    assert resp.status == 200, path
    return await resp.text()


async def test_a_submission_scoring_fails_on_is_set_apart_and_its_batch_is_scored(client,
                                                                                 capsys):
    """The issue's case: a body stored before ingestion bounded nesting (its ``client``
    1,000 arrays deep) shares a batch with other portals' solves. They are scored; it
    ends ``unscorable`` with the reason (API, console, command line, a metric), and the
    sweep does not take it up again."""
    empties = [m["cell"] for m in solve_moves()]
    long_log = ([{"t_ms": 10 * k, "cell": empties[k % 49], "digit": 1 + k % 9,
                  "kind": "note"} for k in range(10_000 - 49)]
                + [{**m, "t_ms": m["t_ms"] + 100_000} for m in solve_moves()])
    solves = [("demo", "a-1", SECRET_A, {}), ("other", "b-1", OTHER_SECRET, {}),
              ("other", "b-long", OTHER_SECRET, {"moves": long_log}),
              ("demo", "poisoned", SECRET_A, {"player_id": "p-poison"})]
    for portal, sid, secret, extra in solves:
        raw, headers = signed({**solve_body(submission_id=sid, portal=portal), **extra},
                              secret=secret, msg_id=sid)
        resp = await client.post("/v1/webhooks/solves", data=raw, headers=headers)
        assert resp.status == 202, await resp.text()
    for portal, sid, _, _ in solves:
        assert (await _status(client, portal, sid, until=("scored",)))["status"] == "scored"
    ctx = client.app[CTX_KEY()]

    deep = json.dumps(solve_body(submission_id="poisoned"))[:-1] + \
        ', "client": ' + "[" * 1000 + "]" * 1000 + "}"

    def as_stored_before(con):  # and every one of them due for a score again
        con.execute("UPDATE submissions SET raw = ? WHERE submission_id = 'poisoned'", [deep])
        con.execute("UPDATE submissions SET status = 'rescore'")
        return [k for (k,) in con.execute("SELECT sub_key FROM submissions "
                                          "ORDER BY sub_key").fetchall()]
    keys = await asyncio.wrap_future(ctx.store.writer.call(as_stored_before))
    done = await ctx.scorer.score_many(keys)  # one batch, as the sweep makes it
    assert set(done) == {("demo", "a-1"), ("other", "b-1"), ("other", "b-long")}
    for portal, sid, _, _ in solves[:3]:
        doc = await _status(client, portal, sid, until=("scored",))
        assert doc["status"] == "scored" and doc["score_error"] is None
    assert len((await _status(client, "other", "b-long", until=("scored",)))["moves"]) \
        == 10_000
    doc = await _status(client, "demo", "poisoned", until=("unscorable",))
    assert doc["status"] == "unscorable"
    assert doc["score_error"].startswith("could not be scored: client: nests deeper")
    # final: the sweep's query no longer returns it, and a re-score is not retried
    from fairgrid.daemon.store.repository import scores as scores_sql
    assert ctx.store.read(scores_sql.due) == []
    metrics = await (await client.get("/metrics")).text()
    assert "fairgrid_submissions_unscorable_total 1.0" in metrics
    # people see it: the player's page, search, the overview; the command line too
    html = await _console_page(client, "/ui/players/demo/p-poison")
    assert "unscorable" in html and "could not be scored: client: nests deeper" in html
    assert "could not be scored" in await _console_page(client, "/ui/search?q=poisoned")
    assert "Solves that could not be scored" in await _console_page(client, "/ui/")
    # its first score flagged it (reading order at a metronome's pace): the flag's page
    # says the evidence shown is that score's
    html = await _console_page(client, f"/ui/flags/{doc['score']['flag']['id']}")
    assert "could not be scored again" in html
    from fairgrid.daemon.cli.render import print_report
    print_report(doc)
    assert "could not be scored: client: nests deeper" in capsys.readouterr().out


def CTX_KEY():
    from fairgrid.daemon.web.context import CTX
    return CTX


async def test_the_nightly_job_is_scheduled_once_with_safe_options(aiohttp_client, tmp_path):
    from datetime import timezone

    from fairgrid.daemon.web.context import CTX
    client = await aiohttp_client(create_app(make_settings(tmp_path, nightly_cron="0 3 * * *")))
    runner = client.app[CTX].nightly
    job = runner._cron.get_job("nightly")
    assert job.coalesce is True and job.max_instances == 1
    assert job.misfire_grace_time == 21600
    nxt = runner.next_run_time()
    assert (nxt.hour, nxt.minute) == (3, 0) and nxt.utcoffset().total_seconds() == 0
    assert nxt.astimezone(timezone.utc) > __import__("datetime").datetime.now(timezone.utc)
    # an on-demand run while one is in progress is refused (409 over HTTP)
    from fairgrid.daemon.work.nightly_runner import NightlyBusy
    run_id = runner.trigger()
    with pytest.raises(NightlyBusy):
        runner.trigger()
    busy = await client.post("/v1/nightly-runs", headers=bearer(ADMIN))
    assert busy.status in (409, 202)  # 202 only if the first run already finished
    if busy.status == 202:
        run_id = (await busy.json())["run_id"]
    assert (await client.post("/v1/nightly-runs", headers=bearer(ORGANISER))).status == 403
    deadline = asyncio.get_running_loop().time() + 300
    while True:
        doc = await (await client.get(f"/v1/nightly-runs/{run_id}", headers=bearer(ADMIN))).json()
        if doc["status"] != "running" or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.2)
    assert doc["status"] == "success" and doc["rows"]["solves"] == 0
    # the routes' names before still answer (deprecated in docs/openapi.yaml)
    old = await client.get(f"/v1/jobs/{run_id}", headers=bearer(ADMIN))
    assert old.status == 200 and await old.json() == doc
    busy = await client.post("/v1/jobs/nightly", headers=bearer(ORGANISER))
    assert busy.status == 403
    # the run had DuckDB on every core; ingestion's single thread is back afterwards
    await asyncio.wait_for(asyncio.shield(runner._task), 30)
    store = client.app[CTX].store
    assert query(store, "SELECT current_setting('threads')") == [(1,)]


async def test_no_cron_no_scheduler(aiohttp_client, tmp_path):
    from fairgrid.daemon.web.context import CTX
    client = await aiohttp_client(create_app(make_settings(tmp_path, nightly_cron="")))
    assert client.app[CTX].nightly.next_run_time() is None


async def test_a_log_that_repeats_another_players_solve_is_flagged(client):
    sol = np.array([int(c) for c in EASY_SOLUTION])
    rng = np.random.default_rng(8)
    people = [simulate(parse(EASY), sol, "honest", rng=rng, expected_log_s=6.5, skill=0.0)
              for _ in range(3)]
    for k, sim in enumerate(people):
        await _post(client, f"own-{k}", sim.moves(), player_id=f"p-{k}")
    for k in range(3):
        done = (await wait_scored(client, f"own-{k}"))["score"]
        assert not done["flagged"] and "log_match" not in {s["name"] for s in done["signals"]}

    def repeat(sim, scale):  # the same placements, 2 s later, slower as a whole
        return [{**m, "t_ms": int(2000 + m["t_ms"] * scale)} for m in sim.moves()]

    # another player sends the second person's log as theirs
    await _post(client, "copy", repeat(people[1], 1.25), player_id="p-copier")
    score = (await wait_scored(client, "copy"))["score"]
    assert score["flagged"] and score["reasons"][0] == "log_match"
    assert score["log_match"]["submission_id"] == "own-1"
    assert score["log_match"]["compared"] == 3
    assert score["log_match"]["same_order"] == score["counts"]["filled"]
    signal = next(s for s in score["signals"] if s["name"] == "log_match")
    assert "submission 'own-1' of this portal" in signal["explanation"]
    await sign_in_as_admin(client)
    page = await (await client.get("/ui/submissions/demo/copy")).text()
    assert 'id="log-match"' in page and 'href="/ui/submissions/demo/own-1"' in page
    # another portal's player sends it too: the evidence names no id of this portal's
    raw, headers = signed({**solve_body(submission_id="elsewhere", portal="other",
                                        moves=repeat(people[1], 0.9)),
                           "player_id": "p-far"}, secret=OTHER_SECRET, msg_id="elsewhere")
    assert (await client.post("/v1/webhooks/solves", data=raw, headers=headers)).status == 202
    far = (await wait_scored(client, "elsewhere", portal="other"))["score"]
    assert far["flagged"] and far["log_match"]["submission_id"] is None
    # the first person sends their own log again: no one's copy
    await _post(client, "again", repeat(people[0], 1.0), player_id="p-0")
    again = (await wait_scored(client, "again"))["score"]
    assert not again["flagged"] and again["log_match"]["p"] > 0.05
    prints = query(store(client), "SELECT count(*) FROM scores WHERE "
                   "octet_length(timing_print) = 8 * 81")
    assert prints[0][0] == 6


async def test_a_repeat_scored_before_its_source_is_scored_again(client):
    from fairgrid.daemon.web.context import CTX
    sol = np.array([int(c) for c in EASY_SOLUTION])
    sim = simulate(parse(EASY), sol, "honest", rng=21, expected_log_s=6.5, skill=0.0)
    await _post(client, "source", sim.moves(), player_id="p-source")
    await _post(client, "repeat", [{**m, "t_ms": int(900 + m["t_ms"] * 1.1)}
                                   for m in sim.moves()], player_id="p-repeat")
    for sid in ("source", "repeat"):
        await wait_scored(client, sid)
    app = client.server.app[CTX]

    def scored_at():
        return query(store(client), "SELECT scored_at FROM scores WHERE submission_id = "
                     "'repeat'")[0][0]
    before = scored_at()
    # the source scored as if for the first time (as when the repeat was scored first)
    # finds the repeat among the later solves and has it scored again too
    key = query(store(client), "SELECT sub_key FROM submissions WHERE submission_id = "
                "'source'")[0][0]
    query(store(client), "DELETE FROM scores WHERE submission_id = 'source'")
    query(store(client), "UPDATE submissions SET status = 'pending' WHERE submission_id = "
          "'source'")
    await app.scorer.score_many([key])
    deadline = asyncio.get_running_loop().time() + 120
    while scored_at() == before and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)
    assert scored_at() > before
    repeat = (await wait_scored(client, "repeat"))["score"]
    assert repeat["flagged"] and repeat["log_match"]["submission_id"] == "source"


async def test_re_scoring_a_ring_of_repeats_scores_each_once(client):
    """A re-score (after a nightly run) of solves whose prints were stored sets off no
    re-score of their later repeats: they compared with those prints already. Each of
    a ring of logs repeating one another is scored again once, not once per earlier
    member."""
    from fairgrid.daemon.web.context import CTX
    sol = np.array([int(c) for c in EASY_SOLUTION])
    sim = simulate(parse(EASY), sol, "honest", rng=21, expected_log_s=6.5, skill=0.0)
    for k in range(4):
        await _post(client, f"ring-{k}", [{**m, "t_ms": int(900 * k + m["t_ms"])}
                                          for m in sim.moves()], player_id=f"p-ring-{k}")
        await wait_scored(client, f"ring-{k}")
    app = client.server.app[CTX]
    keys = [k for (k,) in query(store(client), "SELECT sub_key FROM submissions WHERE "
                                "submission_id LIKE 'ring-%' ORDER BY sub_key")]
    assert (await wait_scored(client, "ring-3"))["score"]["reasons"][0] == "log_match"

    def states():
        return query(store(client), "SELECT s.submission_id, s.status, sc.scored_at FROM "
                     "submissions s JOIN scores sc USING (portal, submission_id) WHERE "
                     "s.submission_id LIKE 'ring-%' ORDER BY s.sub_key")
    rescored = app.metrics.submissions_rescored._value.get()
    for n, key in enumerate(keys):  # one batch each, as the sweep may take them
        before = states()
        await app.scorer.score_many([key])
        after = states()
        # this one scored again; the others neither marked nor scored again
        assert after[n][2] > before[n][2]
        assert [a for k, a in enumerate(after) if k != n] == \
            [b for k, b in enumerate(before) if k != n]
        assert all(status == "scored" for _, status, _ in after)
    assert app.metrics.submissions_rescored._value.get() - rescored == 4


async def test_a_repeat_mark_made_while_a_solve_is_scored_leaves_it_rescore(client,
                                                                           monkeypatch):
    """Another batch finding, while this one scores a solve, that the solve repeats a
    log it never saw (a repeat mark on its row) leaves the solve ``rescore`` when this
    batch writes, whatever status it read; a score that read the mark clears it."""
    from fairgrid.daemon.web.context import CTX
    from fairgrid.daemon.work import scoring

    sol = np.array([int(c) for c in EASY_SOLUTION])
    sim = simulate(parse(EASY), sol, "honest", rng=3, expected_log_s=6.5, skill=0.0)
    await _post(client, "solve", sim.moves(), player_id="p-1")
    await wait_scored(client, "solve")
    app = client.server.app[CTX]
    key = query(store(client), "SELECT sub_key FROM submissions WHERE submission_id = "
                "'solve'")[0][0]
    read, write = scoring.sql.nearby_prints, scoring.sql.write_scores
    marked, after = [], []

    def nearby_then_mark(cur, want):
        got = read(cur, want)
        if not marked:   # the other batch's finding lands after this one read the row
            marked.append(app.store.write(lambda con: con.execute(
                "UPDATE submissions SET repeat_marks = repeat_marks + 1 WHERE sub_key = ?",
                [key])).result(60))
        return got

    def write_and_look(con, batch, *args, **kw):
        out = write(con, batch, *args, **kw)
        if key in batch["sub_key"]:   # the status this write left, in its transaction
            after.append(con.execute("SELECT status FROM submissions WHERE sub_key = ?",
                                     [key]).fetchone()[0])
        return out

    monkeypatch.setattr(scoring.sql, "nearby_prints", nearby_then_mark)
    monkeypatch.setattr(scoring.sql, "write_scores", write_and_look)
    await app.scorer.score_many([key])
    assert marked and after[0] == "rescore"
    app.scorer.schedule(key)   # as the sweep would, sooner: a score that read the mark
    assert (await wait_scored(client, "solve", timeout=120))["status"] == "scored"
    assert after[-1] == "scored"


async def test_a_puzzle_whose_stored_analysis_is_damaged_fails_only_its_own_solves(client):
    """One puzzle's stored analysis that no longer reads (a damaged ratings document)
    ends its own solves ``unscorable``, naming it; the other puzzles' solves in the same
    batch are scored, and nothing is retried for ever."""
    solves = [("demo", "a-1", SECRET_A), ("other", "b-1", OTHER_SECRET)]
    for portal, sid, secret in solves:
        raw, headers = signed(solve_body(submission_id=sid, portal=portal), secret=secret,
                              msg_id=sid)
        assert (await client.post("/v1/webhooks/solves", data=raw,
                                  headers=headers)).status == 202
    for portal, sid, _ in solves:
        assert (await _status(client, portal, sid, until=("scored",)))["status"] == "scored"
    ctx = client.app[CTX_KEY()]

    def damage(con):
        damaged, kept = [r[0] for r in con.execute(
            "SELECT puzzle_id FROM submissions ORDER BY portal").fetchall()]
        assert damaged != kept      # each portal's own puzzle
        con.execute("UPDATE puzzles SET ratings = '{\"metrics\": {' WHERE id = ?", [damaged])
        con.execute("UPDATE submissions SET status = 'rescore'")
        return [k for (k,) in con.execute("SELECT sub_key FROM submissions").fetchall()]
    keys = await asyncio.wrap_future(ctx.store.writer.call(damage))
    ctx.scorer._inputs.clear()   # as after a restart, or a new rating run
    done = await ctx.scorer.score_many(keys)
    assert set(done) == {("other", "b-1")}
    doc = await _status(client, "demo", "a-1", until=("unscorable",))
    assert doc["status"] == "unscorable" and "cannot be read" in doc["score_error"]
    from fairgrid.daemon.store.repository import scores as scores_sql
    assert ctx.store.read(scores_sql.due) == []


async def test_a_recorder_block_whose_version_is_written_1_0_is_scored_as_version_1(client):
    """``"version": 1.0`` is the number 1 (JSON has one number type, and the schema's
    ``const: 1`` takes it): ingestion checks the block as a version 1 block and takes
    it. Scoring must then read its recorded pastes, as it does for ``"version": 1``,
    rather than drop them as an unversioned block's."""
    pastes = [{"t_ms": m["t_ms"] - 10, "cell": m["cell"], "digits": 1}
              for m in solve_moves()]
    for sid, version in (("as-int", 1), ("as-float", 1.0)):
        raw = json.dumps({**solve_body(submission_id=sid),
                          "client": {"version": version, "pastes": pastes}})
        raw, headers = signed(raw, msg_id=sid)
        resp = await client.post("/v1/webhooks/solves", data=raw, headers=headers)
        assert resp.status == 202, await resp.text()
    names = {}
    for sid in ("as-int", "as-float"):
        score = (await wait_scored(client, sid))["score"]
        names[sid] = {s["name"]: s["value"] for s in score["signals"]}
    assert names["as-int"].get("paste") == len(pastes)
    assert names["as-float"].get("paste") == len(pastes), names["as-float"]
