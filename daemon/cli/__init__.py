"""The ``fairgrid`` command line: one program, its commands grouped by audience.

* puzzle tools (:mod:`.puzzle_tools`): solve, predict-order, count, rate, generate;
* organiser tools (:mod:`.organiser_tools`): flags, report, player, review, recompute;
* player verdicts (:mod:`.player_tools`): players, review-player;
* service tools (:mod:`.service`): serve, portal, simulate;
* accounts (:mod:`.user_tools`): user add, list, disable, enable, reset, scope, token;
* the data's life (:mod:`.lifecycle_tools`): notify, notifications, erase, export, backup,
  restore;
* the demo (:mod:`.demo`): the service and a tournament site to solve puzzles on.

Commands that talk to a daemon use one HTTP client (:mod:`.client`). Bad input (an
unreadable puzzle, a bad option) ends with exit status 2 and a one-line message on
stderr, never a traceback.
"""

from __future__ import annotations

import os
import sys
from typing import Sequence

from fairgrid.solvers import PuzzleError

from . import (demo, lifecycle_tools, organiser_tools, player_tools, puzzle_tools, service,
               user_tools)
from .common import EXIT_USAGE, CliError, Parser, not_utf8

__all__ = ["main", "build_parser", "CliError"]

# commands that write the database, its WAL, backups, exports or secrets: what they create
# is the owner's only, whatever umask the shell or the container gave (systemd's UMask
# is not everywhere); the daemon's files are listed in daemon/store/files.py
WRITES_DATA = frozenset({"serve", "demo", "backup", "restore", "export", "recompute", "portal"})
PRIVATE_UMASK = 0o077


def build_parser() -> Parser:
    parser = Parser(prog="fairgrid", description="Keeps online Sudoku tournaments fair.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    puzzle_tools.add_commands(sub)
    organiser_tools.add_commands(sub)
    player_tools.add_commands(sub)
    service.add_commands(sub)
    user_tools.add_commands(sub)
    lifecycle_tools.add_commands(sub)
    demo.add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    bad = not_utf8(args)
    if bad is not None:
        print(f"fairgrid {args.command}: error: the {bad.replace('_', ' ')} given is not "
              "UTF-8 text", file=sys.stderr)
        return EXIT_USAGE
    if args.command in WRITES_DATA:
        os.umask(PRIVATE_UMASK)
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
