"""The disk fills up under the daemon: 503 with Retry-After and a clear log line, no
partial rows, and full service again once space returns.

"Disk full" is a real write failure, not a mock: the daemon runs with a file-size limit
(RLIMIT_FSIZE, which CPython's ignored SIGXFSZ turns into EFBIG for every write past it),
so DuckDB's WAL cannot grow; raising the limit on the running process (prlimit) is the
space coming back.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import time

import pytest

from fairgrid.daemon.store import connect
from fairgrid.daemon.testing import CMD, free_port, start, write_config
from ..helpers import build, count, request, signed, solve_body

pytestmark = pytest.mark.slow


@pytest.mark.skipif(not hasattr(resource, "prlimit"), reason="needs Linux prlimit")
def test_disk_full_is_503_nothing_partial_and_recovers(tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    db = tmp_path / "full.duckdb"
    cfg = tmp_path / "full.toml"
    write_config(cfg, port, db)
    start(cfg, base).send_signal(signal.SIGTERM)  # create the file and its schema
    time.sleep(2)
    limit = os.path.getsize(db) + 150_000

    def cap():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    proc = subprocess.Popen([*CMD, "serve", "--config", str(cfg)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, preexec_fn=cap)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if request(base + "/healthz")[0] == 200:
                break
        except OSError:
            time.sleep(0.1)
    try:
        accepted, full = [], None
        for k in range(2000):
            raw, headers = signed(solve_body(submission_id=f"d-{k}"), msg_id=f"d-{k}")
            status, doc = request(base + "/v1/webhooks/solves", raw, headers)
            if status == 202:
                accepted.append(k)
                continue
            full = (k, status, doc)
            break
        assert full is not None, "the file-size limit was never reached"
        k, status, doc = full
        assert status == 503 and "storage unavailable" in doc["error"], full
        # more attempts keep failing cleanly while the disk stays full
        raw, headers = signed(solve_body(submission_id=f"d-{k}"), msg_id=f"d-{k}")
        assert request(base + "/v1/webhooks/solves", raw, headers)[0] == 503
        # space returns: the same submission is accepted, and so are new ones
        resource.prlimit(proc.pid, resource.RLIMIT_FSIZE,
                         (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        assert request(base + "/v1/webhooks/solves", raw, headers)[0] == 202
        raw, headers = signed(solve_body(submission_id="after"), msg_id="after")
        assert request(base + "/v1/webhooks/solves", raw, headers)[0] == 202
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert "storage error" in err and "Traceback" not in err.split("storage error")[0][-200:]
    # every acknowledged submission whole, the refused one stored once (after recovery)
    assert count(str(db), "SELECT count(*) FROM submissions") == len(accepted) + 2
    assert count(str(db), "SELECT count(*) FROM submissions s WHERE s.n_moves <> "
                 "(SELECT count(*) FROM moves m WHERE m.sub_key = s.sub_key)") == 0


def _full_disk_child(limit: int) -> None:
    """In a child process: files may grow to ``limit`` bytes at most (a full disk,
    as far as DuckDB's WAL is concerned: its writes fail with EFBIG)."""
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))


CHILD = r'''
import sys
from fairgrid.daemon.store import connect
from fairgrid.daemon.store.connection import in_transaction
con = connect(sys.argv[1])
sys.stdout.flush()
import resource, signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (65536, resource.RLIM_INFINITY))
def fn(c):
    c.execute("INSERT INTO job_runs VALUES ('r', 'nightly', now(), NULL, 'running', ?)",
              ["x" * 200000])
try:
    in_transaction(con, fn)
except Exception as exc:
    print(f"{type(exc).__name__}: {exc}")
'''


def test_a_commit_that_fails_is_reported_as_itself_not_as_a_failed_rollback(tmp_path):
    """``in_transaction`` (every write of ``fairgrid recompute`` and of the offline
    commands) answers a failed COMMIT (disk full: the WAL cannot be written) with a
    ROLLBACK, which DuckDB refuses ("no transaction is active"): that error replaces the
    real one, and it is what the run's ``job_runs`` row records as its error."""
    import os
    import subprocess
    import sys

    path = tmp_path / "x.duckdb"
    connect(str(path)).close()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True,
                         text=True, timeout=120, env=env)
    assert "File too large" in out.stdout, out.stdout + out.stderr


def test_recompute_on_a_full_disk_is_one_line_and_exit_2(tmp_path):
    """``fairgrid recompute`` with no daemon, on a database whose disk is full (here:
    a file size limit): a traceback and exit 1, where a CLI failure is one line and
    exit status 2."""
    import os
    import subprocess
    import sys

    from fairgrid.daemon.store.database import open_erased

    db = tmp_path / "fg.duckdb"
    con, _ = build(db, puzzles=4, players=8, few_solves_puzzle=False)
    open_erased(con, str(db))   # the erasure key exists (made at a first start)
    con.execute("CHECKPOINT")
    con.close()
    cfg = tmp_path / "fg.toml"
    cfg.write_text(f'[server]\nhost = "127.0.0.1"\nport = 1\n[storage]\npath = "{db}"\n'
                   '[analysis]\nworkers = 1\n[portals.demo]\n'
                   'secrets = ["whsec_dGVzdCBzZWNyZXQgbnVtYmVyIG9uZSBmb3IgZmc="]\n'
                   '[auth]\nadmin_tokens = ["admin-token"]\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-m", "fairgrid.daemon.cli", "recompute",
                           "--config", str(cfg)], capture_output=True, text=True,
                          timeout=300, env=env, preexec_fn=lambda: _full_disk_child(8192))
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-600:])
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr[-600:]
