"""Player verdicts on the command line: ``players`` (the queue), the case in words
(``player`` prints it with :func:`render.print_case`) and ``review-player``."""

from __future__ import annotations

import argparse

from ..json_out import dumps
from .client import quote
from .common import positive
from .organiser_tools import _daemon_options, _unreachable, all_pages, call, connect
from .render import history_entry
from ..text import shown

STATES = ("clear", "flagged", "cleared", "confirmed")


def cmd_players(args: argparse.Namespace) -> int:
    state = "flagged" if args.flagged else args.state
    client, _ = connect(args)
    rows = all_pages(client, "/v1/players", "players", {"state": state} if state else {})
    if rows is None:
        raise _unreachable(client)
    rows = rows[:args.limit] if args.limit else rows
    if args.json:
        for r in rows:
            print(dumps(r))
        return 0
    print(f"{len(rows)} player{'s' if len(rows) != 1 else ''}"
          + (f" {state}" if state else ""))
    for r in rows:
        then = r.get("flagging") if r["state"] == "flagged" and not r["flagged"] else None
        said = (f"when flagged, over {then['solves']} solves: {then['summary']} (since "
                f"then, by itself: {r['summary']})" if then else r["summary"])
        print(f"{shown(r['portal']) + '/' + shown(r['player_id']):<28} {r['state']:<9} "
              f"{r['solves']:>4} solves  p {r['p_value']:.1e}  {said}")
    return 0


def cmd_review_player(args: argparse.Namespace) -> int:
    doc = call(args, "POST", f"/v1/players/{quote(args.portal)}/{quote(args.player_id)}"
               "/review", {"state": args.state, **({"note": args.note} if args.note else {}),
                           **({"judged_at": args.judged_at} if args.judged_at else {}),
                           **({"seen": args.seen} if args.seen else {})})
    v = doc["verdict"]
    print(f"{shown(doc['portal'])}/{shown(doc['player_id'])} is {v['state']}; history: "
          + "; ".join(history_entry(h) for h in v["history"]))
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("players", help="players by season verdict (from the running daemon)",
                       description="List players by their season verdict, strongest "
                       "evidence first, with the verdict in words.")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--flagged", action="store_true",
                       help="only players flagged and waiting for review")
    which.add_argument("--state", choices=STATES)
    p.add_argument("--limit", type=positive, help="at most this many")
    p.add_argument("--json", action="store_true", help="one JSON object a line")
    _daemon_options(p)
    p.set_defaults(func=cmd_players)

    p = sub.add_parser("review-player", help="decide on a player's season verdict",
                       description="Record a decision on a player: cleared (only solves "
                       "the verdict did not judge can flag them again), confirmed, or open.")
    p.add_argument("portal")
    p.add_argument("player_id")
    p.add_argument("--state", required=True, choices=("cleared", "confirmed", "open"))
    p.add_argument("--note", help="why, for the history")
    p.add_argument("--judged-at", help="the judged_at of the verdict decided on (as "
                   "'fairgrid player' prints it): refused if it was judged again since")
    p.add_argument("--seen", choices=STATES,
                   help="the player's state as you read it: refused if another "
                   "decision changed it since")
    _daemon_options(p)
    p.set_defaults(func=cmd_review_player)
