"""Checking a running daemon from outside, as portals see it: signed solve webhooks, and
the crash check (SIGKILL while portals send; nothing acknowledged may be lost).

Used by the test suite (``tests/daemon/store/test_crash.py``, a few cycles) and
``bench/crash_soak.py`` (20+).
Senders behave like real portals: each submission is retried, with the same webhook-id
and body, until the daemon answers 2xx (connection refused or reset while the daemon is
down, 503 while it is busy). Afterwards the database must hold every acknowledged
submission exactly once with all its moves, and nothing half-written.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .ingest.signatures import sign

SECRET_A = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
EASY = "003020600900305001001806400008102900700000008006708200002609500800203009005010300"
EASY_SOLUTION = ("483921657967345821251876493548132976729564138136798245"
                 "372689514814253769695417382")
# the cells in reading order at a metronome's pace: a copied solution, flagged
EASY_ROW_COPY = [{"t_ms": 3000 + 400 * k, "cell": c, "digit": int(EASY_SOLUTION[c])}
                 for k, c in enumerate(i for i, ch in enumerate(EASY) if ch == "0")]


def solve_moves(givens: str = EASY, solution: str = EASY_SOLUTION, step_ms: int = 4000
                ) -> list[dict]:
    """An honest-looking complete log: every empty cell filled with its solution digit."""
    empties = [i for i, ch in enumerate(givens) if ch in ".0"]
    return [{"t_ms": (k + 1) * step_ms, "cell": c, "digit": int(solution[c])}
            for k, c in enumerate(empties)]


def solve_body(submission_id: str = "s-1", portal: str = "demo", puzzle_id: str = "easy",
               givens: str | None = EASY, moves: list | None = None, **extra) -> dict:
    """A solve.completed body (``givens`` None: the puzzle is referred to by id only);
    ``moves`` default to :func:`solve_moves` of EASY."""
    body = {"type": "solve.completed", "portal": portal, "submission_id": submission_id,
            "tournament_id": "t-1", "player_id": "p-42",
            "puzzle": {"id": puzzle_id, "givens": givens},
            "started_at": "2026-11-21T10:00:00Z",
            "moves": solve_moves() if moves is None else moves}
    if givens is None:
        del body["puzzle"]["givens"]
    body.update(extra)
    return body


def signed(body: dict, secret: str = SECRET_A, msg_id: str = "msg-1") -> tuple[bytes, dict]:
    """(raw bytes, headers) of ``body`` signed as a portal signs it."""
    raw = json.dumps(body).encode()
    return raw, sign(secret, msg_id, int(time.time()), raw)

CMD = [sys.executable, "-m", "fairgrid.daemon.cli"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(path: Path, port: int, db: Path) -> None:
    path.write_text(f'[server]\nhost = "127.0.0.1"\nport = {port}\n[storage]\npath = "{db}"\n'
                    f'[analysis]\nworkers = 1\norder_runs = 4\norder_budget_s = 1.0\n'
                    f'[nightly]\ncron = ""\n'
                    f'[portals.demo]\nsecrets = ["{SECRET_A}"]\n'
                    f'[auth]\norganiser_tokens = ["org"]\nadmin_tokens = ["adm"]\n')


def start(cfg: Path, base: str, timeout: float = 60, **popen) -> subprocess.Popen:
    """``fairgrid serve --config cfg``, once it answers /healthz at ``base`` (``popen``:
    more Popen arguments, e.g. ``umask``)."""
    proc = subprocess.Popen([*CMD, "serve", "--config", str(cfg)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, **popen)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2) as resp:
                if resp.status == 200:
                    return proc
        except (OSError, urllib.error.URLError):
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"daemon exited: {proc.stderr.read()[-2000:]}")
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("daemon did not start")


@dataclass
class Outcome:
    acked: dict = field(default_factory=dict)      # submission id -> status of the 2xx
    attempts: int = 0
    refused: int = 0                                 # connection errors while down
    non_2xx: dict = field(default_factory=dict)      # status -> count (retried)
    kills: int = 0
    moves_recovered: int = 0  # submissions whose moves a restart re-derived (log lines)


_RECOVERED = re.compile(r"stored the moves of (\d+) submission")


def _recovered(proc: subprocess.Popen) -> int:
    """Submissions whose moves the (exited) daemon re-derived at its start, from its log."""
    return sum(int(n) for n in _RECOVERED.findall(proc.stderr.read() or ""))


def _sender(base: str, ids: list[str], out: Outcome, lock: threading.Lock, stop: threading.Event):
    for sid in ids:
        raw, headers = signed(solve_body(submission_id=sid), msg_id=f"msg-{sid}")
        while not stop.is_set():
            req = urllib.request.Request(base + "/v1/webhooks/solves", data=raw,
                                         headers=headers, method="POST")
            with lock:
                out.attempts += 1
            try:
                with urllib.request.urlopen(req, timeout=10) as resp:
                    status = resp.status
            except urllib.error.HTTPError as exc:
                status = exc.code
            except (OSError, urllib.error.URLError):
                with lock:
                    out.refused += 1
                time.sleep(0.05)
                continue
            if 200 <= status < 300:
                with lock:
                    out.acked[sid] = status
                break
            with lock:
                out.non_2xx[status] = out.non_2xx.get(status, 0) + 1
            time.sleep(0.05)
            # signatures expire after 5 min: re-sign (same id and body) on long outages
            raw, headers = signed(solve_body(submission_id=sid), msg_id=f"msg-{sid}")


def run(tmp: Path, *, submissions: int, cycles: int, senders: int = 4, seed: int = 0,
        progress: Callable[[int, int], None] | None = None) -> tuple[Outcome, Path]:
    """Send ``submissions`` webhooks while killing the daemon ``cycles`` times;
    ``progress(kills, acknowledged)`` is told after every restart. Kill k comes once a
    random share of the k-th of ``cycles + 1`` equal parts of the submissions is
    acknowledged (not after a time), so every kill lands while webhooks still arrive,
    however fast or busy the machine."""
    rng = random.Random(seed)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    db = tmp / "crash.duckdb"
    cfg = tmp / "crash.toml"
    write_config(cfg, port, db)
    proc = start(cfg, base)
    out = Outcome()
    lock = threading.Lock()
    stop = threading.Event()
    ids = [f"c-{k:06d}" for k in range(submissions)]
    threads = [threading.Thread(target=_sender, args=(base, ids[k::senders], out, lock, stop))
               for k in range(senders)]
    for t in threads:
        t.start()
    try:
        for k in range(cycles):
            target = int(submissions * (k + rng.uniform(0.5, 1.0)) / (cycles + 1))
            while len(out.acked) < target and any(t.is_alive() for t in threads):
                time.sleep(0.01)
            if all(not t.is_alive() for t in threads):
                break
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            out.kills += 1
            out.moves_recovered += _recovered(proc)
            proc = start(cfg, base)
            if progress:
                with lock:
                    acked = len(out.acked)
                progress(out.kills, acked)
        for t in threads:
            t.join(timeout=600)
    finally:
        stop.set()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        out.moves_recovered += _recovered(proc)
    return out, db


def check(db: Path, out: Outcome, submissions: int) -> dict:
    """The database after the storm: every acknowledged submission once, whole."""
    import duckdb

    from .store.repository.ingest import integrity
    con = duckdb.connect(str(db), read_only=True)
    try:
        found = integrity(con)
    finally:
        con.close()
    rows = found["copies"]
    partial, orphans = found["partial"], found["orphan_moves"]
    dup_keys = found["duplicate_keys"]
    lost = [sid for sid in out.acked if rows.get(sid, 0) != 1]
    return {"submissions": submissions, "acked": len(out.acked), "stored": len(rows),
            "lost": len(lost), "duplicated": sum(1 for n in rows.values() if n > 1),
            "partial": partial, "orphan_moves": orphans, "duplicate_keys": dup_keys,
            "kills": out.kills, "moves_recovered": out.moves_recovered,
            "attempts": out.attempts, "refused": out.refused,
            "non_2xx": out.non_2xx,
            "accepted_first_time": sum(1 for s in out.acked.values() if s == 202),
            "duplicate_answers": sum(1 for s in out.acked.values() if s == 200)}


def wait_for_file(path: str, timeout: float = 120.0) -> str:
    """Block until ``path`` exists (a pool task whose end a test decides); "held"."""
    deadline = time.monotonic() + timeout
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.01)
    return "held"
