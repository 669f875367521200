"""How alike two people's logs of one puzzle are, and whether a log that repeats another is caught.

    python bench/log_match.py [--per-level 5] [--players 30] [--seed 3]

Puzzles: ``--per-level`` sudoku.org.uk dailies of each of the site's four levels
(../shared/data). On each, ``--players`` honest people of every model solve it at their
own pace (N(0, 0.5) in log around the site's mean time): the five models of
``bench/players.py`` (the pencilmark model runs PyPI's solver, code this project did not
write) and the service's own simulated players (``honest``, ``scanner``), 7 models in
all. Then:

* **honest pairs**: every two solves of a puzzle compared as ``analytics.log_match``
  compares them; per pair of models, the smallest spread of the differences (sd) and the
  smallest pair p. And each solve judged as scoring judges it, against all the solves of
  its puzzle before it: how many reach the flag line (p below 10⁻⁶);
* **repeats**: for each honest solve, another player's repeat of it (the source among
  the earlier solves): every time scaled by 0.6–1.4, and each gap multiplied by
  exp(N(0, σ)); or a third of the gaps redrawn at random (``edit``). How many are caught
  (p below 10⁻⁶), per σ;
* **cost**: :func:`closest` against 2,000 earlier prints (``scoring.MAX_COMPARED``)
  and 10,000, as a ratio of the time to score one solve of the same puzzle
  (``analytics.evidence.score_solve``).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

import numpy as np

import players as models_
from _common import machine, org_uk_rows
from detection_eval import SITE_LEVELS, _analyse, _puzzle_inputs

MODELS = ("pencil_marker", "auto_notes", "sweeper", "ladder", "pencilmark", "honest",
          "scanner")
JITTER = (0.0, 0.05, 0.1, 0.2, 0.3)
LINE = 1e-6


def _log(model, text, sol, rng, total_s):
    from fairgrid.analytics.simulate import simulate
    from fairgrid.solvers import parse
    if model in ("honest", "scanner"):
        s = simulate(parse(text), np.array(sol), model, rng=rng,
                     expected_log_s=float(np.log(total_s)))
        return s.t_ms, s.cell, s.digit, s.note
    fn = models_.HONEST[model]
    if model == "pencilmark":
        return fn(text, sol, rng, total_s).arrays
    return fn(text, sol, rng, total_s, **models_.draw_person(model, rng)).arrays


def _repeat(log, rng, sigma: float, edit: bool):
    """Another player's repeat of ``log``: placements only, times scaled, gaps jittered."""
    t, cell, digit, note = (np.asarray(a) for a in log)
    keep = ~np.asarray(note, bool)
    t, cell, digit = t[keep].astype(float), cell[keep], digit[keep]
    gaps = np.diff(np.concatenate([[0.0], t]))
    if edit:
        k = rng.random(gaps.size) < 1 / 3
        gaps[k] = rng.choice(gaps, int(k.sum()))
    else:
        gaps = gaps * np.exp(rng.normal(0, sigma, gaps.size))
    t = np.cumsum(gaps) * rng.uniform(0.6, 1.4)
    return t.round().astype(np.int64), cell, digit, np.zeros(t.size, bool)


def _spread(a, b) -> float:
    """The sd of the differences of two prints' log gaps, less their median, over the
    cells both timed."""
    d = b[0] - a[0]
    d = d[np.isfinite(d)]
    return float(np.std(d - np.median(d), ddof=1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-level", type=int, default=5)
    ap.add_argument("--players", type=int, default=30)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    from tqdm import tqdm

    from fairgrid.analytics.log_match import closest, timing_print

    rng = np.random.default_rng(args.seed)
    rows = org_uk_rows()
    puzzles = []
    for level in SITE_LEVELS:
        cand = [r for r in rows if r["level"] == level]
        puzzles += [cand[i] for i in rng.permutation(len(cand))[:args.per_level]]
    started = time.perf_counter()
    pair_sd, pair_p = {}, {}
    honest_p, caught = [], {s: [] for s in (*JITTER, "edit")}
    for row in tqdm(puzzles, desc="puzzles", file=sys.stderr):
        text, sol = row["puzzle"], [int(c) for c in row["solution"]]
        mean_s = float(row["mean_time_min"]) * 60
        solves = []
        for model in MODELS:
            for _ in range(args.players):
                total = float(np.exp(np.log(mean_s) + rng.normal(0, 0.5)))
                log = _log(model, text, sol, rng, total)
                solves.append((model, log, timing_print(*log, 81)))
        order = rng.permutation(len(solves))
        solves = [solves[i] for i in order]
        prints = np.stack([s[2] for s in solves])
        for (i, (ma, _, pa)), (j, (mb, _, pb)) in itertools.combinations(
                enumerate(solves), 2):
            m = closest(pa, pb[None])
            if m is None:
                continue
            key = tuple(sorted((ma, mb)))
            pair_sd[key] = min(pair_sd.get(key, np.inf), _spread(pa, pb))
            pair_p[key] = min(pair_p.get(key, 1.0), m.pair_p)
        for i in range(1, len(solves)):
            m = closest(prints[i], prints[:i])
            honest_p.append((solves[i][0], 1.0 if m is None else m.p))
        for i in range(len(solves)):
            for sigma in caught:
                rep = _repeat(solves[i][1], rng, 0.0 if sigma == "edit" else sigma,
                              sigma == "edit")
                m = closest(timing_print(*rep, 81), prints)
                caught[sigma].append(m is not None and m.p < LINE and m.index == i)
    print(f"# {machine()}; {len(puzzles)} dailies, {args.players} players a model, "
          f"{time.perf_counter() - started:.0f} s")
    print("\nhonest pairs (per pair of models): least sd of the differences, least pair p")
    for key in sorted(pair_sd):
        print(f"  {key[0]:>13} {key[1]:>13}  sd {pair_sd[key]:.3f}  p {pair_p[key]:.2g}")
    ps = np.array([p for _, p in honest_p])
    print(f"\nhonest solves against every earlier solve of their puzzle: {ps.size}; "
          f"flagged (p < {LINE:g}): {int((ps < LINE).sum())}; least p {ps.min():.2g}")
    for model in MODELS:
        mp = np.array([p for m, p in honest_p if m == model])
        print(f"  {model:>13}: {mp.size} solves, least p {mp.min():.2g}")
    print("\nrepeats caught (p < 1e-6, matched to their source):")
    for sigma, hits in caught.items():
        what = "a third of the gaps redrawn" if sigma == "edit" else f"jitter sd {sigma}"
        print(f"  {what:>28}: {sum(hits)} of {len(hits)} ({100 * np.mean(hits):.1f} %)")
    _cost(puzzles[-1], prints, rng)
    return 0


def _cost(row, prints, rng) -> None:
    from fairgrid.analytics.evidence import score_solve
    from fairgrid.analytics.log_match import closest

    text, solution = row["puzzle"], row["solution"]
    median, model_doc = _analyse((text, solution, 1))
    _, inputs, sol, _ = _puzzle_inputs(text, solution, median, model_doc, 1)
    log = _log("sweeper", text, list(sol), rng, 600.0)
    reps = 20
    t0 = time.perf_counter()
    for _ in range(reps):
        score_solve(inputs.facts_without_skill, inputs.null, *log)
    per_solve = (time.perf_counter() - t0) / reps
    print(f"\ncost of a comparison, against scoring one solve ({per_solve * 1000:.1f} ms):")
    for m in (2_000, 10_000):
        many = prints[rng.integers(0, len(prints), m)]
        t0 = time.perf_counter()
        for _ in range(reps):
            closest(prints[0], many)
        t = (time.perf_counter() - t0) / reps
        print(f"  {m:>6} earlier prints: {t * 1000:.1f} ms, {t / per_solve:.2f}x a solve's "
              f"scoring")


if __name__ == "__main__":
    raise SystemExit(main())
