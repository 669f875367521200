"""Puzzle tools: solve, predict the fill order, count solutions, rate, generate. They
import neither aiohttp nor DuckDB."""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys
from pathlib import Path

import numpy as np

from fairgrid.daemon.json_out import dumps
from fairgrid.solvers import PuzzleError, format_grid, format_line, load_puzzle, parse
from fairgrid.solvers.grid import MAX_PUZZLES_FILE, layout_grid, read_puzzle_file, symbol
from fairgrid.solvers.puzzle_types import DEFAULT_TYPE, NURIKABE, SUDOKU, TYPES

from .common import (PUZZLE_HELP, CliError, grid_side, png_file, positive, positive_float,
                     progress_bar, seed, share, whole)


def cmd_solve(args: argparse.Namespace) -> int:
    from fairgrid.solvers.annealing import solve_sa
    from fairgrid.solvers.backtracking import solve_backtracking

    if args.method == "hs":
        raise CliError("--method hs solves Nurikabe (--type nurikabe); Sudoku's harmony "
                       "search is a metric of `fairgrid rate`")
    if args.max_steps is None:
        from fairgrid.solvers.annealing import DEFAULT_MAX_STEPS as SA_MAX
        from fairgrid.solvers.backtracking import DEFAULT_MAX_STEPS as BF_MAX

        args.max_steps = SA_MAX if args.method == "sa" else BF_MAX
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
        print(dumps(figures))
    else:
        print(format_grid(res.grid if res.solved else puzzle.givens, puzzle.box_size))
        print()
        print("  ".join(f"{k}: {v}" for k, v in figures.items()))
    return 0 if res.solved else 1


def render_ranks(rank: np.ndarray, givens: np.ndarray, box_size: int) -> str:
    """The predicted fill order as a grid: each free cell's rank, givens in brackets as
    the puzzle writes them (letters from 10 on)."""
    texts = [f"[{symbol(int(g))}]" if g else str(int(r)) for r, g in zip(rank, givens)]
    return layout_grid(texts, box_size, width=max(len(t) for t in texts))


def _cluster(args):
    """(cluster, executor) for ``--scheduler`` (or FAIRGRID_COMPUTE_SCHEDULER); (None,
    None) without one: the local pool then."""
    address = getattr(args, "scheduler", None) or os.environ.get("FAIRGRID_COMPUTE_SCHEDULER")
    if not address:
        return None, None
    import logging

    from fairgrid.daemon.work.compute import ComputeUnavailable, client_executor

    # the daemon's "puzzles wait" warning: here the one error line says it all
    quiet = logging.getLogger("fairgrid.compute")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        return client_executor(address)
    except ComputeUnavailable as exc:
        raise CliError(str(exc)) from None
    finally:
        quiet.setLevel(level)


def cmd_predict_order(args: argparse.Namespace) -> int:
    from fairgrid.solvers.fill_order import predict_fill_order

    puzzle = load_puzzle(args.puzzle)
    cluster, executor = _cluster(args)
    bar = progress_bar(args.runs, "SA runs")
    try:
        pred = predict_fill_order(puzzle, seed=args.seed, runs=args.runs, workers=args.workers,
                             schedule=args.schedule, budget_s=args.budget,
                             max_steps=args.max_steps, progress=bar.update if bar else None,
                             executor=executor)
    finally:
        if bar:
            bar.close()
        if cluster is not None:
            cluster.close()
    if args.png:
        from .plots import order_heatmap

        order_heatmap(pred, args.png)
    if args.json:
        print(dumps(pred.as_dict()))
        return 0
    print(f"Predicted fill order (1 = filled first; [d] = given) — median of "
          f"{pred.basis_runs} SA runs, {args.schedule} schedule, seed {pred.seed}")
    print(render_ranks(pred.rank, puzzle.givens, puzzle.box_size))
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


def cmd_count(args: argparse.Namespace) -> int:
    from fairgrid.solvers.backtracking import count_solutions

    puzzle = load_puzzle(args.puzzle)
    n = count_solutions(puzzle, limit=args.limit)
    more = "+" if n >= args.limit else ""
    if args.json:
        print(dumps({"puzzle": str(puzzle), "solutions": n, "limit": args.limit,
                     "unique": n == 1}))
    else:
        verdict = "unique" if n == 1 else ("no solution" if n == 0 else "not unique")
        print(f"{n}{more} solution{'s' if n != 1 else ''} ({verdict})")
    return 0 if n == 1 else 1


_PUZZLE_LENGTHS = (16, 81, 256, 625)


def _puzzle_lines(arg: str) -> list[tuple[int, str]] | None:
    """(line number, puzzle text) for a file of puzzles, one a line; None otherwise.

    A line's puzzle is its first whitespace-separated field of 16, 81, 256 or 625
    characters (so ``id puzzle rating`` files work); blank and ``#`` lines are skipped.
    A file that reads as one grid (9 lines, or 16 with separator lines) is one puzzle;
    otherwise a line that holds no puzzle is an error naming it.
    """
    path = Path(arg)
    try:
        if not path.is_file():
            return None
    except (OSError, ValueError):  # e.g. puzzle text longer than a file name may be
        return None
    found, other = [], []
    text = read_puzzle_file(path, arg, MAX_PUZZLES_FILE)
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        token = next((t for t in line.split() if len(t) in _PUZZLE_LENGTHS), None)
        if token is None:
            other.append(no)
        else:
            found.append((no, token))
    if len(found) > 1 and other:
        try:  # one grid written over several lines (separators between bands) ...
            parse(text)
            return None
        except PuzzleError:  # ... or a file of puzzles with a line that holds none
            raise CliError(f"{arg}: line {other[0]} holds no puzzle (16, 81, 256 or 625 "
                           f"characters)") from None
    return found if len(found) > 1 and not other else None


def _rating_record(text: str, ratings, calibration) -> dict:
    record = {"puzzle": text}
    described = calibration.describe(ratings.metrics)
    record["expected_time_s"] = round(described["expected_time_s"], 1)
    record["level"] = described["level"]
    record["level_name"] = described["level_name"]
    record["metrics"] = {k: round(v, 4) for k, v in ratings.metrics.items()}
    if ratings.techniques is not None:
        hardest = ratings.techniques.hardest
        record["hardest_technique"] = hardest.technique if hardest else None
        record["techniques"] = ratings.techniques.counts()
    if ratings.sa_capped_runs:
        record["sa_capped_runs"] = ratings.sa_capped_runs
    return record


def _minutes(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m}:{s:02d}"


def cmd_rate(args: argparse.Namespace) -> int:
    from fairgrid.analytics.expected_time import load_default
    from fairgrid.solvers.rate import families_for, rate, rate_many, rating_seed

    calibration = load_default()
    # --quick: only what the expected time reads (milliseconds a puzzle)
    only = families_for(calibration.metrics_needed) if args.quick else None
    lines = _puzzle_lines(args.puzzle)
    if lines is None:
        if getattr(args, "scheduler", None):
            raise CliError("--scheduler spreads a file of puzzles over a cluster; one "
                           "puzzle is rated here: leave --scheduler out")
        puzzle = load_puzzle(args.puzzle)
        # the seed rate_many gives the same puzzle in a file: one rating per puzzle and seed
        ratings = rate(puzzle, rng=rating_seed(args.seed, puzzle), runs=args.runs,
                       budget_s=args.budget, only=only)
        record = _rating_record(str(puzzle), ratings, calibration)
        if args.json:
            print(dumps(record))
            return 0
        print(format_grid(puzzle.givens, puzzle.box_size))
        print(f"\nlevel {record['level']} ({record['level_name']}), expected solve time "
              f"{_minutes(record['expected_time_s'])} (min:s; geometric mean of solvers "
              f"like sudoku.org.uk's)")
        if record.get("hardest_technique"):
            print(f"hardest step: {record['hardest_technique']}; steps by technique: "
                  + ", ".join(f"{k} {v}" for k, v in record["techniques"].items()))
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
        cluster, executor = _cluster(args)
    except CliError:
        if bar:
            bar.close()
        raise
    try:
        results = rate_many([t for _, t in lines], seed=args.seed, runs=args.runs,
                            budget_s=args.budget, workers=args.workers, only=only,
                            on_done=bar.update if bar else None, executor=executor)
        for (no, text), (ratings, err) in zip(lines, results):
            if err:
                bad.append(no)
                msg = f"line {no}: {err}"
                if bar:
                    bar.write(f"fairgrid rate: error: {msg}", file=sys.stderr)
                else:
                    print(f"fairgrid rate: error: {msg}", file=sys.stderr)
                if args.json:
                    print(dumps({"puzzle": text, "line": no, "error": err}), flush=True)
                continue
            record = _rating_record(text, ratings, calibration)
            if args.json:
                print(dumps(record), flush=True)
            else:
                print(f"{text}  {record['level']} {record['level_name']:<9}  "
                      f"{_minutes(record['expected_time_s']):>6}", flush=True)
    finally:
        if cluster is not None:
            cluster.close()
        if bar:
            bar.close()
    if bad:
        raise CliError(f"{len(bad)} of {len(lines)} puzzles could not be rated "
                       f"(lines {', '.join(map(str, bad[:10]))}{', ...' if len(bad) > 10 else ''})")
    return 0


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
        needed = families_for(calibration.metrics_needed)
    made = 0
    attempts = 0
    while made < args.count:
        attempts += 1
        if attempts > args.count * 200:
            raise CliError(f"found only {made} puzzles of level {args.level} in "
                           f"{attempts - 1} attempts")
        if args.unique:
            min_givens = int(round(args.p * (args.box_size ** 4)))
            puzzle, _ = tournament_puzzle(args.box_size, rng=rng, min_givens=min_givens)
        else:
            puzzle = random_puzzle(args.box_size, args.p, rng=rng)
        if calibration is not None:
            metrics = rate(puzzle, rng=rng, only=needed).metrics
            if calibration.describe(metrics)["level"] != args.level:
                continue
        print(format_line(puzzle.givens, args.box_size), flush=True)
        made += 1
    return 0


def _run_for_type(sudoku, args: argparse.Namespace) -> int:
    """The command for ``--type``: ``sudoku`` itself, or its namesake in the type's
    tools module (:data:`TOOLS`)."""
    import importlib

    if args.type == SUDOKU:
        if NURIKABE_TEXT.match(getattr(args, "puzzle", "") or ""):
            raise CliError("this looks like a Nurikabe puzzle (ROWSxCOLS:cells): add "
                           "--type nurikabe")
        return sudoku(args)
    tools = importlib.import_module(TOOLS[args.type], __package__)
    return getattr(tools, sudoku.__name__)(args)


NURIKABE_TEXT = re.compile(r"\s*\d+\s*[xX]\s*\d+\s*:")  # Nurikabe's ROWSxCOLS:cells
# the module of each other type's namesakes of the puzzle commands
TOOLS = {NURIKABE: ".nurikabe_tools"}


def _by_type(p, sudoku) -> None:
    """``--type`` on a puzzle command, and the command run for each type."""
    p.add_argument("--type", choices=TYPES, default=DEFAULT_TYPE,
                   help="puzzle type (default sudoku; nurikabe: ROWSxCOLS:cells, "
                   "docs/puzzles.md)")
    p.set_defaults(func=functools.partial(_run_for_type, sudoku))


def add_commands(sub) -> None:
    from fairgrid.solvers.annealing import DEFAULT_MAX_STEPS as SA_MAX
    from fairgrid.solvers.backtracking import DEFAULT_MAX_STEPS as BF_MAX
    from fairgrid.solvers.fill_order import DEFAULT_BUDGET_S, DEFAULT_FILL_MAX_STEPS, DEFAULT_RUNS

    p = sub.add_parser("solve", help="solve a puzzle and print the run's figures",
                       description="Solve a puzzle with simulated annealing (sa) or the "
                       "thesis' backtracking (bf). Exit 0 when solved, 1 when not.")
    p.add_argument("puzzle", help=PUZZLE_HELP)
    p.add_argument("--method", choices=("sa", "bf", "hs"), default="sa",
                   help="sa, bf (backtracking; Nurikabe: island expansion) or hs "
                   "(harmony search, Nurikabe)")
    p.add_argument("--schedule", choices=("thesis", "lewis"), default="thesis",
                   help="SA cooling schedule (default: thesis)")
    p.add_argument("--seed", type=seed, default=0, help="random seed (default 0)")
    p.add_argument("--max-steps", type=positive, default=None,
                   help=f"step cap (default: {SA_MAX:,} for sa, {BF_MAX:,} for bf)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _by_type(p, cmd_solve)

    p = sub.add_parser("predict-order", help="predict the order humans fill the cells",
                       description="Predict the fill order of a puzzle: the median rank of "
                       "each cell's last swap over R seeded SA runs (Křivánek 2011, §4.1).")
    p.add_argument("puzzle", help=PUZZLE_HELP)
    p.add_argument("--runs", type=positive, default=DEFAULT_RUNS,
                   help=f"SA runs (default {DEFAULT_RUNS})")
    p.add_argument("--seed", type=seed, default=0, help="random seed (default 0)")
    p.add_argument("--workers", "--jobs", type=positive, default=os.cpu_count() or 1,
                   help="processes (default: all cores); does not change the result "
                   "(--jobs also answers)")
    p.add_argument("--schedule", choices=("thesis", "lewis"), default="thesis")
    p.add_argument("--budget", type=positive_float, default=DEFAULT_BUDGET_S,
                   help=f"time budget in seconds on the reference machine (default "
                   f"{DEFAULT_BUDGET_S:g}: {DEFAULT_FILL_MAX_STEPS:,} steps per run of 100); "
                   "converted to a step cap, so the result does not depend on load")
    p.add_argument("--max-steps", type=positive, default=None,
                   help="explicit step cap per run (overrides --budget)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--png", metavar="FILE.png", type=png_file,
                   help="also draw the order as a heatmap (PNG)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on a Dask cluster, e.g. tcp://host:8786 (default: "
                   "FAIRGRID_COMPUTE_SCHEDULER, else local processes); same results")
    _by_type(p, cmd_predict_order)

    p = sub.add_parser("count", help="count solutions (uniqueness check)",
                       description="Count a puzzle's solutions up to --limit. Exit 0 when "
                       "the solution is unique, 1 otherwise.")
    p.add_argument("puzzle", help=PUZZLE_HELP)
    p.add_argument("--limit", type=positive, default=2)
    p.add_argument("--json", action="store_true")
    _by_type(p, cmd_count)

    p = sub.add_parser("rate", help="rate difficulty: every metric, level, expected time",
                       description="Rate a puzzle with every difficulty metric (human-like "
                       "propagation, the human technique model, SA, backtracking, harmony "
                       "search, hill climbing, constraint relaxation, SLIS) and print "
                       "fairgrid's level and the expected solve time. PUZZLE may be a file "
                       "of puzzles, one a line: they are rated in parallel, results in "
                       "input order.")
    p.add_argument("puzzle", help=PUZZLE_HELP + ", or a file of puzzles, one a line")
    p.add_argument("--runs", type=positive_float, default=1.0,
                   help="scale the runs of every randomised metric (default 1.0: 30 "
                   "human-model runs, 10 SA runs, ...)")
    p.add_argument("--budget", type=positive_float, default=1.0,
                   help="SA time per puzzle in seconds on the reference machine, one core "
                   "(default 1); a step cap, so results do not depend on load")
    p.add_argument("--seed", type=seed, default=0, help="random seed (default 0)")
    p.add_argument("--workers", "--jobs", type=positive, default=os.cpu_count() or 1,
                   help="processes for a file of puzzles (default: all cores; --jobs "
                   "also answers)")
    p.add_argument("--json", action="store_true", help="one JSON object a puzzle, a line each")
    p.add_argument("--quick", action="store_true",
                   help="only the metrics the expected time and level need (the human "
                   "and technique models: milliseconds a puzzle, a bank of thousands in "
                   "seconds)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on a Dask cluster, e.g. tcp://host:8786 (default: "
                   "FAIRGRID_COMPUTE_SCHEDULER, else local processes); same results")
    _by_type(p, cmd_rate)

    p = sub.add_parser("generate", help="generate puzzles (Lewis 2007 instances)",
                       description="Generate puzzles: a random solution grid (root grid, "
                       "band/stack/row/column shuffles, relabelling) with each cell kept with "
                       "probability --p; with --unique, cells are removed while the solution "
                       "stays unique (down to a fraction --p of givens).")
    p.add_argument("--box-size", "--order", type=whole, choices=(2, 3, 4, 5), default=3,
                   help="the side of a box: 3 for 9x9 (default), 4 for 16x16 (--order "
                   "also answers)")
    p.add_argument("--p", type=share, default=0.4,
                   help="probability a cell is kept (with --unique: the least fraction of "
                   "givens to keep)")
    p.add_argument("--count", type=positive, default=1)
    p.add_argument("--unique", action="store_true", help="only puzzles with one solution")
    p.add_argument("--level", type=whole, choices=(1, 2, 3, 4, 5),
                   help="with --unique: keep only puzzles of this fairgrid level")
    p.add_argument("--seed", type=seed, default=0)
    p.add_argument("--rows", type=grid_side, default=7, help="Nurikabe: rows (default 7)")
    p.add_argument("--cols", type=grid_side, default=7, help="Nurikabe: columns (default 7)")
    _by_type(p, cmd_generate)

