"""Thesis Table 4.3 on janko.at Nurikabe puzzles: every metric per puzzle, and how the
metrics correlate with each other and with puzzle size (Křivánek 2011, §4.2).

    python experiments/nurikabe.py [--workers N] [--seed 0] [--runs 3] [--sa-cap 100000]
                                   [--bf-cap 200000]

1. Rates every puzzle of ../shared/data/nurikabe/janko_nurikabe.tsv (553 puzzles, 3×3
   to 20×36, most 10×10) with :func:`fairgrid.solvers.nurikabe.rate_nurikabe` plus SA at
   the two other cooling rates of the table, in parallel with a progress bar; cached in
   experiments/_build (a run that is stopped resumes). Budgets, per puzzle:
   ``--runs`` (3) runs of each randomised solver (the thesis ran 100); SA capped at
   ``--sa-cap`` (100,000) steps a run at each of alpha = 0.99, 0.999, 0.9999; the brute
   force at ``--bf-cap`` (200,000) islands placed; harmony search 10,000 improvisations
   (the thesis' metric, uncapped); the propagation model uses the file's solution for its
   hints. About 8 minutes on 2 cores (7 min 51 s measured, 2-core AMD EPYC); the big
   puzzles go first, so the bar's early rate is pessimistic.
2. Prints, for each row of Table 4.3, the thesis' correlation with human median times
   beside ours: the metric's median, its Spearman correlation with the puzzle's cells
   over all puzzles, and, on the 303 puzzles of one size (10×10, so size cannot drive
   it), with the brute force, with the best static metric (cells in several islands)
   and with the propagation model's hints. There are no human times for these puzzles:
   the hints of the human-like model stand in as a proxy, which the thesis did not have.
3. Prints the cut points of the service's Nurikabe levels: the 20/40/60/80 % quantiles of
   the prior expected time (``analytics.nurikabe``) over the collection, beside the
   shipped ``LEVEL_BOUNDS_S``.
4. Draws the Spearman matrices (all puzzles; 10×10 only) to docs/img/nurikabe_metrics.png.

Capped runs count with their cap, so SA medians at the cap are lower bounds (the
``solved`` column says how often runs finished).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys

import numpy as np
from scipy.stats import spearmanr

from _common import BUILD, DOCS_IMG, SHARED, need_shared  # noqa: E402
from fairgrid.analytics.nurikabe import LEVEL_BOUNDS_S, expected_log_time

DATA = "nurikabe/janko_nurikabe.tsv"
# Table 4.3: correlation with human median solving time (30 puzzles, Tutor system)
THESIS = [("sa_steps_0.99", "simulated annealing 0.99", 0.03),
          ("sa_steps_0.999", "simulated annealing 0.999", 0.09),
          ("sa_steps_0.9999", "simulated annealing 0.9999", 0.02),
          ("hs_cost", "harmony search", -0.25),
          ("bf_steps", "brute force search", 0.64),
          ("n_islands", "number of islands", -0.51),
          ("island_area", "area of islands", 0.69),
          ("island_distance", "distance from island to island", 0.35),
          ("multi_island_cells", "cells in several islands", 0.74)]
OURS = [("prop_hints", "propagation model: hints"),
        ("prop_unknown", "propagation model: cells left"),
        ("prop_steps", "propagation model: steps"),
        ("island_area_fraction", "area of islands / cells"),
        ("cells", "cells (puzzle size)")]
OTHER_ALPHAS = (0.99, 0.9999)


def _rows() -> list[dict]:
    need_shared()
    path = SHARED / DATA
    if not path.is_file():
        sys.exit(f"error: the reference data {path} is missing")
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def _rate(args) -> tuple[str, dict]:
    """Every metric of one puzzle (runs in a worker)."""
    pid, text, solution, seed, runs, sa_cap, bf_cap = args
    from fairgrid.solvers._rng import puzzle_seed
    from fairgrid.solvers.nurikabe import parse_nurikabe, parse_solution, rate_nurikabe
    from fairgrid.solvers.nurikabe.annealing import sa_metric
    puzzle = parse_nurikabe(text)
    s = puzzle_seed(seed, text)
    m = rate_nurikabe(puzzle, s, runs=runs, sa_alpha=0.999, sa_max_steps=sa_cap,
                      bf_max_steps=bf_cap, solution=parse_solution(solution))
    m["sa_steps_0.999"] = m.pop("sa_steps")
    m["sa_solved_0.999"] = m.pop("sa_solved_fraction")
    for alpha in OTHER_ALPHAS:
        steps, solved, _ = sa_metric(puzzle, rng=s + 1, runs=runs, alpha=alpha,
                                     max_steps=sa_cap)
        m[f"sa_steps_{alpha}"] = steps
        m[f"sa_solved_{alpha}"] = solved
    return pid, m


def metrics(rows, *, seed: int, runs: int, sa_cap: int, bf_cap: int,
            workers: int | None) -> dict[str, dict]:
    """Every puzzle's metrics, from the cache where it has them."""
    from tqdm import tqdm
    BUILD.mkdir(parents=True, exist_ok=True)
    cache = BUILD / f"nurikabe_metrics_seed{seed}_runs{runs}_sa{sa_cap}_bf{bf_cap}.json"
    done = json.loads(cache.read_text()) if cache.exists() else {}
    todo = [(r["id"], r["puzzle"], r["solution"], seed, runs, sa_cap, bf_cap)
            for r in rows if r["id"] not in done]
    if todo:
        # compile (or load) the kernels once before the workers fork
        _rate(("warm-up", "3x3:....1....", "3x3:####o####", 0, 1, 100, 100))
        workers = workers or os.cpu_count() or 1
        # the big puzzles first, so that no worker is left with one at the end
        todo.sort(key=lambda a: -len(a[1]))
        with tqdm(total=len(rows), initial=len(done), desc="rating janko.at Nurikabe",
                  unit="puzzle") as bar:
            if workers > 1:
                from multiprocessing import get_context
                with get_context("fork").Pool(workers) as pool:
                    for k, (pid, m) in enumerate(pool.imap_unordered(_rate, todo)):
                        done[pid] = m
                        bar.update()
                        if k % 50 == 49:
                            cache.write_text(json.dumps(done))
            else:
                for a in todo:
                    pid, m = _rate(a)
                    done[pid] = m
                    bar.update()
        cache.write_text(json.dumps(done))
    return done


def _rho(x, y) -> float:
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(spearmanr(x, y)[0])


def _picture(names, labels, X, X10, path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(15, 6.8), constrained_layout=True)
    for ax, data, title in ((axes[0], X, f"all {len(X)} puzzles"),
                            (axes[1], X10, f"the {len(X10)} puzzles of 10×10")):
        keep = [j for j in range(len(names)) if np.ptp(data[:, j]) > 0]
        rho = spearmanr(data[:, keep])[0]
        im = ax.imshow(rho, cmap="RdBu_r", vmin=-1, vmax=1)
        ax.set_xticks(range(len(keep)), [labels[j] for j in keep], rotation=60, ha="right",
                      fontsize=8)
        ax.set_yticks(range(len(keep)), [labels[j] for j in keep], fontsize=8)
        for a in range(len(keep)):
            for b in range(len(keep)):
                ax.text(b, a, f"{rho[a, b]:.1f}", ha="center", va="center", fontsize=6,
                        color="white" if abs(rho[a, b]) > 0.6 else "black")
        ax.set_title(f"Spearman correlation, {title}")
    fig.colorbar(im, ax=axes, shrink=0.7)
    fig.suptitle("Nurikabe difficulty metrics on janko.at puzzles (thesis Table 4.3 "
                 "metrics, fairgrid's solvers)")
    fig.savefig(path, dpi=110)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", "--jobs", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sa-cap", type=int, default=100_000)
    ap.add_argument("--bf-cap", type=int, default=200_000)
    args = ap.parse_args()

    rows = _rows()
    data = metrics(rows, seed=args.seed, runs=args.runs, sa_cap=args.sa_cap,
                   bf_cap=args.bf_cap, workers=args.workers)
    names = [k for k, _, _ in THESIS] + [k for k, _ in OURS]
    labels = [lab for _, lab, _ in THESIS] + [lab for _, lab in OURS]
    X = np.array([[data[r["id"]][n] for n in names] for r in rows], dtype=float)
    ten = np.array([r["rows"] == "10" and r["cols"] == "10" for r in rows])
    X10 = X[ten]
    col = {n: j for j, n in enumerate(names)}

    print(f"{len(rows)} janko.at Nurikabe puzzles ({ten.sum()} of them 10x10); seed "
          f"{args.seed}, {args.runs} runs a solver, SA cap {args.sa_cap:,} steps, brute "
          f"force cap {args.bf_cap:,} islands\n")
    head = (f"{'metric':<32} {'thesis':>7} {'median':>9} {'solved':>7} {'rho size':>9} "
            f"{'rho bf':>7} {'rho multi':>9} {'rho hints':>9}")
    print("thesis: correlation with human median time (30 puzzles); ours: Spearman rho with "
          "the puzzle's cells\n(all puzzles) and, on the 10x10 ones, with brute-force "
          "steps, cells in several islands and\nthe propagation model's hints")
    print(head)
    print("-" * len(head))
    solved = {"sa_steps_0.99": "sa_solved_0.99", "sa_steps_0.999": "sa_solved_0.999",
              "sa_steps_0.9999": "sa_solved_0.9999", "bf_steps": "bf_solved_fraction"}
    entries = [(k, lab, f"{t:7.2f}") for k, lab, t in THESIS] + \
              [(k, lab, f"{'-':>7}") for k, lab in OURS]
    for key, label, thesis in entries:
        j = col[key]
        frac = (f"{np.mean([data[r['id']][solved[key]] for r in rows]):7.2f}"
                if key in solved else f"{'':>7}")
        print(f"{label:<32} {thesis} {np.median(X[:, j]):9.1f} {frac} "
              f"{_rho(X[:, j], X[:, col['cells']]):9.2f} "
              f"{_rho(X10[:, j], X10[:, col['bf_steps']]):7.2f} "
              f"{_rho(X10[:, j], X10[:, col['multi_island_cells']]):9.2f} "
              f"{_rho(X10[:, j], X10[:, col['prop_hints']]):9.2f}")
    print("\n(solved: share of runs that reached a solution within the cap; medians over "
          "all puzzles)")
    prior = np.exp([expected_log_time(data[r["id"]]) for r in rows])
    cuts = np.quantile(prior, [0.2, 0.4, 0.6, 0.8])
    print("\nlevel cut points: the prior expected time's 20/40/60/80 % quantiles, "
          f"{', '.join(f'{c:.0f}' for c in cuts)} s (shipped: "
          f"{', '.join(f'{c:.0f}' for c in LEVEL_BOUNDS_S)} s)")
    DOCS_IMG.mkdir(parents=True, exist_ok=True)
    path = DOCS_IMG / "nurikabe_metrics.png"
    _picture(names, labels, X, X10, path)
    print(f"wrote {path.relative_to(DOCS_IMG.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
