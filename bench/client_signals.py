"""What the page's signals (analytics.client_signals: ``away``, ``paste``) add to
detection, per cheat kind, and what they cost honest players.

    python bench/client_signals.py [--puzzles 8] [--per-model 12] [--honest-only]
                                   [--seed 0] [--data DIR]

Puzzles: sudoku.org.uk dailies (../shared/data), Diabolical first, then Tough and
Moderate (stalls are where a cheater looks up a cell). Players: bench/players.py's honest models (none of them
the service's own simulator; ``pencilmark`` is built on PyPI's pencilmark) and its
cheaters who hide. The recorder's block is drawn per solve:

* every player, honest or not, leaves the page a Poisson(1) number of times, at random
  moments, for a log-normal time (median 20 s, 1 in 40 over 2.5 min): a tab switch, a
  message; the moves after it come that much later;
* a cheater who looks up answers *in another tab* is also away for the pause before each
  run of cheated moves (from 1 s after the move before to 2 s before the first cheated
  one); one who looks them up *on another device* leaves no more trace than honest
  people do.

Each solve is scored twice on the same null, with its client block and without: the
difference is what the signals add. Nulls are the cold-start guard bounds
(``calibration.complete({})``), without the order signals (no SA prediction is made
here): figures compare with and without, not with the detection benchmark's.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import _common
import players
from _common import org_uk_rows

KINDS = ("hint_at_stall", "hint_at_hardest", "partial", "assisted")
LEVELS = ("Diabolical", "Tough", "Moderate")


def absences(log: players.PlayerLog, rng, lookups: bool):
    """(the log with its moves shifted by the absences, client block)."""
    t = log.t_ms.astype(np.int64).copy()
    hidden = []
    if lookups:  # the pause before each run of cheated moves was spent in another tab
        first = [i for i in log.cheated_moves if i > 0 and not log.cheated[i - 1]]
        for i in first:
            start, end = int(t[i - 1]) + 1000, int(t[i]) - 2000
            if end > start:
                hidden.append([start, end - start])
    for _ in range(rng.poisson(1.0)):
        i = int(rng.integers(0, t.size - 1)) if t.size > 1 else 0
        ms = int(np.clip(rng.lognormal(np.log(20_000), 1.0), 1000, 600_000))
        start = int(t[i] + 0.3 * (t[min(i + 1, t.size - 1)] - t[i]))
        for h in hidden:  # what comes after the absence moves later, lookups included
            if h[0] >= start:
                h[0] += ms
        t[i + 1:] += ms
        hidden.append([start, ms])
    client = {"version": 1, "paste_count": 0, "pastes": [], "blur": [],
              "hidden": [{"t_ms": s, "ms": m} for s, m in sorted(hidden)]}
    return (t, log.cell, log.digit, log.note), client


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--puzzles", type=int, default=8)
    ap.add_argument("--per-model", type=int, default=12, help="solves per model and puzzle")
    ap.add_argument("--honest-only", action="store_true",
                    help="honest models only: a larger population for their cost")
    ap.add_argument("--seed", type=int, default=0)
    args = _common.parse_with_data(ap)
    from fairgrid.analytics.calibration import complete
    from fairgrid.analytics.deduction import hardest_rung
    from fairgrid.analytics.evidence import score_solve
    from fairgrid.analytics.signals import PuzzleFacts
    from fairgrid.solvers import parse

    rows = org_uk_rows()
    chosen = [r for level in LEVELS for r in rows if r["level"] == level][:args.puzzles]
    rng = np.random.default_rng(args.seed)
    null = complete({})
    # population -> [solves, flagged without, flagged with, away p < 0.05, away p < 0.01]
    tally: dict[str, list[int]] = {}
    started = time.perf_counter()
    for row in chosen:
        text = row["puzzle"]
        sol = np.array([int(ch) for ch in row["solution"]])
        givens = parse(text).givens.astype(np.int64)
        mean_s = 60.0 * float(row["mean_time_min"])
        facts = PuzzleFacts(givens, 3, sol, np.full(81, np.nan), float(np.log(mean_s)), 0.35,
                            hardest_rung=hardest_rung(givens, sol))
        runs = [(name, fn, False) for name, fn in players.HONEST.items()]
        if not args.honest_only:
            runs += [(f"{k} (another tab)", players.HIDING_CHEATS[k], True) for k in KINDS]
            runs += [(f"{k} (another device)", players.HIDING_CHEATS[k], False)
                     for k in KINDS]
        for name, fn, lookups in runs:
            model = name.split(" ")[0]
            for _ in range(args.per_model):
                person = (players.draw_person(model, rng) if model in players.PERSONS
                          else {})
                total_s = float(mean_s * np.exp(rng.normal(0, 0.35)))
                log = fn(text, sol.tolist(), rng, total_s, **person)
                moves, client = absences(log, rng, lookups)
                bare = score_solve(facts, null, *moves, client=None)
                seen = score_solve(facts, null, *moves, client=client)
                away = seen.signal("away")
                t = tally.setdefault(name, [0, 0, 0, 0, 0])
                t[0] += 1
                t[1] += bare.flagged
                t[2] += seen.flagged
                t[3] += bool(away and away.p < 0.05)
                t[4] += bool(away and away.p < 0.01)
    levels = ", ".join(sorted({r["level"] for r in chosen}))
    print(f"{len(chosen)} sudoku.org.uk puzzles ({levels}), {args.per_model} solves "
          f"per model and puzzle, seed {args.seed}; {time.perf_counter() - started:.0f} s; "
          f"{_common.machine()}")
    print(f"| population | solves | flagged without the block | flagged with it | "
          f"away p < 0.05 | away p < 0.01 |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, (n, bare, seen, p05, p01) in tally.items():
        print(f"| {name} | {n} | {bare} | {seen} | {p05} | {p01} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
