"""What judging a player costs the daemon, by season length: the season read from each
solve's compact facts (``scores.season_facts``) against the same seasons read from each
solve's whole evidence document, in the same run.

    python bench/verdict_cost.py [--players 10] [--lengths 50 200 800]

A DuckDB file of ``--players`` players, each with a season of every length, every solve
a real scored evidence document (honest simulated solves of the bench's medium puzzle)
with its facts. Per season length, the wall time of one judgement of all the players
(``daemon.work.verdicts``: the season read, the facts, the verdict; not the write) reading
the facts, and reading the evidence (how a score written before the facts is read, and
how every score was read before them), best of ``--repeat``. Prints the time per player
and the evidence path's over the facts path's.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

from _common import PUZZLES, machine
from detection_eval import _analyse, _puzzle_inputs


def _documents(count: int) -> list[tuple[str, str, int]]:
    """(evidence JSON, season facts JSON, duration ms) of ``count`` honest solves."""
    from fairgrid.analytics.evidence import score_solve
    from fairgrid.analytics.player_verdict import solve_facts
    from fairgrid.analytics.simulate import simulate
    from fairgrid.solvers import parse
    from fairgrid.solvers.propagation import solution_of

    text = PUZZLES["medium"]
    puzzle = parse(text)
    solution = solution_of(puzzle)
    sol_text = "".join(str(d) for d in solution)
    # the puzzle analysed as the detection benches analyse theirs
    _, inputs, _, _ = _puzzle_inputs(text, sol_text, *_analyse((text, sol_text, 0)), 0)
    out = []
    for k in range(count):
        moves = simulate(puzzle, solution, "honest", rng=k, expected_log_s=6.5,
                         skill=0.0).moves()
        cols = {c: np.array([m[c] for m in moves]) for c in ("t_ms", "cell", "digit")}
        doc = score_solve(inputs.facts, inputs.null, cols["t_ms"], cols["cell"],
                          cols["digit"], None).to_json()
        out.append((json.dumps(doc), json.dumps(solve_facts("", doc).to_json()),
                    int(cols["t_ms"][-1])))
    return out


def _database(path: Path, players: int, lengths: list[int], docs) -> dict[int, list]:
    """The file, and per season length its players' keys."""
    from fairgrid.daemon.store import connect

    con = connect(str(path))
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    # a puzzle a solve: a puzzle solved again is left out of a season
    con.executemany("INSERT INTO puzzles (id, givens, box_size, solution, status, "
                    "registered_at, ratings, fill_rank_median) VALUES (?, 'x', 3, 'y', "
                    "'ready', ?, ?, '[]')",
                    [(f"p{n}", start, json.dumps({"expected_log_s": 6.5, "sd_log": 0.16}))
                     for n in range(max(lengths))])
    subs, scores, keys, key = [], [], {}, 0
    for length in lengths:
        keys[length] = []
        for i in range(players):
            player = f"u{length}-{i}"
            keys[length].append(("demo", player))
            for n in range(length):
                evidence, facts, ms = docs[(i * 7 + n) % len(docs)]
                sid, at = f"{player}-{n}", start + timedelta(hours=n)
                subs.append((key, "demo", sid, f"w{key}", "t", player, f"p{n}", at, at, at,
                             81, ms, True, "scored", "{}"))
                scores.append(("demo", sid, at, 0.1, 0.5, False, evidence, facts))
                key += 1
    con.executemany("INSERT INTO submissions (sub_key, portal, submission_id, webhook_id, "
                    "tournament_id, player_id, puzzle_id, started_at, received_at, "
                    "committed_at, n_moves, duration_ms, complete, status, raw) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", subs)
    con.executemany("INSERT INTO scores (portal, submission_id, scored_at, anomaly, "
                    "p_value, flagged, evidence, season_facts) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    scores)
    con.execute("CHECKPOINT")
    return con, keys


def _judge_once(db, players, facts_column: bool) -> float:
    """Seconds for one judgement of ``players`` as ``judge_players`` makes it, without
    the write; reading the evidence where ``facts_column`` is False."""
    from fairgrid.analytics.player_verdict import judge, shipped_null
    from fairgrid.daemon.store.repository import players as sql
    from fairgrid.daemon.work.verdicts import _facts, _run_of

    t0 = time.perf_counter()
    seasons = db.read(sql.seasons, players)
    if not facts_column:
        assert all(s.facts is None for ss in seasons.solves.values() for s in ss)
    run, reprice = _run_of(seasons)
    for key in players:
        judge(_facts(seasons.solves[key], key, run, reprice), shipped_null())
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, default=10)
    ap.add_argument("--lengths", type=int, nargs="+", default=[50, 200, 800])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from fairgrid.daemon.work.nightly_db import direct_db

    started = time.perf_counter()
    docs = _documents(40)
    sizes = [len(e) for e, _, _ in docs], [len(f) for _, f, _ in docs]
    print(f"# {machine()}; evidence {int(np.median(sizes[0])):,} bytes a solve (median), "
          f"season facts {int(np.median(sizes[1])):,}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        con, keys = _database(Path(tmp) / "v.duckdb", args.players, args.lengths, docs)
        db = direct_db(con)
        print("| solves a season | players | facts: ms a player | evidence: ms a player "
              "| evidence / facts |")
        print("| ---: | ---: | ---: | ---: | ---: |")
        for length in args.lengths:
            players = keys[length]
            fast = min(_judge_once(db, players, True) for _ in range(args.repeat))
            con.execute("UPDATE scores SET season_facts = NULL WHERE starts_with("
                        "submission_id, ?)", [f"u{length}-"])
            slow = min(_judge_once(db, players, False) for _ in range(args.repeat))
            n = len(players)
            print(f"| {length:,} | {n} | {1000 * fast / n:.1f} | {1000 * slow / n:.1f} "
                  f"| {slow / fast:.1f} |", flush=True)
    print(f"# {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
