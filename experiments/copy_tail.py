"""What a copied endgame leaves in the log: stalls skipped and time saved by partial,
assisted and stuck copies.

    python experiments/copy_tail.py [--per-level 10] [--plays 4] [--seed 0] [--jobs 2]

The partial and assisted cheaters of ``bench/players.py`` solve honestly (as a pencil
marker or a sweeper) until 40-70 % (partial) or 60 % (assisted) of the empty cells hold
their digit, then type the rest of the solution in the technique model's order at a pace
drawn from their own honest intervals; the stuck copier does the same from its first
stall, after a think. For each copy this plays the honest solve it was cut from (the
same person, puzzle and draws) and reports, per kind and site level:

* the copied cells, and how many of them the technique model could place only with
  something harder than a single (a *stall*: an honest person has to find a technique
  there, which takes time the copy does not spend; no other trace of the copy is left
  in timing);
* the copy's time against the honest solve's: what the cheat bought.

A copy whose tail holds no stall types the singles an honest person would have typed,
at a pace drawn from their own: its log says what an honest finish says, and the copy
saved only what the pace change gives.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from _common import ROOT, org_uk_dailies

sys.path.insert(0, str(ROOT / "bench"))

LEVELS = ("Gentle", "Moderate", "Tough", "Diabolical")
KINDS = ("partial", "assisted", "stuck_copier")
BASES = ("pencil_marker", "sweeper")
SD_LOG = 0.35   # a solve's time about the site's mean, as bench/player_seasons.py plays it


def _one(task) -> tuple[str, str, int, int, float]:
    """(kind, level, copied cells, stall steps among them, copy time / honest time)."""
    import players as models
    from fairgrid.solvers import techniques as tq

    kind, base, level, text, solution, mean_s, seed = task
    rng = np.random.default_rng(seed)
    person = models.draw_person(base, rng)
    total_s = float(np.exp(np.log(mean_s) + rng.normal(0, SD_LOG)))
    log, plan = models.COPIES[kind](text, solution, rng, total_s, base=base, **person)
    if not np.array_equal(plan.full.t_ms[:plan.end], log.t_ms[:plan.end]):
        raise AssertionError(f"{kind}: the honest part does not repeat the copy's")
    stalls = sum(tech not in tq.SINGLES for _, _, tech in plan.rest)
    ratio = float(log.t_ms[-1]) / float(plan.full.t_ms[-1])
    return kind, level, len(plan.rest), stalls, ratio


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-level", type=int, default=10, help="dailies per site level")
    ap.add_argument("--plays", type=int, default=4, help="copies per puzzle, kind, base")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=None)
    args = ap.parse_args()
    from tqdm import tqdm

    rng = np.random.default_rng(args.seed)
    tasks = [(kind, base, level, r["puzzle"], r["solution"], 60.0 * float(r["mean_time_min"]),
              int(rng.integers(2**31)))
             for level, r in org_uk_dailies(rng, LEVELS, args.per_level)
             for kind in KINDS for base in BASES for _ in range(args.plays)]
    with ProcessPoolExecutor(args.jobs) as pool:
        out = list(tqdm(pool.map(_one, tasks, chunksize=4), total=len(tasks),
                        desc="copies", file=sys.stderr))
    print("| kind | level | copies | copied cells (median) | copies whose copied cells "
          "hold a stall | stall steps copied (mean) | copy's time / honest time (median; "
          "10th pct) | the same, copies without a stall |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for kind in KINDS:
        for level in LEVELS + ("all",):
            got = [o for o in out if o[0] == kind and (level == "all" or o[1] == level)]
            cells = np.array([o[2] for o in got])
            stalls = np.array([o[3] for o in got])
            ratio = np.array([o[4] for o in got])
            calm = ratio[stalls == 0]
            calm_s = (f"{np.median(calm):.2f}; {np.percentile(calm, 10):.2f}"
                      if calm.size else "–")
            print(f"| {kind} | {level} | {len(got)} | {np.median(cells):.0f} | "
                  f"{100 * np.mean(stalls > 0):.0f} % | {stalls.mean():.2f} | "
                  f"{np.median(ratio):.2f}; {np.percentile(ratio, 10):.2f} | {calm_s} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
