"""How even people's pace gets as they solve faster: the evidence behind
``signals.PACE_ALLOWANCE``.

    python bench/pace_evenness.py [--per-level 3] [--people 15] [--seed 5]

Puzzles: ``--per-level`` sudoku.org.uk dailies of each site level (../shared/data), each
rated by the shipped calibration. People: ``--people`` per (honest model of
``bench/players.py``, pace) at 1x, 3x and 6x the puzzle's expected time (skill N(0, 0.5),
the calibration's residual sd), and the same number of the simulator's even copies
(``careful``, ``steady``, ``row``) at their own pace. Prints, per model and pace, the
median and 1st percentile of the sd of the log intervals between placements (the
``pace_variation`` signal) and the median interval; per honest model the slope
ln(sd at 1x / sd at 6x) / ln 6 of the median and of the 1st percentile, which is how
much evener a person gets per unit of log speed; and the copies' sd.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import players as models
from _common import machine, org_uk_rows
from detection_eval import SITE_LEVELS

PACES = (1.0, 3.0, 6.0)
COPIES = ("careful", "steady", "row")


def _spread(t, c, d, n, givens, solution) -> tuple[float, float]:
    from fairgrid.analytics.fill_order import fill_order
    from fairgrid.analytics.signals import pace_variation

    f = fill_order(t, c, d, n, givens, solution)
    iv = np.diff(np.asarray(f.times_ms, dtype=float))
    return pace_variation(iv), float(np.median(iv)) / 1000.0


def main() -> int:
    from fairgrid.analytics.expected_time import load_default
    from fairgrid.analytics.simulate import simulate
    from fairgrid.solvers import parse
    from fairgrid.solvers.rate import families_for, rate

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-level", type=int, default=3)
    ap.add_argument("--people", type=int, default=15)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    if args.per_level < 1 or args.people < 2:
        raise SystemExit("error: --per-level must be at least 1 and --people at least 2")
    started = time.perf_counter()
    cal = load_default()
    rng = np.random.default_rng(args.seed)
    rows = org_uk_rows()
    got: dict[tuple[str, float], list[tuple[float, float]]] = {}
    for level in SITE_LEVELS:
        mine = [r for r in rows if r["level"] == level]
        for r in (mine[i] for i in rng.choice(len(mine), args.per_level, replace=False)):
            text = r["puzzle"]
            puzzle = parse(text)
            need = tuple(sorted({"human", *families_for(cal.metrics_needed)}))
            expected_log_s = float(np.log(cal.describe(
                rate(puzzle, rng=1, only=need).metrics)["expected_time_s"]))
            solution = np.array([int(ch) for ch in r["solution"]])
            givens = np.array([int(ch) for ch in text])
            for model, play in models.HONEST.items():
                for pace in PACES:
                    for _ in range(args.people):
                        person = (models.draw_person(model, rng) if model in models.PERSONS
                                  else {})
                        total_s = float(np.exp(expected_log_s - np.log(pace)
                                               - rng.normal(0, 0.5)
                                               + rng.normal(0, cal.residual_sd)))
                        log = play(text, solution, rng, total_s, **person)
                        got.setdefault((model, pace), []).append(
                            _spread(*(np.asarray(a) for a in log.arrays), givens, solution))
            for copy in COPIES:
                for _ in range(args.people):
                    s = simulate(puzzle, solution, copy, rng=rng, expected_log_s=expected_log_s)
                    got.setdefault((copy, 0.0), []).append(
                        _spread(s.t_ms, s.cell, s.digit, s.note, givens, solution))
        print(f"  {level}: {time.perf_counter() - started:.0f} s", file=sys.stderr)

    def q(key, quantile):
        return float(np.quantile([x[0] for x in got[key]], quantile))

    print(f"{'model':15s} {'pace':>5s} {'solves':>7s} {'sd median':>10s} {'sd 1%':>7s} "
          f"{'interval':>9s}")
    for (model, pace), v in got.items():
        med_iv = float(np.median([x[1] for x in v]))
        print(f"{model:15s} {('own' if not pace else f'{pace:g}x'):>5s} {len(v):>7d} "
              f"{q((model, pace), 0.5):>10.3f} {q((model, pace), 0.01):>7.3f} "
              f"{med_iv:>8.2f}s")
    print("\nevener per unit of log speed, ln(sd at 1x / sd at 6x) / ln 6:")
    for model in models.HONEST:
        slopes = [np.log(q((model, 1.0), x) / q((model, 6.0), x)) / np.log(6.0)
                  for x in (0.5, 0.01)]
        print(f"  {model:15s} median {slopes[0]:.2f}, 1st percentile {slopes[1]:.2f}")
    print(f"{time.perf_counter() - started:.0f} s on {machine()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
