"""The puzzle tools for ``--type nurikabe``: solve, predict-order, count, rate, generate
(Křivánek 2011, §4.2; the solvers are :mod:`fairgrid.solvers.nurikabe`)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from fairgrid.daemon.json_out import dumps
from fairgrid.solvers.puzzle_types import NURIKABE

from .common import CliError

HELP = "a Nurikabe puzzle: ROWSxCOLS:cells ('.' empty, clues in base 36; docs/puzzles.md)"


def load(arg: str):
    """A Nurikabe puzzle from its text or a file whose first puzzle line holds it."""
    from fairgrid.solvers.grid import MAX_PUZZLES_FILE, read_puzzle_file
    from fairgrid.solvers.nurikabe import NurikabeError, parse_nurikabe

    text = arg
    path = Path(arg)
    if ":" not in arg and path.is_file():
        content = read_puzzle_file(path, arg, MAX_PUZZLES_FILE)
        lines = [ln.strip() for ln in content.splitlines()]
        found = [tok for ln in lines if ln and not ln.startswith("#")
                 for tok in ln.split() if ":" in tok]
        if not found:
            raise CliError(f"{arg}: no Nurikabe puzzle (ROWSxCOLS:cells) in the file")
        text = found[0]
    try:
        return parse_nurikabe(text)
    except NurikabeError as exc:
        raise CliError(str(exc)) from None


def _clue(puzzle, cell: int) -> str:
    """A clue as the text format writes it (base 36), '' for none."""
    clue = int(puzzle.clues[cell])
    return np.base_repr(clue, 36).lower() if clue else ""


def _board(puzzle, grid=None) -> str:
    """The grid as rows: clues in base 36, '#' river, 'o' island, '.' unknown."""
    out = []
    for r in range(puzzle.rows):
        row = []
        for c in range(puzzle.cols):
            k = r * puzzle.cols + c
            if _clue(puzzle, k):
                row.append(_clue(puzzle, k))
            elif grid is None:
                row.append(".")
            else:
                row.append("#" if grid.reshape(-1)[k] else "o")
        out.append(" ".join(row))
    return "\n".join(out)


def cmd_solve(args: argparse.Namespace) -> int:
    from fairgrid.solvers.nurikabe import (format_solution, harmony_search, solve_bruteforce,
                                           solve_sa)

    puzzle = load(args.puzzle)
    rng = np.random.default_rng(args.seed)
    cap = {} if args.max_steps is None else {"max_steps": args.max_steps}
    if args.method == "sa":
        res = solve_sa(puzzle, rng=rng, **cap)
        figures = {"method": "sa", "solved": res.solved, "steps": res.steps, "cost": res.cost}
    elif args.method == "bf":
        res = solve_bruteforce(puzzle, rng=rng, **cap)
        figures = {"method": "bf", "solved": res.solved, "steps": res.steps}
    else:
        res = harmony_search(puzzle, rng=rng)
        figures = {"method": "hs", "solved": res.solved, "best_cost": res.best_cost}
    figures["seed"] = args.seed
    if args.json:
        figures["puzzle"] = args.puzzle if ":" in args.puzzle else None
        figures["solution"] = format_solution(res.grid) if res.solved else None
        print(dumps(figures))
    else:
        print(_board(puzzle, res.grid if res.solved else None))
        print()
        print("  ".join(f"{k}: {v}" for k, v in figures.items()))
    return 0 if res.solved else 1


def cmd_count(args: argparse.Namespace) -> int:
    from fairgrid.solvers.nurikabe import SearchLimitError, count_solutions

    puzzle = load(args.puzzle)
    try:
        n = count_solutions(puzzle, limit=args.limit)
    except SearchLimitError as exc:
        raise CliError(str(exc)) from None
    more = "+" if n >= args.limit else ""
    if args.json:
        print(dumps({"type": NURIKABE, "solutions": n, "limit": args.limit,
                     "unique": n == 1}))
    else:
        verdict = "unique" if n == 1 else ("no solution" if n == 0 else "not unique")
        print(f"{n}{more} solution{'s' if n != 1 else ''} ({verdict})")
    return 0 if n == 1 else 1


def cmd_predict_order(args: argparse.Namespace) -> int:
    """The order the human-like propagation model decides the cells in (hints where it
    stalls): the Nurikabe counterpart of the Sudoku singles model's order."""
    from fairgrid.solvers.nurikabe import NurikabeError, propagate, unique_solution

    puzzle = load(args.puzzle)
    solution = unique_solution(puzzle)
    if solution is None:
        raise CliError("the puzzle has no unique solution")
    try:
        run = propagate(puzzle, solution=solution)
    except NurikabeError as exc:
        raise CliError(str(exc)) from None
    rank = run.order() + 1  # 1 = decided first, 0 = never (clues)
    n = int(rank.max())
    if args.json:
        print(dumps({"type": NURIKABE, "rank": [int(r) if r else None for r in rank],
                     "steps": len(run.steps), "hints": run.hints}))
        return 0
    width = len(str(n))
    print("Predicted order (1 = decided first; clues in brackets) — the propagation model")
    for r in range(puzzle.rows):
        cells = []
        for c in range(puzzle.cols):
            k = r * puzzle.cols + c
            cells.append(f"[{_clue(puzzle, k)}]" if _clue(puzzle, k)
                         else str(rank[k]).rjust(width))
        print(" ".join(x.rjust(width + 2) for x in cells))
    print(f"\nsteps: {len(run.steps)}  hints where the rules stalled: {run.hints}")
    return 0


def cmd_rate(args: argparse.Namespace) -> int:
    from fairgrid.analytics.nurikabe import PRIOR_SD_LOG, expected_log_time
    from fairgrid.solvers.nurikabe import NurikabeError, format_nurikabe, rate_nurikabe

    puzzle = load(args.puzzle)
    runs = max(1, int(round(5 * args.runs)))
    try:
        metrics = rate_nurikabe(puzzle, args.seed, runs=runs)
    except NurikabeError as exc:
        raise CliError(str(exc)) from None
    expected = math.exp(expected_log_time(metrics))
    record = {"puzzle": format_nurikabe(puzzle), "type": NURIKABE,
              "expected_time_s": round(expected, 1), "prior_sd_log": PRIOR_SD_LOG,
              "level": None, "metrics": {k: round(v, 4) for k, v in metrics.items()}}
    if args.json:
        print(dumps(record))
        return 0
    print(_board(puzzle))
    m, s = divmod(int(round(expected)), 60)
    print(f"\nexpected solve time {m}:{s:02d} (min:s; a prior from the propagation model, "
          f"no human times exist for Nurikabe: a portal's nightly job learns them)")
    width = max(map(len, metrics))
    for name, value in metrics.items():
        print(f"  {name:<{width}}  {value:,.4g}")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from fairgrid.solvers.nurikabe import NurikabeError, format_nurikabe, generate_nurikabe

    rng = np.random.default_rng(args.seed)
    for _ in range(args.count):
        try:
            puzzle = generate_nurikabe(args.rows, args.cols, rng)
        except NurikabeError as exc:
            raise CliError(str(exc)) from None
        print(format_nurikabe(puzzle), flush=True)
    return 0
