"""Fit fairgrid's expected-time model on sudoku.org.uk human times, cross-validated.

    python experiments/expected_time_fit.py [--write-calibration] [--workers N] [--no-pencilmark]

1. Rates every puzzle of ../shared/data/sudoku_org_uk_times_train.tsv (2006-2013) with
   the human-like model and the human technique model (cached in experiments/_build;
   about a minute on two cores).
2. Fits log(mean solve time) on candidate feature sets with 10-fold cross-validation,
   with a log-time offset per quarter of a year (the site's solvers got faster over the
   years; see ``analytics.expected_time.fit``), and prints the cross-validated
   correlations overall and within each of the site's levels, with and without the
   offsets.
3. When pencilmark (the test extra) is installed, puts its time estimate through the
   same cross-validation as a one-feature model: the reference ratings were compared
   with.
4. Draws docs/img/expected_time_fit.png; with ``--write-calibration`` writes the chosen
   model to analytics/data/expected_time.json (offsets of 2013, the last year, as the
   intercept).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

import numpy as np
from scipy.stats import pearsonr, spearmanr

from _common import BUILD, DOCS_IMG, ROOT, org_uk_rows  # noqa: E402

LEVELS = ("Gentle", "Moderate", "Tough", "Diabolical")
HUMAN = ["log1p:refutation_sum", "log1p:serate", "lone_single_steps", "log1p:mean_options"]
TECHNIQUES = ["log1p:tq_locked", "log1p:tq_pair", "log1p:tq_subset", "log1p:tq_fish",
              "log1p:tq_wing", "log1p:tq_chain", "log1p:tq_forcing", "tq_hardest",
              "tq_needs_pair", "tq_needs_wing", "tq_needs_chain", "log1p:tq_line_singles",
              "log1p:tq_naked_singles", "tq_lone_steps", "tq_log_options", "log1p:tq_scan",
              "log1p:tq_stuck"]
# the refutation features kept where leaving one out lowered the cross-validated fit
CANDIDATES = {
    "human model (singles + refutation)": HUMAN,
    "technique model": TECHNIQUES + ["givens"],
    "technique + human model": TECHNIQUES + ["log1p:refutation_sum", "lone_single_steps",
                                             "log1p:mean_options", "givens"],
}
CHOSEN = "technique + human model"
TARGETS = {"Moderate": 0.80, "Tough": 0.65}


def quarter(date: str) -> str:
    return f"{date[:4]}Q{(int(date[5:7]) - 1) // 3 + 1}"


def metrics_table(rows, workers):
    """human + technique metrics of every puzzle, cached."""
    from tqdm import tqdm
    from fairgrid.solvers.rate import rate_many
    import hashlib
    BUILD.mkdir(parents=True, exist_ok=True)
    # keyed on the models' code: a change of a technique or a weight rates again
    code = b"".join((ROOT / "solvers" / f).read_bytes()
                    for f in ("techniques.py", "propagation.py", "rate.py"))
    cache = BUILD / f"org_uk_metrics_human_techniques_{hashlib.sha256(code).hexdigest()[:12]}.json"
    if cache.exists():
        data = json.loads(cache.read_text())
        if len(data) == len(rows):
            return data
    data = []
    with tqdm(total=len(rows), desc="rating sudoku.org.uk", unit="puzzle") as bar:
        for (res, err), row in zip(rate_many([r["puzzle"] for r in rows], seed=0,
                                             only=("human", "techniques"), workers=workers,
                                             on_done=lambda: bar.update(1)), rows):
            if err:
                raise SystemExit(f"puzzle {row['date']}: {err}")
            data.append(res.metrics)
    cache.write_text(json.dumps(data))
    return data


PENCILMARK_TIMEOUT_S = 20  # a few diabolical puzzles keep its chain search going for good


def _pencilmark_time(text: str) -> float:
    import pencilmark
    return float(pencilmark.rate(text)["time"])


def pencilmark_times(rows):
    """pencilmark's expected time per puzzle (cached), or None when it is not installed.
    A puzzle it does not rate within :data:`PENCILMARK_TIMEOUT_S` (its search runs in
    native code, so the process is stopped) gets the longest time it gave any puzzle:
    it found none harder."""
    import importlib.util
    import multiprocessing as mp
    if importlib.util.find_spec("pencilmark") is None:
        return None

    from tqdm import tqdm
    cache = BUILD / "org_uk_pencilmark_times.json"
    if cache.exists():
        out = json.loads(cache.read_text())
    else:
        out = []
        pool = mp.get_context("spawn").Pool(1)
        for r in tqdm(rows, desc="pencilmark", unit="puzzle"):
            job = pool.apply_async(_pencilmark_time, (r["puzzle"],))
            try:
                out.append(job.get(timeout=PENCILMARK_TIMEOUT_S))
            except mp.TimeoutError:
                out.append(None)
                pool.terminate()
                pool = mp.get_context("spawn").Pool(1)
        pool.terminate()
        cache.write_text(json.dumps(out))
    longest = max(t for t in out if t is not None)
    gave_up = sum(t is None for t in out)
    if gave_up:
        print(f"pencilmark gave no time for {gave_up} puzzles within "
              f"{PENCILMARK_TIMEOUT_S} s; they count as its longest, {longest:.0f}")
    return [longest if t is None else t for t in out]


def cv_predict(features, rows, seconds, periods=None, folds=10, seed=0):
    """Out-of-fold predictions of log-time, each with its own period's offset when
    ``periods`` is given (the offset is the population's, known for a dated solve)."""
    from fairgrid.analytics.expected_time import fit
    idx = np.random.default_rng(seed).permutation(len(rows))
    out = np.empty(len(rows))
    for k in range(folds):
        test = idx[k::folds]
        train = np.setdiff1d(idx, test)
        train_periods = None if periods is None else [periods[i] for i in train]
        refs = [None] if periods is None else sorted({periods[i] for i in test})
        for ref in refs:
            cal = fit(features, [rows[i] for i in train], seconds[train],
                      periods=train_periods, reference=None if ref is None else [ref])
            for i in test:
                if ref is None or periods[i] == ref:
                    out[i] = cal.expected_log_time(rows[i])
    return out


def figures(pred, seconds, levels, years) -> dict:
    out = {"pearson": float(pearsonr(np.exp(pred), seconds)[0]),
           "spearman": float(spearmanr(pred, seconds)[0]),
           "pearson_log": float(pearsonr(pred, np.log(seconds))[0]),
           "rmse_log": float(np.sqrt(np.mean((pred - np.log(seconds)) ** 2)))}
    for lvl in LEVELS:
        m = levels == lvl
        out[f"spearman_{lvl.lower()}"] = float(spearmanr(pred[m], seconds[m])[0])
        # within one level and one year: no population drift left to help or hurt, the
        # offsets play no part (the mean over years, weighted by puzzles)
        per = [(np.sum(m & (years == y)), spearmanr(pred[m & (years == y)],
                                                    seconds[m & (years == y)])[0])
               for y in np.unique(years) if np.sum(m & (years == y)) >= 10]
        out[f"spearman_{lvl.lower()}_within_year"] = float(
            np.average([r for _, r in per], weights=[n for n, _ in per]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", "--jobs", type=int, default=None)
    ap.add_argument("--write-calibration", action="store_true")
    ap.add_argument("--no-pencilmark", action="store_true",
                    help="leave out the pencilmark comparison")
    args = ap.parse_args()

    from fairgrid.analytics.expected_time import fit
    rows = org_uk_rows()
    metrics = metrics_table(rows, args.workers)
    seconds = np.array([float(r["mean_time_min"]) * 60 for r in rows])
    levels = np.array([r["level"] for r in rows])
    periods = [quarter(r["date"]) for r in rows]
    years = np.array([r["date"][:4] for r in rows])
    print(f"{len(rows)} sudoku.org.uk puzzles ({rows[-1]['date']} .. {rows[0]['date']}), "
          "10-fold cross-validated against the mean human time\n")
    head = (f"{'model':<38} {'offsets':<8} {'pearson':>7} {'spearman':>8} {'log r':>6} | "
            + " ".join(f"{lvl[:8]:>8}" for lvl in LEVELS))
    print(head)
    print("-" * len(head))
    results = {}
    models = dict(CANDIDATES)
    pm = None if args.no_pencilmark else pencilmark_times(rows)
    if pm is not None:
        for d, t in zip(metrics, pm):
            d["pencilmark_time"] = t
        models["pencilmark time (one feature)"] = ["log1p:pencilmark_time"]
    for label, feats in models.items():
        for offsets in (True, False):
            pred = cv_predict(feats, metrics, seconds, periods if offsets else None)
            r = figures(pred, seconds, levels, years)
            results[(label, offsets)] = (r, pred)
            print(f"{label:<38} {'quarter' if offsets else 'none':<8} {r['pearson']:7.3f} "
                  f"{r['spearman']:8.3f} {r['pearson_log']:6.3f} | "
                  + " ".join(f"{r['spearman_' + lvl.lower()]:8.3f}" for lvl in LEVELS))
    print("\nwithin a level and a year (Spearman, mean over years weighted by puzzles; "
          "the offsets play no part)")
    for label in models:
        r = results[(label, True)][0]
        print(f"{label:<38} " + " ".join(
            f"{r['spearman_' + lvl.lower() + '_within_year']:8.3f}" for lvl in LEVELS))
    chosen, pred = results[(CHOSEN, True)]
    print("\nwithin-level targets (chosen model, quarter offsets): "
          + ", ".join(f"{lvl} {chosen['spearman_' + lvl.lower()]:.3f} (>= {t})"
                      for lvl, t in TARGETS.items())
          + f", overall Pearson {chosen['pearson']:.3f} (>= 0.95)")

    last_year = sorted({p for p in periods if p.startswith(max(p[:4] for p in periods))})
    cv = {k: round(v, 4) for k, v in chosen.items()}
    cal = fit(CANDIDATES[CHOSEN], metrics, seconds, periods=periods, reference=last_year,
              cv=cv, source=f"sudoku.org.uk daily puzzles, {len(rows)} puzzles, mean solve "
              f"time, offsets per quarter, intercept of {last_year[0][:4]} "
              "(experiments/expected_time_fit.py)")
    # the spread scoring allows around an expected time: what a population whose offset
    # is not yet known sees (the cross-validated error without offsets), not the
    # within-quarter residual, which assumes the offset is known
    pooled = results[(CHOSEN, False)][0]["rmse_log"]
    cal = dataclasses.replace(cal, residual_sd=round(pooled, 4))
    print(f"\nchosen: {CHOSEN}: log t = {cal.intercept:.3f} + "
          + " + ".join(f"{c:.3f}·{f}" for f, c in zip(cal.features, cal.coef)))
    print(f"sd for scoring (log; cross-validated without offsets) {cal.residual_sd:.3f}; "
          "level cut points (s): "
          + ", ".join(f"{b:.0f}" for b in cal.level_bounds_s))
    if args.write_calibration:
        out = ROOT / "analytics" / "data" / "expected_time.json"
        out.write_text(cal.to_json() + "\n")
        print(f"wrote {out.relative_to(ROOT)}")
    draw(results, seconds, levels, pm is not None)
    return 0


def draw(results, seconds, levels, with_pencilmark: bool) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    chosen, pred = results[(CHOSEN, True)]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.8))
    minutes = seconds / 60
    for lvl, colour in zip(LEVELS, ("tab:green", "tab:blue", "tab:orange", "tab:red")):
        m = levels == lvl
        ax.scatter(np.exp(pred[m]) / 60, minutes[m], s=5, alpha=0.5, c=colour, label=lvl)
    lim = [minutes.min() * 0.9, minutes.max() * 1.1]
    ax.plot(lim, lim, "k--", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("fairgrid expected time (min; cross-validated, with its quarter's offset)")
    ax.set_ylabel("sudoku.org.uk mean solve time (min)")
    ax.set_title(f"Pearson {chosen['pearson']:.2f}, Spearman {chosen['spearman']:.2f}")
    ax.legend(title="site level", markerscale=3)
    labels = list(CANDIDATES) + (["pencilmark time (one feature)"] if with_pencilmark else [])
    width = 0.8 / len(labels)
    x = np.arange(len(LEVELS))
    for k, label in enumerate(labels):
        r = results[(label, True)][0]
        bx.bar(x + k * width, [r["spearman_" + lvl.lower()] for lvl in LEVELS], width,
               label=label)
    bx.set_xticks(x + width * (len(labels) - 1) / 2, LEVELS)
    bx.set_ylim(0, 1)
    bx.set_ylabel("Spearman with human time, within the level")
    bx.set_title("Ranking puzzles of one level (cross-validated)")
    bx.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    DOCS_IMG.mkdir(parents=True, exist_ok=True)
    fig.savefig(DOCS_IMG / "expected_time_fit.png", dpi=110)
    print("wrote docs/img/expected_time_fit.png")


if __name__ == "__main__":
    sys.exit(main())
