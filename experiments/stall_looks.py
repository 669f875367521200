"""What a placement made at a stall is worth: the rates behind the ``stall_look`` ratio.

    python experiments/stall_looks.py --seed 11 --puzzles 16
    python experiments/stall_looks.py --seed 12 --puzzles 16

Plays the honest models and the hint-taker of ``bench/players.py`` on Tough and
Diabolical sudoku.org.uk dailies (the levels that stall a singles solver), and, over the
placements that ``analytics.deduction`` weighs by looks (made at a stall, or seconds
after one, proved neither by the player's own marks nor by a trial, or tried wrong
first whatever proved them after), counts how many
looks at the board proved each one, right at the first try (where none did, by how many
candidates the cell had beyond the fewest: none at a cell with the fewest, +1, +2 or
more), and how many were wrong at the first try; and how many stall placements a trial
proved (a person's work, not weighed). Prints each model's share per outcome and the
mean ratio per placement under ``STALL_LOOK_LR``, ``STALL_NONE_LR`` and
``STALL_WRONG_LR``, a trial's being one. For an honest model a mean of at most one keeps
each placement's factor a fair bet; the season's test needs the solve's product, which
``bench/player_seasons.py`` prints. Seeds 11 and 12 are those no reported benchmark run
uses; their two tables together are the calibration's data.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter

import numpy as np

from _common import ROOT, org_uk_rows

sys.path.insert(0, str(ROOT / "bench"))

OUTCOMES = ("one look", "two looks", "more than two", "none, fewest", "none, +1",
            "none, +2", "wrong first", "a trial")


def _outcomes(text, sol, log) -> list[int]:
    from fairgrid.analytics.deduction import STALL_LOOKS, deduce
    from fairgrid.analytics.fill_order import fill_order
    from fairgrid.solvers import deduction as engine
    givens = np.array([int(ch) for ch in text], dtype=np.int64)
    fill = fill_order(*log, givens, sol)
    found = deduce(givens, sol, fill, *log)
    # a trial at a stall is a person's work, not weighed (a ratio of one)
    out = [7] * int(np.count_nonzero(found.by_trial & (found.offer > engine.SINGLE)))
    for k in np.flatnonzero(found.looks >= 0).tolist():
        if not found.right_first[k]:
            out.append(6)
        elif found.looks[k] <= STALL_LOOKS + 1:
            assert found.looks[k] >= 1      # a bare single is no stall placement
            out.append(int(found.looks[k]) - 1)
        else:                               # by the cell's surplus of candidates
            out.append(3 + min(int(found.surplus[k]), 2))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--puzzles", type=int, default=8, help="puzzles per level")
    ap.add_argument("--solves", type=int, default=3, help="solves per model and puzzle")
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    import players as models
    from fairgrid.analytics.deduction import STALL_LOOK_LR, STALL_NONE_LR, STALL_WRONG_LR
    from tqdm import tqdm

    rng = np.random.default_rng(args.seed)
    rows = [r for level in ("Tough", "Diabolical")
            for r in [r for r in org_uk_rows() if r["level"] == level][:args.puzzles]]
    kinds = list(models.HONEST) + ["hint_at_stall"]
    counts = {k: Counter() for k in kinds}
    for r in tqdm(rows, desc="puzzles"):
        sol = np.array([int(ch) for ch in r["solution"]], dtype=np.int64)
        total_s = float(r["mean_time_min"]) * 60
        for kind in kinds:
            play = {**models.HONEST, **models.HIDING_CHEATS}[kind]
            for _ in range(args.solves):
                person = models.draw_person(kind, rng) if kind in models.PERSONS else {}
                log = play(r["puzzle"], sol, rng, total_s, **person)
                counts[kind].update(_outcomes(r["puzzle"], sol, log.arrays))
    lr = list(STALL_LOOK_LR[1:]) + list(STALL_NONE_LR) + [STALL_WRONG_LR, 0.0]
    print(f"{'model':16s} {'placed':>8s} " + " ".join(f"{o:>13s}" for o in OUTCOMES)
          + "   mean ratio")
    for kind in kinds:
        n = sum(counts[kind].values())
        if not n:
            print(f"{kind:16s} {n:8d}   (no stall placement)")
            continue
        share = [counts[kind][i] / n for i in range(len(OUTCOMES))]
        mean = sum(s * math.exp(x) for s, x in zip(share, lr))
        print(f"{kind:16s} {n:8d} " + " ".join(f"{100 * s:12.1f}%" for s in share)
              + f"   {mean:.2f}" + ("  (the hint-taker)" if kind not in models.HONEST else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
