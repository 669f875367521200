"""Checking a running daemon from outside, as portals see it: signed solve webhooks, and
the crash check (SIGKILL while portals send; nothing acknowledged may be lost).

Used by the test suite (``tests/daemon/store/test_crash.py``, a few cycles),
``bench/crash_soak.py`` (20+) and ``bench/fault_soak.py`` (kills during backups, nightly
runs and scoring, with one portal sending hostile bodies: :func:`hostile_body`).
Senders behave like real portals (:func:`deliver`): each submission is retried, with the
same webhook-id and body, until the daemon settles it (connection refused or reset while
the daemon is down, 503 while it is busy), 2xx when it is accepted. Afterwards the
database must hold every acknowledged submission exactly once with all its moves, and
nothing half-written (:func:`check`, :func:`check_portals`).
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
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from .ingest.signatures import sign

SECRET_A = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SECRET_OTHER = "whsec_" + "b3RoZXIgcG9ydGFsIHNlY3JldCBrZXkgMTIz"  # a second portal's
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


# Bodies a hostile portal signs correctly (so that they reach the parser), and the answer
# docs/openapi.yaml (Solve) gives each: (status, field). Nesting is counted with the body
# as the first level; a move is the third.
HOSTILE = {
    "deep-client": (422, "client"),           # a client block one level past the bound
    "very-deep-client": (422, "client"),      # ... 1,000 levels deep
    "client-at-limit": (202, None),           # at the bound (32 levels): taken
    "deep-move": (422, "moves[3].x"),         # nesting inside a move, past the bound
    "move-at-limit": (202, None),
    "deep-array": (400, None),                # 5,000 levels: no parser here reads that
    "bidi-id": (422, "submission_id"),        # a right-to-left override in an id
    "control-id": (422, "player_id"),         # a terminal escape sequence in an id
    "zero-width-id": (422, "tournament_id"),  # a zero-width space
    "rtl-script-id": (202, None),             # Hebrew letters: a script, not a control
    "year-1": (422, "started_at"),
    "long-log": (202, None),                  # 10,000 moves: pencil marks, slips, erasures
}
_NEST = "@nest@"


def hostile_body(name: str, submission_id: str, portal: str = "demo",
                 started_at: str = "2026-11-21T10:00:00Z") -> bytes:
    """The raw body of one of the :data:`HOSTILE` bodies (each submission id its own; the
    id is changed only where the id is the hostile part)."""
    body = solve_body(submission_id, portal=portal, started_at=started_at,
                      player_id=f"p-{submission_id}")
    levels = None
    if name in ("deep-client", "very-deep-client", "client-at-limit"):
        body["client"] = {"paste_count": 0, "trace": _NEST}  # the client block is level 2
        levels = {"deep-client": 31, "very-deep-client": 998, "client-at-limit": 30}[name]
    elif name in ("deep-move", "move-at-limit"):
        body["moves"][3]["x"] = _NEST
        levels = 30 if name == "deep-move" else 29
    elif name == "deep-array":
        return b"[" * 5000 + b"]" * 5000
    elif name == "bidi-id":
        body["submission_id"] = submission_id + "\u202egpj.exe"
    elif name == "control-id":
        body["player_id"] = "p-\x1b[2J" + submission_id
    elif name == "zero-width-id":
        body["tournament_id"] = "t-\u200b1"
    elif name == "rtl-script-id":
        body["player_id"] = "\u05e9\u05d7\u05e7\u05df-" + submission_id
    elif name == "year-1":
        body["started_at"] = "0001-01-01T00:00:00Z"
    elif name == "long-log":
        body["moves"] = long_log(10_000)
    elif name not in HOSTILE:
        raise ValueError(f"no hostile body {name!r}")
    raw = json.dumps(body, ensure_ascii=False)
    if levels is not None:
        raw = raw.replace(f'"{_NEST}"', "[" * levels + "]" * levels)
    return raw.encode()


def long_log(n: int, givens: str = EASY, solution: str = EASY_SOLUTION) -> list[dict]:
    """A complete log of ``n`` moves: pencil marks, wrong digits and erasures on the
    empty cells, 100 ms apart, then every empty cell filled with its solution digit."""
    empties = [i for i, ch in enumerate(givens) if ch in ".0"]
    moves = []
    for k in range(n - len(empties)):
        cell = empties[k % len(empties)]
        phase = (k // len(empties)) % 3
        right = int(solution[cell])
        move = {"t_ms": 100 * (k + 1), "cell": cell,
                "digit": (k % 9 + 1, right % 9 + 1, 0)[phase]}
        if phase == 0:
            move["kind"] = "note"
        moves.append(move)
    t0 = 100 * len(moves)
    return moves + [{"t_ms": t0 + 100 * (k + 1), "cell": c, "digit": int(solution[c])}
                    for k, c in enumerate(empties)]


def signed(body: dict, secret: str = SECRET_A, msg_id: str = "msg-1") -> tuple[bytes, dict]:
    """(raw bytes, headers) of ``body`` signed as a portal signs it."""
    raw = json.dumps(body).encode()
    return raw, sign(secret, msg_id, int(time.time()), raw)

CMD = [sys.executable, "-m", "fairgrid.daemon.cli"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(path: Path, port: int, db: Path,
                 portals: Mapping[str, str] | None = None) -> None:
    """A config for a test daemon: ``portals`` maps names to secrets (default: ``demo``
    with SECRET_A); organiser token ``org``, admin token ``adm``; no scheduled nightly."""
    portals = {"demo": SECRET_A} if portals is None else portals
    path.write_text(f'[server]\nhost = "127.0.0.1"\nport = {port}\n[storage]\npath = "{db}"\n'
                    f'[analysis]\nworkers = 1\norder_runs = 4\norder_budget_s = 1.0\n'
                    f'[nightly]\ncron = ""\n'
                    + "".join(f'[portals.{name}]\nsecrets = ["{secret}"]\n'
                              for name, secret in portals.items())
                    + '[auth]\norganiser_tokens = ["org"]\nadmin_tokens = ["adm"]\n')


def start(cfg: Path, base: str, timeout: float = 60, log: Path | None = None,
          **popen) -> subprocess.Popen:
    """``fairgrid serve --config cfg``, once it answers /healthz at ``base`` (``popen``:
    more Popen arguments, e.g. ``umask``). Its log goes to ``proc.stderr``, or is
    appended to the file ``log``: a daemon that runs for minutes logs more than a pipe
    nobody reads holds."""
    if log is None:
        proc = subprocess.Popen([*CMD, "serve", "--config", str(cfg)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                **popen)
    else:
        with open(log, "a") as sink:
            proc = subprocess.Popen([*CMD, "serve", "--config", str(cfg)],
                                    stdout=subprocess.DEVNULL, stderr=sink, **popen)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2) as resp:
                if resp.status == 200:
                    return proc
        except (OSError, urllib.error.URLError):
            pass
        if proc.poll() is not None:
            said = proc.stderr.read() if log is None else Path(log).read_text()
            raise RuntimeError(f"daemon exited: {said[-2000:]}")
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("daemon did not start")


def worker_pids(proc: subprocess.Popen) -> set[int]:
    """The processes the daemon started (its pool's workers), from /proc; empty where
    there is no /proc."""
    return {pid for pid, parent in _processes() if parent == proc.pid}


def outliving(pids: set[int], timeout: float = 10.0) -> set[int]:
    """Those of ``pids`` still running once ``timeout`` has passed (or at once when none
    is): the workers a dead daemon left behind."""
    deadline = time.monotonic() + timeout
    while True:
        alive = {pid for pid, _ in _processes() if pid in pids}
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.05)


def _processes() -> list[tuple[int, int]]:
    """(pid, parent pid) of every running process (zombies waiting to be reaped left
    out), from /proc."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            state, parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):
            continue  # gone meanwhile
        if state != "Z":
            found.append((int(entry.name), int(parent)))
    return found


def call(base: str, method: str, path: str, body: dict | None = None, token: str = "adm",
         timeout: float = 60) -> tuple[int, dict | None, Mapping[str, str]]:
    """(status, JSON body, headers) of an API request with a bearer token; OSError when
    there is no answer (the daemon is down, or went down meanwhile)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, _json_or_none(resp.read()), resp.headers
    except urllib.error.HTTPError as exc:
        return exc.code, _json_or_none(exc.read()), exc.headers


def _json_or_none(raw: bytes):
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


def deliver(base: str, raw: bytes, secret: str, msg_id: str, stop: threading.Event,
            note: Callable[[int | None, Mapping[str, str]], None] | None = None,
            pause: float = 0.05) -> tuple[int, dict | None] | None:
    """POST the webhook body ``raw`` as a portal does until the daemon settles it:
    signed afresh at every attempt (same webhook-id and body; signatures expire after 5
    minutes), retried while there is no answer (the daemon down) or a 5xx (503: busy);
    the settling answer (status, JSON body): 2xx accepted, 4xx refused (not retried).
    None when ``stop`` is set first. ``note(status, headers)`` hears every answer
    (status None: no answer)."""
    while not stop.is_set():
        headers = sign(secret, msg_id, int(time.time()), raw)
        req = urllib.request.Request(base + "/v1/webhooks/solves", data=raw,
                                     headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                status, doc, got = resp.status, _json_or_none(resp.read()), resp.headers
        except urllib.error.HTTPError as exc:
            status, doc, got = exc.code, _json_or_none(exc.read()), exc.headers
        except (OSError, urllib.error.URLError):
            status, doc, got = None, None, {}
        if note is not None:
            note(status, got)
        if status is not None and status < 500:
            return status, doc
        time.sleep(pause)
    return None


@dataclass
class Outcome:
    acked: dict = field(default_factory=dict)      # submission id -> status of the 2xx
    attempts: int = 0
    refused: int = 0                                 # connection errors while down
    non_2xx: dict = field(default_factory=dict)      # status -> count (retried)
    kills: int = 0
    moves_recovered: int = 0  # submissions whose moves a restart re-derived (log lines)


_RECOVERED = re.compile(r"stored the moves of (\d+) submission")


def moves_recovered(log: str) -> int:
    """Submissions whose moves a daemon re-derived at its starts, from its log text."""
    return sum(int(n) for n in _RECOVERED.findall(log))


def _recovered(proc: subprocess.Popen) -> int:
    """Submissions whose moves the (exited) daemon re-derived at its start, from its log."""
    return moves_recovered(proc.stderr.read() or "")


def _sender(base: str, ids: list[str], out: Outcome, lock: threading.Lock, stop: threading.Event):
    def note(status, headers):
        with lock:
            out.attempts += 1
            if status is None:
                out.refused += 1
            elif not 200 <= status < 300:
                out.non_2xx[status] = out.non_2xx.get(status, 0) + 1

    for sid in ids:
        raw = json.dumps(solve_body(submission_id=sid)).encode()
        answer = deliver(base, raw, SECRET_A, f"msg-{sid}", stop, note)
        if answer is None:
            return
        if 200 <= answer[0] < 300:
            with lock:
                out.acked[sid] = answer[0]


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


def check_portals(db: Path, acked: Mapping[str, set[str]]) -> dict:
    """The database after the storm, portal by portal (``acked`` maps each portal to the
    submission ids it got a 2xx for): acknowledged, stored, lost (acknowledged but not
    stored once), duplicated, stored though never acknowledged (a refused body, or a
    sender that gave up), and the stored solves by status; and over all portals what
    :func:`check` counts (half-written, orphan moves, repeated keys)."""
    import duckdb

    from .store.repository.ingest import integrity, stored_solves
    con = duckdb.connect(str(db), read_only=True)
    try:
        solves, found = stored_solves(con), integrity(con)
    finally:
        con.close()
    portals = {}
    for portal in sorted(set(acked) | {p for p, _ in solves}):
        mine = {sid: v for (p, sid), v in solves.items() if p == portal}
        ids = acked.get(portal, set())
        portals[portal] = {
            "acked": len(ids), "stored": len(mine),
            "lost": sum(1 for sid in ids if mine.get(sid, (0,))[0] != 1),
            "duplicated": sum(1 for n, _ in mine.values() if n > 1),
            "unacknowledged": sum(1 for sid in mine if sid not in ids),
            "status": dict(sorted(Counter(status for _, status in mine.values()).items()))}
    return {"portals": portals, "partial": found["partial"],
            "orphan_moves": found["orphan_moves"], "duplicate_keys": found["duplicate_keys"]}


def killed_while_sending_result() -> None:
    """A pool task that starts sending a 4 MiB result, as a big scoring batch does, and
    dies (SIGKILL, as the OOM killer sends) a few KiB into it: the executor's manager
    thread is left reading the rest (``work.pool.LanePool._watch``)."""
    import struct

    frame = sys._getframe(1)
    while frame is not None and "result_queue" not in frame.f_locals:
        frame = frame.f_back
    writer = frame.f_locals["result_queue"]._writer
    writer._send(struct.pack("!i", 4 * 1024 * 1024) + b"\0" * 8192)  # header + 8 KiB
    os.kill(os.getpid(), signal.SIGKILL)


def wait_for_file(path: str, timeout: float = 120.0) -> str:
    """Block until ``path`` exists (a pool task whose end a test decides); "held"."""
    deadline = time.monotonic() + timeout
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.01)
    return "held"
