"""Detection quality on simulated solves: ROC AUC, TPR at FPR 1e-3, honest FPR.

    python bench/detection_eval.py [--puzzles 50] [--honest 60] [--cheats 8] [--jobs 2]

Puzzles: sudoku.org.uk dailies of all four site levels (../shared/data). For each puzzle
the daemon's analysis runs as in production (SA fill-order prediction, human-model
ratings, expected time from the shipped calibration, honest nulls from simulated honest
solves with the analysis seed); then *fresh* simulated solves (other seeds) are scored:
``--honest`` honest players and ``--cheats`` of each cheater kind per puzzle.

Prints, per cheater kind, ROC AUC of the anomaly score against the honest solves and the
true-positive rate at the anomaly threshold that lets through 1 in 1,000 honest solves;
the honest false-positive rate of the default flag rule; and draws docs/img/detection_roc.png.
Caveat printed with the results: honest solves come from the same simulator the nulls
are fitted on, so the honest FPR here is a best case; real players will differ.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np


from _common import DOCS_IMG, org_uk_rows


def _one_puzzle(args):
    text, solution, seed, n_honest, n_cheat = args
    from fairgrid.analytics.evidence import score_solve
    from fairgrid.analytics.signals import PuzzleFacts
    from fairgrid.analytics.simulate import CHEATS, simulate
    from fairgrid.analytics import puzzle_model
    from fairgrid.solvers import parse
    from fairgrid.solvers.fill_order import predict_fill_order

    puzzle = parse(text)
    t0 = time.perf_counter()
    pred = predict_fill_order(puzzle, seed=seed, runs=50, budget_s=10, jobs=1)
    median = [None if np.isnan(v) else float(v) for v in pred.median_rank]
    model = puzzle_model.build(text, solution, median, seed)
    analysis_s = time.perf_counter() - t0
    sol = np.array([int(c) for c in solution])
    rank = np.array([np.nan if v is None else v for v in median], dtype=float)
    facts = PuzzleFacts(puzzle.givens, 3, sol, rank, model.expected_log_s, model.sd_log)
    null = dict(model.null)
    rng = np.random.default_rng(seed + 1_000_000)
    out = []
    score_times = []
    for kind, n in [("honest", n_honest)] + [(c, n_cheat) for c in CHEATS]:
        for _ in range(n):
            sim = simulate(puzzle, sol, kind, rng=rng, expected_log_s=facts.expected_log_s,
                           sd_log=facts.sd_log)
            t1 = time.perf_counter()
            ev = score_solve(facts, null, sim.t_ms, sim.cell, sim.digit, sim.note)
            score_times.append(time.perf_counter() - t1)
            out.append((kind, ev["anomaly"], ev["flagged"]))
    return out, analysis_s, score_times, model["level"]


def auc(pos, neg):
    """ROC AUC by the Mann-Whitney statistic (ties count half)."""
    pos, neg = np.asarray(pos), np.asarray(neg)
    from scipy.stats import rankdata
    r = rankdata(np.concatenate([pos, neg]))
    return float((r[:pos.size].sum() - pos.size * (pos.size + 1) / 2) / (pos.size * neg.size))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--puzzles", type=int, default=50)
    ap.add_argument("--honest", type=int, default=60)
    ap.add_argument("--cheats", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=None)
    args = ap.parse_args()
    from tqdm import tqdm
    from fairgrid.analytics.simulate import CHEATS

    rows = org_uk_rows()
    rng = np.random.default_rng(0)
    by_level = {}
    for r in rows:
        by_level.setdefault(r["level"], []).append(r)
    chosen = []
    per = -(-args.puzzles // len(by_level))
    for level, rs in sorted(by_level.items()):
        chosen += [rs[i] for i in rng.choice(len(rs), min(per, len(rs)), replace=False)]
    chosen = chosen[:args.puzzles]
    tasks = [(r["puzzle"], r["solution"], 1000 + i, args.honest, args.cheats)
             for i, r in enumerate(chosen)]
    results, analysis, score_times, levels = [], [], [], []
    with ProcessPoolExecutor(args.jobs) as pool:
        for out, a_s, st, lvl in tqdm(pool.map(_one_puzzle, tasks), total=len(tasks),
                                     desc="puzzles"):
            results += out
            analysis.append(a_s)
            score_times += st
            levels.append(lvl)
    kinds = np.array([k for k, _, _ in results])
    anomaly = np.array([a for _, a, _ in results])
    flagged = np.array([f for _, _, f in results])
    honest = anomaly[kinds == "honest"]
    thr = float(np.quantile(honest, 0.999))
    print(f"\n{len(chosen)} puzzles (fairgrid levels {sorted(set(levels))}), "
          f"{honest.size} honest and {int((kinds != 'honest').sum())} cheating solves")
    print(f"honest false-positive rate of the default flag rule: "
          f"{flagged[kinds == 'honest'].mean():.4%} ({int(flagged[kinds == 'honest'].sum())} "
          f"of {honest.size})")
    print(f"anomaly threshold at honest FPR 1e-3 (empirical 99.9th percentile): {thr:.2f}")
    print(f"\n{'cheater':<10} {'AUC':>6} {'TPR@1e-3':>9} {'flagged':>8}")
    curves = {}
    for kind in CHEATS:
        a = anomaly[kinds == kind]
        curves[kind] = a
        print(f"{kind:<10} {auc(a, honest):6.3f} {np.mean(a > thr):9.1%} "
              f"{flagged[kinds == kind].mean():8.1%}")
    st = np.array(score_times) * 1000
    print(f"\nscoring one solve (analytics only): median {np.median(st):.2f} ms, "
          f"p99 {np.percentile(st, 99):.2f} ms; puzzle analysis median {np.median(analysis):.1f} s")
    print("caveat: honest solves come from the simulator the nulls are fitted on; the honest "
          "FPR on real players can only be measured on real, reviewed data")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(5.5, 5))
    grid = np.unique(np.concatenate([honest, anomaly]))[::-1]
    for kind, a in curves.items():
        fpr = [(honest >= g).mean() for g in grid]
        tpr = [(a >= g).mean() for g in grid]
        ax.plot(fpr, tpr, label=f"{kind} (AUC {auc(a, honest):.3f})")
    ax.axvline(1e-3, color="grey", ls=":", lw=1)
    ax.set_xscale("log")
    ax.set_xlim(1e-4, 1)
    ax.set_xlabel("honest false-positive rate")
    ax.set_ylabel("cheaters caught")
    ax.set_title("Detection on simulated solves")
    ax.legend(fontsize=8)
    DOCS_IMG.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(DOCS_IMG / "detection_roc.png", dpi=100)
    print("wrote docs/img/detection_roc.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
