"""Service tools: run the daemon, add a portal, send simulated solves to a daemon."""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from fairgrid.daemon.json_out import dumps
from fairgrid.solvers import format_line, load_puzzle
from fairgrid.solvers.puzzle_types import DEFAULT_TYPE, NURIKABE, SUDOKU, TYPES, puzzle_type

from .client import DaemonClient, address, checked_url
from .common import CONFIG_HELP, PUZZLE_HELP, CliError, seconds, seed


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

    from fairgrid.daemon.app import create_app
    from fairgrid.daemon.settings import SECRETS_FILE, SettingsError, check_cron, load_settings
    from fairgrid.daemon.store import StoreError

    try:
        settings, created = load_settings(args.config)
        check_cron(settings.nightly_cron)
    except SettingsError as exc:
        raise CliError(str(exc)) from None
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    where = Path(settings.storage_path).resolve()
    print(f"fairgrid: settings from {settings.source}; database {where}", file=sys.stderr)
    if created:
        # secrets never go to a log (under systemd, stderr is the journal): only the path
        secrets_path = where.parent / SECRETS_FILE
        print(f"fairgrid: generated a portal 'demo' and tokens in {secrets_path} (mode 0600; "
              f"read them there)", file=sys.stderr)
    if not settings.metrics_token_file and not _loopback(settings.server_host):
        print(f"fairgrid: /metrics is open to whoever reaches {settings.server_host}:"
              f"{settings.server_port} (it names portals); set metrics.token_file "
              f"(docs/operations.md)", file=sys.stderr)
    loop = _event_loop(settings.server_uvloop)
    url = address(settings)

    def listening(_message: str) -> None:  # aiohttp calls this once the socket is bound
        print(f"fairgrid: listening on {url}", file=sys.stderr, flush=True)

    try:
        web.run_app(create_app(settings), host=settings.server_host, port=settings.server_port,
                    shutdown_timeout=settings.server_shutdown_timeout_s, print=listening,
                    access_log=None, loop=loop)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        if exc.filename is not None:  # a file the start needed, not the socket
            raise CliError(f"cannot use {exc.filename}: {exc.strerror or exc}") from None
        raise CliError(f"cannot listen on {settings.server_host}:{settings.server_port}: "
                       f"{exc.strerror}") from None
    return 0


def _loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only."""
    import ipaddress

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def cmd_portal_add(args: argparse.Namespace) -> int:
    import re

    from fairgrid.daemon.settings import (SECRETS_FILE, SettingsError, _read_toml, dump_secrets,
                                          load_settings, new_secret)

    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", args.name):
        raise CliError("a portal name is 1..64 letters, digits, '-' or '_'")
    secret = new_secret()
    portal_env = [v for v in ("FAIRGRID_PORTAL_SECRETS", "FAIRGRID_PORTAL_SECRETS_FILE")
                  if v in os.environ]
    if portal_env:
        # the daemon reads its portals from there, never from a file this would write
        print(f"the portals come from {portal_env[0]}: add {args.name}={secret} to it "
              f"(';' between portals; a rotation lists both secrets: "
              f"{args.name}=<the old one>,{secret}); a running daemon takes up a changed "
              "..._FILE at once, the variable itself at its next start", file=sys.stderr)
    elif args.config is None and not os.environ.get("FAIRGRID_CONFIG") and (
            token_env := [v for v in os.environ if v.removesuffix("_FILE") in (
                "FAIRGRID_AUTH_ORGANISER_TOKENS", "FAIRGRID_AUTH_ADMIN_TOKENS")]):
        # with the tokens in the environment the daemon reads no embedded secrets file
        print(f"the service tokens come from {sorted(token_env)[0]}, so the daemon reads "
              f"no secrets file: give it the portals in FAIRGRID_PORTAL_SECRETS "
              f"({args.name}={secret}; ';' between portals) or in a config's "
              f"[portals.{args.name}] secrets = [\"{secret}\"]", file=sys.stderr)
    elif args.config is None and not os.environ.get("FAIRGRID_CONFIG"):
        try:  # (load_settings checks the secrets file; it is read again to add to it)
            settings, _ = load_settings(None)
            path = Path(settings.storage_path).resolve().parent / SECRETS_FILE
            table = _read_toml(path)
        except SettingsError as exc:
            raise CliError(str(exc)) from None
        portals = table.setdefault("portals", {})
        if args.name in portals:
            portals[args.name]["secrets"].append(secret)
        else:
            portals[args.name] = {"secrets": [secret]}
        _replace(path, dump_secrets(table))
        n = len(portals[args.name]["secrets"])
        if n > 1:
            print(f"portal {args.name!r} now has {n} secrets: a rotation. Both are accepted; "
                  f"remove the old one from {path} once the portal signs with the new one.",
                  file=sys.stderr)
        print(f"added to {path}; a running daemon takes it up at once (no restart)",
              file=sys.stderr)
    elif _configured(args.config, args.name):
        print(f"portal {args.name!r} is in your config already: add the new secret to its "
              f"list (a rotation: both are accepted; remove the old one once the portal "
              f"signs with the new one), and a running daemon takes it up at once:"
              f"\n\n[portals.{args.name}]\nsecrets = [\"<the secrets it has>\", "
              f"\"{secret}\"]\n", file=sys.stderr)
    else:
        print(f"add to your config (a running daemon takes it up at once, no restart):"
              f"\n\n[portals.{args.name}]\nsecrets = [\"{secret}\"]\n", file=sys.stderr)
    print(secret)
    return 0


def _configured(config: str | None, name: str) -> bool:
    """Whether the config (``config``, or FAIRGRID_CONFIG's) has portal ``name``; False
    when it cannot be read (the daemon's start says why)."""
    from fairgrid.daemon.settings import SettingsError, load_settings

    try:
        settings, _ = load_settings(config, generate=False)
    except SettingsError:
        return False
    return name in settings.portals


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` in one step (a new file renamed over it, mode 0600): a
    running daemon that reads it meanwhile sees the old file or the new, never half."""
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def cmd_simulate(args: argparse.Namespace) -> int:
    """Send simulated honest and cheating solves to a daemon as signed webhooks."""
    import binascii

    try:
        key = base64.b64decode(args.secret.removeprefix("whsec_"), validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not key:
        raise CliError("--secret is not a webhook secret: expected whsec_ followed by "
                       "base64 (as `fairgrid portal add` prints)")
    args.tournament, args.prefix = simulated_ids(args.type, args.tournament, args.prefix)
    url, settings = _simulate_target(args)

    def show(sid: str, behaviour: str, status: int) -> None:
        print(dumps({"submission_id": sid, "behaviour": behaviour, "status": status}),
              flush=True)

    behaviour_of = send_simulated(args, DaemonClient(url), show)
    sent = {}
    for behaviour in behaviour_of.values():
        sent[behaviour] = sent.get(behaviour, 0) + 1
    print(f"sent {sum(sent.values())} solves: " + ", ".join(f"{v} {k}" for k, v in
                                                           sorted(sent.items())), file=sys.stderr)
    if args.wait > 0:
        _report_flags(args, url, settings, behaviour_of)
    return 0


def send_simulated(args: argparse.Namespace, client: DaemonClient, on_sent) -> dict[str, str]:
    """Send ``args.players`` honest and ``args.cheaters`` cheating solves of
    ``args.puzzle`` as signed webhooks (``simulate``'s options); ``on_sent(sid,
    behaviour, status)`` after each. Returns each submission id's behaviour."""
    import uuid

    from fairgrid.daemon.ingest.signatures import sign

    text, cheats, make = SIMULATORS[args.type](args)
    # a body of the default type says nothing of it, as a portal from before types
    puzzle_fields = {"givens": text} if puzzle_type(args.type).is_default else {
        "givens": text, "puzzle_type": args.type}
    rng = np.random.default_rng(args.seed)
    behaviours = (["honest"] * args.players
                  + [cheats[i % len(cheats)] for i in range(args.cheaters)])
    rng.shuffle(behaviours)
    puzzle_id = args.puzzle_id or f"sim-{text[:12]}"
    behaviour_of = {}
    run = uuid.uuid4().hex[:6]  # ids unique per run: a second run adds solves, not duplicates
    for i, behaviour in enumerate(behaviours):
        sim = make(behaviour, rng)
        sid = f"{args.prefix}-{run}-{i:05d}"
        body = json.dumps({"type": "solve.completed", "portal": args.portal,
                           "submission_id": sid, "tournament_id": args.tournament,
                           "player_id": f"{args.prefix}-player-{i:05d}",
                           "puzzle": {"id": puzzle_id, **puzzle_fields},
                           "started_at": "2026-11-21T10:00:00Z",
                           "moves": sim.moves()}).encode()
        # the webhook-id is a header, which holds ASCII only; ids in the body need not
        headers = sign(args.secret, f"sim-{run}-{i:05d}-msg", int(time.time()), body)
        answer = client.request("POST", "/v1/webhooks/solves", body, headers)
        if answer is None:
            raise CliError(f"cannot reach {client.base_url}/v1/webhooks/solves")
        status, doc = answer
        if status in (400, 401, 409, 422):
            raise CliError(f"the daemon refused {sid} with {status}: {doc.get('error')}")
        behaviour_of[sid] = behaviour
        on_sent(sid, behaviour, status)
    return behaviour_of


def simulated_ids(kind: str, tournament: str | None, prefix: str | None) -> tuple[str, str]:
    """The tournament and the id prefix of simulated solves: the ones given, else the
    Sudoku demo's, and another type's own (its players never share a Sudoku history)."""
    default = puzzle_type(kind).is_default
    return (tournament or ("simulated" if default else f"simulated-{kind}"),
            prefix or ("sim" if default else f"sim-{kind}"))


def _simulate_target(args: argparse.Namespace):
    """(daemon URL, settings or None): ``--url``/``FAIRGRID_URL``, else the config's own
    address (its host and port); the settings come with the config's address only."""
    from .common import settings_of

    url = args.url or os.environ.get("FAIRGRID_URL")
    if url:
        return checked_url(url), None
    settings = settings_of(args.config)
    return address(settings), settings


def _scores_token(args: argparse.Namespace, url: str, settings) -> str:
    """The token to read the scores with: ``--token``/``FAIRGRID_TOKEN``, else the
    config's, only when ``url`` is the config's own daemon (its tokens never go to
    another host, the rule of the organiser commands); CliError otherwise."""
    import urllib.parse

    token = args.token or os.environ.get("FAIRGRID_TOKEN")
    if token:
        return token
    if settings is None:
        from .common import settings_of
        settings = settings_of(args.config)
        parts = urllib.parse.urlsplit(url)
        try:
            port = parts.port or 80
        except ValueError:
            port = None
        if (parts.scheme, parts.hostname, port) != ("http", settings.server_host,
                                                     settings.server_port):
            raise CliError(f"{url} is not the config's daemon: pass --token (or "
                           f"FAIRGRID_TOKEN) to read the scores there; the config's "
                           f"tokens are only sent to the config's own daemon")
    return DaemonClient.from_settings(settings).token


def _sudoku_simulator(args: argparse.Namespace):
    """(puzzle text, cheat behaviours, make(behaviour, rng)) for ``simulate``: honest
    solves by the propagation model at the calibrated expected time, and every copier
    (``analytics.simulate``)."""
    from fairgrid.analytics.expected_time import load_default
    from fairgrid.analytics.simulate import CHEATS, simulate
    from fairgrid.solvers.propagation import solution_of
    from fairgrid.solvers.rate import families_for, rate

    puzzle = load_puzzle(args.puzzle)
    solution = solution_of(puzzle)
    cal = load_default()
    metrics = rate(puzzle, rng=args.seed, only=families_for(cal.metrics_needed)).metrics
    expected_log_s = float(np.log(cal.expected_time_s(metrics)))

    def make(behaviour, rng):
        return simulate(puzzle, solution, behaviour, rng=rng, expected_log_s=expected_log_s,
                        sd_log=cal.residual_sd)
    return format_line(puzzle.givens, puzzle.box_size), CHEATS, make


def _nurikabe_simulator(args: argparse.Namespace):
    """(puzzle text, cheat behaviours, make(behaviour, rng)) for ``simulate --type nurikabe``:
    honest solves by the propagation model at its prior expected time, copies in row
    and random order (``analytics.nurikabe.simulate_nurikabe``)."""
    from fairgrid.analytics.nurikabe import PRIOR_SD_LOG, expected_log_time, simulate_nurikabe
    from .nurikabe_tools import load

    ptype = puzzle_type(NURIKABE)
    puzzle = load(args.puzzle)
    solution = ptype.solution(puzzle)
    if solution is None:
        raise CliError("the Nurikabe puzzle has no unique solution")
    expected_log_s = expected_log_time(ptype.rate(puzzle, args.seed))
    givens, shape = ptype.givens(puzzle), ptype.shape(puzzle)

    def make(behaviour, rng):
        # honest people around the prior: it is wide on purpose, they are not
        return simulate_nurikabe(givens, shape, solution, behaviour, rng=rng,
                                 expected_log_s=expected_log_s,
                                 sd_log=min(0.3, PRIOR_SD_LOG))
    return ptype.format(puzzle), ("row", "random"), make


SIMULATORS = {SUDOKU: _sudoku_simulator, NURIKABE: _nurikabe_simulator}


def _report_flags(args: argparse.Namespace, url: str, settings,
                  behaviour_of: dict[str, str]) -> None:
    """Wait until the daemon has scored the solves (the first analysis of a puzzle
    compiles for half a minute), then say what was flagged, by behaviour."""
    from .client import quote
    from .common import progress_bar

    # the webhooks went to url; the scores are read there too, with an organiser token
    try:
        client = DaemonClient(url, _scores_token(args, url, settings))
    except CliError as exc:
        print(f"not waiting for the scores: {exc}", file=sys.stderr)
        return
    bar = progress_bar(len(behaviour_of), "scored", unit="solve")
    scored: dict[str, bool] = {}
    deadline = time.monotonic() + args.wait
    try:
        while len(scored) < len(behaviour_of) and time.monotonic() < deadline:
            for sid in [s for s in behaviour_of if s not in scored]:
                try:
                    doc = client.get(f"/v1/submissions/{quote(args.portal)}/{quote(sid)}")
                except CliError as exc:  # the solves were sent: only the waiting stops
                    print(f"not waiting for the scores: {exc}", file=sys.stderr)
                    return
                if doc and doc.get("status") == "scored" and doc.get("score"):
                    scored[sid] = bool(doc["score"]["flagged"])
                    if bar:
                        bar.update(1)
            if len(scored) < len(behaviour_of):
                time.sleep(0.5)
    finally:
        if bar:
            bar.close()
    behaviours = sorted(set(behaviour_of.values()), key=lambda k: (k != "honest", k))
    parts = []
    for behaviour in behaviours:
        mine = [s for s, k in behaviour_of.items() if k == behaviour]
        parts.append(f"{behaviour} {sum(scored.get(s, False) for s in mine)} of {len(mine)}")
    missing = len(behaviour_of) - len(scored)
    print("flagged: " + ", ".join(parts)
          + (f" ({missing} not scored within {args.wait:.0f} s)" if missing else ""),
          file=sys.stderr)


def add_commands(sub) -> None:
    p = sub.add_parser("serve", help="run the fairgrid service",
                       description="Run the HTTP service: signed webhooks in, DuckDB, "
                       "organiser API, /metrics. With no config it uses ./fairgrid.duckdb "
                       "and a generated 'demo' portal (docs/configuration.md).")
    p.add_argument("--config", help=CONFIG_HELP)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("portal", help="manage portals")
    portal_sub = p.add_subparsers(dest="portal_command", metavar="ACTION", required=True)
    p = portal_sub.add_parser("add", help="create a webhook secret for a portal and print it")
    p.add_argument("name")
    p.add_argument("--config", help=CONFIG_HELP)
    p.set_defaults(func=cmd_portal_add)

    p = sub.add_parser("simulate", help="send simulated honest and cheating solves",
                       description="Send signed webhooks with simulated solves of PUZZLE to a "
                       "running daemon: honest players (the human-like model with realistic "
                       "pacing) and cheaters (the simulator's copier behaviours, in turn). Prints "
                       "one line per solve with its behaviour, then waits for the scores and "
                       "says what was flagged, by behaviour.")
    p.add_argument("puzzle", help=PUZZLE_HELP)
    p.add_argument("--url", help="the daemon (default: FAIRGRID_URL, else the config's "
                   "server.host and server.port)")
    p.add_argument("--portal", default="demo")
    p.add_argument("--secret", required=True, help="the portal's whsec_ secret")
    p.add_argument("--players", type=seed, default=20, help="honest players (default 20)")
    p.add_argument("--cheaters", type=seed, default=5, help="cheaters (default 5)")
    p.add_argument("--tournament", help="the tournament the solves are sent for (default: "
                   "simulated; for another type simulated-TYPE)")
    p.add_argument("--puzzle-id", default=None)
    p.add_argument("--prefix", help="prefix of submission and player ids (default: sim; "
                   "for another type sim-TYPE, so that types never share players)")
    p.add_argument("--seed", type=seed, default=0)
    p.add_argument("--wait", type=seconds, default=300.0,
                   help="seconds to wait for the scores before saying what was flagged "
                   "(0: do not wait; default 300)")
    p.add_argument("--token", help="organiser token to read the scores with (default: "
                   "FAIRGRID_TOKEN, else the config's, which is sent only to the config's "
                   "own daemon)")
    p.add_argument("--type", choices=TYPES, default=DEFAULT_TYPE,
                   help="puzzle type (default sudoku; nurikabe: ROWSxCOLS:cells, "
                   "docs/puzzles.md)")
    p.add_argument("--config", help=CONFIG_HELP)
    p.set_defaults(func=cmd_simulate)

