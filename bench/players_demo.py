"""One solve per player model of bench/players.py on one sudoku.org.uk puzzle per level.

    python bench/players_demo.py [--seed 0] [--data DIR]

Per model: moves, notes, placements, the log's length, the share of placements (in fill
order) that were singles on the bare board of their moment, the placements that were
not while a bare single was on offer elsewhere (what the ``unforced`` signal counts), and
for cheaters the cheated placements and how many of them came at a stall (no bare single
on offer). Each solve's total is drawn around the site's mean time (sd 0.35 in log).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import _common
import players
from _common import org_uk_rows

LEVELS = ("Gentle", "Moderate", "Tough", "Diabolical")


def bare_singles(text: str, log: players.PlayerLog, sol: np.ndarray):
    """(fill order's replay: technique per placement, singles on offer; the replay row of
    each cheated move)."""
    from fairgrid.analytics.fill_order import fill_order
    from fairgrid.solvers import parse
    from fairgrid.solvers.propagation import replay

    puzzle = parse(text)
    f = fill_order(*log.arrays, puzzle.givens, sol)
    tech, options, _ = replay(puzzle.givens, puzzle.box_size, f.cells, sol)
    where = {int(c): k for k, c in enumerate(f.cells)}
    return tech, options, [where[int(log.cell[i])] for i in log.cheated_moves]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    args = _common.parse_with_data(ap)
    from fairgrid.solvers.propagation import NOT_DEDUCIBLE

    rows = org_uk_rows()
    rng = np.random.default_rng(args.seed)
    models = {**players.HONEST, **players.HIDING_CHEATS}
    for level in LEVELS:
        row = next(r for r in rows if r["level"] == level)
        text, sol = row["puzzle"], np.array([int(ch) for ch in row["solution"]])
        mean_s = 60.0 * float(row["mean_time_min"])
        print(f"\n{level} {row['date']}: {int((np.array(list(text)) == '0').sum())} empty "
              f"cells, site mean {mean_s / 60:.0f} min")
        print(f"  {'model':19s} {'base':13s} {'moves':>5s} {'notes':>5s} {'placed':>6s} "
              f"{'time':>6s} {'bare':>5s} {'unforced':>8s} {'cheated':>7s} {'at stall':>8s} "
              f"{'ms':>5s}")
        for name, fn in models.items():
            total_s = float(np.exp(np.log(mean_s) + rng.normal(0, 0.35)))
            t0 = time.perf_counter()
            log = fn(text, sol, rng, total_s)
            spent = time.perf_counter() - t0
            tech, options, cheat_rows = bare_singles(text, log, sol)
            single = tech != NOT_DEDUCIBLE
            unforced = int(np.sum(~single & (options > 0)))
            at_stall = sum(options[k] == 0 for k in cheat_rows)
            cheat = (f"{len(cheat_rows):7d} {at_stall:8d}" if name in players.HIDING_CHEATS
                     else f"{'':7s} {'':8s}")
            print(f"  {name:19s} {log.base:13s} {log.t_ms.size:5d} {int(log.note.sum()):5d} "
                  f"{int(log.placed.sum()):6d} {log.t_ms[-1] / 60000:5.1f}m "
                  f"{single.mean():5.2f} {unforced:8d} {cheat} {spent * 1000:5.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
