"""A nightly run that fails while the disk is full fails twice: its stage's write, then
the write of its ``failed`` status. ``GET /v1/nightly-runs/{id}`` then says what the
runner knows (failed), not the row's ``running``, so ``fairgrid recompute``, which polls
it until the run ends, returns. Both writes fail here as a full disk makes them fail
(the real one: tests/daemon/store/test_disk_full.py's RLIMIT_FSIZE)."""

from __future__ import annotations

import asyncio

import duckdb

from fairgrid.daemon.app import create_app
from fairgrid.daemon.store.repository import nightly as nightly_sql
from fairgrid.daemon.web.context import CTX
import fairgrid.daemon.work.nightly as nightly

from ..helpers import ADMIN, bearer, make_settings


async def test_a_run_whose_failure_could_not_be_written_is_not_shown_running(
        aiohttp_client, tmp_path, monkeypatch):
    def full(*args, **kwargs):
        raise duckdb.IOException("IO Error: Could not write file: No space left on device")
    real_finish = nightly_sql.finish_run

    def finish(con, run_id, status, *args):
        if status != "success":
            full()
        return real_finish(con, run_id, status, *args)
    monkeypatch.setattr(nightly, "_load", full)
    monkeypatch.setattr(nightly.sql, "finish_run", finish)
    client = await aiohttp_client(create_app(make_settings(tmp_path, nightly_cron="")))
    runner = client.app[CTX].nightly
    resp = await client.post("/v1/nightly-runs", headers=bearer(ADMIN))
    assert resp.status == 202
    run_id = (await resp.json())["run_id"]
    await asyncio.wait_for(asyncio.gather(runner._task, return_exceptions=True), 60)
    assert runner._task.done()  # the run is over: nothing runs any more
    await asyncio.sleep(1)
    doc = await (await client.get(f"/v1/nightly-runs/{run_id}", headers=bearer(ADMIN))).json()
    # `fairgrid recompute` waits for one of these (organiser_tools.cmd_recompute)
    assert doc["status"] in ("success", "failed", "abandoned"), (
        f"the run ended (its task is done) but GET /v1/nightly-runs/{run_id} says "
        f"{doc['status']!r} with stage {doc['stage']!r}: `fairgrid recompute` polls for ever")
