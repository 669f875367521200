"""`fairgrid serve` as a real subprocess: HTTP on 127.0.0.1, SIGTERM, one daemon per file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from .helpers import (ADMIN, CMD, INSERT_SCORE, bearer, count, free_port, request, signed,
                      solve_body, write_config)

pytestmark = pytest.mark.slow


def test_serve_accepts_webhooks_and_drains_on_sigterm(daemon):
    proc, base, db, tmp_path = daemon
    raw, headers = signed(solve_body())
    assert request(base + "/v1/webhooks/solves", raw, headers) == (202, {"status": "accepted"})
    status, doc = request(base + "/v1/submissions/demo/s-1", headers=bearer("org"))
    assert status == 200 and len(doc["moves"]) == 49
    # a second daemon on the same database file refuses to start, clearly
    cfg2 = tmp_path / "second.toml"
    write_config(cfg2, free_port(), db)
    second = subprocess.run([*CMD, "serve", "--config", str(cfg2)], capture_output=True,
                            text=True, timeout=60)
    assert second.returncode == 2
    assert "in use by another process" in second.stderr and "Traceback" not in second.stderr
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
    assert count(str(db), "SELECT count(*) FROM submissions") == 1
    assert count(str(db), "SELECT count(*) FROM moves") == 49


def test_serve_with_a_bad_config_exits_2(tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[server]\nport = 'eighty'\n")
    proc = subprocess.run([*CMD, "serve", "--config", str(cfg)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and "server.port must be int" in proc.stderr
    assert "Traceback" not in proc.stderr


def _insert_flag(db):
    import duckdb

    con = duckdb.connect(str(db))
    # the daemon may have scored the solve before it stopped: replace what it wrote
    con.execute("DELETE FROM flag_history WHERE flag_id IN (SELECT id FROM flags WHERE "
                "portal = 'demo' AND submission_id = 's-1')")
    con.execute("DELETE FROM flags WHERE portal = 'demo' AND submission_id = 's-1'")
    con.execute("DELETE FROM scores WHERE portal = 'demo' AND submission_id = 's-1'")
    con.execute(INSERT_SCORE + "('demo', 's-1', now(), 7.5, 0.0001, true, '{}')")
    con.execute("INSERT INTO flags (portal, submission_id, created_at, state, reasons) "
                "VALUES ('demo', 's-1', now(), 'open', '[\"order\"]')")
    con.close()


def test_flags_cli_reads_the_daemon_or_else_the_file(daemon):
    proc, base, db, tmp_path = daemon
    raw, headers = signed(solve_body())
    assert request(base + "/v1/webhooks/solves", raw, headers)[0] == 202
    cfg = str(tmp_path / "fairgrid.toml")
    out = subprocess.run([*CMD, "flags", "--tournament", "t-1", "--config", cfg],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "0 flags (from the daemon)" in out.stdout
    deadline = time.monotonic() + 120  # let scoring finish: the flag below replaces it
    while request(base + "/v1/submissions/demo/s-1", headers=bearer("org"))[1]["status"] \
            != "scored":
        assert time.monotonic() < deadline, "the solve was not scored"
        time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
    _insert_flag(db)  # a flag the file-reading path must show
    out = subprocess.run([*CMD, "flags", "--tournament", "t-1", "--json", "--config", cfg],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    flags = [json.loads(line) for line in out.stdout.splitlines()]
    assert [(f["submission_id"], f["anomaly"]) for f in flags] == [("s-1", 7.5)]
    out = subprocess.run([*CMD, "flags", "--tournament", "other", "--config", cfg],
                         capture_output=True, text=True, timeout=60)
    assert "0 flags (from the database file (read-only))" in out.stdout


def test_organiser_commands_from_anywhere_with_url_and_token(daemon):
    import os

    from ..fixtures import EASY, EASY_SOLUTION

    proc, base, db, tmp_path = daemon
    # a row-order copy at an even 400 ms a cell: flagged
    moves = [{"t_ms": 3000 + 400 * k, "cell": c, "digit": int(EASY_SOLUTION[c])}
             for k, c in enumerate(i for i, ch in enumerate(EASY) if ch == "0")]
    raw, headers = signed(solve_body(moves=moves))
    assert request(base + "/v1/webhooks/solves", raw, headers)[0] == 202
    deadline = time.monotonic() + 120
    while request(base + "/v1/submissions/demo/s-1", headers=bearer("org"))[1]["status"] \
            != "scored":
        assert time.monotonic() < deadline, "the solve was not scored"
        time.sleep(0.3)
    elsewhere = tmp_path / "elsewhere"  # no config here: the options say everything
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRGRID_")}

    def cli(*args, **extra):
        return subprocess.run([*CMD, *args], capture_output=True, text=True, timeout=60,
                              cwd=elsewhere, env={**env, **extra})
    out = cli("flags", "--url", base, "--token", "org")
    assert out.returncode == 0, out.stderr
    header, row = out.stdout.splitlines()[1:3]
    assert header.split()[:2] == ["id", "raised"] and "tournament" in header
    flag_id = int(row.split()[0])
    assert "t-1" in row and "demo/s-1" in row
    # the environment works as well as the options
    out = cli("player", "demo", "p-42", FAIRGRID_URL=base, FAIRGRID_TOKEN="org")
    assert out.returncode == 0 and "demo/p-42" in out.stdout and "s-1" in out.stdout
    # reviews need the admin token: the organiser's is refused in one line
    out = cli("review", str(flag_id), "--state", "cleared", "--url", base, "--token", "org")
    assert out.returncode == 2 and "403" in out.stderr and "Traceback" not in out.stderr
    out = cli("review", str(flag_id), "--state", "cleared", "--note", "known fast solver",
              "--url", base, "--token", ADMIN)
    assert out.returncode == 0 and f"flag {flag_id} is cleared" in out.stdout
    assert "known fast solver" in out.stdout
    out = cli("flags", "--state", "open", "--url", base, "--token", "org")
    assert out.stdout.startswith("0 flags")
    # an address where no daemon answers, and no config to fall back on
    out = cli("flags", "--url", "http://127.0.0.1:9", "--token", "org")
    assert out.returncode == 2 and "no daemon answers" in out.stderr


WEDGED_POOL = """
import struct, time
from fairgrid.daemon.work.pool import start_pool as _pool, stop_pool as _stop_pool
from fairgrid.daemon.settings import Settings
if __name__ == "__main__":
    pool = _pool(1)
    pool.submit(int, 1).result()
    # a result cut off mid-write, as when a worker is killed while it sends one back
    pool._result_queue._writer._send(struct.pack("!i", 1 << 20) + b"partial")
    time.sleep(0.5)  # the pool's manager thread now waits for the rest
    _stop_pool(pool)
    print("stopped", flush=True)
"""


def test_stopping_the_pool_never_leaves_the_process_hanging_at_exit(tmp_path):
    """SIGTERM during a scoring batch killed a worker mid-result; the daemon shut down
    cleanly and then waited for the pool's manager thread forever."""
    script = tmp_path / "wedged.py"
    script.write_text(WEDGED_POOL)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and "stopped" in proc.stdout, proc.stderr


def test_user_commands_manage_people_through_the_daemon(daemon):
    _proc, base, _db, tmp_path = daemon
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRGRID_")}
    env.update(FAIRGRID_URL=base, FAIRGRID_TOKEN=ADMIN)

    def cli(*args, stdin=""):
        return subprocess.run([*CMD, "user", *args], capture_output=True, text=True,
                              timeout=60, cwd=tmp_path, env=env, input=stdin)
    out = cli("add", "alice", "--role", "organiser", "--portal", "demo", "--password-stdin",
              stdin="a good long password\n")
    assert out.returncode == 0 and "alice\torganiser\tdemo\tactive" in out.stdout, out.stderr
    # bad input: one line, exit 2, nothing added
    for args, stdin, words in [
            (("add", "bob", "--role", "organiser"), "", "--password-stdin"),
            (("add", "bob", "--role", "organiser", "--password-stdin"), "short\n",
             "at least 10"),
            (("add", "carol", "--role", "organiser", "--portal", "nope", "--password-stdin"),
             "a good long password\n", "no portal 'nope'"),
            (("add", "alice", "--role", "admin", "--password-stdin"),
             "a good long password\n", "exists"),
            (("disable", "nobody"), "", "no user")]:
        out = cli(*args, stdin=stdin)
        assert out.returncode == 2 and words in out.stderr, (args, out.stderr)
        assert "Traceback" not in out.stderr and len(out.stderr.splitlines()) == 1
    # an organiser added without --portal sees no portal until granted some
    out = cli("add", "dave", "--role", "organiser", "--password-stdin",
              stdin="a good long password\n")
    assert out.returncode == 0 and "dave\torganiser\tno portal\tactive" in out.stdout
    assert "sees no portal until granted" in out.stderr
    out = cli("scope", "dave", "--all-portals")
    assert out.returncode == 0 and "dave\torganiser\tevery portal" in out.stdout
    out = cli("add", "erin", "--role", "organiser", "--all-portals", "--password-stdin",
              stdin="a good long password\n")
    assert out.returncode == 0 and "erin\torganiser\tevery portal" in out.stdout
    out = cli("token", "alice", "--label", "laptop")
    token = out.stdout.strip()
    assert out.returncode == 0 and token.startswith("fgu_") and "shown this once" in out.stderr
    assert request(base + "/v1/me", headers=bearer(token))[1]["name"] == "alice"
    out = cli("scope", "alice", "--role", "admin")
    assert out.returncode == 0 and "alice\tadmin\tevery portal" in out.stdout
    out = cli("disable", "alice")
    assert out.returncode == 0 and "disabled" in out.stdout
    assert request(base + "/v1/me", headers=bearer(token))[0] == 401
    out = cli("list")
    assert out.stdout.splitlines() == ["name\trole\tportals\tstate",
                                       "alice\tadmin\tevery portal\tdisabled",
                                       "dave\torganiser\tevery portal\tactive",
                                       "erin\torganiser\tevery portal\tactive"]


def test_lifecycle_commands_through_the_daemon(daemon):
    _proc, base, db, tmp_path = daemon
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRGRID_")}
    env.update(FAIRGRID_URL=base, FAIRGRID_TOKEN=ADMIN)

    def cli(*args):
        return subprocess.run([*CMD, *args], capture_output=True, text=True, timeout=120,
                              cwd=tmp_path, env=env)
    raw, headers = signed(solve_body())
    assert request(base + "/v1/webhooks/solves", raw, headers)[0] == 202
    out = cli("notify", "demo", "http://127.0.0.1:9/hook")
    assert out.returncode == 0 and out.stdout.startswith("whsec_"), out.stderr
    out = cli("notifications", "--state", "failed")
    assert out.returncode == 0 and out.stdout.startswith("0 notifications")
    out = cli("notify", "demo", "--off")
    assert out.returncode == 0 and "no notifications" in out.stdout
    # export: four files, read back by DuckDB, into a folder made for them; a tournament
    # nothing was sent for is named, and nothing is written
    folder = tmp_path / "export" / "spring"
    out = cli("export", "--tournament", "nope", "--out", str(folder))
    assert out.returncode == 2 and "'nope'" in out.stderr and out.stderr.count("\n") == 1
    assert not (tmp_path / "export").exists()  # nor the folders made for it
    # a folder where one of the files goes: named, and no table written (not some)
    (folder / "t-1-scores.parquet").mkdir(parents=True)
    out = cli("export", "--tournament", "t-1", "--format", "parquet", "--out", str(folder))
    assert out.returncode == 2 and "is a folder" in out.stderr, out
    assert out.stderr.count("\n") == 1
    assert [p.name for p in folder.iterdir()] == ["t-1-scores.parquet"]
    (folder / "t-1-scores.parquet").rmdir()
    out = cli("export", "--tournament", "t-1", "--format", "parquet", "--out", str(folder))
    assert out.returncode == 0, out.stderr
    import duckdb
    con = duckdb.connect()
    assert con.execute("SELECT count(*) FROM read_parquet(?)",
                       [str(folder / "t-1-submissions.parquet")]).fetchone()[0] == 1
    assert sorted(p.name for p in folder.iterdir()) == [
        f"t-1-{t}.parquet" for t in ("flags", "reviews", "scores", "submissions")]
    # a backup moved into a folder of our choosing
    backups = tmp_path / "kept" / "nightly"
    out = cli("backup", str(backups))
    assert out.returncode == 0, out.stderr
    path = out.stdout.strip()
    assert path.startswith(str(backups)) and "1 submissions" in out.stderr
    kept = duckdb.connect(path, read_only=True)
    assert kept.execute("SELECT submission_id FROM submissions").fetchall() == [("s-1",)]
    kept.close()
    # erasure asks for --yes, then forgets the player
    out = cli("erase", "demo", "p-42")
    assert out.returncode == 2 and "--yes" in out.stderr
    out = cli("erase", "demo", "p-42", "--yes")
    assert out.returncode == 0 and "1 submissions" in out.stdout, out.stderr
    assert request(base + "/v1/submissions/demo/s-1", headers=bearer("org"))[0] == 404
    out = cli("erase", "demo", "p-42", "--yes")
    assert out.returncode == 2 and "404" in out.stderr
    # the backup still has the solve, and restores over a stopped daemon's file only
    out = cli("restore", path, "--to", str(db))
    assert out.returncode == 2 and "in use" in out.stderr
