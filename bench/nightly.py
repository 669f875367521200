"""The nightly job at scale: 10,000 puzzles, 50,000 players, 1,000,000 submissions.

    python bench/nightly.py [--puzzles 10000] [--players 50000] [--submissions 1000000]
                            [--portals 1]

Builds a DuckDB file with simulated data of known truth — puzzle difficulty
``d_j = μ + p_j + δ_j`` around a metric-based prior ``p_j``, player skill ``s_i``, times
``log t = d_j − s_i + N(0, 0.3)``, each solve's full move log (49 placements, in an order
scattered around the puzzle's own order) and its score with the season facts the players'
verdicts read, 1 % of solves flagged (too fast), the players spread over ``--portals``
portals that share every puzzle (each then gets its own difficulty of each) — then runs ``fairgrid recompute`` on
the file in a child process and prints its wall time, the peak memory of its largest
process (RSS), the seconds of each stage, and how well the fit recovered the truth.
Targets: ≤ 5 minutes, ≤ 4 GiB, correlation with the true difficulty ≥ 0.95.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np


EASY = "003020600900305001001806400008102900700000008006708200002609500800203009005010300"
SOLUTION = "483921657967345821251876493548132976729564138136798245372689514814253769695417382"


def build(path: Path, n_puzzles: int, n_players: int, n_subs: int, seed: int = 0,
          n_portals: int = 1) -> dict:
    from fairgrid.analytics.expected_time import load_default
    from fairgrid.daemon.store import connect

    rng = np.random.default_rng(seed)
    cal = load_default()
    con = connect(str(path))
    con.execute("SET preserve_insertion_order = false")
    now = datetime.now(timezone.utc)
    # puzzles: metrics drawn so that priors spread like real dailies
    metrics = [{"refutation_sum": float(rng.gamma(0.6, 8.0)), "serate": float(rng.integers(0, 4)),
                "lone_single_steps": float(rng.integers(0, 12)),
                "mean_options": float(rng.uniform(2.5, 14.0))} for _ in range(n_puzzles)]
    # the technique model's metrics (and givens) of the puzzle every row shares, so the
    # stored models hold what the calibration reads, as analysed puzzles do
    from fairgrid.analytics.puzzle_model import complete_metrics
    shared = complete_metrics(EASY, {}, cal.metrics_needed)
    metrics = [{**shared, **m} for m in metrics]
    prior = np.array([cal.expected_log_time(m) for m in metrics])
    mu, delta = -1.2, rng.normal(0, 0.25, n_puzzles)
    true_d = mu + prior + delta
    skill = rng.normal(0, 0.4, n_players)
    ids = np.array([f"p{j:05d}" for j in range(n_puzzles)], dtype=object)
    ratings = np.array([json.dumps({"metrics": m, "expected_log_s": float(p), "sd_log": 0.17,
                                    "null": {}, "level": 3}) for m, p in zip(metrics, prior)],
                       dtype=object)
    empty = np.array([i for i, ch in enumerate(EASY) if ch == "0"], dtype=np.int16)
    base_order = np.stack([rng.permutation(empty.size) for _ in range(n_puzzles)])

    def predicted(j):  # the "SA prediction": the puzzle's own order, ranks per cell
        ranks = [None] * 81
        for pos, k in enumerate(np.argsort(base_order[j])):
            ranks[int(empty[k])] = float(pos + 1)
        return json.dumps(ranks)

    medians = np.array([predicted(j) for j in range(n_puzzles)], dtype=object)
    con.register("pz", {"id": ids, "ratings": ratings, "median": medians})
    con.execute("INSERT INTO puzzles (id, givens, box_size, solution, status, registered_at, "
                "ratings, fill_rank_median) SELECT id, ?, 3, ?, 'ready', ?, ratings, median FROM pz",
                [EASY, SOLUTION, now])
    con.unregister("pz")
    digits = np.array([int(SOLUTION[c]) for c in empty], dtype=np.int16)
    # popularity: some puzzles are played far more than others
    pop = rng.pareto(1.2, n_puzzles) + 1
    puzzle_of = rng.choice(n_puzzles, n_subs, p=pop / pop.sum())
    player_of = rng.integers(0, n_players, n_subs)
    names = np.array(["demo"] if n_portals == 1 else [f"portal{q}" for q in range(n_portals)],
                     dtype=object)
    portal_of = names[player_of % n_portals]
    log_t = true_d[puzzle_of] - skill[player_of] + rng.normal(0, 0.3, n_subs)
    flagged = rng.random(n_subs) < 0.01
    log_t[flagged] -= 2.0  # copiers: far too fast
    duration = np.maximum((np.exp(log_t) * 1000).astype(np.int64), empty.size * 10)
    chunk = 100_000
    for lo in range(0, n_subs, chunk):
        hi = min(lo + chunk, n_subs)
        k = np.arange(lo, hi)
        con.register("subs", {
            "sub_key": k, "portal": portal_of[lo:hi],
            "submission_id": np.array([f"s{x}" for x in k], dtype=object),
            "player_id": np.array([f"u{x:05d}" for x in player_of[lo:hi]], dtype=object),
            "puzzle_id": ids[puzzle_of[lo:hi]],
            "duration_ms": duration[lo:hi],
            "age_s": rng.uniform(0, 365 * 86400, k.size)})
        con.execute("INSERT INTO submissions (sub_key, portal, submission_id, webhook_id, "
                    "tournament_id, player_id, puzzle_id, started_at, received_at, "
                    "committed_at, n_moves, duration_ms, complete, status, raw) "
                    "SELECT sub_key, portal, submission_id, "
                    "'w' || submission_id, 'bench', player_id, puzzle_id, ?, ?, "
                    "?::TIMESTAMPTZ - to_seconds(age_s), 49, duration_ms, true, 'scored', "
                    "'{}' FROM subs", [now, now, now])
        con.unregister("subs")
        # moves: each solve's order scatters around its puzzle's order
        noise = base_order[puzzle_of[lo:hi]] + rng.normal(0, 6.0, (k.size, empty.size))
        order = np.argsort(noise, axis=1)
        frac = np.sort(rng.random((k.size, empty.size)), axis=1)
        frac[:, -1] = 1.0
        t = (frac * duration[lo:hi, None]).astype(np.int32)
        con.register("mv", {
            "sub_key": np.repeat(k, empty.size), "seq": np.tile(np.arange(empty.size), k.size),
            "t_ms": t.reshape(-1), "cell": empty[order].reshape(-1),
            "digit": digits[order].reshape(-1), "note": np.zeros(k.size * empty.size, bool)})
        con.execute("INSERT INTO moves SELECT sub_key, seq, t_ms, cell, digit, note FROM mv")
        con.unregister("mv")
        _scores(con, k, portal_of[lo:hi], prior[puzzle_of[lo:hi]], log_t[lo:hi],
                flagged[lo:hi], now, rng)
    fk = np.flatnonzero(flagged)
    con.register("fl", {"submission_id": np.array([f"s{x}" for x in fk], dtype=object),
                        "portal": portal_of[fk]})
    con.execute("INSERT INTO flags (portal, submission_id, created_at, state, reasons) "
                "SELECT portal, submission_id, ?, 'open', '[]' FROM fl", [now])
    con.unregister("fl")
    # every solve's moves are stored (what the writer records as it stores them)
    con.execute("UPDATE moves_through SET through = (SELECT max(sub_key) FROM submissions)")
    con.execute("CHECKPOINT")
    con.close()
    return {"true_d": true_d, "skill": skill, "ids": ids, "flagged": int(flagged.sum())}


FAMILIES = ("deduction", "order", "pacing", "speed", "switch")


def _facts(prior, log_t, flagged, rng) -> list[str]:
    """Season facts (``SolveFacts.to_json``) as scoring would store them for honest-looking
    solves: uniform family p, ratios and a stall's slope for a share of the solves, and
    the pace against the expected time scoring priced them with."""
    from fairgrid.analytics.signals import STALL_START_LR

    n = prior.size
    fam = rng.random((n, len(FAMILIES)))
    at_stall = rng.random(n) < 0.4
    look = np.where(at_stall, -rng.gamma(2.0, 0.5, n), 0.0)
    # a person's stall starts, mostly after a think (experiments/stall_pace.py)
    quick = np.where(at_stall, rng.choice(STALL_START_LR, n, p=[0.03, 0.12, 0.2, 0.65]),
                     0.0)
    xx = rng.uniform(0.3, 2.0, n)
    pace = log_t - prior
    out = []
    for i in range(n):
        llr = {"right_first_time": 0.0, "hint_run": 0.0, "stall_look": round(float(look[i]), 4)}
        if at_stall[i]:
            llr["stall_pace"] = float(quick[i])
        out.append(json.dumps({
            "facts": 1, "family_p": dict(zip(FAMILIES, fam[i].round(6).tolist())),
            "flagged": bool(flagged[i]), "llr": llr,
            "slope": [round(float(xx[i] * rng.normal(2.3, 1.0)), 4), round(float(xx[i]), 4)]
            if at_stall[i] else None,
            "counted": {"unforced": [0.0, 1.0], "unproven": [0.0, 1.0]},
            "p_value": float(fam[i].min()), "pace": round(float(pace[i]), 4),
            "pace_group": "sudoku/calibration", "finished": True, "puzzle_type": "sudoku"}))
    return out


def _scores(con, k, portal, prior, log_t, flagged, now, rng) -> None:
    """A score per solve, holding its season facts (the evidence itself is left out: the
    nightly job reads the facts, which is what its verdicts stage costs at scale)."""
    facts = _facts(prior, log_t, flagged, rng)
    p = np.array([json.loads(f)["p_value"] for f in facts])
    con.register("sc", {"submission_id": np.array([f"s{x}" for x in k], dtype=object),
                        "portal": portal, "p_value": p, "flagged": flagged,
                        "facts": np.array(facts, dtype=object)})
    con.execute("INSERT INTO scores (portal, submission_id, scored_at, anomaly, p_value, "
                "flagged, evidence, season_facts) SELECT portal, submission_id, ?, "
                "-ln(p_value + 1e-12), p_value, flagged, '{}', facts FROM sc", [now])
    con.unregister("sc")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--puzzles", type=int, default=10_000)
    ap.add_argument("--players", type=int, default=50_000)
    ap.add_argument("--submissions", type=int, default=1_000_000)
    ap.add_argument("--portals", type=int, default=1,
                    help="portals the players are spread over (sharing every puzzle)")
    ap.add_argument("--dir", default=None, help="where to build the database (default: a temp dir)")
    args = ap.parse_args()
    import duckdb

    tmp = Path(args.dir or tempfile.mkdtemp(prefix="fairgrid-nightly-"))
    tmp.mkdir(parents=True, exist_ok=True)
    db = tmp / "nightly.duckdb"
    for f in (db, Path(str(db) + ".wal")):
        f.unlink(missing_ok=True)
    t0 = time.perf_counter()
    truth = build(db, args.puzzles, args.players, args.submissions, n_portals=args.portals)
    print(f"built {db} ({db.stat().st_size / 2**20:,.0f} MB) in {time.perf_counter() - t0:.0f} s:"
          f" {args.puzzles:,} puzzles, {args.players:,} players on {args.portals} portal(s), "
          f"{args.submissions:,} solves "
          f"({truth['flagged']:,} flagged), {args.submissions * 49:,} moves")
    cfg = tmp / "bench.toml"
    cfg.write_text(f'[server]\nport = 1\n[storage]\npath = "{db}"\n'
                   f'[auth]\nadmin_tokens = ["bench"]\n[nightly]\nrescore_days = 7\n')
    cmd = [sys.executable, "-m", "fairgrid.daemon.cli", "recompute", "--config", str(cfg),
           "--json"]
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20  # KiB -> GiB
    if res.returncode != 0:
        print(res.stderr)
        return 1
    summary = json.loads(res.stdout)
    con = duckdb.connect(str(db), read_only=True)
    d = dict(con.execute("SELECT puzzle_id, difficulty FROM puzzle_ratings WHERE run_id = ?",
                         [summary["run_id"]]).fetchall())
    s = dict(con.execute("SELECT player_id, skill FROM player_ratings WHERE run_id = ?",
                         [summary["run_id"]]).fetchall())
    pairs = con.execute("SELECT count(*) FROM puzzle_portal_ratings WHERE run_id = ?",
                        [summary["run_id"]]).fetchone()[0]
    solves = dict(con.execute("SELECT puzzle_id, solves FROM puzzle_ratings WHERE run_id = ?",
                              [summary["run_id"]]).fetchall())
    con.close()
    fitted_d = np.array([d[i] for i in truth["ids"]])
    fitted_s = np.array([s.get(f"u{i:05d}", np.nan) for i in range(args.players)])
    ok = np.isfinite(fitted_s)
    n = np.array([solves[i] for i in truth["ids"]])
    print(f"recompute: {wall:.1f} s wall (target <= 300), peak RSS {peak:.2f} GiB (target <= 4)")
    print(f"  fit on {summary['solves']:,} unflagged solves; consensus orders for "
          f"{summary['consensus_puzzles']:,} puzzles; mu {summary['mu']:.3f} (true -1.2)")
    print(f"  difficulty: correlation with the truth {np.corrcoef(fitted_d, truth['true_d'])[0, 1]:.4f}"
          f" (target >= 0.95); puzzles with < 20 solves: "
          f"{np.corrcoef(fitted_d[n < 20], truth['true_d'][n < 20])[0, 1]:.4f} ({int((n < 20).sum())})")
    print(f"  each portal's own difficulty of a shared puzzle: {pairs:,} rows")
    print(f"  skill: correlation with the truth {np.corrcoef(fitted_s[ok], truth['skill'][ok])[0, 1]:.4f}"
          f" ({int(ok.sum()):,} players)")
    print("  stages and rows: " + json.dumps({k: v for k, v in summary.items()
                                                if k not in ("correlations",)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
