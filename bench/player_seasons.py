"""Player verdicts over seasons: honest people of several models, and cheaters who cheat
on one puzzle in three or on every puzzle; cold start and after the nightly job.

    python bench/player_seasons.py [--per-level 5] [--season 20] [--honest 8]
                                   [--cheaters 6] [--jobs N] [--seed 1] [--out FILE.json]
                                   [--facts-out FACTS.json.gz]
    python bench/player_seasons.py --facts-in FACTS.json.gz [--jobs N] [--plot]
                                   [--plot-lengths]
    python bench/player_seasons.py --null-out analytics/data/player_null.json [--honest 40]
                                   [--tempo-only | --kinds K[,K...]]

Puzzles: ``--per-level`` sudoku.org.uk dailies of each of the site's four levels
(../shared/data), each with the daemon's production analysis. Every player solves
``--season`` of them (a random draw, in a random order), each solve's total time drawn
around the site's mean (sd 0.35 in log) with the person's own speed (sd 0.5).

* honest, ``--honest`` per model of ``bench/players.py``: pencil_marker, auto_notes,
  sweeper (slips, erasures, breaks), ladder and pencilmark (PyPI's pencilmark, a solver
  this project did not write);
* cheaters, ``--cheaters`` per kind and habit: partial, assisted, stuck_copier,
  hint_at_stall, hint_button (its hints the cells with the fewest candidates),
  human_order_copier, difficulty_copier (bench/players.py) and ``row``
  (a blatant copy, analytics.simulate), each cheating on one puzzle in three
  (``selective``; honest as a pencil marker or a sweeper on the rest) or on every puzzle
  (``every``).

Each solve is scored as the daemon scores it (cold: the analysis's own nulls; after the
nightly job: ratings, skills, level nulls and consensus orders fitted on the solves not
flagged cold, as ``bench/detection_eval.py`` does), and each player's season is judged
by ``analytics.player_verdict`` after every solve: cold with the shipped null, after the
nightly job with the null learnt from this population's players the cold verdict did
not flag. Prints, per model and kind, the players flagged by the end of the season and
the median number of solves until flagged, and the honest solves flagged; for a season
longer than 20, also those flagged within every 20 solves (``--plot-lengths`` draws the
share flagged within n solves against n, cold).

``--facts-out`` saves every solve's facts as scored (both phases); ``--facts-in`` judges
such a file again without simulating or scoring (a change to the verdict measured in
seconds, on a population simulated once, e.g. on a bigger machine).

``--null-out`` builds the cold-start null instead: honest seasons only (seed
``--seed`` + 1000, so the evaluation's people are not the null's), each model's null
learnt apart and the most lenient of them kept per kind (``player_verdict.lenient``;
each model's tempo is kept); ``--tempo-only`` replaces only the file's tempo, ``--kinds``
only the kinds named (``hints``, ``stall_pace``: those likelihood ratios' offsets).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

import _common
import players as models_
from _common import DOCS_IMG, judge_seasons, machine, org_uk_rows, portal_player_null
from detection_eval import SITE_LEVELS, _analyse, _nightly, _puzzle_inputs, fitted_puzzles

HONEST = ("pencil_marker", "auto_notes", "sweeper", "ladder", "pencilmark")
CHEATS = ("partial", "assisted", "hint_at_stall", "human_order_copier",
          "difficulty_copier", "row", "stuck_copier", "hint_button")
# kinds whose players draw their honest model with the rest of their habits, after every
# other player's draws: added later, they leave the other players' logs and cold verdicts
# as they were (the nightly fit learns from them too)
LATE_CHEATS = frozenset({"stuck_copier", "hint_button"})
HABITS = ("selective", "every")
BASES = tuple(models_.BASES)   # how a cheater plays where it does not cheat
PHASES = ("cold", "after nightly")
CHUNK = 40          # solves a task
SEASON_SHOWN = 20   # a longer season also reports the players flagged every 20 solves
SLOPE_ON = "stall"  # what a saved solve's tempo slope is of (``SolveFacts.slope``)
# 2: each solve's pace and pace group (``SolveFacts.pace_group``); 3: its stall pace
FACTS_VERSION = 3
SD_LOG, SKILL_SD = 0.35, 0.5


def _one_log(text, sol, rng, total_s, kind, model, person):
    """(t_ms, cell, digit, note) of one solve: ``kind`` "honest" (as ``model``) or a cheat."""
    if kind == "honest":
        fn = models_.HONEST[model]
        log = fn(text, sol, rng, total_s) if model == "pencilmark" else fn(
            text, sol, rng, total_s, **person)
        return log.arrays
    if kind == "row":
        from fairgrid.analytics.simulate import simulate
        from fairgrid.solvers import parse
        s = simulate(parse(text), sol, "row", rng=rng, expected_log_s=float(np.log(total_s)))
        return s.t_ms, s.cell, s.digit, s.note
    fn = models_.HIDING_CHEATS[kind]
    if kind in ("human_order_copier", "difficulty_copier"):
        return fn(text, sol, rng, total_s).arrays
    return fn(text, sol, rng, total_s, base=model, **person).arrays


def _facts(ev, sid):
    from fairgrid.analytics.player_verdict import solve_facts
    return solve_facts(sid, ev.to_json())


def _play_puzzle(args):
    """Simulate and score cold every solve of one puzzle: [(log, flagged, facts)]."""
    j, text, solution, median, model_doc, mean_s, plays, seed = args
    from fairgrid.analytics.evidence import score_solve

    _, inputs, sol, rng = _puzzle_inputs(text, solution, median, model_doc, seed)
    out = []
    for sid, kind, model, person, speed in plays:
        total_s = float(np.exp(np.log(mean_s) - speed + rng.normal(0, SD_LOG)))
        log = tuple(np.asarray(a) for a in _one_log(text, sol, rng, total_s, kind, model,
                                                    person))
        ev = score_solve(inputs.facts_without_skill, inputs.null, *log)
        out.append((log, ev.flagged, _facts(ev, sid)))
    return j, out


def _rescore_puzzle(args):
    j, text, solution, median, model_doc, run, rating, logs, skills, sids = args
    from fairgrid.analytics.calibration import skill_uncertainty
    from fairgrid.analytics.evidence import score_solve
    from fairgrid.analytics.puzzle_model import PuzzleModel, scoring_inputs

    inputs = scoring_inputs(text, 3, solution, median, PuzzleModel.from_json(model_doc),
                            run, rating)
    out = []
    for log, rated, sid in zip(logs, skills, sids):
        skill, n = rated if rated is not None else (None, 0)
        facts = inputs.facts if skill is not None else inputs.facts_without_skill
        ev = score_solve(facts, inputs.null, *log, skill=skill or 0.0,
                         skill_sd=skill_uncertainty(n, 3.0) if skill is not None else 0.0)
        out.append((ev.flagged, _facts(ev, sid)))
    return j, out


def _people(args, rng, n_p, honest_only):
    """Players: dicts with id, model, cheat, habit; and per puzzle its plays."""
    people = []
    for model in HONEST:
        for _ in range(args.honest):
            people.append({"model": model, "cheat": None, "habit": None})
    if not honest_only:
        for cheat in CHEATS:
            for habit in HABITS:
                for _ in range(args.cheaters):
                    people.append({"model": None if cheat in LATE_CHEATS else BASES[
                        int(rng.integers(2))], "cheat": cheat, "habit": habit})
    plays = {j: [] for j in range(n_p)}
    for pid, pl in enumerate(people):
        pl["id"] = pid
        if pl["model"] is None:
            pl["model"] = BASES[int(rng.integers(2))]
        person = ({} if pl["model"] == "pencilmark" else
                  models_.draw_person(pl["model"], rng))
        speed = float(rng.normal(0, SKILL_SD))
        picks = rng.permutation(n_p)[:args.season]
        pl["puzzles"] = [int(j) for j in picks]
        offset = int(rng.integers(3))
        for a, j in enumerate(picks):
            cheat = pl["cheat"] is not None and (pl["habit"] == "every" or a % 3 == offset)
            plays[int(j)].append((f"p{pid}-{a:02d}", pl["cheat"] if cheat else "honest",
                                  pl["model"], person, speed))
    return people, plays


def _seasons(people, by_sid):
    return {pl["id"]: [by_sid[f"p{pl['id']}-{a:02d}"] for a in range(len(pl["puzzles"]))]
            for pl in people}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-level", type=int, default=5)
    ap.add_argument("--season", type=int, default=20)
    ap.add_argument("--honest", type=int, default=8, help="players per honest model")
    ap.add_argument("--cheaters", type=int, default=6, help="players per cheat and habit")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--null-out", help="build the cold-start null into this file instead")
    ap.add_argument("--tempo-only", action="store_true",
                    help="with --null-out: replace only the stall tempo of the file there")
    ap.add_argument("--kinds", help="with --null-out: replace only these kinds (comma-"
                                    "separated) of the file there; hints, stall_pace: "
                                    "those ratios' offsets")
    ap.add_argument("--compare-logs", action="store_true",
                    help="after the cold phase, compare every log with the solves of its "
                         "puzzle before it as scoring does (analytics.log_match), report "
                         "by kind and stop")
    ap.add_argument("--plot-lengths", action="store_true",
                    help="draw, per group, the share flagged within n solves against n "
                         "into docs/img/season_length.png")
    ap.add_argument("--out", help="write the figures as JSON to this file")
    ap.add_argument("--facts-out", help="save every solve's facts (gzip JSON), both phases")
    ap.add_argument("--facts-in", help="judge the seasons saved by --facts-out instead of "
                                       "simulating (the verdict's code, not the scoring's)")
    ap.add_argument("--plot", action="store_true",
                    help="draw each player's least p of the season, per group and phase, "
                         "into docs/img/player_seasons.png")
    ap.add_argument("--hold-out", action="store_true",
                    help="with --facts-in: judge each honest model's cold seasons against "
                         "a null learnt from the other models' (none of its own)")
    args = _common.parse_with_data(ap)
    from tqdm import tqdm

    from fairgrid.analytics.puzzle_model import PuzzleRating

    started = time.perf_counter()
    if args.facts_in and (args.null_out or args.facts_out):
        raise SystemExit("error: --facts-in judges saved seasons; it takes neither "
                         "--null-out nor --facts-out")
    if args.tempo_only and not args.null_out:
        raise SystemExit("error: --tempo-only goes with --null-out")
    if args.kinds is not None and (not args.null_out or args.tempo_only):
        raise SystemExit("error: --kinds goes with --null-out, without --tempo-only")
    if args.kinds is not None:
        from fairgrid.analytics import player_verdict as pv
        args.kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
        known = sorted(set(pv.FAMILY.values())
                       | {"unproven", "unforced", pv.FLAGGED, pv.COMBINED, pv.OWN_PACE}
                       | set(pv.RATIO_KINDS))
        wrong = [k for k in args.kinds if k not in known] or ([] if args.kinds else [""])
        if wrong:
            raise SystemExit(f"error: --kinds {wrong[0]!r} is no kind; kinds: "
                             f"{', '.join(known)}")
    if (args.tempo_only or args.kinds is not None) and not Path(args.null_out).is_file():
        raise SystemExit(f"error: --tempo-only and --kinds replace part of "
                         f"{args.null_out}, which does not exist")
    if args.compare_logs and (args.facts_in or args.null_out or args.facts_out):
        raise SystemExit("error: --compare-logs plays a population and stops after its "
                         "cold phase; it takes no --facts-in, --facts-out or --null-out")
    if args.plot_lengths and (args.null_out or args.compare_logs):
        raise SystemExit("error: --plot-lengths draws an evaluation's verdicts; it takes "
                         "no --null-out or --compare-logs")
    if args.plot and (args.null_out or args.compare_logs):
        raise SystemExit("error: --plot draws an evaluation's verdicts; it takes no "
                         "--null-out or --compare-logs")
    if args.null_out and args.facts_out:
        raise SystemExit("error: --null-out simulates honest seasons only; --facts-out "
                         "goes with an evaluation run")
    if args.hold_out and not args.facts_in:
        raise SystemExit("error: --hold-out judges saved seasons; it goes with --facts-in")
    if args.facts_in and args.hold_out:
        with ProcessPoolExecutor(args.jobs) as pool:
            return _hold_out(_load_facts(args.facts_in), pool, started)
    if args.facts_in:
        stored = _load_facts(args.facts_in)
        with ProcessPoolExecutor(args.jobs) as pool:
            report = _judge_all(stored, pool)
        report.update({"machine": machine(), "date": time.strftime("%Y-%m-%d"),
                       "seconds": round(time.perf_counter() - started),
                       "players": len(stored["people"]), "facts": args.facts_in})
        return _finish(report, args)
    seed = args.seed + (1000 if args.null_out else 0)
    rng = np.random.default_rng(seed)
    rows = org_uk_rows()
    chosen = []
    for level in SITE_LEVELS:
        rs = [r for r in rows if r["level"] == level]
        chosen += [rs[i] for i in rng.choice(len(rs), args.per_level, replace=False)]
    n_p = len(chosen)
    if args.season > n_p:
        raise SystemExit(f"error: a season of {args.season} needs --per-level "
                         f"{-(-args.season // 4)} or more")
    puzzles = [{"text": r["puzzle"], "solution": r["solution"], "site": r["level"],
                "mean_s": 60.0 * float(r["mean_time_min"])} for r in chosen]
    people, plays = _people(args, rng, n_p, bool(args.null_out))
    solves = sum(len(v) for v in plays.values())
    print(f"{n_p} puzzles, {len(people)} players, {solves} solves", file=sys.stderr)
    by_sid, flagged_cold, records = {}, {}, []
    with ProcessPoolExecutor(args.jobs) as pool:
        tasks = [(r["puzzle"], r["solution"], 1000 + j) for j, r in enumerate(chosen)]
        for j, (median, model) in enumerate(tqdm(pool.map(_analyse, tasks), total=n_p,
                                                 desc="analysis", file=sys.stderr)):
            puzzles[j]["median"], puzzles[j]["model"] = median, model
        # a few dozen solves a task, so that many cores share a season of 20 puzzles
        tasks = [(j, p["text"], p["solution"], p["median"], p["model"], p["mean_s"],
                  plays[j][c:c + CHUNK], seed * 7919 + j + 100003 * (c // CHUNK))
                 for j, p in enumerate(puzzles) for c in range(0, len(plays[j]), CHUNK)]
        for task, (j, out) in zip(tasks, tqdm(pool.map(_play_puzzle, tasks),
                                              total=len(tasks), desc="cold",
                                              file=sys.stderr)):
            for (sid, kind, model, _, _), (log, flagged, facts) in zip(task[6], out):
                by_sid[sid] = facts
                flagged_cold[sid] = flagged
                records.append({"j": j, "player": int(sid[1:].split("-")[0]), "sid": sid,
                                "kind": kind, "log": log})
        if args.null_out:
            return _write_null(people, _seasons(people, by_sid), args, started)
        if args.compare_logs:
            return _compare_logs(records, people, started)
        cold = [(None, None, flagged_cold[r["sid"]]) for r in records]
        fitted = fitted_puzzles(puzzles)
        run, ratings, skills, _ = _nightly(puzzles, records, cold, fitted)
        by_j = {}
        for k, r in enumerate(records):
            by_j.setdefault(r["j"], []).append(k)
        tasks = []
        for j, all_ks in by_j.items():
            p = puzzles[j]
            rating = ratings.get(j) or PuzzleRating(None, int(np.clip(
                p["model"]["level"], 1, 5)), None, None)
            for c in range(0, len(all_ks), 4 * CHUNK):
                ks = all_ks[c:c + 4 * CHUNK]
                tasks.append((j, p["text"], p["solution"], p["median"], p["model"], run,
                              rating, [records[k]["log"] for k in ks],
                              [skills.get(records[k]["player"]) for k in ks],
                              [records[k]["sid"] for k in ks]))
        by_sid_after, flagged_after = {}, {}
        for task, (j, out) in zip(tasks, tqdm(pool.map(_rescore_puzzle, tasks),
                                              total=len(tasks), desc="after nightly",
                                              file=sys.stderr)):
            for sid, (flagged, facts) in zip(task[9], out):
                by_sid_after[sid] = facts
                flagged_after[sid] = flagged
        stored = {"people": people, "kind": {r["sid"]: r["kind"] for r in records},
                  "cold": (by_sid, flagged_cold), "after nightly": (by_sid_after,
                                                                    flagged_after)}
        if args.facts_out:
            _save_facts(args.facts_out, stored)
        report = _judge_all(stored, pool)
    report.update({"machine": machine(), "date": time.strftime("%Y-%m-%d"),
                   "seconds": round(time.perf_counter() - started), "puzzles": n_p,
                   "players": len(people), "solves": solves})
    return _finish(report, args)


def _compare_logs(records, people, started) -> int:
    """Every log against the logs of its puzzle played before it, as scoring compares a
    solve with the earlier ones: a solve whose match is below LOG_MATCH_JUDGED gains the
    ``log_match`` family and a flag; where none is, every verdict of this population is
    the same with the comparison as without it."""
    from fairgrid.analytics.log_match import closest, timing_print
    from fairgrid.analytics.signals import LOG_MATCH_JUDGED

    model = {pl["id"]: pl["model"] for pl in people}
    least: dict[str, float] = {}
    below: dict[str, int] = {}
    counted: dict[str, int] = {}
    by_j: dict[int, list] = {}
    for r in records:
        by_j.setdefault(r["j"], []).append(r)
    for rs in by_j.values():
        prints = [timing_print(*r["log"], 81) for r in rs]
        for i in range(1, len(rs)):
            found = closest(prints[i], np.stack(prints[:i]))
            kind = rs[i]["kind"] if rs[i]["kind"] != "honest" else \
                f"honest {model[rs[i]['player']]}"
            p = 1.0 if found is None else found.p
            least[kind] = min(least.get(kind, 1.0), p)
            below[kind] = below.get(kind, 0) + (p < LOG_MATCH_JUDGED)
            counted[kind] = counted.get(kind, 0) + 1
    print(f"\nlogs compared with the solves of their puzzle before them "
          f"({time.perf_counter() - started:.0f} s, {machine()}):")
    for kind in sorted(counted):
        print(f"  {kind:>28}: {counted[kind]:>6} solves, {below[kind]} below "
              f"{LOG_MATCH_JUDGED:g}, least p {least[kind]:.2g}")
    return 0


def _finish(report, args) -> int:
    print(f"\n{report['seconds']} s on {report['machine']}")
    if args.plot:
        _plot(report)
    if args.plot_lengths:
        _plot_lengths(report)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(report, fh, indent=1)
    return 0


def _hold_out(stored, pool, started) -> int:
    """Each honest model held out: its players' cold seasons judged against the null the
    other models' seasons give (``lenient`` over them, as the shipped null is built),
    which has seen nothing of its own. The shipped null is learnt from other seasons of
    all five; this says what it would do for people of a kind it never saw."""
    from fairgrid.analytics import player_verdict as pv
    people = stored["people"]
    seasons = _seasons(people, stored["cold"][0])
    honest = {m: [pl["id"] for pl in people if pl["cheat"] is None and pl["model"] == m]
              for m in HONEST}
    per = {m: pv.learn_null([seasons[i] for i in honest[m]], m) for m in HONEST}
    print("honest model held out     flagged          least p   by")
    for held in HONEST:
        null = pv.lenient([per[m] for m in HONEST if m != held], f"all but {held}")
        got = judge_seasons({i: seasons[i] for i in honest[held]}, null, pool)
        hit = [i for i in honest[held] if got[i][0] is not None]
        kinds = Counter(pv.judge(seasons[i][:got[i][0]], null).findings[0].kind
                        for i in hit)       # what flagged them first
        least = min(got[i][3] for i in honest[held])
        print(f"{held:24s} {len(hit):>4d} of {len(honest[held]):<6d} {least:>10.2g}   "
              + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    print(f"{time.perf_counter() - started:.0f} s on {machine()}")
    return 0


def _write_null(people, seasons, args, started) -> int:
    from fairgrid.analytics import player_verdict as pv
    per_model = []
    for model in HONEST:
        mine = [seasons[pl["id"]] for pl in people if pl["model"] == model]
        null = pv.learn_null(mine, model)
        per_model.append(null)
        print(f"{model:15s} " + ", ".join(f"{k} {v.weak:.3f}/{v.strong:.3f}/{v.cv2:.1f}/"
                                          f"{v.dispersion(2):.1f}"
                                          for k, v in sorted(null.kinds.items()))
              + ("" if not null.tempo else
                 "; stall tempo " + ", ".join(f"{c:.2f} ± {b:.2f}" for c, b in null.tempo))
              + "; ratio offsets " + ", ".join(f"{k} {v:.4f}"
                                               for k, v in sorted(null.llr_offset.items())))
    null = pv.lenient(per_model, f"simulated honest players ({', '.join(HONEST)})")
    if not null.tempo:
        raise SystemExit("error: a model's players met too few stalls for a tempo "
                         f"(each needs {pv.MIN_TEMPO_PLAYERS} with "
                         f"{pv.MIN_NULL_TEMPO_SOLVES} solves with a stall); more --honest")
    doc = null.to_json()
    if args.tempo_only:
        with open(args.null_out) as fh:
            doc = {**json.load(fh), "stall_tempo": doc["stall_tempo"]}
        doc.pop("slope", None)      # a slope on another measure of difficulty
    elif args.kinds:
        names = [k for k in args.kinds if k not in pv.RATIO_KINDS]
        missing = [k for k in names if k not in doc["kinds"]]
        if missing:
            raise SystemExit(f"error: no honest season measured {missing[0]!r}; kinds "
                             f"measured: {', '.join(sorted(doc['kinds']))}")
        unmeasured = [k for k in args.kinds
                      if k in pv.RATIO_KINDS and k not in doc["llr_offset"]]
        if unmeasured:
            raise SystemExit(f"error: no honest solve had a {unmeasured[0]!r} ratio")
        with open(args.null_out) as fh:
            old = json.load(fh)
        doc = {**old, "kinds": {**old["kinds"], **{k: doc["kinds"][k] for k in names}},
               # a ratio kind's null is its offset
               "llr_offset": {**old.get("llr_offset", {}),
                              **{k: v for k, v in doc["llr_offset"].items()
                                 if k in args.kinds}}}
    with open(args.null_out, "w") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    print(f"wrote {args.null_out}: {null.players} players, {null.solves} solves, "
          f"{time.perf_counter() - started:.0f} s on {machine()}")
    return 0


def _save_facts(path, stored) -> None:
    """The seasons' facts (both phases) as gzip JSON, for ``--facts-in``."""
    from dataclasses import asdict
    # a solve's slope is on "made at a stall"; facts saved when it read another measure
    # of difficulty are refused, not judged as if they were
    doc = {"people": stored["people"], "kind": stored["kind"], "slope_on": SLOPE_ON,
           "facts_version": FACTS_VERSION}
    for phase in PHASES:
        by_sid, flagged = stored[phase]
        doc[phase] = {"facts": {sid: asdict(f) for sid, f in by_sid.items()},
                      "flagged": {sid: bool(v) for sid, v in flagged.items()}}
    with gzip.open(path, "wt") as fh:
        json.dump(doc, fh)


def _load_facts(path) -> dict:
    from fairgrid.analytics.player_verdict import SolveFacts
    with gzip.open(path, "rt") as fh:
        doc = json.load(fh)
    if doc.get("slope_on") != SLOPE_ON:
        raise SystemExit(f"error: {path} holds slopes on another measure than "
                         f"{SLOPE_ON!r}: simulate and save the facts again")
    if doc.get("facts_version") != FACTS_VERSION:
        raise SystemExit(f"error: {path} holds facts of another version "
                         f"({doc.get('facts_version')}, where this reads {FACTS_VERSION}: "
                         f"3 holds each solve's stall pace): simulate and save them again")
    stored = {"people": doc["people"], "kind": doc["kind"]}
    for phase in PHASES:
        facts = {sid: SolveFacts(**{**f, "slope": None if f["slope"] is None
                                    else tuple(f["slope"]),
                                    "counted": {k: tuple(v) for k, v in f["counted"].items()}})
                 for sid, f in doc[phase]["facts"].items()}
        stored[phase] = (facts, doc[phase]["flagged"])
    return stored


def _judge_all(stored, pool) -> dict:
    """Cold: the shipped null; after nightly: the null learnt from this population's
    players the cold verdict did not flag. Judged and reported per model and kind."""
    from fairgrid.analytics import player_verdict as pv
    people = stored["people"]
    seasons = {ph: _seasons(people, stored[ph][0]) for ph in PHASES}
    cold_null = pv.shipped_null()
    cold = judge_seasons(seasons["cold"], cold_null, pool)
    portal_null = portal_player_null(seasons["after nightly"], cold, cold_null)
    verdicts = {"cold": (cold_null, cold),
                "after nightly": (portal_null, judge_seasons(seasons["after nightly"],
                                                             portal_null, pool))}
    report = _report(stored, verdicts)
    report["ratio_means"] = _ratio_means(people, seasons["cold"], cold_null)
    return report


def _ratio_means(people, seasons, null) -> dict:
    """Per ratio kind and honest model, the mean of the solves' capped likelihood ratios
    less the shipped offset: the sum test's bound holds where it is at most one."""
    from fairgrid.analytics import player_verdict as pv
    out = {}
    for kind in pv.RATIO_KINDS:
        offset = null.llr_offset.get(kind, 0.0)
        means = out[kind] = {}
        for model in HONEST:
            r = [v / math.exp(offset)
                 for pl in people if pl["cheat"] is None and pl["model"] == model
                 for v in (pv.capped_ratio(s, kind) for s in seasons[pl["id"]])
                 if v is not None]
            means[model] = float(np.mean(r)) if r else None
        print(f"\nhonest mean of the capped {kind} ratio less the offset "
              f"({offset:.4f}; the bound needs <= 1): "
              + ", ".join(f"{m} {v:.4f}" for m, v in means.items() if v is not None))
    return out


def _report(stored, verdicts) -> dict:
    from fairgrid.analytics import player_verdict as pv
    people = stored["people"]
    season = max(len(pl["puzzles"]) for pl in people)
    report = {"phases": {}, "season": season}
    groups = ([(m, None, None) for m in HONEST]
              + [(None, c, h) for h in HABITS for c in CHEATS])
    for phase in PHASES:
        null, got = verdicts[phase]
        flagged_solve = stored[phase][1]
        print(f"\n== {phase} ({null.source}; alpha {pv.ALPHA:g})")
        print(f"{'players':34s} {'flagged':>9s} {'median solves until':>20s} "
              f"{'lowest p':>9s}  flagged by")
        out = {}
        for model, cheat, habit in groups:
            mine = [pl for pl in people if pl["cheat"] == cheat and (
                cheat is not None and pl["habit"] == habit or model is not None
                and pl["model"] == model)]
            if not mine:
                continue
            res = [got[pl["id"]] for pl in mine]
            hit = [u for u, *_ in res if u is not None]
            name = model if cheat is None else f"{cheat} ({habit})"
            med = float(np.median(hit)) if hit else None
            lowest = min(r[1] for r in res)
            by = Counter(r[2] for r in res if r[2] is not None)
            out[name] = {"flagged": [len(hit), len(mine)], "median_until": med,
                         "lowest_p": lowest, "flagged_by": dict(by),
                         "least_p": sorted(r[3] for r in res),
                         # how many were flagged within each number of solves
                         "within": [sum(u <= n for u in hit) for n in range(1, season + 1)]}
            print(f"{name:34s} {len(hit):>4d}/{len(mine):<4d} "
                  f"{'-' if med is None else f'{med:.1f}':>20s} {lowest:>9.1e}  "
                  + ", ".join(f"{k} {n}" for k, n in by.most_common()))
        honest_solves = [sid for sid, kind in stored["kind"].items() if kind == "honest"
                         and people[int(sid[1:].split("-")[0])]["cheat"] is None]
        hf = sum(bool(flagged_solve[s]) for s in honest_solves)
        out["honest_solves_flagged"] = [int(hf), len(honest_solves)]
        print(f"honest solves flagged: {hf} of {len(honest_solves)}")
        if season > SEASON_SHOWN:
            _print_within(out, season)
        report["phases"][phase] = out
    return report


def _print_within(out: dict, season: int) -> None:
    """Per group, the players flagged within every SEASON_SHOWN solves of a long season:
    how the share grows with the season's length."""
    marks = list(range(SEASON_SHOWN, season + 1, SEASON_SHOWN))
    print(f"flagged within {' / '.join(map(str, marks))} solves:")
    for name, g in out.items():
        if name != "honest_solves_flagged":
            print(f"  {name:32s} " + " / ".join(f"{g['within'][n - 1]:>3d}" for n in marks)
                  + f" of {g['flagged'][1]}")


def _plot_lengths(report) -> None:
    """The share of each group flagged within n solves, against n, cold: how long a
    season each kind of cheater needs."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cold = report["phases"]["cold"]
    names = [k for k in cold if k != "honest_solves_flagged"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), sharey=True)
    for ax, habit in zip(axes, HABITS):
        for name in names:
            if name in HONEST and habit != HABITS[0]:
                continue
            if name not in HONEST and not name.endswith(f"({habit})"):
                continue
            g = cold[name]
            share = 100.0 * np.asarray(g["within"]) / g["flagged"][1]
            honest = name in HONEST
            ax.plot(np.arange(1, share.size + 1), share, lw=1 if honest else 1.6,
                    ls=":" if honest else "-", color="black" if honest else None,
                    zorder=3 if honest else 2,
                    label=None if honest else name.split(" (")[0].replace("_", " "))
        ax.axhline(90, color="0.8", lw=0.8)
        ax.set_title({"selective": "cheating on one puzzle in three (honest: dotted)",
                      "every": "cheating on every puzzle"}[habit], fontsize=9)
        ax.set_xlabel("solves in the season")
        ax.grid(color="0.93")
    axes[0].set_ylabel("players flagged by then, cold (%)")
    lines, labels = axes[0].get_legend_handles_labels()
    if labels:
        fig.legend(lines, labels, loc="lower center", ncol=len(labels), fontsize=8,
                   frameon=False)
    fig.suptitle("How long a season each kind of cheater needs (grey line: 90 %)",
                 fontsize=10)
    DOCS_IMG.mkdir(parents=True, exist_ok=True)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(DOCS_IMG / "season_length.png", dpi=100)
    print("wrote docs/img/season_length.png")


def _plot(report) -> None:
    """Each player's least p over the season (any point of it: a flag then stands until
    a person decides), one row per group, cold and after nightly side by side."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fairgrid.analytics import player_verdict as pv

    top = 10.0                   # -log10 p drawn at most (blatant seasons go far beyond)
    phases = report["phases"]
    names = [k for k in phases["cold"] if k != "honest_solves_flagged"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 0.32 * len(names) + 1.6), sharey=True)
    jitter = np.random.default_rng(0)
    for ax, phase in zip(axes, PHASES):
        for row, name in enumerate(names):
            g = phases[phase][name]
            x = np.minimum(-np.log10(np.maximum(g["least_p"], 1e-300)), top)
            y = row + jitter.uniform(-0.25, 0.25, len(x))
            hit = x >= -math.log10(pv.ALPHA)
            ax.scatter(x[~hit], y[~hit], s=7, color="tab:blue", alpha=0.35, lw=0)
            ax.scatter(x[hit], y[hit], s=9, color="tab:red", alpha=0.7, lw=0)
            a, b = g["flagged"]
            ax.text(top + 0.3, row, f"{a}/{b}", va="center", fontsize=7)
        ax.axvline(-math.log10(pv.ALPHA), color="grey", ls=":", lw=1)
        ax.set_xlim(0, top + 1.6)
        ax.set_title(phase)
        ax.grid(axis="y", color="0.92")
    axes[0].set_yticks(range(len(names)), names, fontsize=7)
    axes[0].invert_yaxis()
    fig.suptitle(f"Player verdicts over {report['season']}-puzzle seasons: each dot a player "
                 "(red: flagged at some point)", fontsize=10)
    fig.supxlabel(f"-log10 of the player's least p over the season (flagged beyond "
                  f"{-math.log10(pv.ALPHA):g}, the dotted line; drawn up to {top:g})",
                  fontsize=9)
    DOCS_IMG.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(DOCS_IMG / "player_seasons.png", dpi=100)
    print("wrote docs/img/player_seasons.png")


if __name__ == "__main__":
    raise SystemExit(main())
