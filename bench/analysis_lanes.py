"""A small puzzle registered right behind a large one: how long until it is ready.

    python bench/analysis_lanes.py [--workers 2] [--wait-large]

Runs the real daemon app on a temporary DuckDB file, in this process, with the default
analysis settings (100 SA runs, 60 s budget) and ``--workers`` pool processes:

1. reference: the 9x9 "medium" test puzzle registered alone, time until ``ready``;
2. a fresh file: a sparse 16x16 puzzle registered, then the same 9x9 at once; time until
   the 9x9 is ``ready``, and whether the 16x16 is still being analysed then.

Prints both times and their ratio. Target: the 9x9 behind the 16x16 is ready within 10 s
on two cores. ``--wait-large`` also waits for the 16x16 (minutes) and prints its time.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import PUZZLES, machine  # noqa: E402

# 105 givens, unique; the large lane's test puzzle
SIXTEEN = (".9725.8..4CFG1DBF.6.B1D.8.3529.....GF..47.....8..3....72..........E17A...9.D3F....."
           "3D..9E...CA27.A.C.......69.GD.BG9......A......E...2.6.7......3.5.......E.6..CC2F.."
           "....8.37GA....7.4..F62...B1.......B3..4.D.....A4635C.7.........G...1.8.F7.2E81.2."
           "...A.G5..4")
ADMIN = "bench-admin"


async def _status(client, pid: str) -> dict:
    resp = await client.get(f"/v1/puzzles/{pid}", headers={"Authorization": f"Bearer {ADMIN}"})
    return await resp.json()


async def _wait(client, pid: str, started: float, label: str, timeout: float) -> float:
    last = 0.0
    while True:
        doc = await _status(client, pid)
        now = time.perf_counter() - started
        if doc["status"] != "pending":
            return now
        if now > timeout:
            raise SystemExit(f"{label}: still pending after {timeout:.0f} s")
        if now - last >= 10:
            print(f"  {label}: pending after {now:.0f} s", file=sys.stderr, flush=True)
            last = now
        await asyncio.sleep(0.1)


async def _run(puzzles: list[tuple[str, str]], workers: int, wait_for: list[str],
               timeout: float) -> dict:
    from aiohttp.test_utils import TestClient, TestServer

    from fairgrid.daemon.settings import Settings
    from fairgrid.daemon.app import create_app

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(storage_path=str(Path(tmp) / "bench.duckdb"),
                            admin_tokens=(ADMIN,), analysis_workers=workers)
        async with TestClient(TestServer(create_app(settings))) as client:
            started = time.perf_counter()
            for pid, givens in puzzles:
                resp = await client.post("/v1/puzzles", json={"id": pid, "givens": givens},
                                         headers={"Authorization": f"Bearer {ADMIN}"})
                assert resp.status == 201, await resp.text()
            times = {}
            for pid in wait_for:
                times[pid] = await _wait(client, pid, started, pid, timeout)
                times[pid + " others"] = {p: (await _status(client, p))["status"]
                                          for p, _ in puzzles if p != pid}
            return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--wait-large", action="store_true")
    args = ap.parse_args()
    print(machine(), f"| pool processes: {args.workers}")
    # a first run compiles or loads the kernels; it is not timed
    asyncio.run(_run([("warm", PUZZLES["easy"])], args.workers, ["warm"], 600))
    alone = asyncio.run(_run([("medium", PUZZLES["medium"])], args.workers, ["medium"], 600))
    wait = ["medium", "large"] if args.wait_large else ["medium"]
    behind = asyncio.run(_run([("large", SIXTEEN), ("medium", PUZZLES["medium"])],
                              args.workers, wait, 3600))
    t0, t1 = alone["medium"], behind["medium"]
    print(f"9x9 alone:              ready in {t0:6.2f} s")
    print(f"9x9 behind a 16x16:     ready in {t1:6.2f} s  (ratio {t1 / t0:.2f}; "
          f"16x16 {behind['medium others']['large']} then)")
    if args.wait_large:
        print(f"16x16:                  ready in {behind['large']:6.1f} s")
    ok = t1 <= 10.0
    print(f"target (9x9 behind a 16x16 ready within 10 s): {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
