"""Whether a solve slows down at the stalls after its first: honest models against
copiers who open a solver when stuck.

    python experiments/later_stalls.py [--per-level 40] [--plays 2] [--seed 5] [--jobs 2]

A *stall* is a placement made with no single on the bare board (a technique had to be
found first). The ``stuck_copier`` of ``bench/players.py`` thinks at its first stall,
gives up and types the rest of the solution, so its first stall is slow and the stalls
after it are typed at the pace of singles; an honest player slows down at every stall.
On Tough and Diabolical sudoku.org.uk dailies (the levels with stalls), per solve with a
stall after the first stall episode (a stall placement after a single that followed the
first stall), prints the median log delay at those later stalls less the median at the
placements made from a single, per model: the share of such solves below 0.5 (a
slow-down of under 1.6×) is how often a solve shows "the later stalls were typed like
singles".
"""

from __future__ import annotations

import sys

import numpy as np

from _common import ROOT, stall_level_solves

sys.path.insert(0, str(ROOT / "bench"))

MODELS = ("pencil_marker", "auto_notes", "sweeper", "ladder", "pencilmark",
          "stuck_copier:pencil_marker", "stuck_copier:sweeper", "human_order_copier")
FLOOR_MS = 50.0     # as the player verdict floors a delay


def _one(task) -> tuple[str, tuple[float, float] | None]:
    """(model, (later-stall slow-down, first-stall slow-down) or None without a later
    stall), both in log, each less the median log delay of the placements from a
    single."""
    import players as models
    from fairgrid.analytics.fill_order import fill_order
    from fairgrid.solvers import parse
    from fairgrid.solvers.puzzle_types import puzzle_type

    model, text, solution, mean_s, seed = task
    rng = np.random.default_rng(seed)
    total_s = float(np.exp(np.log(mean_s) + rng.normal(0, 0.35)))
    name, _, base = model.partition(":")
    if base:
        log = models.HIDING_CHEATS[name](text, solution, rng, total_s, base=base)
    else:
        log = {**models.HONEST, **models.HIDING_CHEATS}[name](text, solution, rng, total_s)
    sol = np.array([int(c) for c in solution])
    givens = parse(text).givens.astype(np.int64)
    fill = fill_order(*log.arrays, givens, sol)
    cells = np.asarray(fill.cells)
    _, options, _ = puzzle_type("sudoku").replay(givens, (9, 9), cells, sol)
    t = np.asarray(fill.fill_ms)[cells].astype(float)
    delay = np.log(np.maximum(np.diff(t), FLOOR_MS))
    stall = (options == 0)[1:]
    if not stall.any() or stall.all():
        return model, None
    first = int(np.argmax(stall))
    later = np.zeros_like(stall)
    single_since = False
    for i in range(first + 1, stall.size):
        single_since |= not stall[i]
        later[i] = stall[i] and single_since
    if not later.any():
        return model, None
    base_delay = float(np.median(delay[~stall]))
    return model, (float(np.median(delay[later])) - base_delay, float(delay[first]) - base_delay)


def main() -> int:
    out = stall_level_solves(__doc__, _one, MODELS, per_level=40, plays=2,
                             seed=5)
    print("| model | solves | with a later stall | later stalls' slow-down (log, median) "
          "| below 0.5 | below 0 | first stall's slow-down (log, median) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for m in MODELS:
        got = [o for mm, o in out if mm == m]
        have = np.array([o for o in got if o is not None]).reshape(-1, 2)
        later, first = have[:, 0], have[:, 1]
        print(f"| {m} | {len(got)} | {len(have)} | {np.median(later):.2f} | "
              f"{100 * np.mean(later < 0.5):.0f} % | {100 * np.mean(later < 0):.0f} % | "
              f"{np.median(first):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
