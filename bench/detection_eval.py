"""Detection quality against several honest-player models: a season, cold start and after
the nightly job.

    python bench/detection_eval.py [--puzzles 60] [--players 56] [--per-player 20]
                                   [--cheaters 4] [--workers N] [--out FILE.json]
                                   [--seasons-out FILE.pkl.gz]

Puzzles: sudoku.org.uk dailies, as many of each of the site's four levels (../shared/data).
Each puzzle gets the daemon's production analysis (SA fill-order prediction, human-model
ratings, expected time from the shipped calibration, nulls from simulated honest solves).

Players, each solving ``--per-player`` puzzles drawn at random:

* honest, ``--players`` for every (model, speed): three models of different structure —
  ``fairgrid`` (the propagation model the cold-start nulls are simulated from),
  ``scanner`` (digit sweeps, scan-effort think times with breaks; shares no code with
  it) and ``pencilmark`` (the technique-by-technique steps of PyPI's pencilmark, a
  grader this project did not write; needs the test extras) — at 0.3x, 1x and 3x the
  speed of the shipped calibration (and 6x, a field of tournament players), each person's skill drawn from N(0, 0.5) around it;
* cheaters, ``--cheaters`` per behaviour, each copying on half of their puzzles (honest,
  fairgrid model, on the rest).

Phase 1, cold start: every solve scored against the analysis alone. Phase 2, after the
nightly job: ratings and skills fitted on two thirds of the puzzles' solves not flagged at
cold start (every level's first two thirds), per-level nulls and consensus orders learnt
from them; every solve re-scored (the rest of the puzzles, a third of each level, are
"new": prior difficulty, learnt level nulls).
Players: each player's season verdict (``analytics.player_verdict``), as the service
judges a player, in both phases.

Prints the honest false-positive rate per model, speed and site level in both phases,
each cheat behaviour's ROC AUC and catch rate, the players flagged; draws
docs/img/detection_roc.png; ``--out`` writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import gzip
import json
import pickle
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from _common import (auc, DOCS_IMG, judge_seasons, machine, org_uk_rows,
                     portal_player_null, seasons_in_play_order)

MODELS = ("fairgrid", "scanner", "pencilmark")
SPEEDS = (0.3, 1.0, 3.0, 6.0)
SKILL_SD = 0.5
SITE_LEVELS = ("Gentle", "Moderate", "Tough", "Diabolical")


def _analyse(args):
    """The production analysis of one puzzle (as the daemon's pool runs it)."""
    text, solution, seed = args
    from fairgrid.analytics import puzzle_model
    from fairgrid.solvers import parse
    from fairgrid.solvers.fill_order import predict_fill_order

    pred = predict_fill_order(parse(text), seed=seed, runs=50, budget_s=10, workers=1)
    median = [None if np.isnan(v) else float(v) for v in pred.median_rank]
    model = puzzle_model.build(text, solution, median, seed)
    return median, model.to_json()


def _log(behaviour, model, text, sol, rng, expected_log_s, sd_log, speed, skill):
    """One simulated move log: (t_ms, cell, digit, note)."""
    from fairgrid.analytics.simulate import simulate
    from fairgrid.solvers import parse

    puzzle = parse(text)
    centre = expected_log_s - np.log(speed)
    if behaviour == "honest" and model == "pencilmark":
        from honest_pencilmark import pencilmark_solve
        total_s = float(np.exp(centre - skill + rng.normal(0, sd_log)))
        return pencilmark_solve(text, sol, rng, total_s=total_s)
    sim_behaviour = {"fairgrid": "honest", "scanner": "scanner"}[model] if behaviour == "honest" \
        else behaviour
    sim = simulate(puzzle, sol, sim_behaviour, rng=rng, expected_log_s=centre, sd_log=sd_log,
                   skill=skill)
    return sim.t_ms, sim.cell, sim.digit, sim.note


_WARM: list[bool] = []  # per process: the kernels are loaded


def _score(inputs, logs, skills):
    from fairgrid.analytics.calibration import skill_uncertainty
    from fairgrid.analytics.evidence import score_solve
    from fairgrid.analytics.player_verdict import solve_facts
    out = []
    if logs and not _WARM:
        # a worker's first scorings load the compiled kernels from disk, each at its first
        # use (a stall, a log with notes): not a solve's cost
        for log in logs:
            score_solve(inputs.facts_without_skill, inputs.null, *log)
        _WARM.append(True)
    for (t, c, d, n), rated in zip(logs, skills):
        skill, solves = rated if rated is not None else (None, 0)
        facts = inputs.facts if skill is not None else inputs.facts_without_skill
        sd = skill_uncertainty(solves, 3.0) if skill is not None else 0.0
        # CPU time, not wall time: on a shared machine the wall clock measures the others
        t0 = time.process_time()
        ev = score_solve(facts, inputs.null, t, c, d, n, skill=skill or 0.0, skill_sd=sd)
        spent = time.process_time() - t0
        out.append((ev.p_value, ev.anomaly, ev.flagged, ev.rule,
                    {x.name: round(x.p, 8) for x in ev.signals}, spent, dict(ev.llr),
                    solve_facts("", ev.to_json())))
    return out


def _puzzle_inputs(text, solution, median, model_doc, seed):
    """(the puzzle's analysis, its scoring inputs at cold start, the solution's digits, a
    generator seeded for its solves): what a worker needs to play and score a puzzle."""
    from fairgrid.analytics.puzzle_model import PuzzleModel, scoring_inputs

    model = PuzzleModel.from_json(model_doc)
    inputs = scoring_inputs(text, 3, solution, median, model)
    return model, inputs, np.array([int(ch) for ch in solution]), np.random.default_rng(seed)


def _solve_puzzle(args):
    """Simulate every solve of one puzzle and score it at cold start."""
    j, text, solution, median, model_doc, plays, seed = args
    model, inputs, sol, rng = _puzzle_inputs(text, solution, median, model_doc, seed)
    logs = []
    for player, behaviour, hm, speed, skill in plays:
        logs.append(_log(behaviour, hm, text, sol, rng, model.expected_log_s, model.sd_log,
                         speed, skill))
    return j, logs, _score(inputs, logs, [None] * len(logs))


def _rescore(args):
    j, text, solution, median, model_doc, run, rating, logs, skills = args
    from fairgrid.analytics.puzzle_model import PuzzleModel, scoring_inputs

    inputs = scoring_inputs(text, 3, solution, median, PuzzleModel.from_json(model_doc),
                            run, rating)
    return j, _score(inputs, logs, skills)


def _nightly(puzzles, solves, cold, fitted_puzzles):
    """The nightly job's arithmetic on the solves of ``fitted_puzzles`` not flagged at
    cold start: (RatingRun, {j: PuzzleRating}, {player: skill})."""
    from fairgrid.analytics import recalibration
    from fairgrid.analytics.consensus import consensus
    from fairgrid.analytics.expected_time import load_default
    from fairgrid.analytics.fill_order import fill_order
    from fairgrid.analytics.puzzle_model import (PuzzleModel, PuzzleRating, RatingRun,
                                                 cells_of, order_centre_of, per_cell)
    from fairgrid.analytics.ratings import fit_ratings
    from fairgrid.analytics.signals import PuzzleFacts

    cal = load_default()
    keep = [k for k, s in enumerate(solves) if s["j"] in fitted_puzzles and not cold[k][2]]
    pj = sorted(fitted_puzzles)
    jpos = {j: a for a, j in enumerate(pj)}
    players = sorted({solves[k]["player"] for k in keep})
    ppos = {p: a for a, p in enumerate(players)}
    models = {j: PuzzleModel.from_json(puzzles[j]["model"]) for j in pj}
    prior = np.array([cal.expected_log_time(models[j].metrics) for j in pj])
    log_t = np.log([solves[k]["log"][0][-1] / 1000.0 for k in keep])
    fit = fit_ratings(log_t, np.array([jpos[solves[k]["j"]] for k in keep]),
                      np.array([ppos[solves[k]["player"]] for k in keep]), prior,
                      len(players))
    lv = recalibration.levels(cal, fit.difficulty, float(fit.mu))
    facts = {j: PuzzleFacts(cells_of(puzzles[j]["text"]), 3, cells_of(puzzles[j]["solution"]),
                            per_cell(puzzles[j]["median"]), 0.0, 1.0,
                            hardest_rung=models[j].hardest_rung) for j in pj}
    centre = {j: order_centre_of(puzzles[j]["model"]) for j in pj}
    sample = np.random.default_rng(0).permutation(keep)[:4000]
    level_nulls = recalibration.level_nulls(
        (str(lv[jpos[solves[k]["j"]]]), facts[solves[k]["j"]], centre[solves[k]["j"]],
         *solves[k]["log"]) for k in sample)
    ratings = {}
    for j in pj:
        mine = [k for k in keep if solves[k]["j"] == j]
        rows = ([], [], [])
        for a, k in enumerate(mine):
            t, c, d, n = solves[k]["log"]
            f = fill_order(t, c, d, n, facts[j].givens, facts[j].solution)
            filled = np.flatnonzero(f.rank >= 0)
            rows[0].extend([a] * filled.size)
            rows[1].extend(filled.tolist())
            rows[2].extend(f.rank[filled].tolist())
        cons = consensus(np.array(rows[0]), np.array(rows[1]), np.array(rows[2]), 81) \
            if len(mine) >= 20 else None
        ranks = cons.as_lists()[0] if cons is not None else None
        ratings[j] = PuzzleRating(float(fit.difficulty[jpos[j]]), int(lv[jpos[j]]), ranks,
                                  cons.null if cons is not None else None)
    run = RatingRun(float(fit.mu), float(fit.residual_sd), float(np.std(fit.skill)),
                    level_nulls)
    skills = {p: (float(fit.skill[ppos[p]]), int(fit.player_solves[ppos[p]]))
              for p in players}
    return run, ratings, skills, sorted(level_nulls)


def fitted_puzzles(puzzles) -> set[int]:
    """Two thirds of the puzzles, taken level by level in turn (the first of each site
    level, then the second, ...): what the nightly job has seen. Each level keeps puzzles
    it never fitted, so "new" is never one level, the one with the stalls."""
    seen: Counter = Counter()
    rank = {}
    for j, p in enumerate(puzzles):
        rank[j] = seen[p["site"]]
        seen[p["site"]] += 1
    order = sorted(range(len(puzzles)), key=lambda j: (rank[j], j))
    return set(order[:len(puzzles) * 2 // 3])


def after_nightly(pool, puzzles, solves, cold, **progress):
    """The nightly arithmetic on two thirds of the puzzles' solves not flagged at cold
    start (:func:`fitted_puzzles`), then every solve re-scored: (RatingRun, levels with
    nulls, scores)."""
    from tqdm import tqdm

    from fairgrid.analytics.puzzle_model import PuzzleRating

    fitted = fitted_puzzles(puzzles)
    run, ratings, skills, nulled = _nightly(puzzles, solves, cold, fitted)
    by_j = {}
    for k, s in enumerate(solves):
        by_j.setdefault(s["j"], []).append(k)
    tasks = []
    for j, ks in by_j.items():
        p = puzzles[j]
        rating = ratings.get(j) or PuzzleRating(None, int(np.clip(
            p["model"]["level"], 1, 5)), None, None)
        tasks.append((j, p["text"], p["solution"], p["median"], p["model"], run,
                      rating, [solves[k]["log"] for k in ks],
                      [skills.get(solves[k]["player"]) for k in ks]))
    after = [None] * len(solves)
    for j, scored in tqdm(pool.map(_rescore, tasks), total=len(tasks),
                          desc="after nightly", file=sys.stderr, **progress):
        for k, sc in zip(by_j[j], scored):
            after[k] = sc
    return run, nulled, after


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--puzzles", type=int, default=60)
    ap.add_argument("--players", type=int, default=56,
                    help="honest players per (model, speed)")
    ap.add_argument("--per-player", type=int, default=20)
    ap.add_argument("--cheaters", type=int, default=4, help="cheating players per behaviour")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--workers", "--jobs", type=int, default=None)
    ap.add_argument("--out", help="write the figures as JSON to this file")
    ap.add_argument("--seasons-out", help="write every player's season (the verdict's "
                    "facts of each solve, both phases) as a gzip pickle to this file")
    args = ap.parse_args()
    from tqdm import tqdm

    from fairgrid.analytics.simulate import CHEATS

    models = tuple(args.models.split(","))
    if "pencilmark" in models:
        try:
            import honest_pencilmark  # noqa: F401
        except ImportError as exc:
            raise SystemExit(f"error: the pencilmark model needs the test extras "
                             f"(pip install -e '.[test]'): {exc}")
    t_start = time.perf_counter()
    rows = org_uk_rows()
    rng = np.random.default_rng(0)
    by_level = {}
    for r in rows:
        by_level.setdefault(r["level"], []).append(r)
    chosen = []
    per = -(-args.puzzles // len(SITE_LEVELS))
    for level in SITE_LEVELS:
        rs = by_level[level]
        chosen += [rs[i] for i in rng.choice(len(rs), min(per, len(rs)), replace=False)]
    chosen = chosen[:args.puzzles]
    n_p = len(chosen)
    puzzles = [{"text": r["puzzle"], "solution": r["solution"], "site": r["level"]}
               for r in chosen]

    # players: (id, behaviour per solve, honest model, speed, skill)
    plays_of = {j: [] for j in range(n_p)}
    position = {}  # (player, puzzle): where the puzzle comes in the player's season
    players = []
    for hm in models:
        for speed in SPEEDS:
            for _ in range(args.players):
                pid = len(players)
                skill = float(rng.normal(0, SKILL_SD))
                players.append({"id": pid, "model": hm, "speed": speed, "cheat": None})
                for a, j in enumerate(rng.choice(n_p, min(args.per_player, n_p),
                                                 replace=False)):
                    plays_of[int(j)].append((pid, "honest", hm, speed, skill))
                    position[pid, int(j)] = a
    for behaviour in CHEATS:
        for _ in range(args.cheaters):
            pid = len(players)
            skill = float(rng.normal(0, SKILL_SD))
            players.append({"id": pid, "model": "fairgrid", "speed": 1.0, "cheat": behaviour})
            picks = rng.choice(n_p, min(args.per_player, n_p), replace=False)
            for a, j in enumerate(picks):
                plays_of[int(j)].append((pid, behaviour if a % 2 == 0 else "honest",
                                         "fairgrid", 1.0, skill))
                position[pid, int(j)] = a

    with ProcessPoolExecutor(args.workers) as pool:
        tasks = [(r["puzzle"], r["solution"], 1000 + j) for j, r in enumerate(chosen)]
        for j, (median, model) in enumerate(tqdm(pool.map(_analyse, tasks), total=n_p,
                                                 desc="analysis", file=sys.stderr)):
            puzzles[j]["median"], puzzles[j]["model"] = median, model
        solves, cold = [], []
        tasks = [(j, p["text"], p["solution"], p["median"], p["model"], plays_of[j],
                  5000 + j) for j, p in enumerate(puzzles)]
        for j, logs, scored in tqdm(pool.map(_solve_puzzle, tasks), total=n_p,
                                    desc="cold start", file=sys.stderr):
            for (pid, behaviour, hm, speed, _), log, sc in zip(plays_of[j], logs, scored):
                solves.append({"j": j, "player": pid, "behaviour": behaviour, "model": hm,
                               "speed": speed, "log": log, "at": position[pid, j]})
                cold.append(sc)
        run, nulled, after = after_nightly(pool, puzzles, solves, cold)
    report = _report(puzzles, players, solves, cold, after, run, nulled, models, args,
                     time.perf_counter() - t_start)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(report, fh, indent=1)
    return 0


def _report(puzzles, players, solves, cold, after, run, nulled, models, args, seconds):
    from fairgrid.analytics.simulate import CHEATS

    behaviour = np.array([s["behaviour"] for s in solves])
    model = np.array([s["model"] for s in solves])
    speed = np.array([s["speed"] for s in solves])
    site = np.array([puzzles[s["j"]]["site"] for s in solves])
    cheater = np.array([players[s["player"]]["cheat"] is not None for s in solves])
    honest = (behaviour == "honest") & ~cheater
    cold_verdicts, seasons = None, {}
    report = {"machine": machine(), "date": time.strftime("%Y-%m-%d"),
              "seconds": round(seconds), "puzzles": len(puzzles),
              "honest_solves": int(honest.sum()), "phases": {}}
    print(f"\n{len(puzzles)} puzzles; {int(honest.sum())} honest solves of "
          f"{sum(p['cheat'] is None for p in players)} honest players; "
          f"{int((behaviour != 'honest').sum())} cheats; nightly: mu {run.mu:+.2f}, residual sd "
          f"{run.residual_sd:.2f}, skill sd {run.skill_sd:.2f}, level nulls for {nulled}")
    for phase, res in (("cold start", cold), ("after nightly", after)):
        p = np.array([r[0] for r in res])
        anomaly = np.array([r[1] for r in res])
        flagged = np.array([r[2] for r in res])
        out = {"honest": {}, "cheats": {}}
        print(f"\n== {phase}: honest solves flagged (target <= 0.1 % everywhere)")
        print(f"{'model':<11}" + "".join(f"{f'{s}x':>14}" for s in SPEEDS)
              + "".join(f"{lv:>14}" for lv in SITE_LEVELS) + f"{'all':>14}")
        for hm in models:
            cells = []
            for mask_name, mask in ([(f"{s}x", speed == s) for s in SPEEDS]
                                    + [(lv, site == lv) for lv in SITE_LEVELS]
                                    + [("all", np.ones_like(honest))]):
                sel = honest & (model == hm) & mask
                n, f = int(sel.sum()), int(flagged[sel].sum())
                out["honest"].setdefault(hm, {})[mask_name] = [f, n]
                cells.append(f"{f:>5}/{n:<5} " + ("  " if f / max(n, 1) <= 1e-3 else "! "))
            print(f"{hm:<11}" + "".join(f"{c:>14}" for c in cells))
        below = int((p[honest] < 1e-3).sum())
        out["honest_combined_below_fpr"] = below
        print(f"honest solves with a combined p below 1e-3 (flagged or held back by the "
              f"rule): {below} of {int(honest.sum())}")
        wrong = [k for k in np.flatnonzero(honest & flagged)]
        out["honest_flagged"] = [{"model": model[k], "speed": float(speed[k]), "site": site[k],
                                  "rule": res[k][3], "signals": res[k][4]} for k in wrong]
        for w in out["honest_flagged"]:
            print(f"  honest flagged: {w}")
        print(f"\n{'cheat':<10} {'AUC':>6} {'caught':>8} {'p < 1e-3':>9}")
        neg = anomaly[honest]
        for c in CHEATS:
            sel = behaviour == c
            a = auc(anomaly[sel], neg)
            out["cheats"][c] = {"auc": round(a, 4), "caught": [int(flagged[sel].sum()),
                                                              int(sel.sum())],
                                "combined_below_fpr": int((p[sel] < 1e-3).sum())}
            print(f"{c:<10} {a:6.3f} {flagged[sel].mean():8.1%} {np.mean(p[sel] < 1e-3):9.1%}")
        season = _season_verdicts(players, solves, res, cold_verdicts, args.workers)
        if phase == "cold start":
            cold_verdicts = season
        out["players"] = season["counts"]
        seasons[phase] = season["seasons"]
        report["phases"][phase] = out
        if phase == "cold start":
            _roc(anomaly, behaviour, honest)
    if args.seasons_out:
        with gzip.open(args.seasons_out, "wb") as fh:
            pickle.dump({"players": players, "seasons": seasons}, fh)
    spent = np.array([r[5] for r in cold]) * 1000
    report["score_ms"] = {"median": round(float(np.median(spent)), 2),
                          "p99": round(float(np.percentile(spent, 99)), 2)}
    print(f"\nscoring one solve (evidence included, one core): median "
          f"{np.median(spent):.2f} ms, p99 {np.percentile(spent, 99):.2f} ms")
    print(f"{seconds:.0f} s on {machine()}")
    return report


def _season_verdicts(players, solves, res, cold, workers=None) -> dict:
    """Each player's season verdict, as the service judges a player: cold, the shipped
    player null; after nightly (``cold`` given), the null learnt from the players the
    cold verdict did not flag."""
    from fairgrid.analytics import player_verdict as pv
    seasons = seasons_in_play_order(solves, [r[7] for r in res])
    null = (pv.shipped_null() if cold is None
            else portal_player_null(seasons, cold["got"], pv.shipped_null()))
    with ProcessPoolExecutor(workers) as pool:
        got = judge_seasons(seasons, null, pool)
    counts = {"honest": [0, 0], "cheaters": [0, 0], "by_kind": {}, "by_model": {},
              "flagged_by": {}}
    for pl in players:
        until, _, kind, _ = got[pl["id"]]
        hit = int(until is not None)
        group = "honest" if pl["cheat"] is None else "cheaters"
        counts[group][0] += hit
        counts[group][1] += 1
        cell = (counts["by_kind"].setdefault(pl["cheat"], [0, 0]) if pl["cheat"]
                else counts["by_model"].setdefault(f"{pl['model']} {pl['speed']:g}x", [0, 0]))
        cell[0] += hit
        cell[1] += 1
        if kind is not None:
            by = counts["flagged_by"].setdefault(pl["cheat"] or pl["model"], {})
            by[kind] = by.get(kind, 0) + 1
    (hf, hn), (cf, cn) = counts["honest"], counts["cheaters"]
    print(f"\nplayers flagged by their season verdict ({null.source}): honest {hf} of {hn} "
          f"(target <= 0.5 %), cheaters {cf} of {cn}\n  "
          + ", ".join(f"{k} {a}/{b}" for k, (a, b) in counts["by_model"].items()) + "\n  "
          + ", ".join(f"{k} {a}/{b}" for k, (a, b) in counts["by_kind"].items())
          + "\n  flagged by: " + "; ".join(
              f"{who} " + ", ".join(f"{k} {n}" for k, n in by.items())
              for who, by in counts["flagged_by"].items()))
    return {"counts": counts, "got": got, "seasons": seasons}


def _roc(anomaly, behaviour, honest):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fairgrid.analytics.simulate import CHEATS

    neg = anomaly[honest]
    fig, ax = plt.subplots(figsize=(6, 5))
    grid = np.unique(anomaly)[::-1]
    for c in CHEATS:
        a = anomaly[behaviour == c]
        ax.plot([(neg >= g).mean() for g in grid], [(a >= g).mean() for g in grid],
                label=f"{c} (AUC {auc(a, neg):.3f})")
    ax.axvline(1e-3, color="grey", ls=":", lw=1)
    ax.set_xscale("log")
    ax.set_xlim(1e-4, 1)
    ax.set_xlabel("honest solves above the threshold (all models and speeds)")
    ax.set_ylabel("cheats above the threshold")
    ax.set_title("Detection at cold start, three honest models")
    ax.legend(fontsize=8)
    DOCS_IMG.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(DOCS_IMG / "detection_roc.png", dpi=100)
    print("wrote docs/img/detection_roc.png")


if __name__ == "__main__":
    sys.exit(main())
