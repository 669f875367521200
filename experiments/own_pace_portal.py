"""What a portal's own null learns of ``own_pace`` when some of its players copy a third
of their puzzles and nobody has flagged them yet, with and without the screen
(``player_verdict.SCREENED``).

    python experiments/own_pace_portal.py [--honest 300] [--new 50] [--fresh 1000]
                                          [--seed 5] [--jobs N] [--screen-p P]

A portal's null is learnt from ``--honest`` honest players and 0, 15, 30 or 60
selective copiers (20 finished Sudoku solves each; a copier's 7 copies 2.5-4.5x quicker
than their own pace), as the nightly job learns it (``learn_null``, screened from the
shipped null on, or not). With it, ``--new`` new copiers and ``--fresh`` new honest
players of the same population are judged after every solve from the eighth, as the
daemon judges; a season counts as flagged if any judgement flags it. Three populations:
everyone's paces scatter with an sd of 0.35 around their own (what the seasons of
``bench/player_seasons.py`` simulate); a fifth of the players at 0.65; each player's own
sd drawn from 0.25-0.65. Every solve also carries ordinary evidence of the other kinds,
as in ``own_pace_spread.py``, so that ``own_pace`` has the share of alpha it has in a
real season. ``--screen-p`` screens below another p than ``SCREEN_P``. Prints, per
population and number of copiers, the null's rates of solves 2x and 2.7x quicker than
the player's own pace, and the new copiers and honest players flagged.
"""

from __future__ import annotations

import argparse
import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from tqdm import tqdm

from fairgrid.analytics import player_verdict as pv
from fairgrid.analytics.player_verdict import OWN_PACE, SolveFacts, learn_null, shipped_null
from own_pace_spread import SEASON, ever_flagged, season_of

COPIES = 7
POPULATIONS = {"sd 0.35": lambda rng: 0.35,
               "a fifth at 0.65": lambda rng: 0.65 if rng.random() < 0.2 else 0.35,
               "sd 0.25-0.65": lambda rng: float(rng.uniform(0.25, 0.65))}
COPIERS = (0, 15, 30, 60)


def season(rng, sd: float, copies: bool) -> list[SolveFacts]:
    paces = rng.normal(0, sd, SEASON)
    if copies:
        at = rng.choice(SEASON, size=COPIES, replace=False)
        paces[at] -= np.log(rng.uniform(2.5, 4.5, COPIES))
    return season_of(rng, paces)


def one(args) -> tuple:
    population, k, screen, honest, new, fresh, seed, screen_p = args
    pv.SCREEN_P = screen_p
    rng = np.random.default_rng([seed, list(POPULATIONS).index(population), k])
    sd = POPULATIONS[population]
    portal = ([season(rng, sd(rng), False) for _ in range(honest)]
              + [season(rng, sd(rng), True) for _ in range(k)])
    null = learn_null(portal, "a portal", shipped_null().llr_offset,
                      screen=shipped_null() if screen else None)
    own = null.kind(OWN_PACE)
    caught = sum(ever_flagged(season(rng, sd(rng), True), null) for _ in range(new))
    wrong = sum(ever_flagged(season(rng, sd(rng), False), null) for _ in range(fresh))
    return population, k, screen, own.weak, own.strong, caught, wrong


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--honest", type=int, default=300, help="honest players of the portal")
    ap.add_argument("--new", type=int, default=50, help="new copiers judged")
    ap.add_argument("--fresh", type=int, default=1000, help="new honest players judged")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--screen-p", type=float, default=pv.SCREEN_P,
                    help=f"screen players below this p (default {pv.SCREEN_P})")
    args = ap.parse_args()
    for name in ("honest", "new", "fresh", "jobs"):
        if getattr(args, name) < 1:
            raise SystemExit(f"error: --{name} must be at least 1")
    if args.seed < 0:
        raise SystemExit("error: --seed must be at least 0")
    if not 0 < args.screen_p < 1:
        raise SystemExit("error: --screen-p must be between 0 and 1")
    # the same populations with and without the screen (the seed names population and
    # copiers, not the screen)
    tasks = [(p, k, screen, args.honest, args.new, args.fresh, args.seed, args.screen_p)
             for p in POPULATIONS for k in COPIERS for screen in (False, True)]
    with ProcessPoolExecutor(args.jobs) as pool:
        rows = list(tqdm(pool.map(one, tasks), total=len(tasks), desc="portals"))
    print(f"{'population':<16} {'copiers':>7} {'screen':>6} {'2x rate':>8} {'2.7x rate':>9} "
          f"{'new copiers':>12} {'new honest':>11}")
    for population, k, screen, weak, strong, caught, wrong in rows:
        print(f"{population:<16} {k:>7d} {'yes' if screen else 'no':>6} {weak:>8.3f} "
              f"{strong:>9.4f} {caught:>5d} of {args.new:<4d} {wrong:>4d} of {args.fresh}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
