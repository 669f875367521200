"""How often the player verdict's tempo calls an honest player odd, against how often it
says it does.

    python experiments/tempo_calibration.py [--players 400000] [--seed 0]

Honest players are drawn from a tempo null at its guard (centre 1.99, spread 0.3: the
10th percentile at a 5x slow-down, the spread at its floor), each with n solves whose
slow-down at a stall (the per-solve slope of log delay on "at a stall") scatters around
the player's own with an sd of 0.8 to 3 (the honest models of ``bench/players.py`` reach
2.1 at their 95th percentile). Each season's p is the tempo's own arithmetic
(``analytics.player_verdict``: Welch–Satterthwaite's t on the player's per-solve spread,
floored), vectorised here and checked against ``_tempo`` on the first seasons. Prints,
for each sd and n, the share of seasons below the tempo's line (2e-4: its share of
alpha at the default 1e-3) over the line, for the t alone and for the p the verdict uses
(the t's times 1 + TEMPO_FEW_SOLVES / n²): one or less is calibrated.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy.special import stdtr

from fairgrid.analytics import player_verdict as pv

CENTRE, SPREAD = 1.99, 0.3
SDS = (0.8, 1.6, 2.0, 2.5, 3.0)
NS = (8, 10, 12, 15, 20)


def t_tail(x: np.ndarray) -> np.ndarray:
    """The tempo's t tail for seasons ``x`` (players × solves of per-solve slopes)."""
    n = x.shape[1]
    slope, s = x.mean(1), x.std(1, ddof=1)
    w2 = np.maximum(pv.SOLVE_SLOPE_SD_FLOOR, s) ** 2 / n
    df = (SPREAD ** 2 + w2) ** 2 * (n - 1) / w2 ** 2
    return stdtr(df, -(CENTRE - slope) / np.sqrt(SPREAD ** 2 + w2))


def check(x: np.ndarray, null: pv.PlayerNull) -> None:
    """The vectorised p is the verdict's own, on the first 200 seasons."""
    n = x.shape[1]
    ours = np.minimum(1.0, t_tail(x[:200]) * (1 + pv.TEMPO_FEW_SOLVES / n ** 2))
    for row, p in zip(x[:200], ours):
        season = [pv.SolveFacts(f"s{k}", {}, False, slope=(float(v), 1.0))
                  for k, v in enumerate(row)]
        assert math.isclose(pv._tempo(season, null).p, p, rel_tol=1e-9, abs_tol=1e-300)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, default=400_000, help="seasons per (sd, n)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    line = pv.TEMPO_SHARE * pv.ALPHA
    null = pv.PlayerNull({}, ((CENTRE, SPREAD),), "the guard")
    assert pv.guard(null).tempo == null.tempo, "the null must sit at the guard"
    print(f"honest seasons below p = {line:g}, over the nominal rate "
          f"({args.players:,} seasons each); t alone / as the verdict reads it")
    print("per-solve sd  " + "  ".join(f"{f'n = {n}':>13}" for n in NS))
    for sd in SDS:
        cells = []
        for n in NS:
            x = rng.normal(rng.normal(CENTRE, SPREAD, args.players)[:, None], sd,
                           (args.players, n))
            if sd == SDS[0]:
                check(x, null)
            p = t_tail(x)
            used = np.minimum(1.0, p * (1 + pv.TEMPO_FEW_SOLVES / n ** 2))
            cells.append(f"{np.mean(p < line) / line:5.2f} / {np.mean(used < line) / line:4.2f}")
        print(f"{sd:12.1f}  " + "  ".join(f"{c:>13}" for c in cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
