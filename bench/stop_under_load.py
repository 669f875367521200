"""Stopping under load: the WAL against ``storage.checkpoint_mb`` while a daemon ingests
and scores, then how long a SIGTERM takes to a clean exit.

1. Starts ``fairgrid serve`` on a fresh DuckDB file with ``storage.checkpoint_mb`` set to
   ``--checkpoint-mb`` (small, so that a short run writes several times the threshold)
   and registers the test puzzle.
2. Drives signed webhooks (those of ``bench/ingest_load.py``, ~60 moves each) from a
   separate process at ``--rate`` a second, paced, so that scoring keeps up and writes
   its scores meanwhile; an organiser reads ``GET /v1/flags`` and ``/metrics`` every
   0.2 s. The ``.wal`` file's size is sampled every 0.1 s.
   The driver reports the p99 ack latency (checkpoints included).
3. Starts the same load again and, two seconds into it, sends SIGTERM and measures the
   time until the process exits; then counts what the file holds.

Prints one table row: solves stored and scored, p99 ack latency, peak WAL against the
threshold, the checkpoints seen (the WAL shrinking), the WAL at the SIGTERM, the stop
time against ``server.shutdown_timeout_s``, the exit status and the WAL left behind.

    python bench/stop_under_load.py [--seconds 60] [--rate 300] [--checkpoint-mb 16]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from _common import machine
from ingest_load import ADMIN, SECRET, free_port, run_driver, start_fairgrid

SHUTDOWN_TIMEOUT_S = 30.0  # the daemon's default server.shutdown_timeout_s


def wal_bytes(db: Path) -> int:
    try:
        return os.stat(f"{db}.wal").st_size
    except FileNotFoundError:
        return 0


class WalSampler(threading.Thread):
    """The WAL's size every 0.1 s: its peak, and how often it shrank (a checkpoint)."""

    def __init__(self, db: Path):
        super().__init__(daemon=True)
        self.db, self.peak, self.checkpoints, self.last = db, 0, 0, 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            size = wal_bytes(self.db)
            self.checkpoints += size < self.last
            self.peak, self.last = max(self.peak, size), size
            time.sleep(0.1)


def organiser(base: str, done: threading.Event) -> None:
    """Reads as a reviewer's console and Prometheus make them, until ``done``."""
    headers = {"Authorization": f"Bearer {ADMIN}"}
    while not done.is_set():
        for path in ("/v1/flags?limit=50", "/metrics"):
            try:
                urllib.request.urlopen(urllib.request.Request(base + path, headers=headers),
                                       timeout=10).read()
            except OSError:
                pass  # stopping
        done.wait(0.2)


def counts(db: Path) -> tuple[int, int]:
    """(submissions, scores) stored in the closed file."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return (con.execute("SELECT count(*) FROM submissions").fetchall()[0][0],
                con.execute("SELECT count(*) FROM scores").fetchall()[0][0])
    finally:
        con.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--rate", type=float, default=300.0, help="webhooks a second")
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--checkpoint-mb", type=int, default=16)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="fairgrid-stop-"))
    db, port = tmp / "stop.duckdb", free_port()
    cfg = tmp / "stop.toml"
    cfg.write_text(f'[server]\nport = {port}\nshutdown_timeout_s = {SHUTDOWN_TIMEOUT_S}\n'
                   f'[storage]\npath = "{db}"\ncheckpoint_mb = {args.checkpoint_mb}\n'
                   f'[analysis]\nworkers = 1\n[nightly]\ncron = ""\n'
                   f'[portals.demo]\nsecrets = ["{SECRET}"]\n[auth]\nadmin_tokens = ["{ADMIN}"]\n')
    print(f"# machine: {machine()}")
    daemon, base = start_fairgrid(cfg, port)
    url = base + "/v1/webhooks/solves"
    sampler, reading = WalSampler(db), threading.Event()
    driver = None
    try:
        sampler.start()
        threading.Thread(target=organiser, args=(base, reading), daemon=True).start()
        load = run_driver(url, "load", args.seconds, args.connections, args.rate, daemon.pid)
        # the stop comes under load: this driver outlives the daemon and is ended after it
        driver = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("ingest_load.py")), "--drive", url,
             "--prefix", "stop", "--seconds", "30", "--connections", str(args.connections),
             "--rate", str(args.rate)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)
        if driver.stdout.readline().strip() != "go":
            raise SystemExit("the load driver failed")
        time.sleep(2.0)
        wal_at_stop = wal_bytes(db)
        start = time.monotonic()
        daemon.send_signal(signal.SIGTERM)
        status = daemon.wait(timeout=300)
        stop_s = time.monotonic() - start
    finally:
        reading.set()
        sampler.done.set()
        if driver is not None:
            driver.kill()
            driver.wait()
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    stored, scored = counts(db)
    mb = 10**6  # DuckDB's MB, as checkpoint_mb counts
    print(f"{'seconds':>7} {'rate/s':>6} {'stored':>7} {'scored':>7} {'p99 ack':>8} "
          f"{'threshold':>9} {'peak WAL':>8} {'checkpoints':>11} {'WAL at stop':>11} "
          f"{'stop s':>6} {'exit':>4} {'WAL left':>8}")
    print(f"{args.seconds:>7.0f} {args.rate:>6.0f} {stored:>7,} {scored:>7,} "
          f"{load['p99_ms']:>5.0f} ms {args.checkpoint_mb:>6} MB {sampler.peak / mb:>5.1f} MB "
          f"{sampler.checkpoints:>11} "
          f"{wal_at_stop / mb:>8.1f} MB {stop_s:>6.2f} {status:>4} "
          f"{wal_bytes(db) / mb:>5.1f} MB")
    print(f"peak WAL / threshold: {sampler.peak / mb / args.checkpoint_mb:.1f}; stop "
          f"{stop_s:.2f} s against shutdown_timeout_s = {SHUTDOWN_TIMEOUT_S:.0f}")
    return 0 if status == 0 else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
