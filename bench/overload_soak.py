"""Overload soak: offered load far above what the writer sustains; memory stays
bounded, the excess gets clean 503s, and acceptance recovers fully when the load drops.

    python bench/overload_soak.py [--seconds 20] [--connections 400]

The daemon runs with a deliberately slow writer — ``storage.max_batch = 8`` and
``storage.group_commit_ms = 40`` stand in for a slow disk (~180 submissions a second) —
and a write queue of 100. Portals wait for their 2xx, so load beyond the writer shows as
requests in flight: phase 1 drives signed webhooks from a separate process over 400
connections (four times the queue), as fast as they go; phase 2 paces them at 50/s.
The daemon's RSS is sampled every 0.2 s. Prints statuses per phase, the writer's rate,
the peak RSS, and whether every request of phase 2 was accepted.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import Phases
from ingest_load import ADMIN, SECRET, free_port, run_driver, start_fairgrid


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--connections", type=int, default=400)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="fairgrid-overload-"))
    port = free_port()
    cfg = tmp / "fairgrid.toml"
    cfg.write_text(f'[server]\nport = {port}\n[storage]\npath = "{tmp / "o.duckdb"}"\n'
                   f'write_queue_size = 100\nmax_batch = 8\ngroup_commit_ms = 40.0\n'
                   f'[analysis]\nworkers = 1\n[nightly]\ncron = ""\n'
                   f'[portals.demo]\nsecrets = ["{SECRET}"]\n[auth]\nadmin_tokens = ["{ADMIN}"]\n')
    daemon, base = start_fairgrid(cfg, port)
    phases = Phases(2)
    samples: list[float] = []
    done = threading.Event()

    def sample():
        while not done.is_set():
            try:
                samples.append(rss_mib(daemon.pid))
            except OSError:
                pass
            time.sleep(0.2)

    try:
        idle = rss_mib(daemon.pid)
        threading.Thread(target=sample, daemon=True).start()
        phases.start(f"overload: {args.connections} connections for {args.seconds:.0f} s")
        over = run_driver(base + "/v1/webhooks/solves", "over", args.seconds,
                          args.connections, None, daemon.pid)
        phases.done(f"{over['statuses']}")
        time.sleep(2)
        phases.start("recovery: 50/s for 10 s")
        calm = run_driver(base + "/v1/webhooks/solves", "calm", 10, 8, 50, daemon.pid)
        phases.done(f"{calm['statuses']}")
    finally:
        phases.close()
        done.set()
        daemon.terminate()
        daemon.wait(timeout=60)
    peak = max(samples) if samples else float("nan")
    report = {"idle_rss_mib": round(idle, 1), "peak_rss_mib": round(peak, 1),
              "overload": {"statuses": over["statuses"],
                           "accepted_per_s": round(over["accepted_per_s"], 1),
                           "offered_per_s": round(sum(over["statuses"].values())
                                                  / over["elapsed"], 1),
                           "p99_ms": round(over["p99_ms"], 1)},
              "recovery_at_50_per_s": {"statuses": calm["statuses"],
                                       "p99_ms": round(calm["p99_ms"], 1)}}
    print(json.dumps(report, indent=2))
    ok = set(calm["statuses"]) == {"202"} or set(calm["statuses"]) == {202}
    print("recovered: every request accepted at 50/s" if ok else "did NOT recover fully")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
