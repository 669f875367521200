"""One canonical JSON snapshot of every seeded output of fairgrid, to prove that a change
of the code's internals changed no behaviour.

    python bench/same_outputs.py [--python PY] [--out snap.json] [--keep] [--patience F]
    python bench/same_outputs.py --compare A.json B.json

The script drives fairgrid only through its public surfaces, so the same file runs
unchanged against an old and a new version of the code: the command line
(``PY -m fairgrid.daemon.cli ...``, ``PY`` from ``--python``, default this interpreter) and
the HTTP API of a real daemon (``serve``) on 127.0.0.1. It imports nothing of fairgrid.

What the snapshot holds:

* **cli**: ``predict-order --json --runs 20 --seed 3 --jobs 2``, ``rate --json --seed 1``
  and ``solve --json --seed 2`` of the EASY and MEDIUM test puzzles (output and exit code);
* **daemon**: a fresh daemon in a temporary directory (a DuckDB file, a free port, a known
  ``whsec_`` portal secret, analysis seed 7, 20 SA runs per prediction, two pool
  processes, ``nightly.min_solves = 6``, no cron). Ten puzzles are registered
  (``POST /v1/puzzles``) and analysed; ``fairgrid simulate`` sends 30 honest and 6
  cheating solves of each (``--seed`` 11..20; the bodies are deterministic) and its output
  lines are kept. Once every submission has a score, the snapshot records every
  submission document (moves, score, evidence), ``GET /v1/flags`` (all pages, 10 a page)
  and its Benjamini-Hochberg answer (``?tournament=simulated&fdr=0.05``), every player's
  document, every puzzle document, and the deterministic ``/metrics`` series (flags and
  scores counted, the anomaly histogram, job rows, the live metric correlations, puzzles
  by status). Then the nightly job runs (``POST /v1/jobs/nightly``, polled until
  ``success``; its document and ``rows``), and once every submission is re-scored
  (the signal: its score's ``scored_at`` is later than the run's ``finished_at``: the job
  records ``finished_at`` and only then queues every submission committed within
  ``nightly.rescore_days`` for re-scoring, each write stamping ``scored_at``) all of it is
  recorded again. Ten puzzles of 36 solves make the job do everything it can: the fit,
  the recalibration (it needs ten puzzles with ``min_solves`` solves; the correlations),
  consensus orders on every puzzle, and a learnt per-level null (it needs 100 unflagged
  solves of a level), all of which the re-scored evidence then uses. The daemon is
  stopped with SIGTERM and its exit status recorded.

Canonical form: wall-clock values are dropped (every ``*_at`` timestamp but the solves'
``started_at``, which echoes the webhook body; the job's ``started_at``; ``seconds`` of
jobs; run ids; flag ids, which number flags in the order scoring batches happened to write
them; pagination cursors, which hold both; the random run token in the ids of
``fairgrid simulate``'s solves, ``PREFIX-RUN-NNNNN``); floats are rounded to 9 significant digits;
the flag list (newest first by creation time, which depends on how the scoring batches
formed) becomes a map keyed by ``portal/submission_id``, and the Benjamini-Hochberg
rejections (ordered by p-value, ties arbitrary) are sorted by submission; each score's
``log_match`` block is dropped (a log is compared with the solves of its puzzle committed
before it, and ``simulate``'s concurrent deliveries commit in no fixed order: two runs of
the same code differ there in some 200 paths, and nowhere else). Ports and paths appear
in no document. Written with sorted keys.

Run-to-run variation: none beyond the above. Two runs of the same code give identical
snapshots, also a third run with two CPU-bound processes competing for the
two cores (3.5x slower, so scoring batches and the nightly job's DuckDB threads were
timed quite differently). The candidates checked: which solves share a scoring batch
(each solve is scored on its own inputs, so batches change nothing but flag ids and
creation times, dropped above); DuckDB's parallel aggregation in the nightly job (its
medians and ranks are exact, and the float sums it does differ at most in the last bits,
far below 9 significant digits); the fit's input order (read without ORDER BY; the same
holds); the per-level null's reservoir sample (seeded, and smaller than its 4,000 rows, so
it takes every eligible solve). No other value needed coarser rounding or exclusion; the
``log_match`` block is left to its tests (tests/analytics/test_log_match.py and the
scoring tests), since fixing the commit order would mean sending the solves one by one.

``--compare A B`` prints every differing path (the first 50) and exits 1 when the
snapshots differ, 0 when they are identical.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime
from pathlib import Path

# tests/fixtures.py's puzzles (bench scripts do not import the tests)
EASY = "003020600900305001001806400008102900700000008006708200002609500800203009005010300"
MEDIUM = "000000907000420180000705026100904000050000040000507009920108000034059000507000000"

CLI_PUZZLES = {"easy": EASY, "medium": MEDIUM}

# The daemon's puzzles: EASY, MEDIUM and eight more (unique, level 2 by the shipped
# calibration, fitted levels 1-3 by the nightly job; made once with
# `fairgrid generate --unique --count 8 --seed 2026 --level 2` and copied here, so the
# inputs never depend on the code under test). The nightly job recalibrates only with ten
# puzzles of min_solves solves, and learns per-level nulls only from 100 unflagged solves
# of a level: 10 puzzles x 36 solves reach both.
DAEMON_PUZZLES = [
    ("easy", EASY),
    ("medium", MEDIUM),
    ("x1", "7..6...535.9.2.6.4......1.2218.6.......81.5.......3.21.8..562...5.2.9...9..48.3.."),
    ("x2", "3..19...776....9..8...6..431.6...8....2...7.....67...5.4..195.6..3...179...35.4.2"),
    ("x3", ".......85..928.6...8.64..1..5...2....724...5...6..38.2....3452..345..76...1....34"),
    ("x4", "348..79.6......43...6..3...287..964..63..219.........7....28.19...7......79..63.2"),
    ("x5", "69..5.72..47.9.....5374.169.....1..8...4..97....92.........4..7.76..52....2.7..51"),
    ("x6", "..2..9...59....1728.....956.6.4..21812897.......18...7....95.24...6.75....9......"),
    ("x7", ".3.69...114.328.9.7......2.3..91..84...5....34.8...9..2..1.983.........2..3.6.14."),
    ("x8", "5.....64.8..7....9.2...6.....26..8.419..4....48.27.9.1.....7186...534....79.6..5."),
]
PLAYERS, CHEATERS = 30, 6     # per puzzle; `simulate --seed` is 11, 12, ... in this order
SIM_SEED = 11

PORTAL = "demo"
SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
ORGANISER = "same-outputs-organiser"
ADMIN = "same-outputs-admin"
ANALYSIS_SEED = 7
MIN_SOLVES = 6

SIG_DIGITS = 9

# wall-clock keys dropped wherever they appear (besides every *_at but started_at)
DROP_KEYS = {"seconds", "run_id", "next_cursor"}
METRIC_SERIES = ("fairgrid_job_rows", "fairgrid_metric_human_correlation",
                 "fairgrid_flags_total", "fairgrid_submissions_scored_total",
                 "fairgrid_score_anomaly_bucket", "fairgrid_score_anomaly_count",
                 "fairgrid_score_anomaly_sum", "fairgrid_puzzles")

T0 = time.monotonic()


def say(msg: str) -> None:
    print(f"[same_outputs {time.monotonic() - T0:6.1f}s] {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------ the CLI

def cli(python: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([python, "-m", "fairgrid.daemon.cli", *args], capture_output=True,
                          text=True)
    if check and proc.returncode != 0:
        raise SystemExit(f"fairgrid {' '.join(args)} exited {proc.returncode}:\n"
                         f"{proc.stderr[-3000:]}")
    return proc


def cli_outputs(python: str) -> dict:
    out = {}
    for name, puzzle in CLI_PUZZLES.items():
        say(f"cli: {name}: predict-order, rate, solve")
        runs = {
            "predict_order": ["predict-order", puzzle, "--json", "--runs", "20", "--seed", "3",
                              "--jobs", "2"],
            "rate": ["rate", puzzle, "--json", "--seed", "1"],
            "solve": ["solve", puzzle, "--json", "--seed", "2"],
        }
        out[name] = {}
        for key, args in runs.items():
            proc = cli(python, *args, check=False)
            out[name][key] = {"exit": proc.returncode,
                              "output": [json.loads(line) for line in proc.stdout.splitlines()
                                         if line.strip()]}
            if proc.returncode not in (0, 1):
                raise SystemExit(f"fairgrid {' '.join(args)} exited {proc.returncode}:\n"
                                 f"{proc.stderr[-3000:]}")
    return out


# ------------------------------------------------------------------------------ the daemon

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(path: Path, port: int, db: Path) -> None:
    path.write_text(
        f'[server]\nhost = "127.0.0.1"\nport = {port}\nshutdown_timeout_s = 20.0\n'
        f'[storage]\npath = "{db}"\n'
        f'[analysis]\nworkers = 2\norder_runs = 20\norder_budget_s = 2.0\n'
        f'seed = {ANALYSIS_SEED}\n'
        f'[nightly]\ncron = ""\nmin_solves = {MIN_SOLVES}\n'
        f'[portals.{PORTAL}]\nsecrets = ["{SECRET}"]\n'
        f'[auth]\norganiser_tokens = ["{ORGANISER}"]\nadmin_tokens = ["{ADMIN}"]\n')


class Api:
    def __init__(self, base: str):
        self.base = base

    def call(self, method: str, path: str, body=None, token: str = ADMIN,
             ok=(200, 201, 202)) -> tuple[int, object]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Authorization": f"Bearer {token}",
                                              "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        doc = json.loads(raw) if raw else None
        if ok and status not in ok:
            raise RuntimeError(f"{method} {path} answered {status}: {doc}")
        return status, doc

    def get(self, path: str, token: str = ORGANISER):
        return self.call("GET", path, token=token)[1]

    def text(self, path: str) -> str:
        with urllib.request.urlopen(self.base + path, timeout=60) as resp:
            return resp.read().decode()


PATIENCE = 1.0  # --patience: every wait's timeout times this (a machine under other load)


def wait_for(what: str, check, timeout: float, proc: subprocess.Popen, log: Path,
             interval: float = 0.25):
    """Poll ``check()`` until it returns something truthy; fail on timeout or a dead daemon."""
    timeout *= PATIENCE
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"the daemon exited ({proc.returncode}) while waiting for {what}:\n"
                             f"{log.read_text()[-3000:]}")
        try:
            got = check()
        except (OSError, urllib.error.URLError, RuntimeError):
            got = None
        if got:
            return got
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {timeout:.0f} s waiting for {what}; daemon log:\n"
                             f"{log.read_text()[-3000:]}")
        time.sleep(interval)


def q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def all_flags(api: Api) -> list:
    flags, cursor = [], None
    while True:
        params = {"limit": 10, **({"cursor": cursor} if cursor else {})}
        page = api.get("/v1/flags?" + urllib.parse.urlencode(params))
        flags += page["flags"]
        cursor = page["next_cursor"]
        if not cursor:
            return flags


def record(api: Api, subs: list[tuple[str, str, str]], puzzle_ids: list[str]) -> dict:
    """Every document that depends on the scores: submissions, flags, players, puzzles."""
    docs = {"submissions": {}, "players": {}, "puzzles": {}}
    for portal, sid, player in subs:
        docs["submissions"][f"{portal}/{sid}"] = api.get(f"/v1/submissions/{q(portal)}/{q(sid)}")
        docs["players"][f"{portal}/{player}"] = api.get(f"/v1/players/{q(portal)}/{q(player)}")
    for pid in puzzle_ids:
        docs["puzzles"][pid] = api.get(f"/v1/puzzles/{q(pid)}")
    docs["flags"] = all_flags(api)
    docs["flags_bh"] = api.get("/v1/flags?" + urllib.parse.urlencode(
        {"tournament": "simulated", "fdr": 0.05, "limit": 1}))["bh"]
    return docs


def metrics(api: Api) -> dict:
    out = {}
    for line in api.text("/metrics").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        series, _, value = line.rpartition(" ")
        if series.split("{", 1)[0] in METRIC_SERIES:
            out[series] = float(value)
    return out


def daemon_outputs(python: str, tmp: Path) -> dict:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cfg, db, log = tmp / "fairgrid.toml", tmp / "fairgrid.duckdb", tmp / "daemon.log"
    write_config(cfg, port, db)
    api = Api(base)
    out: dict = {}
    say("daemon: starting serve")
    with open(log, "w") as err:
        proc = subprocess.Popen([python, "-m", "fairgrid.daemon.cli", "serve", "--config",
                                 str(cfg)], stdout=err, stderr=subprocess.STDOUT, cwd=tmp)
    try:
        wait_for("/readyz", lambda: api.call("GET", "/readyz", ok=(200,)), 120, proc, log)
        puzzles = list(DAEMON_PUZZLES)
        say(f"daemon: registering {len(puzzles)} puzzles")
        status, doc = api.call("POST", "/v1/puzzles", {"puzzles": [
            {"id": pid, "givens": givens} for pid, givens in puzzles]})
        out["register"] = {"status": status, "answer": doc}
        ids = [pid for pid, _ in puzzles]

        def analysed():
            states = {pid: api.get(f"/v1/puzzles/{q(pid)}")["status"] for pid in ids}
            if any(s == "invalid" for s in states.values()):
                raise SystemExit(f"a puzzle is invalid: {states}")
            return all(s == "ready" for s in states.values())
        say("daemon: waiting for the puzzles' analysis")
        wait_for("puzzle analysis", analysed, 300, proc, log, interval=0.5)

        sims = [(pid, givens, PLAYERS, CHEATERS, SIM_SEED + k)
                for k, (pid, givens) in enumerate(DAEMON_PUZZLES)]
        subs = []
        out["simulate"] = {}
        for pid, givens, players, cheaters, seed in sims:
            say(f"daemon: simulate {pid}: {players} honest, {cheaters} cheating (seed {seed})")
            proc_sim = cli(python, "simulate", givens, "--secret", SECRET, "--players",
                           str(players), "--cheaters", str(cheaters), "--seed", str(seed),
                           "--puzzle-id", pid, "--prefix", pid, "--url", base)
            lines = [json.loads(line) for line in proc_sim.stdout.splitlines() if line.strip()]
            out["simulate"][pid] = lines
            for line in lines:
                if line["status"] != 202:
                    raise SystemExit(f"simulate: {line}")
                number = line["submission_id"].rsplit("-", 1)[1]
                subs.append((PORTAL, line["submission_id"], f"{pid}-player-{number}"))

        def scored_after(limit: datetime | None):
            def check():
                for portal, sid, _ in pending[:]:
                    score = api.get(f"/v1/submissions/{q(portal)}/{q(sid)}")["score"]
                    if score is None:
                        return False
                    if limit is not None and datetime.fromisoformat(score["scored_at"]) <= limit:
                        return False
                    pending.remove((portal, sid, _))
                return True
            return check

        say(f"daemon: waiting until all {len(subs)} submissions are scored")
        pending = list(subs)
        wait_for("scores", scored_after(None), 300, proc, log, interval=0.5)
        say("daemon: recording (before the nightly job)")
        out["before_nightly"] = record(api, subs, ids)
        out["before_nightly"]["metrics"] = metrics(api)

        say("daemon: nightly job")
        _, started = api.call("POST", "/v1/jobs/nightly", token=ADMIN)
        run_id = started["run_id"]

        def job_done():
            doc = api.call("GET", f"/v1/jobs/{q(run_id)}", token=ADMIN)[1]
            if doc["status"] == "running":
                return None
            return doc
        job = wait_for("the nightly job", job_done, 300, proc, log, interval=0.5)
        if job["status"] != "success":
            raise SystemExit(f"the nightly job ended {job['status']}: {job}")
        out["nightly"] = job
        say("daemon: waiting until every submission is re-scored")
        pending = list(subs)
        wait_for("re-scores", scored_after(datetime.fromisoformat(job["finished_at"])), 300,
                 proc, log, interval=0.5)
        say("daemon: recording (after the nightly job)")
        out["after_nightly"] = record(api, subs, ids)
        out["after_nightly"]["metrics"] = metrics(api)
    finally:
        say("daemon: SIGTERM")
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    out["exit"] = proc.returncode
    return out


# ------------------------------------------------------------------------------ canonical form

def _round(x: float, digits: int):
    if math.isnan(x) or math.isinf(x):
        return repr(x)
    if x == 0:
        return 0.0
    return float(f"{x:.{digits}g}")


def canonical(value):
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in DROP_KEYS or (k.endswith("_at") and k != "started_at"):
                continue
            out[k] = canonical(v)
        return out
    if isinstance(value, list):
        return [canonical(v) for v in value]
    if isinstance(value, float):
        return _round(value, SIG_DIGITS)
    return value


def _flag_map(flags: list) -> dict:
    out = {}
    for f in flags:
        f = {k: v for k, v in f.items() if k != "id"}
        out[f"{f['portal']}/{f['submission_id']}"] = f
    return out


# ``fairgrid simulate`` names its solves PREFIX-RUN-NNNNN with a random RUN per call (so
# that a second call adds solves rather than duplicates): the token says nothing of the code
_RUN_TOKEN = re.compile(r"\b([A-Za-z0-9_]+)-[0-9a-f]{6}-(\d{5})\b")


def normalise(snap: dict) -> dict:
    """Structural fixes before the canonical form: simulate's run tokens out of ids,
    flags keyed by submission, flag ids out of submission documents, BH rejections
    sorted."""
    snap = json.loads(_RUN_TOKEN.sub(r"\1-RUN-\2", json.dumps(snap)))
    d = snap.get("daemon", {})
    if d.get("nightly"):
        d["nightly"].pop("started_at", None)  # the job's: wall clock (solves' are input)
    for phase in ("before_nightly", "after_nightly"):
        docs = d.get(phase)
        if not docs:
            continue
        docs["flags"] = _flag_map(docs["flags"])
        docs["flags_bh"]["rejected"] = sorted(docs["flags_bh"]["rejected"],
                                              key=lambda r: (r["portal"], r["submission_id"]))
        for sub in docs["submissions"].values():
            flag = (sub.get("score") or {}).get("flag")
            if flag:
                flag.pop("id", None)
            # which earlier solves a log was compared with: those committed before it,
            # in the order concurrent deliveries happened to commit
            (sub.get("score") or {}).pop("log_match", None)
    return canonical(snap)


# ------------------------------------------------------------------------------ compare

def _walk(a, b, path: str, out: list) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            p = f"{path}.{k}" if path else k
            if k not in a:
                out.append(f"{p}: only in B")
            elif k not in b:
                out.append(f"{p}: only in A")
            else:
                _walk(a[k], b[k], p, out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: length {len(a)} != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            _walk(x, y, f"{path}[{i}]", out)
    elif a != b or type(a) is not type(b):
        out.append(f"{path}: {json.dumps(a)[:120]} != {json.dumps(b)[:120]}")


def compare(path_a: str, path_b: str) -> int:
    # snapshots written before the run token was taken out of ids compare all the same
    a = json.loads(_RUN_TOKEN.sub(r"\1-RUN-\2", Path(path_a).read_text()))
    b = json.loads(_RUN_TOKEN.sub(r"\1-RUN-\2", Path(path_b).read_text()))
    diffs: list[str] = []
    _walk(a, b, "", diffs)
    for line in diffs[:50]:
        print(line)
    if diffs:
        print(f"{len(diffs)} differing path(s)" + (" (first 50 shown)" if len(diffs) > 50
                                                    else ""))
        return 1
    print("identical")
    return 0


# ------------------------------------------------------------------------------ main

def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--python", default=sys.executable,
                   help="the interpreter that runs fairgrid (default: this one)")
    p.add_argument("--out", default="snapshot.json", help="where to write the snapshot")
    p.add_argument("--keep", action="store_true", help="keep the temporary directory")
    p.add_argument("--patience", type=float, default=1.0,
                   help="multiply every wait's timeout (default 1; e.g. 10 on a machine "
                   "busy with other work)")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"),
                   help="compare two snapshots instead of making one")
    args = p.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    global PATIENCE
    PATIENCE = args.patience
    tmp = Path(tempfile.mkdtemp(prefix="fairgrid-same-outputs-"))
    try:
        snap = {"cli": cli_outputs(args.python), "daemon": daemon_outputs(args.python, tmp)}
    finally:
        if args.keep:
            say(f"kept {tmp}")
        else:
            import shutil
            shutil.rmtree(tmp, ignore_errors=True)
    snap["settings"] = {"analysis_seed": ANALYSIS_SEED, "min_solves": MIN_SOLVES,
                        "puzzles": [p[0] for p in DAEMON_PUZZLES]}
    Path(args.out).write_text(json.dumps(normalise(snap), sort_keys=True, indent=1) + "\n")
    say(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
