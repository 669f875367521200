"""A daemon that was down at a nightly slot (a reboot at 03:00, a deploy) and starts
within ``nightly.misfire_grace_s`` of it runs the job it missed at once: the runner's
scheduler is new at every start, and its first slot would otherwise be the next one,
leaving the ratings a day older."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

from fairgrid.daemon.app import create_app
from fairgrid.daemon.web.context import CTX

from ..helpers import make_settings, query


async def test_a_slot_missed_while_the_daemon_was_down_runs_at_its_next_start(
        aiohttp_client, tmp_path):
    now = datetime.now(timezone.utc)
    slot = (now - timedelta(minutes=2)).replace(second=0, microsecond=0)
    cron = f"{slot.minute} {slot.hour} * * *"

    # the daemon ran until yesterday: yesterday's slot ran and succeeded
    first = await aiohttp_client(create_app(make_settings(tmp_path, nightly_cron="")))
    store = first.app[CTX].store
    yesterday = slot - timedelta(days=1)
    await asyncio.wrap_future(store.write(lambda con: con.execute(
        "INSERT INTO job_runs VALUES ('nightly-yesterday', 'nightly', ?, ?, 'success', '{}')",
        [yesterday, yesterday + timedelta(minutes=1)])))
    await first.close()

    # ... was down at today's slot, and starts two minutes after it
    client = await aiohttp_client(create_app(make_settings(tmp_path, nightly_cron=cron)))
    store = client.app[CTX].store
    runner = client.app[CTX].nightly
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 120
    runs = []
    while loop.time() < deadline:
        runs = query(store, "SELECT id, status FROM job_runs WHERE started_at > ?", [slot])
        if runs:
            break
        await asyncio.sleep(0.2)
    nxt = runner.next_run_time()
    assert runs, (f"the slot missed at {slot:%H:%M} UTC (daemon down) was not run soon "
                  f"after the start, though misfire_grace_s is "
                  f"{client.app[CTX].settings.nightly_misfire_grace_s} s; next run: {nxt}")
    # (the app's close stops the run at its next stage)


def test_a_slot_counts_as_missed_only_for_a_database_that_was_there(tmp_path):
    """The slot is missed when the database (or a run of the job) is older than it and
    no run started since; a database made after the slot, or a slot already run, is
    not (every test's fresh database would run the job at its start otherwise)."""
    from fairgrid.daemon.store.connection import connect
    from fairgrid.daemon.store.repository.nightly import missed

    con = connect(str(tmp_path / "fg.duckdb"))
    try:
        made = con.execute("SELECT min(applied_at) FROM schema_version").fetchone()[0]
        before, after = made - timedelta(hours=1), made + timedelta(hours=1)
        assert not missed(con, "nightly", before)           # made after the slot
        assert missed(con, "nightly", after)                # there at the slot, no run
        con.execute("INSERT INTO job_runs VALUES ('r1', 'nightly', ?, ?, 'success', '{}')",
                    [after + timedelta(minutes=1), after + timedelta(minutes=2)])
        assert not missed(con, "nightly", after)            # run since
        # a run from before the slot says the daemon was there, whenever the file was made
        con.execute("UPDATE job_runs SET started_at = ? WHERE id = 'r1'",
                    [before - timedelta(hours=1)])
        assert missed(con, "nightly", before)
    finally:
        con.close()
