"""Jones, Roach & Perkins (Fig. 6): hill-climbing iterations and restarts by number of givens.

    python experiments/jones_givens.py [--per-bin 20] [--runs 3]

Puzzles from ../shared/data (Royle's 17-clue set, QQWing levels, top1465), plus unique
puzzles from fairgrid's generator stopped at 31-45 givens (published sets have few)
are binned by givens as in the paper (16-23, 24-30, 31-36, 37+; the paper's bins overlap
at 30); each is climbed ``--runs`` times with an iteration cap of 20,000. Prints mean
iterations, restarts and solved share per bin next to the paper's, and draws
docs/img/jones_givens.png.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from _common import DOCS_IMG, SHARED, need_shared  # noqa: E402

BINS = [("16-23", 16, 23, 1571.7, 3.09), ("24-30", 24, 30, 548.3, 1.39),
        ("31-36", 31, 36, 64.6, 0.13), ("37+", 37, 81, 1.0, 1.33)]


def _puzzles():
    need_shared()
    texts = []
    for name in ("sudoku17_royle.txt", "qqwing_expert.txt", "qqwing_intermediate.txt",
                 "qqwing_easy.txt", "qqwing_simple.txt", "top1465.txt"):
        texts += [ln.split()[0] for ln in (SHARED / name).read_text().splitlines()[:400]
                  if ln.strip()]
    # published sets rarely have 31+ givens: add generated unique puzzles there
    from fairgrid.solvers import format_line
    from fairgrid.solvers.generator import tournament_puzzle
    rng = np.random.default_rng(7)
    for k in range(60):
        puzzle, _ = tournament_puzzle(3, rng=rng, min_givens=31 + k % 15)
        texts.append(format_line(puzzle.givens, 3))
    return texts


def _climb(args):
    text, runs, seed = args
    from fairgrid.solvers import parse
    from fairgrid.solvers.hill_climbing import hill_metric
    puzzle = parse(text)
    it, restarts, res = hill_metric(puzzle, rng=seed, runs=runs)
    return int(np.count_nonzero(puzzle.givens)), float(np.mean([r.iterations for r in res])), \
        float(np.mean([r.restarts for r in res])), float(np.mean([r.solved for r in res]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-bin", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    from concurrent.futures import ProcessPoolExecutor
    from fairgrid.solvers import parse
    from tqdm import tqdm

    rng = np.random.default_rng(0)
    chosen = []
    texts = _puzzles()
    givens = np.array([np.count_nonzero(parse(t).givens) for t in texts])
    for label, lo, hi, _, _ in BINS:
        idx = np.flatnonzero((givens >= lo) & (givens <= hi))
        chosen += [texts[i] for i in rng.choice(idx, min(args.per_bin, idx.size), replace=False)]
    with ProcessPoolExecutor() as pool:
        out = list(tqdm(pool.map(_climb, [(t, args.runs, i) for i, t in enumerate(chosen)]),
                        total=len(chosen), desc="puzzles"))
    out = np.array(out)
    print(f"\n{'givens':>7} {'puzzles':>7} {'iterations':>11} {'restarts':>9} {'solved':>7}"
          f"   paper: iterations restarts")
    means = []
    for label, lo, hi, p_it, p_re in BINS:
        m = (out[:, 0] >= lo) & (out[:, 0] <= hi)
        row = out[m].mean(axis=0) if m.any() else np.full(4, np.nan)
        means.append(row)
        print(f"{label:>7} {int(m.sum()):7d} {row[1]:11,.0f} {row[2]:9.2f} {row[3]:7.0%}"
              f"   {p_it:10,.1f} {p_re:8.2f}")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.scatter(out[:, 0], out[:, 1], s=10, alpha=0.5, label="fairgrid, one puzzle")
    ax.plot([(lo + min(hi, 45)) / 2 for _, lo, hi, _, _ in BINS], [b[3] for b in BINS], "rs--",
            label="paper, bin mean")
    ax.set_yscale("log")
    ax.set_xlabel("givens")
    ax.set_ylabel("iterations (mean of runs, cap 20,000)")
    ax.legend()
    ax.set_title("Hill climbing: iterations by number of givens")
    DOCS_IMG.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(DOCS_IMG / "jones_givens.png", dpi=100)
    print("wrote docs/img/jones_givens.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
