"""``fairgrid user``: the people who sign in to the console (through the running daemon's
admin API: the daemon holds the database)."""

from __future__ import annotations

import argparse
import getpass
import sys

from ..json_out import dumps
from .client import quote
from .common import CliError
from .organiser_tools import _daemon_options, call

MIN_PASSWORD = 10  # the daemon checks it too; asking again here saves a round trip


def _password(args, ask=getpass.getpass) -> str:
    """From stdin (``--password-stdin``, one line) or asked twice at the terminal; its
    length is checked before it is asked again."""
    try:
        if args.password_stdin:
            password = sys.stdin.readline().rstrip("\n")
        elif sys.stdin.isatty():
            password = ask("password: ")
        else:
            raise CliError("no terminal to ask for a password: pass it on stdin with "
                           "--password-stdin")
        password.encode()  # bytes that are not UTF-8 arrive as lone surrogates
    except UnicodeError:
        raise CliError("the password given is not UTF-8 text") from None
    if len(password) < MIN_PASSWORD:
        raise CliError(f"a password has at least {MIN_PASSWORD} characters")
    if not args.password_stdin and ask("again: ") != password:
        raise CliError("the two passwords differ")
    return password


def _line(u: dict) -> str:
    scope = ("every portal" if u["all_portals"]
             else ", ".join(u["portals"]) if u["portals"] else "no portal")
    state = "disabled" if u["disabled"] else "active"
    return f"{u['name']}\t{u['role']}\t{scope}\t{state}"


def cmd_user_add(args: argparse.Namespace) -> int:
    if args.portal and args.all_portals:
        raise CliError("--portal and --all-portals contradict each other")
    body = {"name": args.name, "role": args.role, "portals": args.portal or [],
            "all_portals": args.all_portals, "password": _password(args)}
    doc = call(args, "POST", "/v1/users", body)
    print(f"added {_line(doc)}")
    if not doc["portals"] and not doc["all_portals"]:
        print(f"{args.name} sees no portal until granted some: fairgrid user scope "
              f"{args.name} --portal P (or --all-portals)", file=sys.stderr)
    return 0


def cmd_user_list(args: argparse.Namespace) -> int:
    doc = call(args, "GET", "/v1/users")
    if args.json:
        for u in doc["users"]:
            print(dumps(u))
        return 0
    print("name\trole\tportals\tstate")
    for u in doc["users"]:
        print(_line(u))
    return 0


def _change(args, changes: dict, verb: str) -> int:
    doc = call(args, "PATCH", f"/v1/users/{quote(args.name)}", changes)
    print(f"{verb} {_line(doc)}")
    return 0


def cmd_user_disable(args):
    return _change(args, {"disabled": True}, "disabled")


def cmd_user_enable(args):
    return _change(args, {"disabled": False}, "enabled")


def cmd_user_reset(args):
    return _change(args, {"password": _password(args)}, "new password for")


def cmd_user_scope(args):
    changes = {}
    if args.portal and args.all_portals:
        raise CliError("--portal and --all-portals contradict each other")
    if args.portal:
        changes["portals"] = args.portal
    elif args.all_portals:
        changes["all_portals"] = True
    if args.role:
        changes["role"] = args.role
    if not changes:
        raise CliError("nothing to change: give --portal, --all-portals or --role")
    return _change(args, changes, "changed")


def cmd_user_token(args: argparse.Namespace) -> int:
    doc = call(args, "POST", f"/v1/users/{quote(args.name)}/tokens",
                {"label": args.label} if args.label else {})
    print(doc["token"])
    print(f"a personal API token for {args.name}: shown this once, only its digest is "
          "kept", file=sys.stderr)
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("user", help="manage the people who sign in to the console",
                       description="Add, list, disable, enable and reset console accounts, "
                       "and make personal API tokens, through the running daemon (an admin "
                       "token).")
    users = p.add_subparsers(dest="user_command", metavar="ACTION", required=True)

    def action(name, func, help_, *, password=False):
        q = users.add_parser(name, help=help_, description=help_)
        if name != "list":
            q.add_argument("name")
        if password:
            q.add_argument("--password-stdin", action="store_true",
                           help="read the password from the first line of stdin")
        _daemon_options(q)
        q.set_defaults(func=func)
        return q

    q = action("add", cmd_user_add, "add a person (asks for the password)", password=True)
    q.add_argument("--role", required=True, choices=("organiser", "admin"))
    q.add_argument("--portal", action="append", metavar="P",
                   help="an organiser's portals (repeat; without it or --all-portals an "
                   "organiser sees no portal)")
    q.add_argument("--all-portals", action="store_true",
                   help="an organiser who sees every portal, present and future")
    q = action("list", cmd_user_list, "list everyone")
    q.add_argument("--json", action="store_true", help="one JSON object a line")
    action("disable", cmd_user_disable, "disable a person: signed out, tokens revoked")
    action("enable", cmd_user_enable, "enable a disabled person again")
    action("reset", cmd_user_reset, "set a new password", password=True)
    q = action("scope", cmd_user_scope, "set a person's portals or role (an admin sees "
               "every portal)")
    q.add_argument("--portal", action="append", metavar="P", help="repeat for several")
    q.add_argument("--all-portals", action="store_true", help="every portal")
    q.add_argument("--role", choices=("organiser", "admin"))
    q = action("token", cmd_user_token, "make a personal API token (printed once)")
    q.add_argument("--label", help="what the token is for")
