"""Bytes of DuckDB file per stored solve, with its score and evidence.

    python bench/storage_size.py [--solves 400]

Runs the real app on a fresh DuckDB file, sends ``--solves`` signed webhooks of simulated
honest solves of the medium test puzzle (49 placements each), waits until every one is
scored, closes the file (DuckDB checkpoints it), and prints the file's size per solve, with the share of the raw
bodies, the move rows and the scores' evidence (DuckDB's own storage info).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import PUZZLES, machine  # noqa: E402

ADMIN = "bench-admin"
SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


async def run(n: int, folder: Path) -> dict:
    import json

    from aiohttp.test_utils import TestClient, TestServer

    from fairgrid.analytics.simulate import simulate
    from fairgrid.daemon.ingest.signatures import sign
    from fairgrid.daemon.settings import Settings
    from fairgrid.daemon.app import create_app
    from fairgrid.solvers import parse
    from fairgrid.solvers.propagation import solution_of

    text = PUZZLES["medium"]
    puzzle = parse(text)
    solution = solution_of(puzzle)
    path = folder / "size.duckdb"
    settings = Settings(storage_path=str(path), admin_tokens=(ADMIN,),
                        portals={"demo": (SECRET,)})
    auth = {"Authorization": f"Bearer {ADMIN}"}
    rng = np.random.default_rng(0)
    async with TestClient(TestServer(create_app(settings))) as client:
        for k in range(n):
            sim = simulate(puzzle, solution, "honest", rng=rng, expected_log_s=6.5, sd_log=0.4)
            body = json.dumps({"type": "solve.completed", "portal": "demo",
                               "submission_id": f"s{k}", "tournament_id": "bench",
                               "player_id": f"p{k % 50}", "started_at": "2026-11-21T10:00:00Z",
                               "puzzle": {"id": "medium", "givens": text},
                               "moves": sim.moves()}).encode()
            resp = await client.post("/v1/webhooks/solves", data=body,
                                     headers=sign(SECRET, f"m{k}", int(time.time()), body))
            assert resp.status == 202, await resp.text()
        while True:
            text_ = await (await client.get("/metrics")).text()
            line = [x for x in text_.splitlines() if x.startswith("fairgrid_scoring_backlog ")]
            ready = (await (await client.get("/v1/puzzles/medium", headers=auth)).json())
            if ready["status"] == "ready" and line and float(line[0].split()[1]) == 0:
                break
            await asyncio.sleep(0.5)
        store = client.server.app[__import__("fairgrid.daemon.web.context",
                                             fromlist=["CTX"]).CTX].store

        def sizes(cur):
            out = {}
            for table, col in (("submissions", "raw"), ("scores", "evidence")):
                out[f"{table}.{col} chars"] = cur.execute(
                    f"SELECT sum(length({col})) FROM {table}").fetchone()[0]
            out["moves rows"] = cur.execute("SELECT count(*) FROM moves").fetchone()[0]
            out["prints bytes"] = cur.execute(
                "SELECT sum(octet_length(timing_print)) FROM scores").fetchone()[0]
            # honest players' solves of one puzzle, each compared with the others' logs
            out["repeats named"] = cur.execute(
                "SELECT count(*) FROM scores WHERE json_extract_string(evidence, "
                "'$.log_match.submission_id') IS NOT NULL").fetchone()[0]
            out["least log_match p"] = cur.execute(
                "SELECT min(CAST(json_extract(evidence, '$.log_match.p') AS DOUBLE)) "
                "FROM scores").fetchone()[0]
            out["scored"] = cur.execute("SELECT count(*) FROM scores").fetchone()[0]
            return out
        info = store.read(sizes)
    # closed: DuckDB checkpointed the WAL into the file
    wal = Path(str(path) + ".wal")
    info["file bytes"] = path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    return info


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--solves", type=int, default=400)
    args = ap.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        empty = asyncio.run(run(1, Path(tmp)))
    with tempfile.TemporaryDirectory() as tmp:
        info = asyncio.run(run(args.solves, Path(tmp)))
    per = (info["file bytes"] - empty["file bytes"]) / (args.solves - 1)
    print(f"{args.solves} solves scored: file {info['file bytes'] / 1e6:.1f} MB "
          f"(one solve: {empty['file bytes'] / 1e6:.1f} MB)")
    print(f"per solve: {per / 1024:.1f} KiB of file; uncompressed, the raw body is "
          f"{info['submissions.raw chars'] / args.solves / 1024:.1f} KiB and the evidence "
          f"{info['scores.evidence chars'] / args.solves / 1024:.1f} KiB, the timing print "
          f"{info['prints bytes'] / args.solves:.0f} bytes")
    print(f"honest logs of one puzzle (50 players) named as repeating another's: "
          f"{info['repeats named']}; least p of a log's closest other: "
          f"{info['least log_match p']:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
