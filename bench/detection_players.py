"""Per-solve detection against players modelled outside the service: honest pencil-markers,
auto-notes, sweepers, ladder climbers and PyPI's pencilmark; cheaters who take a hint at
the stall or one hint at the hardest step. Cold start and after the nightly job.

    python bench/detection_players.py [--per-level 4] [--honest 4] [--cheaters 4]
                                      [--paces 1,3,6] [--season N] [--workers N]
                                      [--seed 1] [--out FILE.json] [--data DIR]

Puzzles: ``--per-level`` sudoku.org.uk dailies of each of the site's four levels
(../shared/data), each with the daemon's production analysis. People: ``--honest`` per
(honest model, pace) and ``--cheaters`` per (cheat, pace), each with habits of their own
(``bench/players.py``), a skill drawn from N(0, 0.5) and a pace of 1x, 3x or 6x the
shipped calibration's expected time; each solves ``--season`` puzzles (default: all).
Every solve is scored at cold start, then after the nightly job (fitted on the first
two thirds of the puzzles' solves not flagged cold, exactly as ``detection_eval.py``).

Prints, per phase: honest solves flagged per model by level and by pace (target <= 0.1 %
everywhere); per cheat and pace the ROC AUC of the anomaly against honest solves of the
same pace (every person solves every puzzle when ``--season`` covers them all), over
all its solves and over the solves where a hint was taken against honest solves of those
puzzles at that pace (a puzzle with no stall offers no hint), the share flagged, and for
the hint at the stall the share flagged among solves with two or more hints; per model
the mean per-solve log-likelihood ratios (``Evidence.llr``) and the AUC of the hints'
sum (over the hinted solves: against honest solves of the same puzzles, every pace);
scoring time per solve (the CPU time of one process, median and p99, so other work on
the machine does not count). Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

import _common
import players as models
from _common import auc, machine, org_uk_rows
from detection_eval import (SITE_LEVELS, SKILL_SD, _analyse, _puzzle_inputs, _score,
                            after_nightly)

from fairgrid.analytics.player_verdict import HINTS, RATIO_KINDS

CHEATS = ("hint_at_stall", "hint_at_hardest")
PACES = (1.0, 3.0, 6.0)


def _solve(kind, text, sol, rng, expected_log_s, sd_log, pace, skill, person):
    """One log of ``kind`` and its count of cheated placements."""
    total_s = float(np.exp(expected_log_s - np.log(pace) - skill + rng.normal(0, sd_log)))
    fn = {**models.HONEST, **models.HIDING_CHEATS}[kind]
    log = fn(text, sol, rng, total_s, **person)
    return tuple(np.asarray(a) for a in log.arrays), int(log.cheated.sum())


def _puzzle(args):
    """Every solve of one puzzle, scored at cold start."""
    j, text, solution, median, model_doc, plays, seed = args
    model, inputs, sol, rng = _puzzle_inputs(text, solution, median, model_doc, seed)
    made = [_solve(kind, text, sol, rng, model.expected_log_s, model.sd_log, pace, skill,
                   person) for _, kind, pace, skill, person in plays]
    logs = [m[0] for m in made]
    return j, logs, [m[1] for m in made], _score(inputs, logs, [None] * len(logs))


def _people(args, rng, n_p):
    """(people, {puzzle: [(person, kind, pace, skill, habits)]})."""
    people, plays = [], {j: [] for j in range(n_p)}
    season = min(args.season or n_p, n_p)
    for kinds, count in ((tuple(models.HONEST), args.honest), (CHEATS, args.cheaters)):
        for kind in kinds:
            for pace in args.paces:
                for _ in range(count):
                    pid = len(people)
                    skill = float(rng.normal(0, SKILL_SD))
                    person = (models.draw_person(kind, rng) if kind in models.PERSONS
                              else {})
                    people.append({"id": pid, "kind": kind, "pace": pace})
                    for j in rng.choice(n_p, season, replace=False):
                        plays[int(j)].append((pid, kind, pace, skill, person))
    return people, plays


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-level", type=int, default=4, help="puzzles per site level")
    ap.add_argument("--honest", type=int, default=4, help="people per (model, pace)")
    ap.add_argument("--cheaters", type=int, default=4, help="people per (cheat, pace)")
    ap.add_argument("--paces", default=",".join(f"{p:g}" for p in PACES))
    ap.add_argument("--season", type=int, default=0, help="puzzles per person (0: all)")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="write the figures as JSON to this file")
    args = _common.parse_with_data(ap)
    args.paces = tuple(float(p) for p in args.paces.split(","))
    from tqdm import tqdm

    t_start = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    by_level: dict[str, list] = {}
    for r in org_uk_rows():
        by_level.setdefault(r["level"], []).append(r)
    picks = {lv: rng.choice(len(by_level[lv]), args.per_level, replace=False)
             for lv in SITE_LEVELS}
    # levels interleaved, so the nightly job's first two thirds hold every level
    chosen = [by_level[lv][picks[lv][i]] for i in range(args.per_level) for lv in SITE_LEVELS]
    puzzles = [{"text": r["puzzle"], "solution": r["solution"], "site": r["level"]}
               for r in chosen]
    n_p = len(puzzles)
    people, plays = _people(args, rng, n_p)
    bar = {"file": sys.stderr, "mininterval": 5}
    with ProcessPoolExecutor(args.workers) as pool:
        tasks = [(p["text"], p["solution"], 1000 + j) for j, p in enumerate(puzzles)]
        for j, (median, model) in enumerate(tqdm(pool.map(_analyse, tasks), total=n_p,
                                                 desc="analysis", **bar)):
            puzzles[j]["median"], puzzles[j]["model"] = median, model
        solves, cold = [], []
        tasks = [(j, p["text"], p["solution"], p["median"], p["model"], plays[j],
                  5000 + args.seed * 100 + j) for j, p in enumerate(puzzles)]
        for j, logs, hints, scored in tqdm(pool.map(_puzzle, tasks), total=n_p,
                                           desc="solves, cold start", **bar):
            for (pid, kind, pace, _, _), log, h, sc in zip(plays[j], logs, hints, scored):
                solves.append({"j": j, "player": pid, "kind": kind, "pace": pace,
                               "hints": h, "log": log})
                cold.append(sc)
        _, _, after = after_nightly(pool, puzzles, solves, cold, mininterval=5)
    report = _report(puzzles, solves, cold, after, args, time.perf_counter() - t_start)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(report, fh, indent=1)
    return 0


def _report(puzzles, solves, cold, after, args, seconds):
    kind = np.array([s["kind"] for s in solves])
    pace = np.array([s["pace"] for s in solves])
    hints = np.array([s["hints"] for s in solves])
    site = np.array([puzzles[s["j"]]["site"] for s in solves])
    puzzle = np.array([s["j"] for s in solves])
    honest = np.isin(kind, tuple(models.HONEST))
    report = {"machine": machine(), "date": time.strftime("%Y-%m-%d"),
              "seconds": round(seconds), "args": {k: v for k, v in vars(args).items()},
              "puzzles": len(puzzles), "solves": len(solves),
              "honest_solves": int(honest.sum()), "phases": {}}
    print(f"\n{len(puzzles)} puzzles ({args.per_level} per level); {len(solves)} solves, "
          f"{int(honest.sum())} honest; paces {args.paces}")
    groups = ([(lv, site == lv) for lv in SITE_LEVELS]
              + [(f"{p:g}x", pace == p) for p in args.paces]
              + [("all", np.ones(len(solves), bool))])
    for phase, res in (("cold start", cold), ("after nightly", after)):
        anomaly = np.array([r[1] for r in res])
        flagged = np.array([r[2] for r in res])
        llr = [r[6] for r in res]
        out = {"honest": {}, "cheats": {}, "honest_flagged": []}
        print(f"\n== {phase}: honest solves flagged (target <= 0.1 %)")
        print(f"{'model':<15}" + "".join(f"{g:>12}" for g, _ in groups))
        for m in models.HONEST:
            cells = []
            for g, mask in groups:
                sel = (kind == m) & mask
                f, n = int(flagged[sel].sum()), int(sel.sum())
                out["honest"].setdefault(m, {})[g] = [f, n]
                cells.append(f"{f}/{n}" + ("" if f <= 1e-3 * n else " !"))
            print(f"{m:<15}" + "".join(f"{c:>12}" for c in cells))
        for k in np.flatnonzero(honest & flagged):
            why = {n: p for n, p in res[k][4].items() if p < 0.05}
            out["honest_flagged"].append({"model": kind[k], "pace": pace[k],
                                          "site": site[k], "signals": why})
            print(f"  flagged: {kind[k]} {pace[k]:g}x {site[k]}: {why}")
        print(f"\n{'cheat':<16}{'pace':>6}{'AUC':>8}{'AUC hinted':>12}{'flagged':>14}"
              f"{'2+ hints':>14}")
        for c in CHEATS:
            for g, mask in [(f"{p:g}x", pace == p) for p in args.paces] + [
                    ("all", np.ones(len(solves), bool))]:
                sel = (kind == c) & mask
                a = auc(anomaly[sel], anomaly[honest & mask])
                # a puzzle without a stall gives the hint-taker no hint to take: its
                # solves are honest ones, whatever the detector
                took = sel & (hints >= 1)
                same = honest & mask & np.isin(puzzle, np.unique(puzzle[took]))
                a1 = auc(anomaly[took], anomaly[same]) if took.any() else None
                two = sel & (hints >= 2)
                row = {"auc": round(a, 4),
                       "auc_hinted": None if a1 is None else round(a1, 4),
                       "hinted": int(took.sum()),
                       "flagged": [int(flagged[sel].sum()), int(sel.sum())],
                       "flagged_2plus": [int(flagged[two].sum()), int(two.sum())]}
                out["cheats"].setdefault(c, {})[g] = row
                print(f"{c:<16}{g:>6}{a:8.3f}{'-' if a1 is None else f'{a1:.3f}':>12}"
                      f"{row['flagged'][0]:>8}/{row['flagged'][1]:<5}"
                      f"{row['flagged_2plus'][0]:>8}/{row['flagged_2plus'][1]:<5}")
        # the hints' ratios (the stall pace is another kind of the player verdict)
        total = np.array([sum(x.get(k, 0.0) for k in RATIO_KINDS[HINTS]) for x in llr])
        print("\nper-solve log-likelihood ratios (Evidence.llr), mean per model:")
        for m in tuple(models.HONEST) + CHEATS:
            sel = kind == m
            keys = sorted({key for i in np.flatnonzero(sel) for key in llr[i]})
            means = {key: round(float(np.mean([llr[i].get(key, 0.0)
                                               for i in np.flatnonzero(sel)])), 3)
                     for key in keys}
            out.setdefault("llr_mean", {})[m] = means
            took = sel & (hints >= 1)
            extra = ""
            if m in CHEATS and took.any():
                # against honest solves of the puzzles where hints were taken
                same = honest & np.isin(puzzle, np.unique(puzzle[took]))
                row = {"all": round(auc(total[sel], total[honest]), 4),
                       "hinted": round(auc(total[took], total[same]), 4),
                       "hinted_solves": int(took.sum())}
                out.setdefault("llr_auc", {})[m] = row
                extra = (f"  AUC of the sum {row['all']:.3f}; of the {row['hinted_solves']} "
                         f"solves with a hint, against honest solves of their puzzles "
                         f"{row['hinted']:.3f}")
            print(f"  {m:<15} {means}{extra}")
        report["phases"][phase] = out
    spent = 1000 * np.array([r[5] for r in cold])  # ms
    report["score_ms"] = {"median": round(float(np.median(spent)), 2),
                          "p99": round(float(np.percentile(spent, 99)), 2)}
    print(f"\nscoring one solve (CPU time, one core): median {np.median(spent):.2f} ms, "
          f"p99 {np.percentile(spent, 99):.2f} ms, {spent.size} solves; per model:")
    for m in tuple(models.HONEST) + CHEATS:
        mine = spent[kind == m]
        report["score_ms"][m] = {"median": round(float(np.median(mine)), 2),
                                 "p99": round(float(np.percentile(mine, 99)), 2)}
        print(f"  {m:<15} median {np.median(mine):.2f} ms, p99 "
              f"{np.percentile(mine, 99):.2f} ms")
    print(f"{seconds:.0f} s on {machine()}")
    return report


if __name__ == "__main__":
    sys.exit(main())
