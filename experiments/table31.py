"""Thesis Table 3.1 on sudoku.org.uk, and the fit of fairgrid's expected-time model.

    python experiments/table31.py [--write-calibration] [--jobs N]

1. Rates every puzzle of ../shared/data/sudoku_org_uk_times_train.tsv with every metric
   (cached in experiments/_build; ~25 min on 2 cores the first time).
2. Prints each metric's Pearson and Spearman correlation with the mean human time next to
   the thesis' Table 3.1 (which used 731 puzzles of 2006-2009 and median times).
3. Fits the expected-time model (analytics.expected_time) on candidate feature sets with
   10-fold cross-validation, prints the cross-validated correlations, and with
   ``--write-calibration`` writes the chosen model to analytics/data/expected_time.json.
4. Draws docs/img/expected_time_fit.png (cross-validated prediction against human time).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from scipy.stats import pearsonr, spearmanr

from _common import DOCS_IMG, ROOT, org_uk_metrics  # noqa: E402

THESIS = {"backtrack_steps": ("brute force", 0.25), "harmony_cost": ("harmony search", 0.22),
          "sa_steps": ("simulated annealing", 0.39),
          "relaxation_count": ("constraint relaxation", 0.46),
          "serate": ("serate metric", 0.80), "refutation_sum": ("refutation sum", 0.83)}

CANDIDATES = {
    "serate": ["log1p:serate"],
    "refutation sum": ["log1p:refutation_sum"],
    "human model": ["log1p:refutation_sum", "log1p:serate", "lone_single_steps",
                    "log1p:mean_options"],
    "human model + givens": ["log1p:refutation_sum", "log1p:serate", "lone_single_steps",
                             "log1p:mean_options", "givens"],
    "all": ["log1p:refutation_sum", "log1p:serate", "lone_single_steps",
            "log1p:mean_options", "givens", "log1p:sa_steps", "log1p:backtrack_steps",
            "relaxation_log10", "log1p:hill_iterations", "harmony_cost"],
}
CHOSEN = "human model"


def cv_predict(features, rows, seconds, folds=10, seed=0):
    """Out-of-fold predictions of log-time (each puzzle predicted by a model not fitted on it)."""
    from fairgrid.analytics.expected_time import fit
    idx = np.random.default_rng(seed).permutation(len(rows))
    out = np.empty(len(rows))
    for k in range(folds):
        test = idx[k::folds]
        train = np.setdiff1d(idx, test)
        cal = fit(features, [rows[i] for i in train], seconds[train])
        out[test] = [cal.expected_log_time(rows[i]) for i in test]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--write-calibration", action="store_true")
    args = ap.parse_args()

    from fairgrid.analytics.expected_time import fit
    rows, X, names = org_uk_metrics(jobs=args.jobs)
    minutes = np.array([float(r["mean_time_min"]) for r in rows])
    seconds = minutes * 60
    metrics = [dict(zip(names, x)) for x in X]

    print(f"{len(rows)} sudoku.org.uk puzzles ({rows[-1]['date']} .. {rows[0]['date']}); "
          "correlation with mean human time\n")
    print(f"{'metric':<22} {'pearson':>8} {'spearman':>9} {'log-log r':>10}   thesis (org)")
    for j, name in enumerate(names):
        x = X[:, j]
        if np.ptp(x) == 0:
            continue
        pr = pearsonr(x, minutes)[0]
        sr = spearmanr(x, minutes)[0]
        lr = pearsonr(np.log1p(x - x.min()), np.log(minutes))[0]
        thesis = THESIS.get(name)
        t = f"{thesis[0]} {thesis[1]:.2f}" if thesis else ""
        print(f"{name:<22} {pr:8.3f} {sr:9.3f} {lr:10.3f}   {t}")

    print("\nexpected-time model, 10-fold cross-validated (prediction vs mean time)")
    print(f"{'features':<24} {'pearson':>8} {'spearman':>9} {'rmse log':>9}")
    results = {}
    for label, feats in CANDIDATES.items():
        pred = cv_predict(feats, metrics, seconds)
        y = np.log(seconds)
        results[label] = {"pearson": float(pearsonr(np.exp(pred), seconds)[0]),
                          "spearman": float(spearmanr(pred, seconds)[0]),
                          "rmse_log": float(np.sqrt(np.mean((pred - y) ** 2))),
                          "pred": pred}
        r = results[label]
        print(f"{label:<24} {r['pearson']:8.3f} {r['spearman']:9.3f} {r['rmse_log']:9.3f}")

    chosen = results[CHOSEN]
    cv = {k: round(v, 4) for k, v in chosen.items() if k != "pred"}
    cal = fit(CANDIDATES[CHOSEN], metrics, seconds, cv=cv,
              source=f"sudoku.org.uk daily puzzles, {len(rows)} puzzles, mean solve time "
              "(experiments/table31.py)")
    print(f"\nchosen: {CHOSEN}: log t = {cal.intercept:.3f} + "
          + " + ".join(f"{c:.3f}·{f}" for f, c in zip(cal.features, cal.coef)))
    print(f"residual sd (log) {cal.residual_sd:.3f}; level cut points (s): "
          + ", ".join(f"{b:.0f}" for b in cal.level_bounds_s))
    if args.write_calibration:
        out = ROOT / "analytics" / "data" / "expected_time.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(cal.to_json() + "\n")
        print(f"wrote {out.relative_to(ROOT)}")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    levels = [r["level"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 5))
    for lvl, colour in zip(("Gentle", "Moderate", "Tough", "Diabolical"),
                           ("tab:green", "tab:blue", "tab:orange", "tab:red")):
        m = np.array([v == lvl for v in levels])
        ax.scatter(np.exp(chosen["pred"][m]) / 60, minutes[m], s=5, alpha=0.5, c=colour,
                   label=lvl)
    lim = [minutes.min() * 0.9, minutes.max() * 1.1]
    ax.plot(lim, lim, "k--", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("fairgrid expected time (min, cross-validated)")
    ax.set_ylabel("sudoku.org.uk mean solve time (min)")
    ax.set_title(f"Expected time vs humans: Pearson {chosen['pearson']:.2f}, "
                 f"Spearman {chosen['spearman']:.2f}")
    ax.legend(title="site level", markerscale=3)
    DOCS_IMG.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(DOCS_IMG / "expected_time_fit.png", dpi=110)
    print("wrote docs/img/expected_time_fit.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
