"""The ``fairgrid`` command line: one program, one subcommand per job.

Bad input (an unreadable puzzle, a bad option) ends with exit status 2 and a one-line
message on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

from fairgrid.solvers import PuzzleError, format_grid, format_line, load_puzzle
from fairgrid.solvers.grid import layout_grid

EXIT_USAGE = 2


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


def _number(convert, minimum, rule: str):
    """An argparse type: ``convert`` the text and require ``minimum <= value < inf``."""
    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not minimum <= value < float("inf"):
            raise argparse.ArgumentTypeError(f"must be {rule}, got {text}")
        return value
    return parse


_positive = _number(int, 1, "at least 1")
_seed = _number(int, 0, "0 or more")
_positive_float = _number(float, 1e-9, "a positive number")


def _progress_bar(total: int, desc: str):
    """A tqdm bar on stderr when stderr is a terminal; otherwise None."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="run", file=sys.stderr, leave=False)


# ---------------------------------------------------------------------------- solve

def cmd_solve(args: argparse.Namespace) -> int:
    from fairgrid.solvers.annealing import solve_sa
    from fairgrid.solvers.backtracking import solve_backtracking

    puzzle = load_puzzle(args.puzzle)
    rng = np.random.default_rng(args.seed)
    if args.method == "sa":
        res = solve_sa(puzzle, rng=rng, schedule=args.schedule, max_steps=args.max_steps)
        figures = {"method": "sa", "schedule": res.schedule, "solved": res.solved,
                   "steps": res.steps, "reheats": res.reheats, "cost": res.cost}
    else:
        res = solve_backtracking(puzzle, rng=rng, max_steps=args.max_steps)
        figures = {"method": "bf", "solved": res.solved, "steps": res.steps,
                   "explored": int(res.explored.size)}
    figures["seed"] = args.seed
    figures["message"] = res.message
    if args.json:
        figures["puzzle"] = str(puzzle)
        figures["solution"] = format_line(res.grid) if res.solved else None
        print(json.dumps(figures))
    else:
        print(format_grid(res.grid if res.solved else puzzle.givens, puzzle.order))
        print()
        print("  ".join(f"{k}: {v}" for k, v in figures.items()))
    return 0 if res.solved else 1


# ---------------------------------------------------------------------------- predict-order

def render_ranks(rank: np.ndarray, givens: np.ndarray, order: int) -> str:
    """The predicted order as a grid: each free cell's rank, givens as the given in brackets."""
    texts = [f"[{g}]" if g else str(int(r)) for r, g in zip(rank, givens)]
    return layout_grid(texts, order, width=max(len(t) for t in texts))


def cmd_predict_order(args: argparse.Namespace) -> int:
    from fairgrid.solvers.order import predict_order

    puzzle = load_puzzle(args.puzzle)
    bar = _progress_bar(args.runs, "SA runs")
    try:
        pred = predict_order(puzzle, seed=args.seed, runs=args.runs, jobs=args.jobs,
                             schedule=args.schedule, budget_s=args.budget,
                             max_steps=args.max_steps, progress=bar.update if bar else None)
    finally:
        if bar:
            bar.close()
    if args.png:
        from .plots import order_heatmap

        order_heatmap(pred, args.png)
    if args.json:
        print(json.dumps(pred.as_dict()))
        return 0
    print(f"Predicted fill order (1 = filled first; [d] = given) — median of "
          f"{pred.basis_runs} SA runs, {args.schedule} schedule, seed {pred.seed}")
    print(render_ranks(pred.rank, puzzle.givens, puzzle.order))
    free = puzzle.empty_cells
    lower = " (lower bound: some runs were capped)" if pred.capped_runs else ""
    print(f"\nruns: {pred.runs}  solved: {pred.runs - pred.capped_runs}  "
          f"capped at {pred.max_steps:,} steps: {pred.capped_runs}  "
          f"ranks from: {pred.basis_runs} runs")
    if pred.basis_runs < 20:
        print(f"warning: the ranks rest on {pred.basis_runs} runs; a larger --budget "
              f"makes them steadier (see docs/benchmarks.md)")
    print(f"SA difficulty (median steps): {pred.median_steps:,.0f}{lower}")
    if free.size:
        print(f"rank spread (median IQR over cells): {np.median(pred.spread[free]):.1f}")
    return 0


# ---------------------------------------------------------------------------- count

def cmd_count(args: argparse.Namespace) -> int:
    from fairgrid.solvers.backtracking import count_solutions

    puzzle = load_puzzle(args.puzzle)
    n = count_solutions(puzzle, limit=args.limit)
    more = "+" if n >= args.limit else ""
    if args.json:
        print(json.dumps({"puzzle": str(puzzle), "solutions": n, "limit": args.limit,
                          "unique": n == 1}))
    else:
        verdict = "unique" if n == 1 else ("no solution" if n == 0 else "not unique")
        print(f"{n}{more} solution{'s' if n != 1 else ''} ({verdict})")
    return 0 if n == 1 else 1


# ---------------------------------------------------------------------------- rate

_PUZZLE_LENGTHS = (16, 81, 256, 625)


def _puzzle_lines(arg: str) -> list[tuple[int, str]] | None:
    """(line number, puzzle text) for a file of puzzles, one a line; None otherwise.

    A line's puzzle is its first whitespace-separated field of 16, 81, 256 or 625
    characters (so ``id puzzle rating`` files work); blank and ``#`` lines are skipped.
    A file whose lines are not all puzzles (a 9-line grid, say) is one puzzle.
    """
    path = Path(arg)
    if not path.is_file():
        return None
    found = []
    for no, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        token = next((t for t in line.split() if len(t) in _PUZZLE_LENGTHS), None)
        if token is None:
            return None
        found.append((no, token))
    return found if len(found) > 1 else None


def _rating_record(text: str, ratings, calibration) -> dict:
    record = {"puzzle": text}
    described = calibration.describe(ratings.metrics)
    record["expected_time_s"] = round(described["expected_time_s"], 1)
    record["level"] = described["level"]
    record["level_name"] = described["level_name"]
    record["metrics"] = {k: round(v, 4) for k, v in ratings.metrics.items()}
    if ratings.sa_capped_runs:
        record["sa_capped_runs"] = ratings.sa_capped_runs
    return record


def _minutes(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m}:{s:02d}"


def cmd_rate(args: argparse.Namespace) -> int:
    from fairgrid.analytics.expected_time import load_default
    from fairgrid.solvers.rate import rate, rate_many

    calibration = load_default()
    lines = _puzzle_lines(args.puzzle)
    if lines is None:
        puzzle = load_puzzle(args.puzzle)
        ratings = rate(puzzle, rng=args.seed, runs=args.runs, budget_s=args.budget)
        record = _rating_record(str(puzzle), ratings, calibration)
        if args.json:
            print(json.dumps(record))
            return 0
        print(format_grid(puzzle.givens, puzzle.order))
        print(f"\nlevel {record['level']} ({record['level_name']}), expected solve time "
              f"{_minutes(record['expected_time_s'])} (min:s; geometric mean of solvers "
              f"like sudoku.org.uk's)")
        width = max(map(len, record["metrics"]))
        for name, value in record["metrics"].items():
            print(f"  {name:<{width}}  {value:,.4g}")
        return 0
    bar = None
    if sys.stderr.isatty():
        from tqdm import tqdm
        bar = tqdm(total=len(lines), desc="rating", unit="puzzle", file=sys.stderr)
    bad = []
    try:
        results = rate_many([t for _, t in lines], seed=args.seed, runs=args.runs,
                            budget_s=args.budget, jobs=args.jobs,
                            on_done=bar.update if bar else None)
        for (no, text), (ratings, err) in zip(lines, results):
            if err:
                bad.append(no)
                msg = f"line {no}: {err}"
                if bar:
                    bar.write(f"fairgrid rate: error: {msg}", file=sys.stderr)
                else:
                    print(f"fairgrid rate: error: {msg}", file=sys.stderr)
                if args.json:
                    print(json.dumps({"puzzle": text, "line": no, "error": err}), flush=True)
                continue
            record = _rating_record(text, ratings, calibration)
            if args.json:
                print(json.dumps(record), flush=True)
            else:
                print(f"{text}  {record['level']} {record['level_name']:<9}  "
                      f"{_minutes(record['expected_time_s']):>6}", flush=True)
    finally:
        if bar:
            bar.close()
    if bad:
        raise CliError(f"{len(bad)} of {len(lines)} puzzles could not be rated "
                       f"(lines {', '.join(map(str, bad[:10]))}{', ...' if len(bad) > 10 else ''})")
    return 0


# ---------------------------------------------------------------------------- generate

def cmd_generate(args: argparse.Namespace) -> int:
    from fairgrid.solvers.generator import random_puzzle, tournament_puzzle

    if not 0 <= args.p <= 1:
        raise CliError(f"--p must be between 0 and 1, got {args.p}")
    if args.level is not None and not args.unique:
        raise CliError("--level needs --unique (levels are rated on unique puzzles)")
    rng = np.random.default_rng(args.seed)
    calibration = None
    if args.level is not None:
        from fairgrid.analytics.expected_time import load_default
        from fairgrid.solvers.rate import families_for, rate
        calibration = load_default()
        needed = families_for(f.rpartition(":")[2] for f in calibration.features)
    made = 0
    attempts = 0
    while made < args.count:
        attempts += 1
        if attempts > args.count * 200:
            raise CliError(f"found only {made} puzzles of level {args.level} in "
                           f"{attempts - 1} attempts")
        if args.unique:
            min_givens = int(round(args.p * (args.order ** 4)))
            puzzle, _ = tournament_puzzle(args.order, rng=rng, min_givens=min_givens)
        else:
            puzzle = random_puzzle(args.order, args.p, rng=rng)
        if calibration is not None:
            metrics = rate(puzzle, rng=rng, only=needed).metrics
            if calibration.describe(metrics)["level"] != args.level:
                continue
        print(format_line(puzzle.givens, args.order), flush=True)
        made += 1
    return 0


# ---------------------------------------------------------------------------- serve

def _event_loop(use_uvloop: bool):
    """uvloop's event loop when wanted and installed (not on Windows), else asyncio's."""
    import asyncio

    if use_uvloop:
        try:
            import uvloop
        except ImportError:
            print("fairgrid: uvloop is not installed; running on asyncio's event loop",
                  file=sys.stderr)
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def cmd_serve(args: argparse.Namespace) -> int:
    import logging

    from aiohttp import web

    from .app import create_app
    from .settings import SECRETS_FILE, SettingsError, load_settings
    from .store import StoreError

    try:
        settings, created = load_settings(args.config)
    except SettingsError as exc:
        raise CliError(str(exc)) from None
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    where = Path(settings.storage_path).resolve()
    print(f"fairgrid: settings from {settings.source}; database {where}", file=sys.stderr)
    if created:
        secrets_path = where.parent / SECRETS_FILE
        print(f"fairgrid: generated a portal 'demo' and tokens in {secrets_path} (mode 0600); "
              f"shown once:", file=sys.stderr)
        print(secrets_path.read_text(), file=sys.stderr)
    loop = _event_loop(settings.server_uvloop)
    try:
        web.run_app(create_app(settings), host=settings.server_host, port=settings.server_port,
                    shutdown_timeout=settings.server_shutdown_timeout_s, print=None,
                    access_log=None, loop=loop)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot listen on {settings.server_host}:{settings.server_port}: "
                       f"{exc.strerror}") from None
    return 0


def cmd_portal_add(args: argparse.Namespace) -> int:
    import re
    import tomllib

    from .settings import SECRETS_FILE, dump_secrets, load_settings, new_secret

    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", args.name):
        raise CliError("a portal name is 1..64 letters, digits, '-' or '_'")
    secret = new_secret()
    if args.config is None and not os.environ.get("FAIRGRID_CONFIG"):
        settings, _ = load_settings(None)
        path = Path(settings.storage_path).resolve().parent / SECRETS_FILE
        table = tomllib.loads(path.read_text())
        portals = table.setdefault("portals", {})
        if args.name in portals:
            portals[args.name]["secrets"].append(secret)
        else:
            portals[args.name] = {"secrets": [secret]}
        path.write_text(dump_secrets(table))
        print(f"added to {path}; restart the daemon to use it", file=sys.stderr)
    else:
        print(f"add to your config, then restart the daemon:\n\n[portals.{args.name}]\n"
              f"secrets = [\"{secret}\"]\n", file=sys.stderr)
    print(secret)
    return 0


# ---------------------------------------------------------------------------- flags

def _call_daemon(settings, method: str, path: str, *, admin: bool = False):
    """(status, JSON body) of a call to the running daemon's API with a token from the
    config (an admin token, or any organiser or admin token); None when no daemon
    answers. The body of an error status has its ``error``."""
    import urllib.error
    import urllib.request

    tokens = settings.admin_tokens if admin else settings.organiser_tokens + settings.admin_tokens
    if not tokens:
        raise CliError("no admin token in the config to call the daemon with" if admin else
                       "no organiser or admin token in the config to call the daemon with")
    req = urllib.request.Request(
        f"http://{settings.server_host}:{settings.server_port}{path}", method=method,
        data=b"" if method == "POST" else None,
        headers={"Authorization": f"Bearer {tokens[0]}"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        doc = json.loads(exc.read() or b"{}")
        doc.setdefault("error", exc.reason)
        return exc.code, doc
    except (urllib.error.URLError, ConnectionError):
        return None


def _daemon_get(settings, path: str) -> dict | None:
    """GET an organiser route: its JSON, None when no daemon answers, CliError on an error."""
    answer = _call_daemon(settings, "GET", path)
    if answer is None:
        return None
    status, doc = answer
    if status >= 400:
        raise CliError(f"the daemon answered {status}: {doc['error']}")
    return doc


def _database_file(settings) -> str:
    """The database path when no daemon answers; CliError when there is no file."""
    if not Path(settings.storage_path).exists():
        raise CliError(f"no daemon answers on {settings.server_host}:{settings.server_port} "
                       f"and there is no database at {settings.storage_path}")
    return settings.storage_path


def _open_readonly(settings):
    """A read-only connection to the database file (no daemon owns it now)."""
    import duckdb

    path = _database_file(settings)
    try:
        return duckdb.connect(path, read_only=True)
    except duckdb.Error as exc:
        raise CliError(f"no daemon answers and the database cannot be opened: {exc}") from None


def _flags_from_daemon(settings, query: dict) -> list[dict] | None:
    """All pages of GET /v1/flags from the running daemon, or None when none answers."""
    import urllib.parse

    flags, cursor = [], None
    while True:
        params = dict(query, limit=500, **({"cursor": cursor} if cursor else {}))
        page = _daemon_get(settings, "/v1/flags?" + urllib.parse.urlencode(params))
        if page is None:
            return None
        flags += page["flags"]
        cursor = page["next_cursor"]
        if not cursor:
            return flags


def _flags_from_file(settings, query: dict) -> list[dict]:
    """The same list read from the database file, read-only (no daemon owns it now)."""
    from .queries import flag_json, flags_query

    con = _open_readonly(settings)
    try:
        sql, params = flags_query(tournament=query.get("tournament"),
                                  player=query.get("player"), limit=1_000_000)
        cur = con.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [flag_json(dict(zip(names, row))) for row in cur.fetchall()]
    finally:
        con.close()


def cmd_flags(args: argparse.Namespace) -> int:
    from .settings import SettingsError, load_settings

    try:
        settings, _ = load_settings(args.config, generate=False)
    except SettingsError as exc:
        raise CliError(str(exc)) from None
    query = {k: v for k, v in (("tournament", args.tournament), ("player", args.player)) if v}
    flags = _flags_from_daemon(settings, query)
    source = "daemon"
    if flags is None:
        flags, source = _flags_from_file(settings, query), "database file (read-only)"
    if args.json:
        for flag in flags:
            print(json.dumps(flag))
        return 0
    print(f"{len(flags)} flag{'s' if len(flags) != 1 else ''} (from the {source})")
    for f in flags:
        score = "" if f["anomaly"] is None else f"{f['anomaly']:.2f}"
        print(f"{f['created_at']}  {f['state']:<9} {score:>7}  {f['portal']}/{f['submission_id']}"
              f"  player {f['player_id']}  puzzle {f['puzzle_id']}  {f['reasons'] or ''}")
    return 0


# ---------------------------------------------------------------------------- report

def _submission_from_daemon(settings, portal: str, sid: str) -> dict | None:
    import urllib.parse

    return _daemon_get(settings, f"/v1/submissions/{urllib.parse.quote(portal, safe='')}/"
                                 f"{urllib.parse.quote(sid, safe='')}")


def _submission_from_file(settings, portal: str, sid: str) -> dict:
    con = _open_readonly(settings)
    try:
        row = con.execute(
            "SELECT s.status, s.player_id, s.puzzle_id, s.tournament_id, s.duration_ms, "
            "sc.evidence FROM submissions s LEFT JOIN scores sc ON sc.portal = s.portal AND "
            "sc.submission_id = s.submission_id WHERE s.portal = ? AND s.submission_id = ?",
            [portal, sid]).fetchone()
    finally:
        con.close()
    if row is None:
        raise CliError(f"no submission {sid!r} from portal {portal!r}")
    return {"portal": portal, "submission_id": sid, "status": row[0], "player_id": row[1],
            "puzzle_id": row[2], "tournament_id": row[3], "duration_ms": row[4],
            "score": None if row[5] is None else json.loads(row[5])}


def _rank_text(grid_rows, cell_width: int) -> list[str]:
    """A rank grid as text lines: ranks 1-based, givens as '·'."""
    size = len(grid_rows)
    order = int(round(size ** 0.5))
    lines = []
    for r, row in enumerate(grid_rows):
        if r and r % order == 0:
            lines.append("-+-".join(["-" * ((cell_width + 1) * order - 1)] * order))
        cells = ["·".rjust(cell_width) if v is None else str(v + 1 if isinstance(v, int) and
                 v >= 0 else v).rjust(cell_width) for v in row]
        blocks = [" ".join(cells[b * order:(b + 1) * order]) for b in range(order)]
        lines.append(" | ".join(blocks))
    return lines


def cmd_report(args: argparse.Namespace) -> int:
    from .settings import SettingsError, load_settings

    try:
        settings, _ = load_settings(args.config, generate=False)
    except SettingsError as exc:
        raise CliError(str(exc)) from None
    doc = _submission_from_daemon(settings, args.portal, args.submission_id)
    if doc is None:
        doc = _submission_from_file(settings, args.portal, args.submission_id)
    score = doc.get("score")
    if args.json:
        print(json.dumps(doc))
        return 0
    print(f"{doc['portal']}/{doc['submission_id']}  player {doc['player_id']}  puzzle "
          f"{doc['puzzle_id']}  tournament {doc.get('tournament_id') or '-'}  "
          f"status {doc['status']}")
    if score is None:
        print("not scored yet (its puzzle is still being analysed)")
        return 0
    verdict = "FLAGGED for review" if score["flagged"] else "not flagged"
    print(f"{verdict}: anomaly {score['anomaly']:.2f} (p = {score['p_value']:.2g})"
          + (f"; reasons: {', '.join(score['reasons'])}" if score["reasons"] else ""))
    counts = score["counts"]
    print(f"{counts['filled']} cells filled, {counts['mistakes']} mistakes, "
          f"{counts['erasures']} erasures, {counts['overwrites']} overwrites\n")
    for s in sorted(score["signals"], key=lambda s: -s["contribution"]):
        print(f"  {s['name']:<18} {s['value']:>8.3f}  odder than {s['percentile']:5.1f}% of "
              f"honest solves: {s['explanation']}")
    pred = [[None if v is None else v - 1 for v in row] for row in score["predicted_order"]]
    actual = score["actual_order"]
    width = max(2, len(str(len(score["timeline"]))))
    left, right = _rank_text(pred, width), _rank_text(actual, width)
    pad = max(len(x) for x in left)
    print(f"\n{'predicted order (SA)':<{pad}}    this solve")
    for a, b in zip(left, right):
        print(f"{a:<{pad}}    {b}")
    if args.png:
        import numpy as np

        from .plots import orders_side_by_side

        flat_p = [np.nan if v is None else v for row in score["predicted_order"] for v in row]
        flat_a = [np.nan if v is None else v + 1 for row in actual for v in row]
        givens = np.array(score["givens"])
        size = len(actual)
        orders_side_by_side(np.array(flat_p, dtype=float), np.array(flat_a, dtype=float),
                            givens, int(round(size ** 0.5)),
                            f"{doc['portal']}/{doc['submission_id']}: {verdict}, "
                            f"anomaly {score['anomaly']:.1f}", args.png)
    return 0


# ---------------------------------------------------------------------------- simulate

def cmd_simulate(args: argparse.Namespace) -> int:
    """Send simulated honest and cheating solves to a daemon as signed webhooks."""
    import time as _time
    import urllib.error
    import urllib.request

    from fairgrid.analytics.expected_time import load_default
    from fairgrid.analytics.simulate import CHEATS, simulate
    from fairgrid.solvers.propagation import solution_of
    from fairgrid.solvers.rate import rate

    from .signatures import sign

    puzzle = load_puzzle(args.puzzle)
    solution = solution_of(puzzle)
    cal = load_default()
    metrics = rate(puzzle, rng=args.seed, only=("human",)).metrics
    expected_log_s = float(np.log(cal.expected_time_s(metrics)))
    rng = np.random.default_rng(args.seed)
    kinds = ["honest"] * args.players + [CHEATS[i % len(CHEATS)] for i in range(args.cheaters)]
    rng.shuffle(kinds)
    url = args.url.rstrip("/") + "/v1/webhooks/solves"
    puzzle_id = args.puzzle_id or f"sim-{format_line(puzzle.givens, puzzle.order)[:12]}"
    sent = {}
    for i, kind in enumerate(kinds):
        sim = simulate(puzzle, solution, kind, rng=rng, expected_log_s=expected_log_s,
                       sd_log=cal.residual_sd)
        sid = f"{args.prefix}-{i:05d}"
        body = json.dumps({"type": "solve.completed", "portal": args.portal,
                           "submission_id": sid, "tournament_id": args.tournament,
                           "player_id": f"{args.prefix}-player-{i:05d}",
                           "puzzle": {"id": puzzle_id,
                                      "givens": format_line(puzzle.givens, puzzle.order)},
                           "started_at": "2026-11-21T10:00:00Z",
                           "moves": sim.moves()}).encode()
        headers = sign(args.secret, f"{sid}-msg", int(_time.time()), body)
        req = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                status = resp.status
        except urllib.error.HTTPError as exc:
            status = exc.code
            if status in (400, 401, 422):
                raise CliError(f"the daemon refused {sid} with {status}: "
                               f"{json.loads(exc.read() or b'{}').get('error')}") from None
        except (urllib.error.URLError, ConnectionError) as exc:
            raise CliError(f"cannot reach {url}: {exc}") from None
        sent[kind] = sent.get(kind, 0) + 1
        print(json.dumps({"submission_id": sid, "kind": kind, "status": status}), flush=True)
    print(f"sent {sum(sent.values())} solves: " + ", ".join(f"{v} {k}" for k, v in
                                                           sorted(sent.items())), file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------- recompute

def cmd_recompute(args: argparse.Namespace) -> int:
    """Run the nightly job now: through the running daemon, or on the file directly."""
    import time as _time

    from .jobs import STAGES
    from .settings import SettingsError, load_settings

    try:
        settings, _ = load_settings(args.config, generate=False)
    except SettingsError as exc:
        raise CliError(str(exc)) from None
    bar = None
    if sys.stderr.isatty():
        from tqdm import tqdm
        bar = tqdm(total=len(STAGES), desc="nightly", unit="stage", file=sys.stderr)
    done = set()

    def progress(stage):
        if stage in STAGES and stage not in done:
            done.add(stage)
            if bar:
                bar.set_postfix_str(stage)
                bar.update(1)

    try:
        answer = _call_daemon(settings, "POST", "/v1/jobs/nightly", admin=True)
        if answer is not None:
            status, doc = answer
            if status != 202:
                raise CliError(f"the daemon answered {status}: {doc.get('error')}")
            run_id, via = doc["run_id"], "the running daemon"
            while True:
                _time.sleep(0.5)
                status, doc = _call_daemon(settings, "GET", f"/v1/jobs/{run_id}",
                                           admin=True) or (0, {})
                if doc.get("stage"):
                    for stage in STAGES[:STAGES.index(doc["stage"]) + 1] \
                            if doc["stage"] in STAGES else []:
                        progress(stage)
                if doc.get("status") in ("success", "failed", "abandoned"):
                    break
            if doc["status"] != "success":
                raise CliError(f"run {run_id} {doc['status']}: "
                               f"{(doc.get('rows') or {}).get('error', '')}")
            summary = doc["rows"]
        else:
            summary, via = _recompute_file(settings, progress), "the database file"
    finally:
        if bar:
            bar.close()
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"nightly run {summary['run_id']} ({via}): {summary['solves']} solves, "
              f"{summary['puzzles']} puzzles, {summary['players']} players, "
              f"{summary['consensus_puzzles']} consensus orders, "
              f"{summary['seconds']:.1f} s")
    return 0


def _recompute_file(settings, progress) -> dict:
    import duckdb

    from .jobs import direct_db, run_nightly
    from .store import StoreError, connect

    try:
        con = connect(_database_file(settings), settings.storage_checkpoint_mb,
                      settings.storage_memory_limit_mb)
    except (StoreError, duckdb.Error) as exc:
        raise CliError(f"no daemon answers and the database cannot be opened: {exc}") from None
    try:
        summary = run_nightly(direct_db(con), settings, progress=progress)
        keys = summary.pop("rescore")
        if keys:  # the daemon's sweep re-scores them (status rescore) when it next starts
            con.register("rescore_keys", {"sub_key": np.array(keys, dtype=np.int64)})
            con.execute("UPDATE submissions SET status = 'rescore' FROM rescore_keys r WHERE "
                        "submissions.sub_key = r.sub_key")
        summary["rescore_pending"] = len(keys)
        return summary
    finally:
        con.close()


# ---------------------------------------------------------------------------- main

def build_parser() -> argparse.ArgumentParser:
    from fairgrid.solvers.annealing import DEFAULT_MAX_STEPS as SA_MAX
    from fairgrid.solvers.backtracking import DEFAULT_MAX_STEPS as BF_MAX
    from fairgrid.solvers.order import DEFAULT_BUDGET_S, DEFAULT_ORDER_MAX_STEPS, DEFAULT_RUNS

    parser = argparse.ArgumentParser(
        prog="fairgrid", description="Keeps online Sudoku tournaments fair.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    puzzle_help = ("the puzzle: text (81 characters, '.' or '0' for blanks; grids; see "
                   "docs/puzzles.md) or a path to a file holding it")

    p = sub.add_parser("solve", help="solve a puzzle and print the run's figures",
                       description="Solve a puzzle with simulated annealing (sa) or the "
                       "thesis' backtracking (bf). Exit 0 when solved, 1 when not.")
    p.add_argument("puzzle", help=puzzle_help)
    p.add_argument("--method", choices=("sa", "bf"), default="sa")
    p.add_argument("--schedule", choices=("thesis", "lewis"), default="thesis",
                   help="SA cooling schedule (default: thesis)")
    p.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
    p.add_argument("--max-steps", type=_positive, default=None,
                   help=f"step cap (default: {SA_MAX:,} for sa, {BF_MAX:,} for bf)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("predict-order", help="predict the order humans fill the cells",
                       description="Predict the fill order of a puzzle: the median rank of "
                       "each cell's last swap over R seeded SA runs (Křivánek 2011, §4.1).")
    p.add_argument("puzzle", help=puzzle_help)
    p.add_argument("--runs", type=_positive, default=DEFAULT_RUNS,
                   help=f"SA runs (default {DEFAULT_RUNS})")
    p.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
    p.add_argument("--jobs", type=_positive, default=os.cpu_count() or 1,
                   help="processes (default: all cores); does not change the result")
    p.add_argument("--schedule", choices=("thesis", "lewis"), default="thesis")
    p.add_argument("--budget", type=_positive_float, default=DEFAULT_BUDGET_S,
                   help=f"time budget in seconds on the reference machine (default "
                   f"{DEFAULT_BUDGET_S:g}: {DEFAULT_ORDER_MAX_STEPS:,} steps per run of 100); "
                   "converted to a step cap, so the result does not depend on load")
    p.add_argument("--max-steps", type=_positive, default=None,
                   help="explicit step cap per run (overrides --budget)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--png", metavar="FILE", help="also draw the order as a heatmap (PNG)")
    p.set_defaults(func=cmd_predict_order)

    p = sub.add_parser("count", help="count solutions (uniqueness check)",
                       description="Count a puzzle's solutions up to --limit. Exit 0 when "
                       "the solution is unique, 1 otherwise.")
    p.add_argument("puzzle", help=puzzle_help)
    p.add_argument("--limit", type=_positive, default=2)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_count)

    p = sub.add_parser("rate", help="rate difficulty: every metric, level, expected time",
                       description="Rate a puzzle with every difficulty metric (human-like "
                       "propagation, SA, backtracking, harmony search, hill climbing, "
                       "constraint relaxation, SLIS) and print fairgrid's level and the "
                       "expected solve time. PUZZLE may be a file of puzzles, one a line: "
                       "they are rated in parallel, results in input order.")
    p.add_argument("puzzle", help=puzzle_help + ", or a file of puzzles, one a line")
    p.add_argument("--runs", type=_positive_float, default=1.0,
                   help="scale the runs of every randomised metric (default 1.0: 30 "
                   "human-model runs, 10 SA runs, ...)")
    p.add_argument("--budget", type=_positive_float, default=1.0,
                   help="SA time per puzzle in seconds on the reference machine, one core "
                   "(default 1); a step cap, so results do not depend on load")
    p.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
    p.add_argument("--jobs", type=_positive, default=os.cpu_count() or 1,
                   help="processes for a file of puzzles (default: all cores)")
    p.add_argument("--json", action="store_true", help="one JSON object a puzzle, a line each")
    p.set_defaults(func=cmd_rate)

    p = sub.add_parser("generate", help="generate puzzles (Lewis 2007 instances)",
                       description="Generate puzzles: a random solution grid (root grid, "
                       "band/stack/row/column shuffles, relabelling) with each cell kept with "
                       "probability --p; with --unique, cells are removed while the solution "
                       "stays unique (down to a fraction --p of givens).")
    p.add_argument("--order", type=int, choices=(2, 3, 4, 5), default=3)
    p.add_argument("--p", type=float, default=0.4,
                   help="probability a cell is kept (with --unique: the least fraction of "
                   "givens to keep)")
    p.add_argument("--count", type=_positive, default=1)
    p.add_argument("--unique", action="store_true", help="only puzzles with one solution")
    p.add_argument("--level", type=int, choices=(1, 2, 3, 4, 5),
                   help="with --unique: keep only puzzles of this fairgrid level")
    p.add_argument("--seed", type=_seed, default=0)
    p.set_defaults(func=cmd_generate)

    config_help = "TOML config file (default: $FAIRGRID_CONFIG, else the embedded default)"
    p = sub.add_parser("serve", help="run the fairgrid service",
                       description="Run the HTTP service: signed webhooks in, DuckDB, "
                       "organiser API, /metrics. With no config it uses ./fairgrid.duckdb "
                       "and a generated 'demo' portal (docs/configuration.md).")
    p.add_argument("--config", help=config_help)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("flags", help="list flagged solves (from the running daemon)",
                       description="List flagged solves, newest first: from the running "
                       "daemon's API (address and token from the config), or read-only from "
                       "the database file when no daemon runs.")
    p.add_argument("--tournament")
    p.add_argument("--player")
    p.add_argument("--json", action="store_true", help="one JSON object a line")
    p.add_argument("--config", help=config_help)
    p.set_defaults(func=cmd_flags)

    p = sub.add_parser("report", help="the evidence of one scored solve",
                       description="Print a submission's score and evidence: the verdict, "
                       "every signal with its explanation, and the predicted and actual fill "
                       "order side by side. From the running daemon's API, or read-only from "
                       "the database file when no daemon runs.")
    p.add_argument("portal")
    p.add_argument("submission_id")
    p.add_argument("--png", metavar="FILE", help="also draw both orders as heatmaps (PNG)")
    p.add_argument("--json", action="store_true", help="print the submission document")
    p.add_argument("--config", help=config_help)
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("simulate", help="send simulated honest and cheating solves",
                       description="Send signed webhooks with simulated solves of PUZZLE to a "
                       "running daemon: honest players (the human-like model with realistic "
                       "pacing) and cheaters (row, random, block, careful, partial copiers, in "
                       "turn). Prints one line per solve with its kind, for demos and tests.")
    p.add_argument("puzzle", help=puzzle_help)
    p.add_argument("--url", default="http://127.0.0.1:8080")
    p.add_argument("--portal", default="demo")
    p.add_argument("--secret", required=True, help="the portal's whsec_ secret")
    p.add_argument("--players", type=_seed, default=20, help="honest players (default 20)")
    p.add_argument("--cheaters", type=_seed, default=5, help="cheaters (default 5)")
    p.add_argument("--tournament", default="simulated")
    p.add_argument("--puzzle-id", default=None)
    p.add_argument("--prefix", default="sim", help="prefix of submission and player ids")
    p.add_argument("--seed", type=_seed, default=0)
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("recompute", help="run the nightly rating refresh now",
                       description="Run the nightly job once (fit difficulty and skill, "
                       "recalibrate, consensus orders, re-score): through the running "
                       "daemon's API (address and admin token from the config), or directly "
                       "on the database file when no daemon runs.")
    p.add_argument("--json", action="store_true", help="print the run's summary as JSON")
    p.add_argument("--config", help=config_help)
    p.set_defaults(func=cmd_recompute)

    p = sub.add_parser("portal", help="manage portals")
    portal_sub = p.add_subparsers(dest="portal_command", metavar="ACTION", required=True)
    p = portal_sub.add_parser("add", help="create a webhook secret for a portal and print it")
    p.add_argument("name")
    p.add_argument("--config", help=config_help)
    p.set_defaults(func=cmd_portal_add)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "solve" and args.max_steps is None:
        from fairgrid.solvers.annealing import DEFAULT_MAX_STEPS as SA_MAX
        from fairgrid.solvers.backtracking import DEFAULT_MAX_STEPS as BF_MAX

        args.max_steps = SA_MAX if args.method == "sa" else BF_MAX
    try:
        return args.func(args)
    except (PuzzleError, CliError) as exc:
        print(f"fairgrid {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # the reader went away (e.g. `| head`): not an error worth a message
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        print(f"fairgrid {args.command}: error: {exc.strerror or exc}: "
              f"{exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"fairgrid {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
