"""Puzzle analysis on a real Dask cluster (``distributed.LocalCluster`` with worker
processes): the same prediction as the local pool, a worker killed mid-analysis, a
scheduler that is away and comes back, workers with other code refused."""

from __future__ import annotations

import asyncio
import os
import signal
import threading

import numpy as np
import pytest

from fairgrid.daemon.testing import free_port
from fairgrid.daemon.app import create_app
from fairgrid.daemon.work.compute import (Cluster, ComputeUnavailable, fingerprint,
                                          strangers)
from fairgrid.solvers import parse
from fairgrid.solvers.fill_order import predict_fill_order

from ...fixtures import EASY, SA_HARD
from ..helpers import ADMIN, ORGANISER, bearer, build, make_settings, signed, solve_body, until

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=40) as c:
        yield c


def test_the_cluster_gives_the_local_prediction(cluster):
    puzzle = parse(EASY)
    local = predict_fill_order(puzzle, seed=3, runs=12, workers=1)
    remote = Cluster(cluster.scheduler_address)
    try:
        lane = remote.lane(10).connect()
        assert lane.workers == 2
        for batch in (None, 1):  # whatever the task size
            pred = predict_fill_order(puzzle, seed=3, runs=12, executor=lane, batch=batch)
            assert np.array_equal(pred.steps, local.steps)
            assert np.array_equal(pred.rank, local.rank)
    finally:
        remote.close()


def test_a_worker_killed_mid_prediction_changes_nothing(cluster):
    puzzle = parse(SA_HARD)
    local = predict_fill_order(puzzle, seed=5, runs=8, max_steps=400_000, workers=1)
    remote = Cluster(cluster.scheduler_address)
    try:
        lane = remote.lane(10).connect()
        client = remote.client()
        pids = client.run(os.getpid)
        started = threading.Event()
        result = {}

        def run():
            result["pred"] = predict_fill_order(
                puzzle, seed=5, runs=8, max_steps=400_000, executor=lane, batch=1,
                progress=lambda n: started.set())
        thread = threading.Thread(target=run)
        thread.start()
        assert started.wait(120), "no run finished"
        os.kill(next(iter(pids.values())), signal.SIGKILL)  # its tasks run again elsewhere
        thread.join(300)
        assert not thread.is_alive()
        assert np.array_equal(result["pred"].steps, local.steps)
        assert np.array_equal(result["pred"].rank, local.rank)
    finally:
        remote.close()
    # the nanny brings the worker back for the next tests
    from distributed import Client
    with Client(cluster.scheduler_address) as c:
        c.wait_for_workers(2, timeout=120)


def test_workers_with_other_code_are_named():
    ours = fingerprint()
    assert len(ours) == 16 and ours == fingerprint()
    assert strangers({"tcp://a:1": ours, "tcp://b:2": "0" * 16}, ours) == ["tcp://b:2"]
    assert strangers({"tcp://a:1": ours}, ours) == []


# a worker whose solvers differ: its fingerprint of the code is not the daemon's
OTHER_CODE = """
import fairgrid.daemon.work.compute as compute
compute.fingerprint = lambda: "0123456789abcdef"
"""


def test_a_cluster_with_a_worker_running_other_code_is_refused(tmp_path):
    from distributed import LocalCluster

    script = tmp_path / "other_code.py"
    script.write_text(OTHER_CODE)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=40,
                      preload=[str(script)]) as other:
        remote = Cluster(other.scheduler_address)
        try:
            with pytest.raises(ComputeUnavailable, match="runs other fairgrid code") as err:
                remote.lane(10).connect()
            assert "0123456789abcdef" in str(err.value) and "tcp://" in str(err.value)
        finally:
            remote.close()


async def test_the_daemon_analyses_on_the_cluster_like_on_its_pool(aiohttp_client, tmp_path,
                                                                    cluster):
    docs = {}
    for name, extra in (("local", {}), ("cluster", {"compute_scheduler":
                                                    cluster.scheduler_address})):
        folder = tmp_path / name
        folder.mkdir()
        client = await aiohttp_client(create_app(make_settings(folder, **extra)))
        resp = await client.post("/v1/puzzles", json={"id": "easy", "givens": EASY},
                                 headers=bearer(ADMIN))
        assert resp.status == 201

        async def ready():
            doc = await (await client.get("/v1/puzzles/easy", headers=bearer(ORGANISER))).json()
            docs[name] = doc
            return doc["status"] == "ready"
        await until(ready, 300)
        await client.close()
    assert docs["cluster"]["predicted_order"] == docs["local"]["predicted_order"]
    assert docs["cluster"]["ratings"]["null"] == docs["local"]["ratings"]["null"]


async def test_no_scheduler_puzzles_wait_ingestion_goes_on_and_resume(aiohttp_client,
                                                                     tmp_path):
    from distributed import LocalCluster

    port = free_port()  # no scheduler here yet
    client = await aiohttp_client(create_app(make_settings(
        tmp_path, compute_scheduler=f"tcp://127.0.0.1:{port}", compute_retry_s=0.5)))
    resp = await client.post("/v1/puzzles", json={"id": "easy", "givens": EASY},
                             headers=bearer(ADMIN))
    assert resp.status == 201

    async def waiting():
        doc = await (await client.get("/v1/puzzles/easy", headers=bearer(ORGANISER))).json()
        return doc["status"] == "pending" and doc.get("waiting_for")
    await until(waiting, 120)
    doc = await (await client.get("/v1/puzzles/easy", headers=bearer(ORGANISER))).json()
    assert "cannot be reached" in doc["waiting_for"]
    assert "fairgrid_compute_up 0.0" in await (await client.get("/metrics")).text()
    raw, headers = signed(solve_body(submission_id="while-down"), msg_id="while-down")
    assert (await client.post("/v1/webhooks/solves", data=raw, headers=headers)).status == 202
    # the scheduler comes up: the puzzle is analysed and the solve scored
    cluster = await asyncio.to_thread(LocalCluster, n_workers=1, threads_per_worker=1,
                                      processes=True, scheduler_port=port,
                                      dashboard_address=":0", silence_logs=40)
    try:
        async def scored():
            d = await (await client.get("/v1/submissions/demo/while-down",
                                        headers=bearer(ORGANISER))).json()
            return d["status"] == "scored"
        await until(scored, 300)
        assert "fairgrid_compute_up 1.0" in await (await client.get("/metrics")).text()
    finally:
        await client.close()
        await asyncio.to_thread(cluster.close)


def test_an_unreachable_cluster_says_so():
    with pytest.raises(ComputeUnavailable, match="cannot be reached"):
        Cluster(f"tcp://127.0.0.1:{free_port()}", timeout_s=1).client()


def test_the_nightly_job_gives_the_same_ratings_wherever_its_tasks_run(tmp_path, cluster):
    """Consensus orders and level-null signals go out as tasks: inline, on the local
    pool and on the cluster, the run writes the same ratings."""
    import json

    from fairgrid.daemon.work.nightly import run_nightly
    from fairgrid.daemon.work.nightly_db import direct_db
    from fairgrid.daemon.work.pool import Lane, LanePool


    def ratings(con, run_id):
        rows = con.execute("SELECT puzzle_id, difficulty, consensus_fill_rank, "
                           "consensus_fill_spread FROM puzzle_ratings WHERE run_id = ? "
                           "ORDER BY puzzle_id", [run_id]).fetchall()
        nulls = con.execute("SELECT level_nulls FROM rating_runs WHERE run_id = ?",
                            [run_id]).fetchone()[0]
        return rows, json.loads(nulls)

    settings = make_settings(tmp_path, nightly_min_solves=5)
    results = {}
    pool = LanePool(2)
    remote = Cluster(cluster.scheduler_address)
    try:
        for name, tasks in (("inline", None), ("pool", pool.lane(Lane.NIGHTLY)),
                            ("cluster", remote.lane(5).connect())):
            con, _ = build(tmp_path / f"{name}.duckdb", seed=1)
            summary = run_nightly(direct_db(con), settings, tasks=tasks)
            results[name] = ratings(con, summary["run_id"])
            con.close()
    finally:
        pool.shutdown()
        remote.close()
    assert results["inline"][0] and any(r[2] for r in results["inline"][0])  # consensus
    assert results["pool"] == results["inline"] == results["cluster"]


def test_rating_a_bank_on_the_cluster_gives_the_local_ratings(cluster):
    from fairgrid.solvers.rate import rate_many

    from ...fixtures import MEDIUM

    bank = [EASY, MEDIUM]
    local = list(rate_many(bank, runs=0.2, budget_s=0.2, workers=1))
    remote = Cluster(cluster.scheduler_address)
    try:
        done = []
        got = list(rate_many(bank, runs=0.2, budget_s=0.2, executor=remote.lane(10).connect(),
                             on_done=lambda: done.append(1)))
    finally:
        remote.close()
    assert len(done) == 2 and [e for _, e in got] == [None, None]
    assert [r.metrics for r, _ in got] == [r.metrics for r, _ in local]


async def test_a_cluster_lost_mid_analysis_leaves_the_puzzle_waiting_then_resumes(
        aiohttp_client, tmp_path, cluster, monkeypatch, caplog):
    """Dask cancels the tasks of a scheduler that went away: the analysis sees
    ``concurrent.futures.CancelledError``, which must read as the cluster lost (the
    puzzle waits, the status says why), not as the daemon stopping the lane's worker."""
    import concurrent.futures

    from fairgrid.daemon.work import analysis

    real, dropped = analysis.analyse, []

    def lost_once(*args, **kwargs):
        if not dropped:
            dropped.append(True)
            raise concurrent.futures.CancelledError()
        return real(*args, **kwargs)
    monkeypatch.setattr(analysis, "analyse", lost_once)
    client = await aiohttp_client(create_app(make_settings(
        tmp_path, compute_scheduler=cluster.scheduler_address, compute_retry_s=0.5)))

    async def analysed(pid, givens):
        resp = await client.post("/v1/puzzles", json={"id": pid, "givens": givens},
                                 headers=bearer(ADMIN))
        assert resp.status == 201

        async def ready():
            doc = await (await client.get(f"/v1/puzzles/{pid}",
                                          headers=bearer(ORGANISER))).json()
            return doc["status"] == "ready"
        await until(ready, 300)
    await analysed("easy", EASY)
    # what the status said meanwhile (waiting_for) is what the log says
    assert dropped and "lost during the analysis of puzzle easy" in caplog.text
    await analysed("hard", SA_HARD)  # the lane's worker lives on
