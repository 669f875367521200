"""How quickly each stall's first cell comes: the rates behind the ``stall_pace`` ratio.

    python experiments/stall_pace.py --seed 11 --per-level 16 [--plays 3] [--jobs 2]
    python experiments/stall_pace.py --seed 12 --per-level 16

A *stall start* is a placement made with no single on the bare board after one made
from a single (a technique had to be found first), unless the player's own marks proved
the cell then. ``analytics.signals`` weighs it by how soon it came, in bands of the
solve's median interval between placements (``STALL_BANDS``). Plays the honest models
and the hiding cheats of ``bench/players.py`` on Tough and Diabolical sudoku.org.uk
dailies (the levels that stall a singles solver) and prints per model the stall starts,
the share that came within each band's end, and the mean of the solve's ratio
(``stall_pace_llr``) over solves that have one: for an honest model it must be at most
one (the season's sum test needs it), as each share must stay within ``QUICK_HONEST``'s
for the ratio's bound to hold for people nobody modelled. The
timeline is rebuilt here as scoring builds it (fill order, replay, the deduction's
marks), without the puzzle analysis scoring needs. Seeds 11 and 12 are those no reported benchmark
run uses; their two tables together are the calibration's data.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from _common import ROOT, stall_level_solves

sys.path.insert(0, str(ROOT / "bench"))

MODELS = ("pencil_marker", "auto_notes", "sweeper", "ladder", "pencilmark",
          "hint_at_stall", "human_order_copier", "difficulty_copier",
          "stuck_copier:pencil_marker", "stuck_copier:sweeper", "partial")


def _one(task) -> tuple[str, tuple[int, ...] | None, float | None]:
    """(model, the stall starts in each band or None, the solve's stall-pace ratio)."""
    import players as models
    from fairgrid.analytics.deduction import deduce
    from fairgrid.analytics.fill_order import fill_order
    from fairgrid.analytics.signals import stall_pace_llr, stall_starts
    from fairgrid.solvers import parse
    from fairgrid.solvers.puzzle_types import puzzle_type

    model, text, solution, mean_s, seed = task
    rng = np.random.default_rng(seed)
    total_s = float(np.exp(np.log(mean_s) + rng.normal(0, 0.35)))
    name, _, base = model.partition(":")
    play = {**models.HONEST, **models.HIDING_CHEATS}[name]
    person = models.draw_person(name, rng) if name in models.PERSONS else {}
    log = (play(text, solution, rng, total_s, base=base, **person) if base else
           play(text, solution, rng, total_s, **person))
    sol = np.array([int(c) for c in solution])
    givens = parse(text).givens.astype(np.int64)
    fill = fill_order(*log.arrays, givens, sol)
    cells = np.asarray(fill.cells)
    # as scoring reads it: singles on offer from the replay, each cell's fill time, and
    # where the player's own marks proved the cell
    _, options, _ = puzzle_type("sudoku").replay(givens, (9, 9), cells, sol)
    t = np.asarray(fill.fill_ms)[cells]
    marked = deduce(givens, sol, fill, *log.arrays).by_marks
    return (model, stall_starts(t, options == 0, marked),
            stall_pace_llr(t, options == 0, marked))


def main() -> int:
    from fairgrid.analytics.signals import QUICK_HONEST, STALL_BANDS

    out = stall_level_solves(__doc__, _one, MODELS, per_level=16, plays=3,
                             seed=11)
    ends = " | ".join(f"within {b:g}x" for b in STALL_BANDS)
    print(f"| model | solves | with a stall start | stall starts | {ends} | "
          "mean ratio a solve |")
    print("| --- | ---: | ---: | ---: | " + "---: | " * len(STALL_BANDS) + "---: |")
    for m in MODELS:
        got = [(s, r) for mm, s, r in out if mm == m]
        have = [(s, r) for s, r in got if s is not None]
        bands = np.sum([s for s, _ in have], axis=0) if have else np.zeros(len(STALL_BANDS) + 1)
        starts = max(int(bands.sum()), 1)
        within = " | ".join(f"{100 * c / starts:.0f} %" for c in np.cumsum(bands)[:-1])
        mean = float(np.mean([math.exp(r) for _, r in have])) if have else float("nan")
        print(f"| {m} | {len(got)} | {len(have)} | {int(bands.sum())} | {within} | "
              f"{mean:.2f} |")
    print("the most a person is taken to be within each: "
          + ", ".join(f"{100 * q:.0f} %" for q in QUICK_HONEST))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
