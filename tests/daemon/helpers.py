"""The one helpers module of the tests (test modules import from here and from
:mod:`tests.fixtures`, never from each other; fixtures are in ``tests/conftest.py``):
settings on a tmp DuckDB file, signed webhooks, solve logs, a real daemon in a
subprocess, polling."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from urllib.parse import quote
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from standardwebhooks import Webhook

from fairgrid.daemon.settings import Settings
from fairgrid.daemon.testing import (EASY, EASY_ROW_COPY, EASY_SOLUTION,  # noqa: F401
                                     SECRET_A, free_port, solve_body, solve_moves)
from fairgrid.daemon.testing import SECRET_OTHER as OTHER_SECRET

SECRET_B = "whsec_" + "dGVzdCBzZWNyZXQgbnVtYmVyIHR3byBmb3I="
ORGANISER = "organiser-token"
ADMIN = "admin-token"


def make_settings(tmp_path, **overrides) -> Settings:
    values = dict(storage_path=str(tmp_path / "fairgrid.duckdb"),
                  portals={"demo": (SECRET_A, SECRET_B), "other": (OTHER_SECRET,)},
                  organiser_tokens=(ORGANISER,), admin_tokens=(ADMIN,),
                  analysis_workers=1, analysis_order_runs=4, analysis_order_budget_s=1.0,
                  storage_group_commit_ms=2.0)
    values.update(overrides)
    return Settings(**values)


def signed(body, secret: str = SECRET_A, msg_id: str = "msg-1", ts: float | None = None):
    """(raw bytes, headers) signed with the reference implementation."""
    raw = body if isinstance(body, (bytes, str)) else json.dumps(body)
    raw = raw.decode() if isinstance(raw, bytes) else raw
    when = datetime.fromtimestamp(time.time() if ts is None else ts, tz=timezone.utc)
    sig = Webhook(secret).sign(msg_id, when, raw)
    headers = {"webhook-id": msg_id, "webhook-timestamp": str(int(when.timestamp())),
               "webhook-signature": sig, "content-type": "application/json"}
    return raw.encode(), headers


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def count(db_path: str, sql: str) -> int:
    """Rows in the database, read through a fresh read-only connection after the app closed."""
    import duckdb

    con = duckdb.connect(db_path, read_only=True)
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()



def signed_bytes(raw: bytes, secret: str = SECRET_A, msg_id: str = "msg-1") -> dict:
    """Headers signing arbitrary bytes (the reference signer takes text only)."""
    import base64
    import hashlib
    import hmac

    ts = str(int(time.time()))
    key = base64.b64decode(secret.removeprefix("whsec_"))
    mac = hmac.new(key, f"{msg_id}.{ts}.".encode() + raw, hashlib.sha256).digest()
    return {"webhook-id": msg_id, "webhook-timestamp": ts,
            "webhook-signature": "v1," + base64.b64encode(mac).decode(),
            "content-type": "application/json"}


def query(store, sql: str, params=None, *, needs_moves: bool = False) -> list[tuple]:
    """Rows of an ad-hoc read through the store (as a repository read would run);
    ``needs_moves``: wait for every acknowledged solve's moves first."""
    def read(cur):
        return cur.execute(sql, params or []).fetchall()
    read.needs_moves = needs_moves
    return store.read(read)


FAIRGRID = shutil.which("fairgrid")


CMD = [FAIRGRID] if FAIRGRID else [sys.executable, "-m", "fairgrid.daemon.cli"]


def write_config(path, port, db, extra=""):
    path.write_text(f'[server]\nhost = "127.0.0.1"\nport = {port}\n[storage]\npath = "{db}"\n'
                    f'[analysis]\nworkers = 1\norder_runs = 4\norder_budget_s = 1.0\n'
                    f'[portals.demo]\nsecrets = ["{SECRET_A}"]\n'
                    f'[auth]\norganiser_tokens = ["org"]\nadmin_tokens = ["{ADMIN}"]\n' + extra)


def request(url, data=None, headers=None):
    req = urllib.request.Request(url, data=data, headers=headers or {},
                                 method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def start_daemon(tmp_path, extra=""):
    """A `fairgrid serve` on a free port (``extra``: more of its config), until the
    generator is closed: (process, base URL, database, tmp_path)."""
    port = free_port()
    db = tmp_path / "fg.duckdb"
    cfg = tmp_path / "fairgrid.toml"
    write_config(cfg, port, db, extra)
    proc = subprocess.Popen([*CMD, "serve", "--config", str(cfg)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if request(base + "/healthz")[0] == 200:
                break
        except (urllib.error.URLError, ConnectionError):
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"daemon did not start: {proc.stderr.read()}")
        time.sleep(0.2)
    yield proc, base, db, tmp_path
    if proc.poll() is None:
        proc.kill()
        proc.wait()


URL = "/v1/webhooks/solves"


def store(client):
    """The store of an ``aiohttp_client``'s app."""
    from fairgrid.daemon.web.context import CTX

    return client.server.app[CTX].store


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``fairgrid ARGS`` in a subprocess, its output captured."""
    return subprocess.run([*CMD, *args], capture_output=True, text=True, timeout=timeout)


def assert_clean_usage_error(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    last = proc.stderr.strip().splitlines()[-1]
    for word in words:
        assert word in last, last


async def until(predicate, timeout=300.0):
    """Poll ``predicate()`` (a plain or an async function) until it is true."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        done = predicate()
        if inspect.isawaitable(done):
            done = await done
        if done:
            return
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


EMPTY = [i for i, ch in enumerate(EASY) if ch == "0"]


COLUMNS = ("(sub_key, portal, submission_id, webhook_id, tournament_id, player_id, puzzle_id, "
           "started_at, received_at, committed_at, n_moves, duration_ms, complete, status, raw)")
MOVE_COLUMNS = "(sub_key, seq, t_ms, cell, digit, note)"

# a score row as fairgrid wrote it before season facts (the verdict reads the evidence)
INSERT_SCORE = ("INSERT INTO scores (portal, submission_id, scored_at, anomaly, p_value, "
                "flagged, evidence) VALUES ")


METRICS = {"refutation_sum": 0.0, "serate": 0.0, "lone_single_steps": 1.0, "mean_options": 13.0}


def insert_rows(con, table: str, columns: str, rows) -> None:
    """Insert ``rows`` (tuples in the order of ``columns``, "(a, b, ...)") into ``table``
    in one statement from columns: DuckDB's executemany runs a statement a row, which
    is most of what building a test database of thousands of solves costs."""
    rows = list(rows)
    if not rows:
        return
    names = [c.strip() for c in columns.strip("() ").split(",")]
    data, select = {}, []
    for name, col in zip(names, zip(*rows)):
        if isinstance(col[0], datetime):   # as text, read back as the instant it names
            data[name] = np.array([v.isoformat() for v in col], dtype=object)
            select.append(f"CAST({name} AS TIMESTAMPTZ)")
        else:
            data[name] = np.array(col, dtype=object if isinstance(col[0], str) else None)
            select.append(name)
    con.register("insert_rows_", data)
    try:
        con.execute(f"INSERT INTO {table} {columns} SELECT {', '.join(select)} "
                    "FROM insert_rows_")
    finally:
        con.unregister("insert_rows_")


def build(path, *, puzzles=24, players=60, seed=0, few_solves_puzzle=True):
    """A database of ready puzzles (all with EASY's grid) and complete solves whose times
    follow log t = d_j - s_i + noise; returns the truth."""
    from fairgrid.analytics.expected_time import load_default
    from fairgrid.analytics.puzzle_model import complete_metrics
    from fairgrid.daemon.store import connect

    rng = np.random.default_rng(seed)
    con = connect(str(path))
    now = datetime.now(timezone.utc)
    # the stored models hold only the human model's metrics, as puzzles analysed before
    # the technique model do: the nightly job rates what the calibration reads and lacks
    prior = load_default().expected_log_time(
        complete_metrics(EASY, METRICS, load_default().metrics_needed))
    true_delta = rng.normal(0, 0.3, puzzles)
    true_d = prior - 1.0 + true_delta          # this portal's players are e times faster
    skill = rng.normal(0, 0.4, players)
    ratings = json.dumps({"metrics": METRICS, "expected_log_s": prior, "sd_log": 0.17,
                          "null": {}, "level": 3})
    for j in range(puzzles):
        con.execute("INSERT INTO puzzles (id, givens, box_size, solution, status, "
                    "registered_at, ratings, fill_rank_median) VALUES (?, ?, 3, ?, 'ready', ?, ?, ?)",
                    [f"p{j:02d}", EASY, EASY_SOLUTION, now, ratings, json.dumps([None] * 81)])
    subs, moves = [], []
    key = 0
    for j in range(puzzles):
        solvers = players if not (few_solves_puzzle and j == puzzles - 1) else 2
        for i in rng.choice(players, solvers, replace=False):
            dur = int(1000 * np.exp(true_d[j] - skill[i] + rng.normal(0, 0.15)))
            order = list(EMPTY) if j == 0 else list(rng.permutation(EMPTY))
            t = np.linspace(dur / len(order), dur, len(order)).astype(int)
            moves += [(key, seq, int(tt), c, int(EASY_SOLUTION[c]), False)
                      for seq, (c, tt) in enumerate(zip(order, t))]
            subs.append((key, "demo", f"s{key}", f"w{key}", "t", f"u{i:03d}", f"p{j:02d}",
                         now, now, now - timedelta(days=1), len(order), int(t[-1]), True,
                         "scored", "{}"))
            key += 1
    insert_rows(con, "submissions", COLUMNS, subs)
    insert_rows(con, "moves", MOVE_COLUMNS, moves)
    con.execute("UPDATE moves_through SET through = (SELECT max(sub_key) FROM submissions)")
    return con, {"true_d": true_d, "skill": skill, "prior": prior, "n": key}


async def wait_ready(client, pid, timeout=600.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        doc = await (await client.get(f"/v1/puzzles/{pid}", headers=bearer(ORGANISER))).json()
        if doc["status"] != "pending" or asyncio.get_running_loop().time() > deadline:
            return doc
        await asyncio.sleep(0.2)


async def wait_scored(client, sid, timeout=600.0, portal="demo"):
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        doc = await (await client.get(f"/v1/submissions/{portal}/{sid}",
                                      headers=bearer(ORGANISER))).json()
        if doc["status"] == "scored" or asyncio.get_running_loop().time() > deadline:
            return doc
        await asyncio.sleep(0.2)


async def nightly_run(client):
    resp = await client.post("/v1/nightly-runs", headers=bearer(ADMIN))
    run_id = (await resp.json())["run_id"]

    async def finished():
        doc = await (await client.get(f"/v1/nightly-runs/{run_id}", headers=bearer(ADMIN))).json()
        return doc["status"] in ("success", "failed")
    await until(finished, 300)
    doc = await (await client.get(f"/v1/nightly-runs/{run_id}", headers=bearer(ADMIN))).json()
    assert doc["status"] == "success", doc
    return doc


def record(sid: str, hook: str, player: str = "p-1"):
    from datetime import datetime, timezone

    import numpy as np

    from fairgrid.daemon.store import SubmissionRecord

    now = datetime.now(timezone.utc)
    moves = np.arange(3)
    return SubmissionRecord("demo", sid, hook, None, player, "easy", now, now,
                            moves.astype(np.int64), moves.astype(np.int16),
                            np.ones(3, dtype=np.int16), np.zeros(3, dtype=bool), False,
                            f'{{"s": "{sid}", "p": "{player}"}}')


NEVER = 3600.0  # seconds: the writer stores pending moves only when asked


def solves(n: int) -> list[tuple[bytes, object]]:
    """(raw body, record) pairs as the webhook builds them, move logs of different lengths
    with pencil marks and erases, bodies written compactly and indented."""
    import json

    from fairgrid.daemon.store import SubmissionRecord
    from fairgrid.daemon.ingest import parse_body

    out = []
    for k in range(n):
        moves = solve_moves()[: 10 + 7 * k]
        moves.insert(3, {"t_ms": moves[2]["t_ms"], "cell": 0, "digit": 5, "kind": "note"})
        moves.insert(5, {"t_ms": moves[4]["t_ms"], "cell": moves[4]["cell"], "digit": 0})
        raw = json.dumps(solve_body(submission_id=f"r-{k}", moves=moves),
                         indent=None if k % 2 else 1).encode()
        ev = parse_body(raw)
        out.append((raw, SubmissionRecord.of(ev, ev.puzzle_id, f"h-{k}", ev.started_at,
                                             False, raw.decode())))
    return out


PASSWORD = "a long password"


async def post_flagged(client, portal, sid, secret, **extra):
    body = solve_body(submission_id=sid, portal=portal, moves=EASY_ROW_COPY, **extra)
    raw, headers = signed(body, secret=secret, msg_id=sid)
    assert (await client.post("/v1/webhooks/solves", data=raw, headers=headers)).status == 202
    deadline = asyncio.get_running_loop().time() + 300
    while True:
        doc = await (await client.get(f"/v1/submissions/{portal}/{quote(sid, safe='')}",
                                      headers=bearer(ADMIN))).json()
        if doc["status"] == "scored":
            assert doc["score"]["flag"] is not None
            return doc["score"]["flag"]["id"]
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.2)


async def add_user(client, name, role="organiser", portals=("demo",)):
    resp = await client.post("/v1/users", headers=bearer(ADMIN), json={
        "name": name, "role": role, "portals": list(portals), "password": PASSWORD})
    assert resp.status == 201, await resp.text()
    tok = await client.post(f"/v1/users/{name}/tokens", headers=bearer(ADMIN), json={})
    return (await tok.json())["token"]


async def sign_in_as_admin(client, name: str = "rev") -> None:
    """Add an admin ``name`` and sign the test client in as them (the console's cookie)."""
    resp = await client.post("/v1/users", headers=bearer(ADMIN), json={
        "name": name, "role": "admin", "password": PASSWORD})
    assert resp.status == 201, await resp.text()
    assert (await sign_in(client, name)).status == 303


async def login_token(client) -> str:
    html = await (await client.get("/ui/login")).text()
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


async def sign_in(client, name, password=PASSWORD, headers=None):
    token = await login_token(client)
    return await client.post("/ui/login", data={"csrf": token, "name": name,
                                                "password": password, "next": "/ui/flags"},
                             allow_redirects=False, headers=headers)


def bench_players():
    """bench/players.py, imported by path (bench/ is scripts, not a package)."""
    import importlib.util
    from pathlib import Path

    if "players" in sys.modules:
        return sys.modules["players"]
    path = Path(__file__).resolve().parents[2] / "bench" / "players.py"
    spec = importlib.util.spec_from_file_location("players", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["players"] = module
    spec.loader.exec_module(module)
    return module
