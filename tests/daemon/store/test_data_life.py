"""The data's life under real kills and a loose umask, against real daemons: a backup cut
short is never taken for one, a nightly run killed while starting or stopped by a
SIGTERM is found abandoned, and every file the daemon and the CLI write is the owner's only."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import duckdb
import pytest

from fairgrid.daemon.testing import CMD, free_port, start, write_config

from ..helpers import signed, solve_body

pytestmark = pytest.mark.slow


def _call(base, method, path, body=None, headers=None, timeout=60):
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method, headers={
        "Authorization": "Bearer adm", "content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def _stop(proc, sig=signal.SIGTERM):
    proc.send_signal(sig)
    proc.wait(60)


def _daemon(tmp_path, extra: str = "", **popen):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    db, cfg = tmp_path / "fg.duckdb", tmp_path / "fg.toml"
    write_config(cfg, port, db)
    cfg.write_text(cfg.read_text() + extra)
    return base, db, cfg


def test_a_backup_killed_midway_is_never_taken_for_a_backup(tmp_path):
    base, db, cfg = _daemon(tmp_path)
    _stop(start(cfg, base))  # the file and its schema
    con = duckdb.connect(str(db))  # enough rows that a backup takes a moment to copy
    con.execute("INSERT INTO moves SELECT i // 49, i % 49, i * 7 % 1000003, i * 31 % 81, "
                "i % 9 + 1, i % 5 = 0 FROM range(12000000) t(i)")
    con.close()
    proc = start(cfg, base)
    folder = tmp_path / "backups"
    answer = []
    poster = threading.Thread(target=lambda: answer.append(
        _try(lambda: _call(base, "POST", "/v1/backups", b"{}"))))
    poster.start()
    deadline = time.monotonic() + 120
    while not (folder.is_dir() and any(folder.iterdir())):  # the copy has begun
        assert time.monotonic() < deadline and poster.is_alive(), answer
        time.sleep(0.001)
    _stop(proc, signal.SIGKILL)
    poster.join(60)
    left = sorted(p.name for p in folder.iterdir())
    assert left and all(".partial" in name for name in left), left  # no final name
    out = subprocess.run([*CMD, "restore", str(folder / left[0]), "--to",
                          str(tmp_path / "r.duckdb")], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out
    assert not (tmp_path / "r.duckdb").exists()

    proc = start(cfg, base)
    try:
        assert list(folder.iterdir()) == []  # the leftover is gone at the start
        status, doc = _call(base, "POST", "/v1/backups", b"{}", timeout=300)
        assert status == 201, doc
        assert sorted(p.name for p in folder.iterdir()) == [Path(doc["path"]).name]
    finally:
        _stop(proc)
    out = subprocess.run([*CMD, "restore", doc["path"], "--to", str(tmp_path / "r.duckdb")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    con = duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM moves").fetchone()[0] == 12000000
    con.close()


def _try(fn):
    try:
        return fn()
    except OSError as exc:  # the daemon was killed under the request
        return exc


def test_a_nightly_run_killed_while_starting_is_abandoned_after_a_restart(tmp_path):
    # a compute cluster nobody runs: the run's start waits ~10 s to connect to it
    base, db, cfg = _daemon(tmp_path, f'[compute]\nscheduler = "tcp://127.0.0.1:'
                                      f'{free_port()}"\n')
    proc = start(cfg, base)
    try:
        status, doc = _call(base, "POST", "/v1/nightly-runs")
        assert status == 202, doc
        run_id = doc["run_id"]
    finally:
        _stop(proc, signal.SIGKILL)
    proc = start(cfg, base)
    try:
        status, doc = _call(base, "GET", f"/v1/nightly-runs/{run_id}")
        assert status == 200, doc
        assert doc["status"] == "abandoned" and doc["finished_at"] is None
    finally:
        _stop(proc)


def test_a_nightly_run_a_sigterm_stops_is_abandoned_not_failed(tmp_path):
    """A stop is no failure: the run it ends reads ``abandoned``, as a killed one does
    (bench/fault_soak.py found it ``failed``)."""
    # a compute cluster nobody runs: the run's start waits ~10 s to connect to it, and
    # the SIGTERM comes meanwhile; the run stops at its first stage
    base, db, cfg = _daemon(tmp_path, f'[compute]\nscheduler = "tcp://127.0.0.1:'
                                      f'{free_port()}"\n')
    proc = start(cfg, base)
    try:
        status, doc = _call(base, "POST", "/v1/nightly-runs")
        assert status == 202, doc
        run_id = doc["run_id"]
    finally:
        _stop(proc)
    assert proc.returncode == 0
    proc = start(cfg, base)
    try:
        status, doc = _call(base, "GET", f"/v1/nightly-runs/{run_id}")
        assert status == 200 and doc["status"] == "abandoned", doc
    finally:
        _stop(proc)


def test_every_file_is_the_owners_only_whatever_the_umask(tmp_path):
    base, db, cfg = _daemon(tmp_path)
    proc = start(cfg, base, umask=0o022)
    try:
        for sid, player in (("a", "p-1"), ("b", "p-2")):
            raw, headers = signed(solve_body(submission_id=sid, player_id=player),
                                  msg_id=f"m-{sid}")
            assert _call(base, "POST", "/v1/webhooks/solves", raw, headers)[0] == 202
        status, backup = _call(base, "POST", "/v1/backups", b"{}")
        assert status == 201, backup
        assert _call(base, "POST", "/v1/players/demo/p-2/erase")[0] == 200
        out = tmp_path / "export"
        out.mkdir()
        done = subprocess.run([*CMD, "export", "--tournament", "t-1", "--out", str(out),
                               "--url", base, "--token", "adm"], capture_output=True,
                              text=True, timeout=120, umask=0o022)
        assert done.returncode == 0, done.stderr
        raw, headers = signed(solve_body(submission_id="c", player_id="p-3"), msg_id="m-c")
        assert _call(base, "POST", "/v1/webhooks/solves", raw, headers)[0] == 202
        written = [db, Path(str(db) + ".wal"), Path(backup["path"]), *out.iterdir()]
        modes = {p.name: oct(p.stat().st_mode & 0o777) for p in written}
        assert len(modes) == 7 and set(modes.values()) == {"0o600"}, modes
        erasure = [Path(str(db) + ".erasure-key"), Path(str(db) + ".erased")]
        assert {oct(p.stat().st_mode & 0o777) for p in erasure} == {"0o600"}
    finally:
        _stop(proc)
