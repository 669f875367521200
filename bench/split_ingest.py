"""Would HTTP worker processes help? A prototype measured against the real daemon.

One design takes ingestion's HTTP work off the DuckDB owner's event loop: several
processes on one port (``SO_REUSEPORT``) verify and validate webhooks and pass the
records to the process that owns the database. This script measures that shape without
building it into the daemon:

* the **owner** is the real ``create_app`` (writer, scorer, pool) plus a Unix-socket
  listener that takes pickled ``SubmissionRecord``s, queues them on the real writer and
  answers with the outcome after the commit;
* each **front** is an aiohttp process on the shared port that does what
  ``daemon/webhook.py`` does for a registered puzzle (signature, JSON, move checks,
  final grid, record), sends the record, and answers 202 once the owner replies.

It drives the prototype (``--fronts`` processes) and then the real daemon with the
same load, in the same run, and prints both rates and CPU per request. The prototype
handles only webhooks for the one registered test puzzle; it is a measurement, not a
product.

    python bench/split_ingest.py [--seconds 10] [--fronts 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ingest_load import (PUZZLES, SECRET, cpu_seconds, free_port, register_puzzle,
                         run_driver, start_fairgrid, wait_up, write_config)

OWNER = r'''
import asyncio, os, pickle, struct, sys
from aiohttp import web
from fairgrid.daemon.app import create_app
from fairgrid.daemon.web.context import CTX
from fairgrid.daemon.settings import load_settings

settings, _ = load_settings(sys.argv[1])
SOCK = sys.argv[2]
app = create_app(settings)

async def ipc(app):
    ctx = app[CTX]

    async def serve(reader, writer):
        loop = asyncio.get_running_loop()

        async def one(rid, record):
            result = await ctx.store.writer.submit(record, loop)
            if result.outcome == "accepted":
                ctx.scorer.schedule(result.sub_key)
            data = pickle.dumps((rid, result.outcome))
            writer.write(struct.pack("!I", len(data)) + data)

        while True:
            try:
                (n,) = struct.unpack("!I", await reader.readexactly(4))
                rid, record = pickle.loads(await reader.readexactly(n))
            except asyncio.IncompleteReadError:
                return
            asyncio.ensure_future(one(rid, record))

    server = await asyncio.start_unix_server(serve, path=SOCK)
    yield
    server.close()

app.cleanup_ctx.append(ipc)
web.run_app(app, host="127.0.0.1", port=settings.server_port, print=None, access_log=None)
'''

FRONT = r'''
import asyncio, pickle, socket, struct, sys, time
from datetime import datetime, timezone
from aiohttp import web
from fairgrid.daemon.ingest.puzzles import PuzzleInfo, check_puzzle
from fairgrid.daemon.ingest.signatures import Verifier
from fairgrid.daemon.store import SubmissionRecord
from fairgrid.daemon.ingest import check_and_replay, parse_body

port, sock_path, secret, givens = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
verifier = Verifier.from_portals({"demo": (secret,)})
INFO = PuzzleInfo("easy", *check_puzzle(givens))
pending, counter = {}, [0]

async def owner_replies(reader):
    while True:
        (n,) = struct.unpack("!I", await reader.readexactly(4))
        rid, outcome = pickle.loads(await reader.readexactly(n))
        pending.pop(rid).set_result(outcome)

async def start(app):
    reader, app["owner"] = await asyncio.open_unix_connection(sock_path)
    asyncio.ensure_future(owner_replies(reader))

async def handle(request):
    body = await request.read()
    _portal, webhook_id = verifier.verify(request.headers, body, time.time())
    event = parse_body(body)
    complete = check_and_replay(event, INFO.givens_array, INFO.solution_array,
                                INFO.box_size * INFO.box_size)
    record = SubmissionRecord.of(event, event.puzzle_id, webhook_id,
                                 datetime.now(timezone.utc), complete, body.decode())
    counter[0] += 1
    fut = asyncio.get_running_loop().create_future()
    pending[counter[0]] = fut
    data = pickle.dumps((counter[0], record), protocol=5)
    request.app["owner"].write(struct.pack("!I", len(data)) + data)
    outcome = await fut
    return web.json_response({"status": outcome}, status=202 if outcome == "accepted" else 200)

app = web.Application(client_max_size=1 << 20)
app.on_startup.append(start)
app.router.add_post("/v1/webhooks/solves", handle)
app.router.add_get("/healthz", lambda r: web.json_response({"status": "alive"}))
sock = socket.socket()
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
sock.bind(("127.0.0.1", port))
sock.listen(1024)
web.run_app(app, sock=sock, print=None, access_log=None)
'''


def stop(procs) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.wait(60)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--fronts", type=int, default=2)
    ap.add_argument("--connections", type=int, default=64)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="fairgrid-split-"))
    results = {}

    owner_port, public, sock = free_port(), free_port(), str(tmp / "owner.sock")
    owner = subprocess.Popen([sys.executable, "-c", OWNER,
                              str(write_config(tmp, "split", owner_port)), sock])
    procs = [owner]
    try:
        wait_up(f"http://127.0.0.1:{owner_port}/healthz", owner)
        register_puzzle(f"http://127.0.0.1:{owner_port}")
        for _ in range(args.fronts):
            procs.append(subprocess.Popen([sys.executable, "-c", FRONT, str(public), sock,
                                           SECRET, PUZZLES["easy"]]))
        for front in procs[1:]:
            wait_up(f"http://127.0.0.1:{public}/healthz", front)
        time.sleep(1)
        before = {p.pid: cpu_seconds(p.pid) for p in procs}
        r = run_driver(f"http://127.0.0.1:{public}/v1/webhooks/solves", "split",
                       args.seconds, args.connections, None, owner.pid)
        accepted = max(1, r["statuses"].get("202", 0))
        fronts_us = sum(cpu_seconds(p.pid) - before[p.pid] for p in procs[1:]) * 1e6 / accepted
        results[f"{args.fronts} fronts + owner"] = (r, r["server_cpu_us"] + fronts_us)
    finally:
        stop(procs)

    port = free_port()
    daemon, base = start_fairgrid(write_config(tmp, "single", port), port)
    try:
        r = run_driver(base + "/v1/webhooks/solves", "single",
                       args.seconds, args.connections, None, daemon.pid)
        results["one process (fairgrid serve)"] = (r, r["server_cpu_us"])
    finally:
        stop([daemon])

    print(f"{'shape':<32} {'accepted/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'CPU us/req':>10}")
    for name, (r, cpu) in results.items():
        print(f"{name:<32} {r['accepted_per_s']:>10.0f} {r['p50_ms']:>8.1f} "
              f"{r['p99_ms']:>8.1f} {cpu:>10.0f}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
