"""Webhook ingestion under load: fairgrid against a bare aiohttp endpoint, same run.

1. Starts ``fairgrid serve`` on a fresh DuckDB file (127.0.0.1, a free port) and
   registers the test puzzle.
2. From a separate process, drives signed webhooks (~60 moves each: 49 placements and 11
   pencil marks) over loopback with 64 concurrent connections for a bounded time, and
   prints sustained accepted submissions/s and p50/p99 ack latency.
3. The same load against a bare aiohttp endpoint that parses the JSON and answers 202
   without storing: the ceiling of this machine. It runs on uvloop, as fairgrid does.
   The two take turns (``--rounds``, with the daemon stopped by SIGSTOP while the bare
   endpoint runs, so its scoring backlog takes no CPU from it): this machine's speed
   drifts by tens of per cent within minutes, so each ratio compares a pair measured
   back to back, and the median ratio is the result.
4. fairgrid again at half its median sustained rate (paced), for the p99 ack latency
   there; the time the scoring backlog takes to drain after each load; and the bare
   endpoint on asyncio's own loop, for reference.

Targets: >= 50 % of the bare endpoint's rate; p99 ack <= 100 ms at half the sustained rate.

    python bench/ingest_load.py [--seconds 10] [--connections 64] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from _common import PUZZLES, Phases, machine

SECRET = "whsec_" + "YmVuY2htYXJrIHNlY3JldCBrZXkgZm9yIGxvYWQ="
ADMIN = "bench-admin"
SOLUTION = "483921657967345821251876493548132976729564138136798245372689514814253769695417382"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {proc.stderr.read() if proc.stderr else ''}")
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{url} did not come up")


def make_bodies(n: int, prefix: str) -> list[tuple[bytes, dict]]:
    """n signed webhooks with unique submission ids (Standard Webhooks, like a portal)."""
    from standardwebhooks import Webhook

    easy = PUZZLES["easy"]
    empties = [i for i, ch in enumerate(easy) if ch == "0"]
    moves = [{"t_ms": 3000 * (k + 1), "cell": c, "digit": int(SOLUTION[c])}
             for k, c in enumerate(empties)]
    notes = [{"t_ms": 3000 * (k + 1) + 1, "cell": c, "digit": 1, "kind": "note"}
             for k, c in enumerate(empties[:11])]
    log = sorted(moves + notes, key=lambda m: m["t_ms"])
    hook = Webhook(SECRET)
    now = datetime.now(timezone.utc)
    out = []
    for i in range(n):
        body = json.dumps({"type": "solve.completed", "portal": "demo",
                           "submission_id": f"{prefix}-{i}", "tournament_id": "bench",
                           "player_id": f"p-{i % 500}", "puzzle": {"id": "easy"},
                           "started_at": "2026-11-21T10:00:00Z", "moves": log})
        msg_id = f"{prefix}-msg-{i}"
        sig = hook.sign(msg_id, now, body)
        out.append((body.encode(), {"webhook-id": msg_id,
                                    "webhook-timestamp": str(int(now.timestamp())),
                                    "webhook-signature": sig,
                                    "content-type": "application/json"}))
    return out


def request_bytes(host: str, path: str, body: bytes, headers: dict) -> bytes:
    """One complete HTTP/1.1 request, built before the clock starts."""
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}", f"Content-Length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def drive(url: str, bodies, seconds: float, connections: int, rate: float | None):
    """Send bodies for ``seconds`` over ``connections`` keep-alive connections (paced to
    ``rate``/s if set); returns accepted/s and ack latency percentiles.

    A lean client on raw asyncio streams with every request pre-built: an aiohttp
    client costs about as much CPU per request as the server it measures, and on a
    2-core machine that CPU comes out of the server's share (wrk, a C client, drives
    the bare endpoint within ~5 % of this one: docs/benchmarks.md)."""
    from urllib.parse import urlsplit
    parts = urlsplit(url)
    host, port, path = parts.hostname, parts.port, parts.path
    requests = [request_bytes(f"{host}:{port}", path, body, headers) for body, headers in bodies]
    latencies, statuses = [], {}
    start = time.monotonic()
    stop = start + seconds
    next_index = 0
    interval = connections / rate if rate else 0.0

    async def worker(k: int):
        nonlocal next_index
        reader, writer = await asyncio.open_connection(host, port)
        due = start + k * (interval / connections if rate else 0)
        try:
            while time.monotonic() < stop and next_index < len(requests):
                if rate:
                    await asyncio.sleep(max(0.0, due - time.monotonic()))
                    due += interval
                i = next_index
                next_index += 1
                t = time.monotonic()
                try:
                    writer.write(requests[i])
                    head = await reader.readuntil(b"\r\n\r\n")
                    status = int(head[9:12])
                    length = 0
                    for line in head.split(b"\r\n"):
                        if line[:15].lower() == b"content-length:":
                            length = int(line[15:])
                    if length:
                        await reader.readexactly(length)
                except (ConnectionError, asyncio.IncompleteReadError):
                    status = "connection closed"  # counted; a new connection goes on
                    writer.close()
                    reader, writer = await asyncio.open_connection(host, port)
                latencies.append(time.monotonic() - t)
                statuses[status] = statuses.get(status, 0) + 1
        finally:
            writer.close()

    await asyncio.gather(*(worker(k) for k in range(connections)))
    elapsed = time.monotonic() - start
    lat = np.array(latencies) * 1000
    return {"elapsed": elapsed, "statuses": statuses,
            "accepted_per_s": statuses.get(202, 0) / elapsed,
            "p50_ms": float(np.percentile(lat, 50)), "p99_ms": float(np.percentile(lat, 99))}


def descendants(root: int) -> list[int]:
    """``root`` and every process below it (the daemon's pool), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def cpu_seconds(root: int) -> float:
    """CPU time (user + system) of a process and all its descendants, from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in descendants(root):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds of each thread of ``pid`` by its OS name (the main thread is the event
    loop; the daemon names its writer thread "fg-writer"; the rest are DuckDB's and
    asyncio's helper threads)."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        name = "event loop" if int(tid) == pid else stat.split("(", 1)[1].rsplit(")", 1)[0]
        if name not in ("event loop", "fg-writer"):
            name = "other threads"
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def run_driver(url: str, prefix: str, seconds: float, connections: int, rate: float | None,
               server_pid: int):
    """The load in a separate process (so client and server do not share a core's GIL);
    also the server's CPU time per accepted request while the load ran."""
    cmd = [sys.executable, __file__, "--drive", url, "--prefix", prefix, "--seconds",
           str(seconds), "--connections", str(connections)]
    if rate:
        cmd += ["--rate", str(rate)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    # the driver builds its requests first (seconds of CPU): count from its "go" line
    ready = proc.stdout.readline()
    if ready.strip() != "go":
        raise SystemExit(f"driver failed: {ready}")
    before, threads = cpu_seconds(server_pid), thread_cpu(server_pid)
    out, _ = proc.communicate()
    if proc.returncode:
        raise SystemExit("driver failed")
    result = json.loads(out.strip().splitlines()[-1])
    accepted = max(1, result["statuses"].get("202", 0))
    total = cpu_seconds(server_pid) - before
    result["server_cpu_us"] = total * 1e6 / accepted
    split = {k: (v - threads.get(k, 0.0)) * 1e6 / accepted
             for k, v in thread_cpu(server_pid).items()}
    split["child processes"] = result["server_cpu_us"] - sum(split.values())
    result["cpu_split_us"] = split
    result["client_cpu_us"] = result["client_cpu_s"] * 1e6 / max(1, sum(
        n for status, n in result["statuses"].items()))
    return result


def cpu_bound(result: dict, cores: int) -> float:
    """The highest accepted/s this machine's cores could give at the CPU per request that
    ``result`` measured, were they never idle: the server's threads plus the load client
    (both share the cores). The pool is left out: it runs at idle priority, on CPU that
    nobody else wanted."""
    per_request = (result["server_cpu_us"] - result["cpu_split_us"]["child processes"]
                   + result["client_cpu_us"])
    return cores * 1e6 / per_request


def write_config(tmp: Path, name: str, port: int) -> Path:
    """A daemon config in ``tmp``: database ``name``.duckdb, one pool process, the bench's
    portal secret and admin token."""
    cfg = tmp / f"{name}.toml"
    cfg.write_text(f'[server]\nport = {port}\n[storage]\npath = "{tmp / name}.duckdb"\n'
                   f'[analysis]\nworkers = 1\n[portals.demo]\nsecrets = ["{SECRET}"]\n'
                   f'[auth]\nadmin_tokens = ["{ADMIN}"]\n')
    return cfg


def start_fairgrid(cfg: Path, port: int) -> tuple[subprocess.Popen, str]:
    """``fairgrid serve --config cfg`` (listening on ``port``), up and with the test puzzle
    registered and analysed: (process, base URL). Its stderr goes to a log beside the
    config, not to a pipe nobody reads (a full pipe would stall the daemon)."""
    log = cfg.with_suffix(".log")
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "fairgrid.daemon.cli", "serve",
                                 "--config", str(cfg)], stderr=out)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_up(base + "/healthz", proc)
        register_puzzle(base)
    except BaseException as exc:
        proc.terminate()
        proc.wait(60)
        raise SystemExit(f"{exc}\n{log.read_text()}") from None
    return proc, base


def register_puzzle(base: str) -> None:
    """Register the test puzzle and let its analysis finish: measure ingestion alone."""
    req = urllib.request.Request(base + "/v1/puzzles", data=json.dumps(
        {"id": "easy", "givens": PUZZLES["easy"]}).encode(), method="POST",
        headers={"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=30)
    time.sleep(3)


def gauge(base: str, name: str) -> float:
    """One unlabelled sample from the daemon's /metrics."""
    with urllib.request.urlopen(base + "/metrics", timeout=30) as resp:
        for line in resp.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    raise SystemExit(f"{name} is not exported")


def drain_time(base: str, timeout: float = 600, progress=None) -> tuple[float, float]:
    """Seconds until the scoring backlog is empty once the load stops (scoring yields the
    CPU to ingestion, so it falls behind during the load), and the scoring rate meanwhile.
    ``progress(backlog)`` is told the backlog at every poll."""
    start = time.monotonic()
    scored0 = gauge(base, "fairgrid_submissions_scored_total")
    while (backlog := gauge(base, "fairgrid_scoring_backlog")) > 0:
        if progress:
            progress(backlog)
        if time.monotonic() - start > timeout:
            raise SystemExit("the scoring backlog did not drain")
        time.sleep(0.5)
    elapsed = time.monotonic() - start
    return elapsed, (gauge(base, "fairgrid_submissions_scored_total") - scored0) / max(elapsed, 1e-9)


BARE_APP = '''
import sys
from aiohttp import web
async def handle(request):
    await request.json()
    return web.json_response({"status": "accepted"}, status=202)
app = web.Application(client_max_size=1 << 20)
app.router.add_post("/v1/webhooks/solves", handle)
app.router.add_get("/healthz", lambda r: web.json_response({"status": "alive"}))
loop = None
if sys.argv[2] == "uvloop":
    import uvloop
    loop = uvloop.new_event_loop()
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None,
            loop=loop)
'''


class paused:
    """Stop a process tree (SIGSTOP) for the length of a ``with`` block: the daemon's
    scoring backlog must not take CPU from the bare endpoint while that is measured."""

    def __init__(self, root: int):
        self.pids = descendants(root)

    def __enter__(self):
        for pid in self.pids:
            os.kill(pid, signal.SIGSTOP)

    def __exit__(self, *exc):
        for pid in self.pids:
            os.kill(pid, signal.SIGCONT)


def start_bare(loop: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", BARE_APP, str(port), loop],
                            stderr=subprocess.PIPE, text=True)
    wait_up(f"http://127.0.0.1:{port}/healthz", proc)
    return proc, f"http://127.0.0.1:{port}/v1/webhooks/solves"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternations of the bare endpoint and fairgrid at full rate")
    ap.add_argument("--drive")
    ap.add_argument("--prefix", default="s")
    ap.add_argument("--rate", type=float)
    args = ap.parse_args()
    if args.drive:
        expected = int((args.rate or 20_000) * args.seconds * 1.2) + 1000
        bodies = make_bodies(min(expected, 200_000), args.prefix)
        print("go", flush=True)
        cpu = time.process_time()
        # on uvloop: the client shares this machine's two cores with the server it
        # measures, and uvloop's streams cost it less CPU per request than asyncio's
        import uvloop
        result = uvloop.run(drive(args.drive, bodies, args.seconds, args.connections,
                                  args.rate))
        result["client_cpu_s"] = time.process_time() - cpu
        print(json.dumps(result))
        return 0

    print(f"# machine: {machine()}")
    phases = Phases(2 * args.rounds + 4)  # the run takes minutes
    phase = phases.start

    def done(result: dict | None = None) -> None:
        phases.done(None if result is None
                    else f"last: {result['accepted_per_s']:,.0f} accepted/s")

    tmp = Path(tempfile.mkdtemp(prefix="fairgrid-bench-"))
    port = free_port()
    daemon, base = start_fairgrid(write_config(tmp, "bench", port), port)
    bare, bare_url = start_bare("uvloop")
    results, pairs = {}, []
    try:
        # this machine's speed drifts by tens of per cent within minutes: the bare endpoint
        # and fairgrid take turns, and each ratio compares a pair measured back to back
        for k in range(1, args.rounds + 1):
            phase(f"bare endpoint #{k}")
            with paused(daemon.pid):
                results[f"bare endpoint #{k}"] = run_driver(
                    bare_url, f"bare{k}", args.seconds, args.connections, None, bare.pid)
            done(results[f"bare endpoint #{k}"])
            phase(f"fairgrid #{k}")
            results[f"fairgrid #{k}"] = run_driver(
                base + "/v1/webhooks/solves", f"full{k}", args.seconds, args.connections,
                None, daemon.pid)
            done(results[f"fairgrid #{k}"])
            pairs.append(results[f"fairgrid #{k}"]["accepted_per_s"]
                         / results[f"bare endpoint #{k}"]["accepted_per_s"])
        backlog = {"after the full-rate rounds": gauge(base, "fairgrid_scoring_backlog")}
        draining = lambda n: phase(f"scoring backlog draining: {n:,.0f}")  # noqa: E731
        drain_full = drain_time(base, progress=draining)
        done()
        full = [results[f"fairgrid #{k}"]["accepted_per_s"] for k in range(1, args.rounds + 1)]
        half = float(np.median(full)) / 2
        phase(f"fairgrid at half rate ({half:,.0f}/s)")
        results["fairgrid @ half rate"] = run_driver(base + "/v1/webhooks/solves", "half",
                                                     args.seconds, args.connections, half,
                                                     daemon.pid)
        done(results["fairgrid @ half rate"])
        backlog["after the half-rate phase"] = gauge(base, "fairgrid_scoring_backlog")
        drain_half = drain_time(base, progress=draining)
        done()
    finally:
        bare.terminate()
        bare.wait(60)
        daemon.terminate()
        daemon.wait(60)
    # the bare endpoint on asyncio's own loop, for reference
    asyncio_bare, url = start_bare("asyncio")
    try:
        phase("bare endpoint on asyncio's loop")
        results["bare endpoint, asyncio"] = run_driver(url, "bare", args.seconds,
                                                       args.connections, None, asyncio_bare.pid)
        done(results["bare endpoint, asyncio"])
    finally:
        asyncio_bare.terminate()
        asyncio_bare.wait(60)
        phases.close()
    print(f"{'target':<24} {'accepted/s':>10} {'p50 ms':>8} {'p99 ms':>8} "
          f"{'server CPU us/req':>17} {'client CPU us/req':>17}  statuses")
    for name, r in results.items():
        print(f"{name:<24} {r['accepted_per_s']:>10.0f} {r['p50_ms']:>8.1f} {r['p99_ms']:>8.1f} "
              f"{r['server_cpu_us']:>17.0f} {r['client_cpu_us']:>17.0f}  {r['statuses']}")
    print(f"fairgrid / bare endpoint, round by round: {', '.join(f'{p:.2f}' for p in pairs)}; "
          f"median {np.median(pairs):.2f} (target >= 0.5)")
    print(f"p99 at half rate ({half:.0f}/s): {results['fairgrid @ half rate']['p99_ms']:.1f} ms "
          f"(target <= 100)")
    for k in range(1, args.rounds + 1):
        print(f"server CPU per accepted request in round {k}, by thread (us): " + ", ".join(
            f"{name}: {us:.0f}" for name, us in results[f"fairgrid #{k}"]["cpu_split_us"].items()))
    cores = len(os.sched_getaffinity(0))
    bounds = [cpu_bound(results[f"fairgrid #{k}"], cores) for k in range(1, args.rounds + 1)]
    print(f"CPU bound on {cores} cores (server threads + client per request, cores never "
          "idle), round by round: " + ", ".join(
              f"{b:.0f}/s = {b / results[f'bare endpoint #{k}']['accepted_per_s']:.2f} of the "
              "bare endpoint" for k, b in enumerate(bounds, 1)))
    for (when, n), (seconds, rate) in zip(backlog.items(), (drain_full, drain_half)):
        print(f"scoring backlog {when}: {n:.0f} submissions, scored {seconds:.1f} s after "
              f"the load stopped ({rate:.0f} submissions scored/s while idle)")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
