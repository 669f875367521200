"""Geem (2007) Table 1: harmony-search sensitivity to HMS × HMCR × PAR on his puzzle.

    python experiments/geem_sensitivity.py [--runs 5]

Geem's puzzle (Nicolau & Ryan, his Fig. 1), his sum-to-45 fitness, up to 10,000
improvisations. For each of the 36 parameter settings: median improvisations until the
fitness reaches 0 (10,000 when it does not), the median final fitness, and how many runs
ended in a false optimum (fitness 0, grid not a solution). The thesis' missing-digit
fitness is run alongside. Writes docs/img/geem_sensitivity.png.
"""

from __future__ import annotations

import argparse
import itertools
import sys

import numpy as np

from _common import DOCS_IMG  # noqa: E402

GEEM = "050306007000085024098420603901003206030000010507260908405090380010570002800104070"
# Geem Table 1: improvisations (final Z when 10,000 did not reach 0)
PAPER = {(1, .5, .01): "66", (1, .5, .1): "337", (1, .5, .5): "422", (1, .7, .01): "287",
         (1, .7, .1): "3,413", (1, .7, .5): "56", (1, .9, .01): "260",
         (1, .9, .1): "10,000 (6)", (1, .9, .5): "1,003", (2, .5, .01): "31",
         (2, .5, .1): "94", (2, .5, .5): "175", (2, .7, .01): "102", (2, .7, .1): "77",
         (2, .7, .5): "99", (2, .9, .01): "10,000 (15)", (2, .9, .1): "10,000 (27)",
         (2, .9, .5): "1,325", (10, .5, .01): "49", (10, .5, .1): "280", (10, .5, .5): "188",
         (10, .7, .01): "56", (10, .7, .1): "146", (10, .7, .5): "259", (10, .9, .01): "180",
         (10, .9, .1): "217", (10, .9, .5): "350", (50, .5, .01): "147", (50, .5, .1): "372",
         (50, .5, .5): "649", (50, .7, .01): "165"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    from fairgrid.solvers import parse
    from fairgrid.solvers.harmony import harmony_search
    from tqdm import tqdm

    puzzle = parse(GEEM)
    grid = list(itertools.product((1, 2, 10, 50), (0.5, 0.7, 0.9), (0.01, 0.1, 0.5)))
    rows = []
    for hms, hmcr, par in tqdm(grid, desc="settings"):
        out = {}
        for fitness in ("sum45", "missing"):
            rs = [harmony_search(puzzle, rng=s, fitness=fitness, hms=hms, hmcr=hmcr, par=par,
                                 max_imp=10_000) for s in range(args.runs)]
            out[fitness] = (float(np.median([r.improvisations for r in rs])),
                            float(np.median([r.best_cost for r in rs])),
                            sum(r.false_optimum for r in rs), sum(r.solved for r in rs))
        rows.append((hms, hmcr, par, out))
    print(f"\nGeem's puzzle, {args.runs} runs per setting, max 10,000 improvisations")
    print(f"{'HMS':>4} {'HMCR':>5} {'PAR':>5} | {'paper':>12} | {'sum45 imp':>9} {'Z':>4} "
          f"{'false':>5} {'solved':>6} | {'missing imp':>11} {'cost':>4} {'solved':>6}")
    for hms, hmcr, par, out in rows:
        s, m = out["sum45"], out["missing"]
        print(f"{hms:4d} {hmcr:5.2f} {par:5.2f} | {PAPER.get((hms, hmcr, par), '—'):>12} | "
              f"{s[0]:9,.0f} {s[1]:4.0f} {s[2]:5d} {s[3]:6d} | {m[0]:11,.0f} {m[1]:4.0f} "
              f"{m[3]:6d}")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 4, figsize=(13, 3.4), sharey=True)
    for ax, hms in zip(axes, (1, 2, 10, 50)):
        img = np.array([[next(o["sum45"][0] for h, c, p, o in rows
                              if h == hms and c == hmcr and p == par)
                         for par in (0.01, 0.1, 0.5)] for hmcr in (0.5, 0.7, 0.9)])
        im = ax.imshow(np.log10(img), vmin=1, vmax=4, cmap="viridis")
        for (i, j), v in np.ndenumerate(img):
            ax.text(j, i, f"{v:,.0f}", ha="center", va="center", color="w", fontsize=8)
        ax.set_xticks(range(3), ["0.01", "0.1", "0.5"])
        ax.set_yticks(range(3), ["0.5", "0.7", "0.9"])
        ax.set_xlabel("PAR")
        ax.set_title(f"HMS = {hms}")
    axes[0].set_ylabel("HMCR")
    fig.colorbar(im, ax=axes, label="log10 median improvisations (sum45)")
    fig.suptitle("Harmony search on Geem's puzzle: improvisations to fitness 0")
    DOCS_IMG.mkdir(parents=True, exist_ok=True)
    fig.savefig(DOCS_IMG / "geem_sensitivity.png", dpi=100, bbox_inches="tight")
    print("\nwrote docs/img/geem_sensitivity.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
