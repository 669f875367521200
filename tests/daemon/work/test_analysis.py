"""Puzzle registration, background analysis and restarts, against the real app."""

from __future__ import annotations

import asyncio
import concurrent.futures

import pytest

from fairgrid.daemon.app import create_app
from fairgrid.daemon.web.context import CTX
from fairgrid.daemon.work.analysis import lane_of

from fairgrid.analytics.puzzle_model import NULL_SOLVES

from ...fixtures import EASY, EASY_SOLUTION, MEDIUM, NURIKABE_8, SIXTEEN
from ..helpers import (ADMIN, ORGANISER, bearer, make_settings, query, sign_in_as_admin, signed,
                       solve_body, wait_ready)


async def test_register_analyse_and_query(client):
    resp = await client.post("/v1/puzzles", json={"id": "easy", "givens": EASY},
                             headers=bearer(ADMIN))
    assert resp.status == 201 and (await resp.json()) == {"id": "easy", "status": "registered"}
    doc = await wait_ready(client, "easy")
    assert doc["status"] == "ready" and doc["solution"] == EASY_SOLUTION
    # the prediction says how far it can be trusted, and whether scoring uses it
    rel = doc["order_reliability"]
    assert rel["split_half"] > rel["floor"] and rel["used_for_scoring"] and rel["why"] is None
    # time in the queue is measured apart from the analysis itself
    metrics = await (await client.get("/metrics")).text()
    assert "fairgrid_analysis_queue_wait_seconds_count 1.0" in metrics
    assert "fairgrid_analysis_duration_seconds_count 1.0" in metrics
    order = [r for row in doc["predicted_order"] for r in row]
    assert sorted(x for x in order if x) == list(range(1, 50)) and order[2] == 0
    assert doc["sa_median_steps"] > 0 and doc["order_basis_runs"] >= 1
    metrics = await (await client.get("/metrics")).text()
    assert 'fairgrid_puzzles{status="ready"} 1.0' in metrics
    assert "fairgrid_analysis_duration_seconds_count 1.0" in metrics


async def test_register_is_idempotent_and_conflicts_are_409(client):
    body = {"id": "p1", "givens": EASY}
    assert (await client.post("/v1/puzzles", json=body, headers=bearer(ADMIN))).status == 201
    again = await client.post("/v1/puzzles", json={"id": "p1", "givens": EASY.replace("0", ".")},
                              headers=bearer(ADMIN))
    assert again.status == 200 and (await again.json())["status"] == "known"
    other = await client.post("/v1/puzzles", json={"id": "p1", "givens": MEDIUM},
                              headers=bearer(ADMIN))
    assert other.status == 409 and (await other.json())["field"] == "id"


async def test_register_many_and_reject_bad_ones(client):
    resp = await client.post("/v1/puzzles", headers=bearer(ADMIN), json={
        "puzzles": [{"id": "a", "givens": EASY}, {"id": "b", "givens": MEDIUM}]})
    assert resp.status == 201 and len((await resp.json())["puzzles"]) == 2
    for body, field in [({"id": "c", "givens": "." * 81}, "givens"),
                        ({"id": "c", "givens": EASY[:70]}, "givens"),
                        ({"id": "", "givens": EASY}, "id"),
                        ({"puzzles": [{"id": "d", "givens": 5}]}, "puzzles[0].givens")]:
        resp = await client.post("/v1/puzzles", json=body, headers=bearer(ADMIN))
        assert resp.status == 422 and (await resp.json())["field"] == field
    store = client.server.app[CTX].store
    assert sorted(query(store, "SELECT id FROM puzzles")) == [("a",), ("b",)]
    # a batch is all or none: a bad second puzzle registers neither, and so does a clash
    for puzzles, status, field in [
            ([{"id": "e", "givens": EASY}, {"id": "f", "givens": "." * 81}], 422,
             "puzzles[1].givens"),
            ([{"id": "e", "givens": EASY}, {"id": "a", "givens": MEDIUM}], 409, "id"),
            ([{"id": "e", "givens": EASY}, {"id": "e", "givens": MEDIUM}], 409, "id")]:
        resp = await client.post("/v1/puzzles", json={"puzzles": puzzles},
                                 headers=bearer(ADMIN))
        assert resp.status == status and (await resp.json())["field"] == field
        assert (await client.get("/v1/puzzles/e", headers=bearer(ORGANISER))).status == 404
    assert sorted(query(store, "SELECT id FROM puzzles")) == [("a",), ("b",)]
    # an id with a slash is served back under the same path
    resp = await client.post("/v1/puzzles", json={"id": "daily/2026-11-23", "givens": EASY},
                             headers=bearer(ADMIN))
    assert resp.status == 201
    doc = await (await client.get("/v1/puzzles/daily/2026-11-23",
                                  headers=bearer(ORGANISER))).json()
    assert doc["id"] == "daily/2026-11-23"
    # the same id twice with the same givens, and a known one: registered once
    resp = await client.post("/v1/puzzles", headers=bearer(ADMIN), json={"puzzles": [
        {"id": "e", "givens": EASY}, {"id": "e", "givens": EASY}, {"id": "a", "givens": EASY}]})
    assert resp.status == 201
    assert [p["status"] for p in (await resp.json())["puzzles"]] == [
        "registered", "known", "known"]


async def test_registration_needs_an_admin_token(client):
    body = {"id": "p", "givens": EASY}
    assert (await client.post("/v1/puzzles", json=body)).status == 401
    assert (await client.post("/v1/puzzles", json=body, headers=bearer(ORGANISER))).status == 403
    assert (await client.get("/v1/puzzles/p")).status == 401
    assert (await client.get("/v1/puzzles/p", headers=bearer(ORGANISER))).status == 404


async def test_restart_on_the_same_file_keeps_everything(aiohttp_client, tmp_path):
    settings = make_settings(tmp_path)
    client = await aiohttp_client(create_app(settings))
    raw, headers = signed(solve_body())
    assert (await client.post("/v1/webhooks/solves", data=raw, headers=headers)).status == 202
    await client.close()  # the app drains, commits and closes the file
    client = await aiohttp_client(create_app(settings))
    doc = await (await client.get("/v1/submissions/demo/s-1", headers=bearer(ORGANISER))).json()
    assert doc["complete"] is True and len(doc["moves"]) == 49
    # the dedupe keys survived too: a retry, the same id with other content, and the
    # same webhook-id carrying another submission
    resp = await client.post("/v1/webhooks/solves", data=raw, headers=headers)
    assert (resp.status, await resp.json()) == (200, {"status": "duplicate"})
    raw2, headers2 = signed(solve_body(player_id="p-43"), msg_id="other-msg")
    assert (await client.post("/v1/webhooks/solves", data=raw2, headers=headers2)).status == 409
    raw3, headers3 = signed(solve_body("s-2"), msg_id=headers["webhook-id"])
    resp = await client.post("/v1/webhooks/solves", data=raw3, headers=headers3)
    assert resp.status == 409 and (await resp.json())["field"] == "webhook-id"
    # and the puzzle registered on the fly gets analysed
    assert (await wait_ready(client, "easy"))["status"] == "ready"


async def test_health_and_readiness(client):
    assert (await (await client.get("/healthz")).json()) == {"status": "alive"}
    assert (await client.get("/readyz")).status == 200


async def test_a_small_puzzle_never_waits_behind_a_large_one(aiohttp_client, tmp_path):
    """A 16x16 analysis takes minutes; a 9x9 registered right after it is ready long
    before (its own lane, and its tasks go first in the shared pool)."""
    settings = make_settings(tmp_path, analysis_workers=2, analysis_order_runs=100,
                             analysis_order_budget_s=60.0)
    client = await aiohttp_client(create_app(settings))
    for pid, givens in [("big", SIXTEEN), ("small", MEDIUM)]:
        resp = await client.post("/v1/puzzles", json={"id": pid, "givens": givens},
                                 headers=bearer(ADMIN))
        assert resp.status == 201
    doc = await wait_ready(client, "small", timeout=120)
    assert doc["status"] == "ready"
    big = await (await client.get("/v1/puzzles/big", headers=bearer(ORGANISER))).json()
    assert big["status"] == "pending"


def _unsettled_sixteen() -> str:
    """A 16×16 with no solution that the search cannot refute early: the last 16 of
    row 1 has nowhere to go, which only shows once the rest of the grid is filled."""
    grid = [[0] * 16 for _ in range(16)]
    for k in range(3):
        grid[1 + k][4 * k] = 16
        grid[4 * (k + 1)][12 + k] = 16
    grid[0][15] = 1
    return ",".join(str(v) for row in grid for v in row)


async def test_puzzles_analysis_cannot_use_are_refused_at_once(client):
    """A full grid, a Nurikabe of a handful of cells (nothing to judge a solve by) and a
    grid the uniqueness search cannot settle within its cap: 422 naming why, instead of
    a puzzle pending for ever (or a check that runs for hours)."""
    full = EASY_SOLUTION
    for body, words in [({"id": "full", "givens": full}, "leaves 0 cells to fill"),
                        ({"id": "tiny", "givens": "1x3:..1", "puzzle_type": "nurikabe"},
                         "leaves 2 cells to fill"),
                        # every free cell island: an empty log would finish it
                        ({"id": "noriver", "givens": "3x3:9........",
                          "puzzle_type": "nurikabe"}, "leaves 0 cells to fill"),
                        ({"id": "hard16", "givens": _unsettled_sixteen()},
                         "could not settle")]:
        resp = await client.post("/v1/puzzles", json=body, headers=bearer(ADMIN))
        doc = await resp.json()
        assert resp.status == 422 and words in doc["error"], doc
    assert (await client.get("/healthz")).status == 200
    assert query(client.server.app[CTX].store, "SELECT id FROM puzzles") == []


async def test_a_puzzle_whose_analysis_fails_is_marked_invalid_not_retried(
        aiohttp_client, tmp_path, monkeypatch):
    """Seeded analysis fails the same way every time: the puzzle becomes ``invalid``
    with the reason, and the queue goes on to the next one (a queue of such puzzles
    retried at every sweep starved every portal's new ones). The failure stands in for
    a defect of the analysis, which cannot be made to happen on a valid puzzle."""
    from fairgrid.daemon.ingest.puzzles import check_puzzle
    from fairgrid.daemon.work import analysis, queue

    real, stored = analysis.analyse, check_puzzle(EASY)[0]  # as the store holds it

    def analyse(givens, **kw):
        if givens == stored:
            raise IndexError("index -1 is out of bounds for axis 0 with size 0")
        return real(givens, **kw)
    monkeypatch.setattr(analysis, "analyse", analyse)
    # no sweep after the one at the start: what ends the solves below is the failure's
    # own call, or a scoring batch that finds the puzzle invalid
    monkeypatch.setattr(queue.WorkQueue.__init__, "__defaults__", (3600.0,))
    client = await aiohttp_client(create_app(make_settings(tmp_path)))
    for pid, givens in (("bad", EASY), ("good", MEDIUM)):
        resp = await client.post("/v1/puzzles", json={"id": pid, "givens": givens},
                                 headers=bearer(ADMIN))
        assert resp.status == 201

    async def send(sid: str) -> None:
        raw, headers = signed(solve_body(sid, puzzle_id="bad", givens=None), msg_id=f"m-{sid}")
        assert (await client.post("/v1/webhooks/solves", data=raw, headers=headers)).status == 202

    await send("s-bad")
    assert (await wait_ready(client, "good"))["status"] == "ready"
    doc = await (await client.get("/v1/puzzles/bad", headers=bearer(ORGANISER))).json()
    assert doc["status"] == "invalid" and "IndexError" in doc["error"], doc
    await send("s-late")
    # each solve, sent before or after the failure, ends unscorable with the reason,
    # never pending for good, and is counted once
    for sid in ("s-bad", "s-late"):
        deadline = asyncio.get_running_loop().time() + 120
        while True:
            sub = await (await client.get(f"/v1/submissions/demo/{sid}",
                                          headers=bearer(ADMIN))).json()
            if sub["status"] != "pending":
                break
            assert asyncio.get_running_loop().time() < deadline, sub
            await asyncio.sleep(0.2)
        assert sub["status"] == "unscorable" and "'bad' is invalid" in sub["score_error"], sub
        assert "IndexError" in sub["score_error"]
    metrics = await (await client.get("/metrics")).text()
    assert "fairgrid_submissions_unscorable_total 2.0" in metrics
    await sign_in_as_admin(client)
    page = await (await client.get("/ui/puzzles/bad")).text()
    assert "invalid" in page and "IndexError: index -1" in page
    metrics = await (await client.get("/metrics")).text()
    assert 'fairgrid_puzzles{status="invalid"} 1.0' in metrics


async def test_a_pool_process_dying_under_an_analysis_is_not_held_against_the_puzzle(
        aiohttp_client, tmp_path, monkeypatch):
    """A process that dies (the OOM killer) fails every task in flight, whichever puzzle
    or scoring batch it ran: the puzzle stays pending and is analysed again after a
    pause, however often it happens, and is never marked invalid for it."""
    from concurrent.futures.process import BrokenProcessPool

    from fairgrid.daemon.ingest.puzzles import check_puzzle
    from fairgrid.daemon.work import analysis

    real = analysis.analyse
    deaths = {check_puzzle(EASY)[0]: 1, check_puzzle(MEDIUM)[0]: 3}  # as the store holds them

    def analyse(givens, **kw):
        if deaths.get(givens):
            deaths[givens] -= 1
            raise BrokenProcessPool("a process in the process pool was terminated abruptly")
        return real(givens, **kw)
    monkeypatch.setattr(analysis, "analyse", analyse)
    client = await aiohttp_client(create_app(make_settings(tmp_path, compute_retry_s=0.2)))
    for pid, givens in (("once", EASY), ("thrice", MEDIUM)):
        resp = await client.post("/v1/puzzles", json={"id": pid, "givens": givens},
                                 headers=bearer(ADMIN))
        assert resp.status == 201
    for pid in ("once", "thrice"):
        assert (await wait_ready(client, pid))["status"] == "ready", pid
    assert not any(deaths.values())


def test_the_sweep_takes_each_portals_puzzles_in_turn(tmp_path):
    """One portal's flood of new puzzles waits its turn: the sweep that refills the
    analysis queue takes the portals that registered puzzles in turn, each one's oldest
    first, so another portal's one new puzzle comes in the first round."""
    from datetime import datetime, timedelta, timezone

    from fairgrid.daemon.store import connect
    from fairgrid.daemon.store.repository.puzzles import pending_ids

    con = connect(str(tmp_path / "a.duckdb"))
    start = datetime(2026, 11, 1, tzinfo=timezone.utc)
    rows = [(f"flood-{k}", "flood", start + timedelta(seconds=k)) for k in range(50)]
    rows += [("late", "other", start + timedelta(hours=1)),
             ("shared", None, start + timedelta(hours=2))]
    for pid, owner, at in rows:
        con.execute("INSERT INTO puzzles (id, givens, box_size, solution, status, "
                    "registered_at, owner) VALUES (?, ?, 3, ?, 'pending', ?, ?)",
                    [pid, EASY, EASY_SOLUTION, at, owner])
    assert pending_ids(con, 3, False, 256) == [("flood-0", "flood"), ("late", "other"),
                                               ("shared", None)]
    assert [p for p, _ in pending_ids(con, 5, False, 256)[3:]] == ["flood-1", "flood-2"]
    assert pending_ids(con, 5, True, 256) == []


async def test_a_webhooks_new_puzzles_fill_half_the_lane_and_the_sweep_the_rest(tmp_path):
    """A webhook's new puzzle is queued at once while its lane is less than half full;
    one held back is queued by the sweep, the portals in turn. Registrations through the
    API fill the whole lane, and find it full (503) only then."""
    from datetime import datetime, timedelta, timezone

    from prometheus_client import CollectorRegistry

    from fairgrid.daemon.metrics import Metrics
    from fairgrid.daemon.store import Store
    from fairgrid.daemon.web.webhook import WEBHOOK_LANE_SHARE
    from fairgrid.daemon.work.analysis import PuzzleAnalysis

    store = Store(str(tmp_path / "a.duckdb"))
    try:
        start = datetime(2026, 11, 1, tzinfo=timezone.utc)
        rows = [(f"flood-{k}", "flood", start + timedelta(seconds=k)) for k in range(5)]
        rows.append(("late", "other", start + timedelta(hours=1)))

        def insert(con):
            for pid, owner, at in rows:
                con.execute("INSERT INTO puzzles (id, givens, box_size, solution, status, "
                            "registered_at, owner) VALUES (?, ?, 3, ?, 'pending', ?, ?)",
                            [pid, EASY, EASY_SOLUTION, at, owner])
        store.write(insert).result(30)
        analysis = PuzzleAnalysis(store, make_settings(tmp_path, analysis_queue_size=4),
                                  Metrics(CollectorRegistry()), None)
        lane = analysis._queues[lane_of(81)]
        for pid, _, _ in rows:
            analysis.schedule(pid, 81, WEBHOOK_LANE_SHARE)
        assert lane.take([], 10) == ["flood-0", "flood-1"]   # half the lane, at once
        lane.done("flood-0", "flood-1")
        for pid in await analysis._pending(lane_of(81)):      # the sweep: in turn
            lane.schedule(pid)
        assert lane.take([], 10) == ["flood-0", "late", "flood-1", "flood-2"]
        for pid in ("a", "b", "c", "d"):                     # the API's: the whole lane
            assert analysis.has_room(81)
            analysis.schedule(pid, 81)
        assert not analysis.has_room(81)
    finally:
        store.close()


async def test_a_lane_takes_its_puzzles_by_turns_of_the_portals(tmp_path):
    """A portal's flood of new puzzles fills the lane while nothing else waits; a puzzle
    another portal sends a moment later is analysed after the one in hand and one turn
    of the flood, not after the lane's whole backlog of it."""
    from datetime import datetime, timedelta, timezone

    from prometheus_client import CollectorRegistry

    from fairgrid.daemon.metrics import Metrics
    from fairgrid.daemon.store import Store
    from fairgrid.daemon.web.webhook import WEBHOOK_LANE_SHARE
    from fairgrid.daemon.work.analysis import PuzzleAnalysis

    store = Store(str(tmp_path / "a.duckdb"))
    start = datetime(2026, 11, 1, tzinfo=timezone.utc)

    def insert(pid, owner, at):
        store.write(lambda con: con.execute(
            "INSERT INTO puzzles (id, givens, box_size, solution, status, registered_at, "
            "owner) VALUES (?, ?, 3, ?, 'pending', ?, ?)",
            [pid, EASY, EASY_SOLUTION, at, owner])).result(30)

    try:
        analysis = PuzzleAnalysis(store, make_settings(tmp_path, analysis_queue_size=8),
                                  Metrics(CollectorRegistry()), None)
        lane = analysis._queues[lane_of(81)]

        async def sweep():
            for pid in await analysis._pending(lane_of(81)):
                lane.schedule(pid)

        for k in range(20):
            insert(f"flood-{k}", "flood", start + timedelta(seconds=k))
            analysis.schedule(f"flood-{k}", 81, WEBHOOK_LANE_SHARE, owner="flood")
        await sweep()
        assert lane.waiting() == 8                  # the flood fills the lane
        order = lane.take([], 1)                    # one in hand
        insert("late", "other", start + timedelta(minutes=1))
        analysis.schedule("late", 81, WEBHOOK_LANE_SHARE, owner="other")
        assert lane.waiting() == 7                  # over half: the sweep queues it
        while "late" not in order and len(order) < 12:
            store.write(lambda con: con.execute(
                "UPDATE puzzles SET status = 'ready' WHERE id = ?", [order[-1]])).result(30)
            lane.done(order[-1])
            await sweep()
            order += lane.take([], 1)
        assert order == ["flood-0", "flood-1", "late"]
    finally:
        store.close()


async def test_a_work_queue_takes_keys_by_turns_of_their_groups():
    """Each group's oldest first, one group after another, a new group after the groups
    already waiting; without groups, first come first taken."""
    from fairgrid.daemon.work.queue import WorkQueue

    async def nothing():
        return []

    fair = WorkQueue(10, nothing, turns=lambda key: key[0])
    for key in ("a1", "a2", "a3", "b1", "a4", "c1", "b2"):
        fair.schedule(key)
    fair.schedule("a1")                             # queued already: once
    assert fair.take([], 3) == ["a1", "b1", "c1"]
    fair.schedule("d1")
    assert [await fair.get() for _ in range(5)] == ["a2", "b2", "d1", "a3", "a4"]
    assert fair.waiting() == 0 and fair.pending() == 8
    plain = WorkQueue(3, nothing)
    for key in ("a1", "a2", "b1", "c1"):            # the fourth finds it full
        plain.schedule(key)
    assert plain.full() and plain.take([], 5) == ["a1", "a2", "b1"]


class _Counting(concurrent.futures.ThreadPoolExecutor):
    """A pool that keeps what each task was asked to do."""

    def __init__(self):
        super().__init__(2)
        self.tasks = []

    def submit(self, fn, /, *args, **kwargs):
        self.tasks.append(fn.__name__)
        return super().submit(fn, *args, **kwargs)


def test_a_large_lane_nurikabe_is_analysed_in_short_tasks_to_the_same_model():
    """The large lane's work is short tasks, so that scoring and small puzzles wait for
    one task, not for one puzzle: a Nurikabe's simulated honest solves (seconds each
    on a 20x20) go one to a task there, and the model is the same however it is split
    (each simulated solve has its own seed) and with no pool at all."""
    from fairgrid.daemon.work.analysis import analyse
    from fairgrid.solvers.puzzle_types import puzzle_type, values_text

    t = puzzle_type("nurikabe")
    puzzle = t.parse(NURIKABE_8)
    givens, solution = t.format(puzzle), values_text(t.solution(puzzle))
    direct = analyse(givens, runs=1, budget_s=1.0, seed=3, executor=None,
                     solution=solution, puzzle_type="nurikabe")
    runs = {}
    for batch in (None, 1, 7):
        with _Counting() as pool:
            runs[batch] = analyse(givens, runs=1, budget_s=1.0, seed=3, executor=pool,
                                  solution=solution, puzzle_type="nurikabe", batch=batch)
        assert len(pool.tasks) == (1 if batch is None else 1 + -(-NULL_SOLVES // batch))
    for doc in runs.values():
        assert doc["model"] == direct["model"]
        assert doc["fill_rank_median"] == direct["fill_rank_median"]
    assert direct["model"].null_solves == NULL_SOLVES
    # a stop once the rating is under way: the analysis stops waiting and says why
    import threading

    from fairgrid.solvers.fill_order import PredictionCancelled

    stop = threading.Event()
    with _Counting() as pool:
        def first_then_stop(fn, /, *args, **kwargs):
            future = concurrent.futures.ThreadPoolExecutor.submit(pool, fn, *args, **kwargs)
            stop.set()
            return future
        pool.submit = first_then_stop
        with pytest.raises(PredictionCancelled):
            analyse(givens, runs=1, budget_s=1.0, seed=3, executor=pool, solution=solution,
                    puzzle_type="nurikabe", batch=1, cancel=stop)

