"""``fairgrid demo``: the daemon on its embedded default, and beside it a small tournament
site where a person picks a puzzle, solves it in the browser through the move recorder
(portal/recorder) and reads their verdict. Simulated honest players and cheaters
(``simulate``'s) fill the same tournament, so the console has a queue to review.

The site is a portal as docs/portals.md describes one: the page records, the site's
server signs with the portal's secret (the page never sees it) and sends the webhook.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import hashlib
import html
import json
import secrets
import sys
import time
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path

from .common import CliError, seed, tcp_port

PORTAL = "demo"
TOURNAMENT = "demo-cup"
USER = "demo"
PUZZLES = {  # the site's puzzles: its own names, as a portal registers them
    "warm-up": ("a warm-up (singles only)",
                "003020600900305001001806400008102900700000008006708200002609500800203009005010300"),
    "medium": ("the medium test puzzle (the simulated players' puzzle)",
               "000000907000420180000705026100904000050000040000507009920108000034059000507000000"),
}
SIMULATED_PUZZLE = "medium"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
       "img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")


def recorder_source() -> Path:
    """The recorder's ES module, from the checkout the package is installed from."""
    import fairgrid.daemon

    path = Path(fairgrid.daemon.__file__).resolve().parents[1] / "portal/recorder/src/recorder.js"
    if not path.is_file():
        raise CliError(f"the demo serves the recorder from the source checkout ({path} is "
                       "missing): run it from a clone installed with pip install -e .")
    return path


def _page(title: str, body: str, refresh: bool = False) -> str:
    meta = '<meta http-equiv="refresh" content="2">' if refresh else ""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">{meta}'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{html.escape(title)} · fairgrid demo cup</title>'
            f'<link rel="stylesheet" href="/static/demo.css"></head><body>'
            f'<header><a href="/">fairgrid demo cup</a></header><main>{body}</main></body></html>')


class Site:
    """The tournament site's handlers: it knows the daemon's address, the portal's
    secret and an organiser token, all server-side."""

    def __init__(self, daemon_url: str, secret: str, token: str):
        from aiohttp import web

        self.daemon_url, self.secret, self.token = daemon_url, secret, token
        self.recorder = recorder_source()
        self.static = resources.files(__package__).joinpath("demo_site")
        @web.middleware
        async def headers(request, handler):
            resp = await handler(request)
            resp.headers["Content-Security-Policy"] = CSP
            resp.headers["X-Content-Type-Options"] = "nosniff"
            return resp

        app = web.Application(middlewares=[headers])
        app.router.add_get("/", self.index)
        app.router.add_get("/play", self.play)
        app.router.add_post("/solves", self.solve)
        app.router.add_get("/verdict/{sid}", self.verdict)
        app.router.add_get("/static/{name}", self.asset)
        app.cleanup_ctx.append(self._session)
        self.app = app

    async def _session(self, app):
        import aiohttp

        self.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
        yield
        await self.session.close()

    def _html(self, text: str):
        from aiohttp import web
        return web.Response(text=text, content_type="text/html")

    async def index(self, request):
        items = "".join(
            f'<li><label><input type="radio" name="puzzle" value="{pid}"'
            f'{" checked" if i == 0 else ""}> {html.escape(words)}</label></li>'
            for i, (pid, (words, _)) in enumerate(PUZZLES.items()))
        return self._html(_page("Pick a puzzle", (
            "<h1>Pick a puzzle</h1><p>Solve it here: every move is recorded in your browser "
            "and, once you submit, signed by this site's server and sent to fairgrid, which "
            "judges whether the solve looks human.</p>"
            '<form method="get" action="/play"><label>Your name '
            '<input name="player" id="player" value="guest" maxlength="60" required></label>'
            f'<ul class="puzzles">{items}</ul><button id="start">Start</button></form>')))

    async def play(self, request):
        from aiohttp import web

        pid = request.query.get("puzzle", "")
        player = request.query.get("player", "").strip() or "guest"
        if pid not in PUZZLES:
            raise web.HTTPFound("/")
        givens = PUZZLES[pid][1]
        cells = "".join(
            f'<input class="cell" aria-label="row {c // 9 + 1} column {c % 9 + 1}" '
            f'inputmode="numeric" autocomplete="off" maxlength="2"'
            + (f' value="{g}" readonly' if g != "0" else "") + ">"
            for c, g in enumerate(givens))
        pad = "".join(f'<button type="button" class="digit" data-digit="{d}">{d}</button>'
                      for d in range(1, 10))
        return self._html(_page(f"Solve {pid}", (
            f'<h1>{html.escape(PUZZLES[pid][0])}</h1>'
            f'<p>Playing as <strong>{html.escape(player)}</strong>. Type digits, or pick a '
            f'cell and press a digit below.</p>'
            f'<div id="game" data-puzzle="{html.escape(pid)}" data-player="{html.escape(player)}">'
            f'<div class="grid" id="grid">{cells}</div>'
            f'<div class="pad">{pad}<button type="button" class="digit" data-digit="0">erase'
            f'</button></div>'
            f'<p><button type="button" id="submit">Submit my solve</button> '
            f'<span id="status" role="status"></span></p></div>'
            f'<script type="module" src="/static/demo.js"></script>')))

    async def solve(self, request):
        """The portal's server: who (the page says, in a demo; a portal's session knows)
        and which puzzle, the recorder's log, signed and sent."""
        import aiohttp
        from aiohttp import web

        try:
            page = json.loads(await request.text(), parse_constant=_no_constant)
            pid, log = page["puzzle_id"], page["log"]
            player = page.get("player", "guest")
            assert pid in PUZZLES and isinstance(log, dict) and isinstance(player, str)
            player = player.strip()[:60] or "guest"
            assert isinstance(log.get("started_at"), str)
        except (ValueError, KeyError, TypeError, AssertionError, RecursionError):
            return web.json_response({"error": "expected {puzzle_id, player, log}"}, status=400)
        # the same solve sent twice (a double click, a retry) is the same submission
        key = "\0".join((player, pid, log["started_at"])).encode("utf-8", "surrogatepass")
        sid = "web-" + hashlib.sha256(key).hexdigest()[:20]
        body = {"type": "solve.completed", "portal": PORTAL, "submission_id": sid,
                "tournament_id": TOURNAMENT, "player_id": player, "puzzle": {"id": pid},
                "started_at": log.get("started_at"), "moves": log.get("moves"),
                "client": log.get("client")}
        try:
            status, answer = await self.send(body)
        except (aiohttp.ClientError, asyncio.TimeoutError, ValueError):
            return web.json_response({"error": "fairgrid did not answer; try again"},
                                     status=502)
        if status >= 300:
            return web.json_response({"error": answer.get("error"), "field": answer.get("field"),
                                      "status": status}, status=422 if status < 500 else 502)
        return web.json_response({"submission_id": sid, "verdict": f"/verdict/{sid}"})

    async def send(self, body: dict) -> tuple[int, dict]:
        """POST the signed webhook, retrying a 503 after its Retry-After."""
        from fairgrid.daemon.ingest.signatures import sign

        raw = json.dumps(body, separators=(",", ":")).encode()
        for attempt in range(5):
            headers = sign(self.secret, body["submission_id"], int(time.time()), raw)
            async with self.session.post(self.daemon_url + "/v1/webhooks/solves", data=raw,
                                         headers=headers) as resp:
                answer = await resp.json(content_type=None)
                if resp.status < 500 or attempt == 4:
                    return resp.status, answer
                await asyncio.sleep(float(resp.headers.get("Retry-After", "1")))
        raise AssertionError("unreachable")

    async def verdict(self, request):
        from urllib.parse import quote

        sid = request.match_info["sid"]
        # one path segment, whatever the id holds: "../" must not reach another route
        async with self.session.get(
                f"{self.daemon_url}/v1/submissions/{PORTAL}/{quote(sid, safe='')}",
                headers={"Authorization": f"Bearer {self.token}"}) as resp:
            doc = await resp.json(content_type=None) if resp.status == 200 else None
        if not isinstance(doc, dict) or not isinstance(doc.get("player_id"), str):
            return self._html(_page("Not found", "<h1>No such solve</h1>"))
        console = (f'{self.daemon_url}/ui/players/{quote(PORTAL, safe="")}/'
                   f'{quote(doc["player_id"], safe="")}')
        score = doc.get("score")
        if doc["status"] != "scored" or not score:
            return self._html(_page("Scoring", (
                f'<h1>Your solve is in</h1><p id="state">{html.escape(doc["status"])}: '
                f'fairgrid is scoring it (the first solve of a puzzle waits for the puzzle\'s '
                f'analysis, about half a minute). This page refreshes itself.</p>'), refresh=True))
        from fairgrid.analytics.evidence import Evidence

        ev = Evidence.from_json(score)
        rows = "".join(
            f'<tr data-signal="{html.escape(s.name)}"><td>{html.escape(s.what)}</td>'
            f'<td>{html.escape(s.unusual)}</td><td>{html.escape(s.explanation)}</td></tr>'
            for s in ev.signals)
        flagged = "flagged for review" if ev.flagged else "not flagged"
        return self._html(_page("Your verdict", (
            f'<h1>Your verdict: <span id="flagged">{flagged}</span></h1>'
            f'<p id="verdict">{html.escape(ev.verdict)}</p>'
            f'<p>{html.escape(ev.unusual)} are as unusual.</p>'
            f'<table id="signals"><thead><tr><th>evidence</th><th>how common</th>'
            f'<th>what fairgrid saw</th></tr></thead><tbody>{rows}</tbody></table>'
            f'<p>Organisers see it in the console: <a id="console" href="{html.escape(console)}">'
            f'{html.escape(console)}</a> (submission <code id="sid">{html.escape(sid)}</code>).'
            f'</p><p><a href="/">Solve another</a></p>')))

    async def asset(self, request):
        from aiohttp import web

        name = request.match_info["name"]
        if name == "recorder.js":
            return web.Response(body=self.recorder.read_bytes(),
                                content_type="text/javascript")
        types = {"demo.js": "text/javascript", "demo.css": "text/css"}
        if name not in types:
            raise web.HTTPNotFound()
        return web.Response(body=self.static.joinpath(name).read_bytes(),
                            content_type=types[name])


async def _call(session, method: str, url: str, token: str, payload: dict) -> tuple[int, dict]:
    async with session.request(method, url, json=payload,
                               headers={"Authorization": f"Bearer {token}"}) as resp:
        return resp.status, await resp.json(content_type=None)


async def _prepare(daemon_url: str, admin: str) -> str:
    """Register the site's puzzles and a console account (a new password each run)."""
    import aiohttp

    password = secrets.token_urlsafe(12)
    async with aiohttp.ClientSession() as session:
        status, answer = await _call(session, "POST", f"{daemon_url}/v1/puzzles", admin,
                                     {"puzzles": [{"id": pid, "givens": givens}
                                                  for pid, (_, givens) in PUZZLES.items()]})
        if status >= 300:
            raise CliError(f"cannot register the demo's puzzles: {answer.get('error')}")
        status, _ = await _call(session, "POST", f"{daemon_url}/v1/users", admin,
                                {"name": USER, "role": "admin", "password": password})
        if status == 409:  # a second run: the account stays, with today's password
            status, _ = await _call(session, "PATCH", f"{daemon_url}/v1/users/{USER}", admin,
                                    {"password": password, "disabled": False})
        if status >= 300:
            raise CliError("cannot create the console account for the demo")
    return password


def _traffic(args: argparse.Namespace, daemon_url: str, secret: str) -> None:
    """Simulated players of the medium puzzle, as ``fairgrid simulate`` sends them."""
    from .client import DaemonClient
    from .service import send_simulated

    sim = argparse.Namespace(
        puzzle=PUZZLES[SIMULATED_PUZZLE][1], type="sudoku", seed=args.seed, portal=PORTAL,
        players=args.players, cheaters=args.cheaters, tournament=TOURNAMENT,
        puzzle_id=SIMULATED_PUZZLE, prefix="sim", secret=secret)
    behaviours = send_simulated(sim, DaemonClient(daemon_url), lambda *_: None)
    print(f"fairgrid demo: {len(behaviours)} simulated solves sent to {TOURNAMENT} "
          f"({sum(b != 'honest' for b in behaviours.values())} by cheaters)", file=sys.stderr,
          flush=True)


def _no_constant(name: str):
    """NaN and Infinity: Python's JSON takes them, the daemon does not."""
    raise ValueError(f"{name} is no JSON number")


async def _run(args: argparse.Namespace, settings) -> None:
    from aiohttp import web

    from fairgrid.daemon.app import create_app

    from .client import address

    daemon_url = address(settings)
    secret = settings.portals[PORTAL][0]
    runners = []
    try:
        for app, host, port in ((create_app(settings), settings.server_host, settings.server_port),
                                (Site(daemon_url, secret, (settings.organiser_tokens
                                                           or settings.admin_tokens)[0]).app,
                                 settings.server_host, args.site_port)):
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            runners.append(runner)
            try:
                await web.TCPSite(runner, host, port).start()
            except OSError as exc:
                raise CliError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
        password = await _prepare(daemon_url, settings.admin_tokens[0])
        site = f"http://{settings.server_host}:{args.site_port}/"
        print(f"fairgrid demo: the tournament site is {site}\n"
              f"fairgrid demo: the console is {daemon_url}/ui/ (sign in as {USER!r} with "
              f"password {password}, made for this run)", file=sys.stderr, flush=True)
        if args.players or args.cheaters:
            await asyncio.to_thread(_traffic, args, daemon_url, secret)
        print("fairgrid demo: ready (Ctrl-C stops it)", file=sys.stderr, flush=True)
        await asyncio.Event().wait()
    finally:
        for runner in reversed(runners):
            await runner.cleanup()


def cmd_demo(args: argparse.Namespace) -> int:
    import logging

    from fairgrid.daemon.settings import SettingsError, load_settings

    try:
        settings, _ = load_settings(None)
    except SettingsError as exc:
        raise CliError(str(exc)) from None
    if args.port is not None:
        settings = dataclasses.replace(settings, server_port=args.port)
    if PORTAL not in settings.portals or not settings.admin_tokens:
        raise CliError(f"the demo needs the embedded default's portal {PORTAL!r} and an "
                       f"admin token (FAIRGRID_CONFIG must not be set)")
    if args.site_port == settings.server_port:
        raise CliError("--site-port must differ from the daemon's port")
    logging.basicConfig(level=logging.WARNING)
    print(f"fairgrid demo: database {Path(settings.storage_path).resolve()}; "
          f"{datetime.now(timezone.utc):%H:%M} UTC", file=sys.stderr)
    recorder_source()
    try:
        asyncio.run(_run(args, settings))
    except KeyboardInterrupt:
        pass
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser(
        "demo", help="the service plus a tournament site to solve puzzles on",
        description="Run the daemon on its embedded default (./fairgrid.duckdb, port 8080) "
        "and a small tournament site (port 8081) where you solve a puzzle in the browser "
        "and read your verdict; simulated honest players and cheaters fill the tournament "
        "so the console at /ui/ has a queue. Prints the console's account and password.")
    p.add_argument("--port", type=tcp_port, default=None,
                   help="the daemon's port (default: server.port, 8080)")
    p.add_argument("--site-port", type=tcp_port, default=8081,
                   help="the site's port (default 8081)")
    p.add_argument("--players", type=seed, default=12, help="simulated honest players (12)")
    p.add_argument("--cheaters", type=seed, default=4, help="simulated cheaters (4)")
    p.add_argument("--seed", type=seed, default=0)
    p.set_defaults(func=cmd_demo)
