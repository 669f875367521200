"""How often the player verdict flags honest people whose times swing more than the
seasons of ``bench/player_seasons.py`` assume, by ``own_pace``.

    python experiments/own_pace_spread.py [--seasons 4000] [--seed 21] [--slope-sd 1.0]

Each honest season is 20 finished Sudoku solves whose paces (ln of time over the
puzzle's expected time) scatter around the player's own with a normal sd of 0.35 (what
the seasons simulate), 0.45, 0.55 or 0.65. So that ``own_pace`` gets the share of
alpha it has in a real season, every solve also carries ordinary evidence of the other
kinds: a deduction family p and a combined p uniform in (0.15, 1), no counted bits, a
likelihood ratio of -0.5 and a slow-down at stalls around the honest models' (log 2.3,
``--slope-sd`` a solve: 1 by default; a noisy model's solves vary by 1.6, which makes a
solve no slower at its stalls, odd by ``own_pace`` when it is also 2x quick, more
common). Each season is judged after every solve from the eighth, as the daemon judges,
with the shipped null; a season counts as flagged if any of those judgements flags it.
Prints, per sd, the share of seasons flagged and the kinds that flagged them.
"""

from __future__ import annotations

import argparse

import numpy as np
from tqdm import tqdm

from fairgrid.analytics.player_verdict import SolveFacts, judge, shipped_null

SDS = (0.35, 0.45, 0.55, 0.65)
SEASON = 20


def season(rng, sd: float, slope_sd: float = 1.0) -> list[SolveFacts]:
    return season_of(rng, rng.normal(0, sd, SEASON), slope_sd)


def season_of(rng, paces, slope_sd: float = 1.0) -> list[SolveFacts]:
    """Finished solves of these paces, each with ordinary evidence of the other kinds."""
    return [SolveFacts(f"s{i}", {"deduction": float(rng.uniform(0.15, 1))}, False,
                       {"stall_look": -0.5}, (2.3 + float(rng.normal(0, slope_sd)), 1.0),
                       {"unforced": (0.0, 1.0), "unproven": (0.0, 1.0)},
                       float(rng.uniform(0.15, 1)), pace=float(v),
                       pace_group="sudoku/calibration")
            for i, v in enumerate(paces)]


def ever_flagged(s: list[SolveFacts], null) -> bool:
    """Whether a judgement after any solve from the eighth flags the season."""
    return any(judge(s[:n], null).flagged for n in range(8, len(s) + 1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seasons", type=int, default=4000, help="honest seasons per sd")
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--slope-sd", type=float, default=1.0,
                    help="per-solve sd of the slow-down at a stall (log)")
    args = ap.parse_args()
    if args.seasons < 1:
        raise SystemExit("error: --seasons must be at least 1")
    null, rng = shipped_null(), np.random.default_rng(args.seed)
    print(f"{'sd':>5} {'flagged':>16}  by")
    for sd in SDS:
        flagged, by = 0, {}
        for _ in tqdm(range(args.seasons), desc=f"sd {sd}", leave=False):
            s = season(rng, sd, args.slope_sd)
            for n in range(8, SEASON + 1):
                verdict = judge(s[:n], null)
                if verdict.flagged:
                    flagged += 1
                    kind = verdict.findings[0].kind
                    by[kind] = by.get(kind, 0) + 1
                    break
        print(f"{sd:5.2f} {flagged:6d} of {args.seasons:<6d} {100 * flagged / args.seasons:5.2f} %  "
              + ", ".join(f"{k} {v}" for k, v in sorted(by.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
