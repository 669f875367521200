"""Shared helpers of the experiment scripts: data paths, the cached metric table."""

from __future__ import annotations

import csv
import json
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("FAIRGRID_SHARED", ROOT.parent / "shared")) / "data"
BUILD = ROOT / "experiments" / "_build"
DOCS_IMG = ROOT / "docs" / "img"


def need_shared() -> None:
    if not SHARED.is_dir():
        sys.exit(f"error: the reference data {SHARED} is missing "
                 "(set FAIRGRID_SHARED to the shared/ folder)")


def org_uk_rows() -> list[dict]:
    """sudoku.org.uk daily puzzles with mean human time (minutes) and solver counts."""
    need_shared()
    with open(SHARED / "sudoku_org_uk_times_train.tsv", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def org_uk_dailies(rng: np.random.Generator, levels, per_level: int):
    """``per_level`` sudoku.org.uk dailies of each site level in ``levels``, drawn
    without replacement, yielded one at a time as (level, row): a caller may draw from
    ``rng`` between them."""
    rows = org_uk_rows()
    for level in levels:
        rs = [r for r in rows if r["level"] == level]
        for i in rng.choice(len(rs), per_level, replace=False).tolist():
            yield level, rs[i]


def stall_level_solves(doc: str, one, models, *, per_level: int, plays: int,
                       seed: int) -> list:
    """The command line of an experiment on stall-level dailies (``doc``: its module
    doc; ``--per-level``, ``--plays``, ``--seed``, ``--jobs``, the first three defaulting
    to the values given), then ``one((model, puzzle, solution, mean time in s, seed))``
    for ``--plays`` solves of each of ``models`` on ``--per-level`` Tough and Diabolical
    sudoku.org.uk dailies (the levels that stall a singles solver) drawn with ``--seed``,
    in ``--jobs`` processes, with progress on stderr: the results in task order."""
    import argparse
    from concurrent.futures import ProcessPoolExecutor

    from tqdm import tqdm

    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--per-level", type=int, default=per_level, help="dailies per level")
    ap.add_argument("--plays", type=int, default=plays, help="solves per puzzle and model")
    ap.add_argument("--seed", type=int, default=seed)
    ap.add_argument("--jobs", type=int, default=None)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    tasks = [(m, r["puzzle"], r["solution"], 60.0 * float(r["mean_time_min"]),
              int(rng.integers(2**31)))
             for _, r in org_uk_dailies(rng, ("Tough", "Diabolical"), args.per_level)
             for m in models for _ in range(args.plays)]
    with ProcessPoolExecutor(args.jobs) as pool:
        return list(tqdm(pool.map(one, tasks, chunksize=4), total=len(tasks),
                         desc="solves", file=sys.stderr))


def org_uk_metrics(seed: int = 0, runs: float = 1.0, budget_s: float = 1.0,
                   workers: int | None = None) -> tuple[list[dict], np.ndarray, list[str]]:
    """Every metric of every sudoku.org.uk puzzle, cached in experiments/_build.

    Returns (rows, metric matrix, metric names)."""
    from tqdm import tqdm
    from fairgrid.solvers.rate import METRICS, rate_many
    rows = org_uk_rows()
    BUILD.mkdir(parents=True, exist_ok=True)
    cache = BUILD / f"org_uk_metrics_seed{seed}_runs{runs}_budget{budget_s}.json"
    if cache.exists():
        data = json.loads(cache.read_text())
    else:
        data = []
        with tqdm(total=len(rows), desc="rating sudoku.org.uk", unit="puzzle") as bar:
            for (res, err), row in zip(rate_many([r["puzzle"] for r in rows], seed=seed,
                                                 runs=runs, budget_s=budget_s, workers=workers,
                                                 on_done=lambda: bar.update(1)), rows):
                if err:
                    raise SystemExit(f"puzzle {row['date']}: {err}")
                data.append(res.metrics)
        cache.write_text(json.dumps(data))
    names = list(METRICS)
    return rows, np.array([[d[n] for n in names] for d in data], dtype=float), names
