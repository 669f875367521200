"""Crash soak: SIGKILL the daemon at random moments while portals send signed
webhooks and retry until 2xx; restart it on the same DuckDB file; count what survived.

    python bench/crash_soak.py [--submissions 3000] [--cycles 25] [--senders 8]

Prints the counts (acknowledged, stored, lost, duplicated, half-written, kills) as JSON;
docs/reliability.md records the latest figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from tqdm import tqdm


from fairgrid.daemon.testing import check, run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--submissions", type=int, default=3000)
    ap.add_argument("--cycles", type=int, default=25)
    ap.add_argument("--senders", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="fairgrid-soak-"))
    t0 = time.perf_counter()
    # a bar on stderr (when it is a terminal): kills so far, submissions acknowledged
    bar = tqdm(total=args.cycles, desc="kill/restart cycles", unit="kill", file=sys.stderr,
               disable=None)

    def progress(kills: int, acked: int) -> None:
        bar.update(kills - bar.n)
        bar.set_postfix_str(f"{acked:,} of {args.submissions:,} acknowledged")

    try:
        out, db = run(tmp, submissions=args.submissions, cycles=args.cycles,
                      senders=args.senders, seed=args.seed,
                      progress=progress)
    finally:
        bar.close()
    report = check(db, out, args.submissions)
    report["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(report, indent=2))
    ok = (report["lost"] == 0 and report["duplicated"] == 0 and report["partial"] == 0
          and report["orphan_moves"] == 0 and report["acked"] == args.submissions)
    print("PASS: nothing acknowledged was lost" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
