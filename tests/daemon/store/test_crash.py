"""SIGKILL during ingestion loses nothing acknowledged (the long soak is
bench/crash_soak.py)."""

from __future__ import annotations

import json
import signal
import time

import pytest

from fairgrid.daemon.testing import check, run

from ..helpers import signed, solve_body

pytestmark = pytest.mark.slow


def test_sigkill_while_webhooks_arrive_loses_nothing(tmp_path):
    out, db = run(tmp_path, submissions=300, cycles=4, senders=4, seed=1)
    report = check(db, out, 300)
    assert report["kills"] == 4, report
    assert report["acked"] == 300, report          # every sender eventually got a 2xx
    assert report["lost"] == 0 and report["duplicated"] == 0, report
    assert report["stored"] == 300, report
    assert report["partial"] == 0 and report["orphan_moves"] == 0, report
    assert report["duplicate_keys"] == 0, report
    assert report["refused"] > 0, report           # the kills really interrupted senders


def test_sigkill_during_puzzle_analysis_leaves_it_pending_and_a_restart_finishes_it(tmp_path):
    import json
    import signal
    import time
    import urllib.request

    from ...fixtures import SA_HARD
    from fairgrid.daemon.testing import free_port, start, write_config
    from ..helpers import count

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    db, cfg = tmp_path / "a.duckdb", tmp_path / "a.toml"
    write_config(cfg, port, db)
    slow = cfg.read_text().replace("order_budget_s = 1.0", "order_budget_s = 600.0")
    cfg.write_text(slow)
    proc = start(cfg, base)
    req = urllib.request.Request(base + "/v1/puzzles", method="POST",
                                 data=json.dumps({"id": "hard", "givens": SA_HARD}).encode(),
                                 headers={"Authorization": "Bearer adm",
                                          "Content-Type": "application/json"})
    assert urllib.request.urlopen(req, timeout=30).status == 201
    time.sleep(2)  # the SA runs of a 600 s budget are under way
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert count(str(db), "SELECT count(*) FROM puzzles WHERE status = 'pending'") == 1
    cfg.write_text(slow.replace("order_budget_s = 600.0", "order_budget_s = 1.0"))
    proc = start(cfg, base)
    try:
        deadline = time.monotonic() + 120
        status = "pending"
        while status == "pending" and time.monotonic() < deadline:
            time.sleep(0.5)
            with urllib.request.urlopen(urllib.request.Request(
                    base + "/v1/puzzles/hard", headers={"Authorization": "Bearer org"}),
                    timeout=30) as resp:
                status = json.loads(resp.read())["status"]
        assert status == "ready"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


def test_sigkill_with_events_in_the_outbox_delivers_them_after_a_restart(tmp_path):
    """Events are written with the flag they report: a daemon killed before it could
    deliver them delivers them after the restart, under the same ids."""
    import http.server
    import threading

    from fairgrid.daemon.testing import EASY_ROW_COPY, free_port, start, write_config

    port, hook_port = free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    cfg, db = tmp_path / "fairgrid.toml", tmp_path / "fg.duckdb"
    write_config(cfg, port, db)
    cfg.write_text(cfg.read_text() + "[notify]\nbackoff_s = 0.2\nbackoff_max_s = 0.5\n"
                   "poll_s = 0.1\n")
    proc = start(cfg, base)
    try:
        _call(base, "PUT", "/v1/portals/demo/notify", {"url": f"http://127.0.0.1:{hook_port}/h"})
        raw, headers = signed(solve_body(submission_id="copy", moves=EASY_ROW_COPY),
                              msg_id="copy")
        assert _call(base, "POST", "/v1/webhooks/solves", raw, headers)[0] == 202
        deadline = time.monotonic() + 300
        while True:  # the flag is raised; its event waits: nothing listens at hook_port
            notes = _call(base, "GET", "/v1/notifications")[1]["notifications"]
            if notes and notes[0]["attempts"] >= 1:
                break
            assert time.monotonic() < deadline, "no event in the outbox"
            time.sleep(0.2)
        event_id = notes[0]["id"]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)

    got, lock = [], threading.Lock()

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            with lock:
                got.append((self.headers["webhook-id"], json.loads(body)))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", hook_port), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    proc = start(cfg, base)
    try:
        deadline = time.monotonic() + 120
        while not got:
            assert time.monotonic() < deadline, "the event was not delivered after the restart"
            time.sleep(0.1)
        hook_id, body = got[0]
        assert hook_id == event_id == body["id"] and body["type"] == "flag.raised"
        assert body["data"]["submission_id"] == "copy"
    finally:
        proc.terminate()
        proc.wait(60)
        server.shutdown()


def _call(base, method, path, body=None, headers=None):
    import urllib.error
    import urllib.request

    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method, headers={
        "Authorization": "Bearer adm", "content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def test_a_hostile_portal_and_a_killed_backup_cost_the_other_portal_nothing(tmp_path):
    """bench/fault_soak.py's pieces, small: an ordinary portal's solves are delivered
    until 2xx across a SIGKILL that stops a backup, while a hostile portal's bodies get
    the answers docs/openapi.yaml gives them; every ordinary solve is stored once and
    scored, the killed backup leaves nothing a restore takes, and no worker outlives
    the daemon."""
    import subprocess
    import threading

    from fairgrid.daemon.testing import (CMD, HOSTILE, SECRET_A, SECRET_OTHER, call,
                                         check_portals, deliver, free_port, hostile_body,
                                         outliving, start, worker_pids, write_config)

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cfg, db, log = tmp_path / "f.toml", tmp_path / "f.duckdb", tmp_path / "daemon.log"
    write_config(cfg, port, db, {"ordinary": SECRET_A, "hostile": SECRET_OTHER})
    proc = start(cfg, base, log=log)
    enough, stop = threading.Event(), threading.Event()
    acked, seen = {"ordinary": set(), "hostile": set()}, []

    def ordinary():  # until the daemon is back from the kill
        k = 0
        while not enough.is_set():
            raw = json.dumps(solve_body(f"a-{k}", portal="ordinary",
                                        player_id=f"p-{k % 4}")).encode()
            status, _ = deliver(base, raw, SECRET_A, f"m-a-{k}", stop,
                                lambda status, headers: seen.append(status))
            if status < 300:
                acked["ordinary"].add(f"a-{k}")
            k += 1
            time.sleep(0.05)

    def backup():
        try:
            call(base, "POST", "/v1/backups", {})
        except OSError:  # the kill came first
            pass

    sender = threading.Thread(target=ordinary)
    sender.start()
    backups = tmp_path / "backups"
    try:
        for name, (status, field) in HOSTILE.items():
            got = deliver(base, hostile_body(name, f"b-{name}", "hostile"), SECRET_OTHER,
                          f"m-{name}", stop)
            assert (got[0], (got[1] or {}).get("field")) == (status, field), (name, got)
            if status < 300:
                acked["hostile"].add(f"b-{name}")
        copying = threading.Thread(target=backup)
        copying.start()
        while copying.is_alive() and not list(backups.glob("*.partial")):
            time.sleep(0.001)
        workers = worker_pids(proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        copying.join(30)
        assert workers and not outliving(workers)
        for partial in backups.glob("*.partial"):  # stopped mid-copy: never a backup
            refused = subprocess.run([*CMD, "restore", str(partial), "--to",
                                      str(tmp_path / "r.duckdb")], capture_output=True)
            assert refused.returncode == 2 and not (tmp_path / "r.duckdb").exists()
        proc = start(cfg, base, log=log)
        assert not list(backups.glob("*.partial*"))  # removed at the start
        enough.set()
        sender.join(60)
        deadline = time.monotonic() + 120
        while True:
            status = {s["submission_id"]: s["status"] for k in range(4)
                      for s in (call(base, "GET", f"/v1/players/ordinary/p-{k}",
                                     token="org")[1] or {}).get("submissions", [])}
            if all(status.get(sid) == "scored" for sid in acked["ordinary"]):
                break
            assert time.monotonic() < deadline, status
            time.sleep(0.5)
    finally:
        stop.set()
        enough.set()
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    assert None in seen  # the kill interrupted the ordinary portal
    n = len(acked["ordinary"])
    found = check_portals(db, acked)
    assert found["portals"]["ordinary"] == {
        "acked": n, "stored": n, "lost": 0, "duplicated": 0, "unacknowledged": 0,
        "status": {"scored": n}}, found
    hostile = found["portals"]["hostile"]
    taken = sum(1 for status, _ in HOSTILE.values() if status < 300)
    assert hostile["stored"] == hostile["acked"] == taken, found
    assert hostile["unacknowledged"] == hostile["lost"] == 0, found
    assert found["partial"] == found["orphan_moves"] == found["duplicate_keys"] == 0
    assert "unhandled error" not in log.read_text()
    for made in backups.glob("fairgrid-*.duckdb"):  # one the kill did not stop
        restored = subprocess.run([*CMD, "restore", str(made), "--to",
                                   str(tmp_path / "r.duckdb")], capture_output=True)
        assert restored.returncode == 0, restored.stderr
