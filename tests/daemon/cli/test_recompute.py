"""`fairgrid recompute` and the nightly job inside a real daemon (subprocesses, HTTP)."""

from __future__ import annotations

import pytest

import json
import signal
import subprocess
import time
from urllib.parse import quote

from ..helpers import (ADMIN, CMD, SECRET_A, bearer, count, request, run_cli, signed,
                       solve_body)

pytestmark = pytest.mark.slow


def test_recompute_through_the_daemon_then_on_the_file(daemon):  # noqa: F811
    proc, base, db, tmp_path = daemon
    for k in range(3):
        # three players: the ratings fit a player's first solve of a puzzle only
        raw, headers = signed(solve_body(submission_id=f"s-{k}", player_id=f"p-{k}"),
                              msg_id=f"m-{k}")
        assert request(base + "/v1/webhooks/solves", raw, headers)[0] == 202
    cfg = str(tmp_path / "fairgrid.toml")
    # wait until the puzzle is analysed and the solves are scored
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        doc = request(base + "/v1/submissions/demo/s-2", headers=bearer(ADMIN))[1]
        if doc["status"] == "scored":
            break
        time.sleep(0.3)
    # the organiser's view of one scored solve, in the terminal and as a picture
    rep = run_cli("report", "demo", "s-2", "--config", cfg, "--png", str(tmp_path / "r.png"))
    assert rep.returncode == 0, rep.stderr
    assert "predicted order (SA)" in rep.stdout and "this solve" in rep.stdout
    # plain words, the population named, no internal signal names
    assert "against simulated honest players" in rep.stdout and "order_sa" not in rep.stdout
    assert (tmp_path / "r.png").stat().st_size > 10_000
    missing = run_cli("report", "demo", "nope", "--config", cfg)
    assert missing.returncode == 2 and "404" in missing.stderr
    # simulated traffic from the command line
    sim = run_cli("simulate", "003020600900305001001806400008102900700000008006708200002609500"
              "800203009005010300", "--url", base, "--secret", SECRET_A, "--players", "2",
              "--cheaters", "1", "--puzzle-id", "easy", "--config", cfg, timeout=300)
    assert sim.returncode == 0, sim.stderr
    lines = [json.loads(x) for x in sim.stdout.splitlines()]
    assert sorted(x["behaviour"] for x in lines) == ["honest", "honest", "row"]
    assert all(x["status"] == 202 for x in lines)
    # it waited for the scores and says what was flagged, by behaviour
    summary = [x for x in sim.stderr.splitlines() if x.startswith("flagged: ")]
    assert summary and summary[0].startswith("flagged: honest ") and "row " in summary[0]
    assert "not scored" not in summary[0]
    # a second run adds solves (ids are unique per run) instead of duplicates
    again = run_cli("simulate", "003020600900305001001806400008102900700000008006708200002609500"
                "800203009005010300", "--url", base, "--secret", SECRET_A, "--players", "1",
                "--cheaters", "0", "--puzzle-id", "easy", "--wait", "0", "--prefix", "again",
                timeout=300)
    assert again.returncode == 0, again.stderr
    second = [json.loads(x) for x in again.stdout.splitlines()]
    assert [x["status"] for x in second] == [202]
    assert second[0]["submission_id"] not in {x["submission_id"] for x in lines}
    # a secret that is not one: exit 2 and one line, no traceback
    bad = run_cli("simulate", "003020600900305001001806400008102900700000008006708200002609500"
              "800203009005010300", "--url", base, "--secret", "notasecret")
    assert bad.returncode == 2 and "--secret" in bad.stderr and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and any(
            request(base + f"/v1/submissions/demo/{x['submission_id']}",
                    headers=bearer(ADMIN))[1]["status"] != "scored" for x in lines + second):
        time.sleep(0.3)

    res = run_cli("recompute", "--config", cfg, "--json", timeout=300)
    assert res.returncode == 0, res.stderr
    summary = json.loads(res.stdout)
    assert summary["puzzles"] == 1
    status, doc = request(base + f"/v1/nightly-runs/{summary['run_id']}", headers=bearer(ADMIN))
    assert status == 200 and doc["status"] == "success" and doc["stage"] == "done"
    status, _ = request(base + "/v1/nightly-runs/nope", headers=bearer(ADMIN))
    assert status == 404
    with __import__("urllib.request").request.urlopen(base + "/metrics") as resp:
        text = resp.read().decode()
    assert 'fairgrid_job_last_success_timestamp_seconds{task="nightly"}' in text
    assert 'fairgrid_job_rows{task="nightly",what="puzzles"} 1.0' in text
    # stop the daemon: recompute now works on the file itself
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    import duckdb
    con = duckdb.connect(str(db))  # a recompute on the file, killed mid-run, left this
    con.execute("INSERT INTO job_runs VALUES ('killed', 'nightly', now(), NULL, 'running', "
                "NULL)")
    con.close()
    res = run_cli("recompute", "--config", cfg, "--json", timeout=300)
    assert res.returncode == 0, res.stderr
    assert count(str(db), "SELECT status FROM job_runs WHERE id = 'killed'") == "abandoned"
    again = json.loads(res.stdout)
    assert again["run_id"] != summary["run_id"] and again["puzzles"] == 1
    assert count(str(db), "SELECT count(*) FROM rating_runs") == 2
    flagged = count(str(db), "SELECT count(*) FROM flags WHERE state = 'open'")
    assert summary["solves"] + flagged == 7  # flagged solves are left out of the fit
    assert count(str(db), "SELECT count(*) FROM job_runs WHERE status = 'success'") == 2
    # the solves it marked for re-scoring are re-scored when the daemon next starts
    marked = count(str(db), "SELECT count(*) FROM submissions WHERE status = 'rescore'")
    assert marked == again["rescore_pending"] == 7
    proc = subprocess.Popen([*CMD, "serve", "--config", cfg], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        ids = ([x["submission_id"] for x in lines + second]
               + [f"s-{k}" for k in range(3)])
        while time.monotonic() < deadline:
            try:
                if all(request(base + f"/v1/submissions/demo/{sid}", headers=bearer(ADMIN))[1]
                       ["status"] == "scored" for sid in ids):
                    break
            except OSError:
                pass  # not up yet
            time.sleep(0.3)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    assert count(str(db), "SELECT count(*) FROM submissions WHERE status = 'scored'") == 7
    assert count(str(db), "SELECT count(*) FROM scores") == 7  # replaced, not added


def test_recompute_without_daemon_or_database_is_a_clean_error(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[server]\nport = 1\n[storage]\npath = "{tmp_path / "none.duckdb"}"\n'
                   f'[auth]\nadmin_tokens = ["{ADMIN}"]\n')
    res = run_cli("recompute", "--config", str(cfg))
    assert res.returncode == 2 and "no database" in res.stderr and "Traceback" not in res.stderr


def test_simulate_a_nurikabe_tournament_from_the_command_line(daemon):  # noqa: F811
    from ...fixtures import NURIKABE_8

    proc, base, db, tmp_path = daemon
    cfg = str(tmp_path / "fairgrid.toml")
    sim = run_cli("simulate", NURIKABE_8, "--type", "nurikabe", "--url", base, "--secret",
              SECRET_A, "--players", "3", "--cheaters", "2", "--puzzle-id", "nk",
              "--prefix", "ניקו", "--config", cfg, timeout=300)
    assert sim.returncode == 0, sim.stderr
    lines = [json.loads(x) for x in sim.stdout.splitlines()]
    # ids need not be ASCII; the webhook-id header, which the prefix is kept out of, must
    assert all(x["submission_id"].startswith("ניקו-") for x in lines)
    assert sorted(x["behaviour"] for x in lines) == ["honest"] * 3 + ["random", "row"]
    assert all(x["status"] == 202 for x in lines)
    puzzle = request(base + "/v1/puzzles/nk", headers=bearer(ADMIN))[1]
    assert puzzle["puzzle_type"] == "nurikabe" and puzzle["status"] == "ready"
    summary = [x for x in sim.stderr.splitlines() if x.startswith("flagged: ")]
    assert summary and "row " in summary[0] and "not scored" not in summary[0]
    # at cold start a Nurikabe copy is often not flagged on one solve (docs/detection.md),
    # but it is the most anomalous of the five
    anomaly = {x["behaviour"] + x["submission_id"]: request(
        base + f"/v1/submissions/demo/{quote(x['submission_id'])}", headers=bearer(ADMIN))[1][
        "score"]["anomaly"] for x in lines}
    assert not max(anomaly, key=anomaly.get).startswith("honest")
    # Sudoku text under --type nurikabe: exit 2 and one line
    bad = run_cli("simulate", "003020600900305001001806400008102900700000008006708200002609500"
              "800203009005010300", "--type", "nurikabe", "--url", base, "--secret", SECRET_A)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("then", ["500", "gone"])
def test_recompute_through_a_daemon_that_fails_or_goes_away_ends_in_one_line(
        then, monkeypatch, capsys):
    """A daemon that answers the run's start and then a 500, or nothing at all (it was
    killed), ends the command in one line, rather than polling for ever."""
    import asyncio
    import threading

    from aiohttp import web

    from fairgrid.daemon.cli import main
    from fairgrid.daemon.cli import organiser_tools
    from fairgrid.daemon.testing import free_port

    port, started, stop = free_port(), threading.Event(), threading.Event()

    async def post(request):
        if then == "gone":
            stop.set()
        return web.json_response({"run_id": "r1"}, status=202)

    async def get(request):
        return web.json_response({"error": "internal error"}, status=500)

    def serve():
        async def run():
            app = web.Application()
            app.router.add_post("/v1/nightly-runs", post)
            app.router.add_get("/v1/nightly-runs/r1", get)
            runner = web.AppRunner(app)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", port).start()
            started.set()
            while not stop.is_set():
                await asyncio.sleep(0.05)
            await runner.cleanup()
        asyncio.run(run())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert started.wait(30)
    monkeypatch.setattr(organiser_tools, "RECOMPUTE_SILENCE_S", 1.0)
    try:
        code = main(["recompute", "--url", f"http://127.0.0.1:{port}", "--token", "t"])
    finally:
        stop.set()
        thread.join(30)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert ("answered 500 about run r1" if then == "500" else "stopped answering") in err
