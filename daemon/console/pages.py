"""The console's pages: sign-in, overview, flag queue, the evidence of a flag with its
review form, player, puzzle, search and CSV export. Every page reads through the
repository with the signed-in person's portals, so a page of another portal is a 404
exactly as in the API. Forms post back with the session's CSRF token; each decision
goes through the API's review code and names the person in the history."""

from __future__ import annotations

import csv
import functools
import hmac
import io
import json
import secrets
import unicodedata
import urllib.parse
from datetime import datetime, timezone

import aiohttp_jinja2
from aiohttp import web

from fairgrid.analytics.calibration import player_z
from fairgrid.analytics.evidence import RULES
from fairgrid.analytics.puzzle_model import grid_facts
from fairgrid.solvers.puzzle_types import DEFAULT_TYPE, puzzle_type
from fairgrid.solvers.techniques import SINGLES

from .. import documents
from ..ingest import ValidationError
from ..settings import proxy_networks
from ..text import shown
from ..store.repository import console as sql
from ..store.repository import organiser as organiser_sql
from ..store.repository import outbox as outbox_sql
from ..store.repository import puzzles as puzzle_sql
from ..web.auth import Principal
from ..web.context import CTX, read, write
from ..states import REVIEW_STATES, FlagState
from ..web.responses import attachment
from ..web.organiser import record_review
from . import svg
from .sessions import COOKIE, LoginThrottle, Sessions, client_address

LOGIN_COOKIE = "fairgrid_login"  # the sign-in form's CSRF token, before any session
PAGE_SIZE = 50
STATES = (FlagState.OPEN.value, FlagState.CLEARED.value, FlagState.CONFIRMED.value,
          FlagState.WITHDRAWN.value, "any")  # the queue's filter, in the order offered
# evidence strength filters: the combined p-value at most
STRENGTHS = {"any": None, "1e-3": 1e-3, "1e-5": 1e-5, "1e-6": 1e-6}
STRENGTH_WORDS = {"any": "any", "1e-3": "below 1 in 1,000", "1e-5": "below 1 in 100,000",
                  "1e-6": "below 1 in a million"}
DECISIONS = {FlagState.CLEARED: "Clear (honest)", FlagState.CONFIRMED: "Confirm (cheating)",
             FlagState.OPEN: "Reopen"}


class Console:
    """The console's state in the app: sessions and the sign-in throttle."""

    def __init__(self, settings):
        self.sessions = Sessions(settings.console_idle_minutes * 60.0,
                                 settings.console_session_hours * 3600.0)
        self.throttle = LoginThrottle(settings.console_login_failures,
                                      float(settings.console_lockout_s))
        self.proxies = proxy_networks(settings.console_trusted_proxies)


CONSOLE = web.AppKey("fairgrid_console", Console)
WHO = web.RequestKey("fairgrid_who", Principal)
SESSION = web.RequestKey("fairgrid_session", object)
FORM = web.RequestKey("fairgrid_form", object)


class NotFound(Exception):
    pass


def _secure(request: web.Request) -> bool:
    return request.secure or request.headers.get("X-Forwarded-Proto", "") == "https"


def _render(request, name: str, context: dict, status: int = 200) -> web.Response:
    context.setdefault("who", request.get(WHO))
    context.setdefault("csrf", request[SESSION].csrf if request.get(SESSION) else None)
    return aiohttp_jinja2.render_template(name, request, context, status=status)


def _error_page(request, status: int, message: str) -> web.Response:
    return _render(request, "error.html", {"status": status, "message": message,
                                           "title": "Not found" if status == 404 else "Error"},
                   status=status)


def page(handler):
    """A page for signed-in people: the session, the CSRF check on POST, HTML errors."""
    @functools.wraps(handler)
    async def wrapped(request: web.Request) -> web.StreamResponse:
        console = request.app[CONSOLE]
        session = console.sessions.get(request.cookies.get(COOKIE))
        who = session and request.app[CTX].accounts.principal_of(session.user)
        if who is None:
            target = urllib.parse.quote(request.path_qs, safe="/?=&")
            raise web.HTTPSeeOther(f"/ui/login?next={target}")
        request[WHO], request[SESSION] = who, session
        if request.method == "POST":
            form = await request.post()
            request[FORM] = form
            if not hmac.compare_digest(str(form.get("csrf", "")), session.csrf):
                return _error_page(request, 403, "This form is out of date or was not sent "
                                   "from the console (no valid CSRF token). Go back, reload "
                                   "the page and try again.")
        try:
            return await handler(request, who)
        except NotFound as exc:
            return _error_page(request, 404, str(exc))
        except ValidationError as exc:
            status = exc.status if 400 <= exc.status < 500 else 400
            return _error_page(request, status, f"{exc.field}: {exc}" if exc.field
                               else str(exc))
    return wrapped


# --- signing in and out -------------------------------------------------------------

def _next(value: str | None) -> str:
    """Only a console path: never an open redirect."""
    if value and value.startswith("/ui/") and not value.startswith("//"):
        return value
    return "/ui/"


async def login_form(request: web.Request, message: str | None = None,
                     status: int = 200) -> web.Response:
    token = secrets.token_urlsafe(24)
    resp = _render(request, "login.html", {"title": "Sign in", "login_csrf": token,
                                           "message": message,
                                           "next": _next(request.query.get("next"))},
                   status=status)
    resp.set_cookie(LOGIN_COOKIE, token, httponly=True, samesite="Strict", path="/ui/",
                    secure=_secure(request))
    return resp


async def login(request: web.Request) -> web.Response:
    form = await request.post()
    expected = request.cookies.get(LOGIN_COOKIE, "")
    if not expected or not hmac.compare_digest(str(form.get("csrf", "")), expected):
        return await login_form(request, "The sign-in form expired; please sign in again.",
                                403)
    name, password = str(form.get("name", "")).strip(), str(form.get("password", ""))
    console = request.app[CONSOLE]
    address = client_address(request.remote, request.headers.getall("X-Forwarded-For", []),
                             console.proxies)
    keys = (f"name:{name.lower()}", f"addr:{address}")
    if console.throttle.locked(*keys):
        minutes = max(1, round(console.throttle.lockout_s / 60))
        return await login_form(request, "Too many failed sign-ins. Try again in "
                                f"{minutes} minute{'s' if minutes > 1 else ''}.", 429)
    # counted before the (slow) check, so parallel guesses cannot all slip past the limit
    console.throttle.failed(*keys)
    who = await request.app[CTX].accounts.verify_password(name, password) if name else None
    if who is None:
        return await login_form(request, "Wrong name or password.", 401)
    console.throttle.succeeded(*keys)
    sid, _ = console.sessions.start(who.name)
    resp = web.HTTPSeeOther(_next(str(form.get("next", ""))))
    resp.set_cookie(COOKIE, sid, httponly=True, samesite="Strict", path="/ui/",
                    secure=_secure(request))
    resp.del_cookie(LOGIN_COOKIE, path="/ui/")
    raise resp


@page
async def logout(request: web.Request, who: Principal) -> web.Response:
    request.app[CONSOLE].sessions.end(request.cookies.get(COOKIE))
    resp = web.HTTPSeeOther("/ui/login")
    resp.del_cookie(COOKIE, path="/ui/")
    raise resp


# --- pages --------------------------------------------------------------------------

def _mmss(ms) -> str:
    if ms is None:
        return "–"
    s = int(round(ms / 1000))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def _when(value) -> str:
    """A stored time for people; one outside what Python represents (stored before
    ingestion bounded times) arrives as DuckDB's text and is shown as it is."""
    if value is None:
        return "–"
    if not isinstance(value, datetime):
        return str(value)
    return value.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


@page
async def overview(request: web.Request, who: Principal) -> web.Response:
    rows = await read(request, sql.overview, who.visible())
    backlogs = await read(request, sql.backlogs, who.visible())
    fpr = request.app[CTX].settings.scoring_fpr
    for r in rows:
        flagged = sum(r[s] for s in (FlagState.OPEN, FlagState.CLEARED, FlagState.CONFIRMED))
        r["flag_rate"] = flagged / r["scored"] if r["scored"] else None
    return _render(request, "overview.html", {"title": "Overview", "rows": rows,
                                              "backlogs": backlogs, "fpr": fpr})


def _choice(request, name: str, allowed, default: str) -> str:
    value = request.query.get(name, default) or default
    if value not in allowed:
        raise ValidationError(name, f"must be one of {', '.join(allowed)}", 400)
    return value


@page
async def flag_queue(request: web.Request, who: Principal) -> web.Response:
    state = _choice(request, "state", STATES, FlagState.OPEN.value)
    sort = _choice(request, "sort", tuple(sql.SORTS), "newest")
    strength = _choice(request, "strength", tuple(STRENGTHS), "any")
    tournament = request.query.get("tournament") or None
    player = request.query.get("player") or None
    try:
        page_no = max(1, int(request.query.get("page", "1")))
    except ValueError:
        raise ValidationError("page", "must be a page number", 400) from None
    rows, total = await read(request, sql.flag_queue, who.visible(), tournament=tournament,
                             state=None if state == "any" else state, player=player,
                             max_p=STRENGTHS[strength], sort=sort,
                             offset=(page_no - 1) * PAGE_SIZE, limit=PAGE_SIZE)
    pages = max(1, -(-total // PAGE_SIZE))
    query = {k: v for k, v in (("tournament", tournament), ("state", state),
                               ("player", player), ("strength", strength), ("sort", sort))
             if v}

    def link(n):
        return "/ui/flags?" + urllib.parse.urlencode({**query, "page": n})

    tournaments = await read(request, sql.tournaments, who.visible())
    return _render(request, "flags.html", {
        "title": "Flags", "rows": rows, "total": total, "page": page_no, "pages": pages,
        "prev": link(page_no - 1) if page_no > 1 else None,
        "next": link(page_no + 1) if page_no < pages else None,
        "tournaments": tournaments, "f": {"tournament": tournament or "", "state": state,
                                           "player": player or "", "strength": strength,
                                           "sort": sort},
        "states": STATES, "sorts": tuple(sql.SORTS), "strengths": STRENGTH_WORDS,
        "export": (f"/ui/tournaments/{urllib.parse.quote(tournament, safe='')}/flags.csv"
                   if tournament else None)})


def _hard_steps(timeline: list[dict]) -> list[bool]:
    """The placements a person would find hard: the top quarter by difficulty, and only
    steps harder than the solve's easiest."""
    diffs = sorted(t["difficulty"] for t in timeline)
    if not diffs:
        return []
    cut = diffs[int(0.75 * (len(diffs) - 1))]
    return [t["difficulty"] >= cut and t["difficulty"] > diffs[0] for t in timeline]


def _flag_id(request: web.Request) -> int:
    try:
        return int(request.match_info["id"])
    except ValueError:
        raise NotFound("There is no such flag.") from None


def _expected(ratings: dict) -> str | None:
    """A puzzle's expected solve time as m:ss, from its ratings (None before them)."""
    seconds = ratings.get("expected_time_s")
    return _mmss(1000 * seconds) if seconds else None


def _grid_of(puzzle: dict | None, ncells: int) -> tuple[int, tuple[int, int] | None, int, int]:
    """(box_size, shape for ``svg.board``, rows, cols) of a puzzle document; without one,
    the Sudoku grid of ``ncells`` cells."""
    if puzzle is None:
        box_size = int(round(ncells ** 0.25)) or 3
        return box_size, None, box_size * box_size, box_size * box_size
    if puzzle_type(puzzle["puzzle_type"]).blocks:
        return puzzle["order"], None, puzzle["rows"], puzzle["cols"]
    return 0, (puzzle["rows"], puzzle["cols"]), puzzle["rows"], puzzle["cols"]


def _flat(grid) -> list:
    return [v for row in grid for v in row] if grid else []


@page
async def flag_page(request: web.Request, who: Principal) -> web.Response:
    flag_id = _flag_id(request)
    row = await read(request, sql.flag, flag_id, who.visible())
    if row is None:
        raise NotFound(f"There is no flag {flag_id}.")
    evidence = json.loads(row["evidence"]) if row["evidence"] else {}
    history = await read(request, sql.history, flag_id)
    moves = await read(request, organiser_sql.moves, row["sub_key"])
    others = await read(request, organiser_sql.player_submissions, row["portal"],
                        row["player_id"])
    puzzle_row = await read(request, puzzle_sql.puzzle_document, row["puzzle_id"])
    puzzle = documents.puzzle(puzzle_row) if puzzle_row else None
    givens = evidence.get("givens") or []
    box_size, shape, rows, cols = _grid_of(puzzle, len(givens))
    predicted, actual = _flat(evidence.get("predicted_order")), _flat(evidence.get("actual_order"))
    free = sum(1 for g in givens if not g)
    max_rank = max([free] + [r for r in predicted + actual if r]) if givens else 1
    boards = None
    if givens and predicted and actual:
        boards = {"predicted": svg.board(box_size, givens, predicted, max_rank=max_rank,
                                         title="Predicted fill order", id_prefix="pred",
                                         shape=shape),
                  "actual": svg.board(box_size, givens, actual, max_rank=max_rank,
                                      title="This solve's fill order", id_prefix="act",
                                      shape=shape),
                  "legend": svg.legend(max_rank, id_prefix="legend")}
    timeline = evidence.get("timeline") or []
    seconds, last = [], 0
    for t in timeline:
        seconds.append(max(0.0, (t["t_ms"] - last) / 1000.0))
        last = t["t_ms"]
    switch = (evidence.get("switch") or {}).get("from_placement")
    chart = svg.pace_chart(seconds, hard=_hard_steps(timeline), title="Seconds per placement",
                           id_prefix="pace", switch_at=switch - 1 if switch else None)
    signals = sorted(evidence.get("signals") or [], key=lambda s: s["p"])
    needed = evidence.get("hardest_needed")
    if needed and needed.get("technique") not in SINGLES:
        needed = {**needed, "where": f"r{needed['cell'] // cols + 1}c{needed['cell'] % cols + 1}"}
    else:
        needed = None
    ratings = (puzzle or {}).get("ratings") or {}
    replay = {"box_size": box_size, "rows": rows, "cols": cols, "givens": givens,
              # how the replay shows a move's value (None: the value's base-36 digit)
              "values": puzzle_type((puzzle or {}).get("puzzle_type") or DEFAULT_TYPE).symbols,
              "moves": [[t, c, d, bool(n)] for t, c, d, n in moves]}
    decisions = [(s, DECISIONS[s]) for s in REVIEW_STATES if s != row["state"]
                 and not (s == FlagState.OPEN and row["state"] == FlagState.WITHDRAWN)]
    return _render(request, "flag.html", {
        "title": f"Flag {flag_id}", "flag": row, "ev": evidence, "signals": signals,
        "rule": RULES.get(evidence.get("rule") or ""),
        "boards": boards, "chart": chart, "needed": needed, "history": history,
        "decisions": decisions,
        "others": [o for o in others if o["submission_id"] != row["submission_id"]][:20],
        "puzzle": puzzle, "level": ratings.get("level_name"),
        "expected": _expected(ratings), "duration": _mmss(row["duration_ms"]), "mmss": _mmss,
        "when": _when,
        "replay_json": json.dumps(replay).replace("</", "<\\/"), "size": cols})


@page
async def review(request: web.Request, who: Principal) -> web.Response:
    flag_id = _flag_id(request)
    form = request[FORM]
    state = str(form.get("state", ""))
    if state not in REVIEW_STATES:
        raise ValidationError("decision", "choose clear, confirm or reopen", 400)
    note = str(form.get("note", "")).strip() or None
    if note is not None and len(note) > 4000:
        raise ValidationError("note", "at most 4,000 characters", 400)
    if not who.can_review:
        raise ValidationError(None, "you may not review flags", 403)
    history = await record_review(request, who, flag_id, state, note)
    if history is None:
        raise NotFound(f"There is no flag {flag_id}.")
    raise web.HTTPSeeOther(f"/ui/flags/{flag_id}#history")


@page
async def player_page(request: web.Request, who: Principal) -> web.Response:
    portal, player = request.match_info["portal"], request.match_info["player_id"]
    rows = (await read(request, organiser_sql.player_submissions, portal, player)
            if who.sees(portal) else [])
    if not rows:
        raise NotFound(f"There is no player {player!r} of portal {portal!r}.")
    pvals = [r["p_value"] for r in rows if r["p_value"] is not None]
    z = player_z(pvals) if pvals else None
    s = request.app[CTX].settings
    flagged = sum(1 for r in rows if r["flagged"])
    return _render(request, "player.html", {
        "title": f"Player {shown(player)}", "portal": portal, "player": player, "rows": rows,
        "z": z, "threshold": s.scoring_player_z, "flag_count": s.scoring_player_flags,
        "flagged": flagged, "player_flagged": (z is not None and z >= s.scoring_player_z)
        or flagged >= s.scoring_player_flags, "mmss": _mmss, "when": _when})


@page
async def puzzle_page(request: web.Request, who: Principal) -> web.Response:
    pid = request.match_info["id"]
    row = await read(request, puzzle_sql.puzzle_document, pid)
    if row is None or not (row["owner"] is None or who.sees(row["owner"])):
        raise NotFound(f"There is no puzzle {pid!r}.")
    doc = documents.puzzle(row)
    box_size, shape, _, _ = _grid_of(doc, 0)
    givens = grid_facts(doc["puzzle_type"], doc["givens"])[0].tolist()
    board = None
    if doc["predicted_order"]:
        ranks = [r or None for r in _flat(doc["predicted_order"])]
        board = svg.board(box_size, givens, ranks, max_rank=max(1, sum(1 for g in givens
                                                                   if not g)),
                          title="Predicted fill order", id_prefix="pz", shape=shape)
    ratings = doc["ratings"] or {}
    return _render(request, "puzzle.html", {
        "title": f"Puzzle {shown(pid)}", "p": doc, "board": board,
        "level": ratings.get("level_name"),
        "expected": _expected(ratings), "when": _when})


@page
async def search(request: web.Request, who: Principal) -> web.Response:
    text = request.query.get("q", "").strip()
    rows = await read(request, sql.search, who.visible(), text) if text else []
    return _render(request, "search.html", {"title": "Search", "q": text, "rows": rows,
                                            "mmss": _mmss, "when": _when})


# OWASP's CSV injection guidance: a cell a spreadsheet could read as a formula starts
# with one of these (or their fullwidth forms, which spreadsheets take for them) once
# leading blanks are skipped
FORMULA_START = frozenset("=+-@|\uff1d\uff0b\uff0d\uff20\uff5c")


def _blank(ch: str) -> bool:
    """Spaces of every kind, line breaks, controls and invisible format characters."""
    return ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Zs", "Zl", "Zp")


def _cell(value) -> str:
    """A CSV cell a spreadsheet will not run: text whose first character after any
    blanks could start a formula, or that starts with a tab or a line break, gets a
    leading ' (numbers and times are left as they are)."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat()
    text = str(value)
    if isinstance(value, (int, float)):
        return text
    first = next((ch for ch in text if not _blank(ch)), "")
    if first in FORMULA_START or text[:1] in ("\t", "\r", "\n"):
        return "'" + text
    return text


@page
async def export_csv(request: web.Request, who: Principal) -> web.StreamResponse:
    tournament = request.match_info["tournament"]
    rows = await read(request, sql.export, who.visible(), tournament)
    if not rows:
        raise NotFound(f"Tournament {tournament!r} has no flags you can see.")
    out = io.StringIO()
    columns = list(rows[0])
    writer = csv.writer(out)
    writer.writerow(columns)
    for r in rows:
        writer.writerow([_cell(r[c]) for c in columns])
    return web.Response(text=out.getvalue(), content_type="text/csv", headers={
        "Content-Disposition": attachment(f"flags-{tournament}", ".csv")})


@page
async def notifications(request: web.Request, who: Principal) -> web.Response:
    state = _choice(request, "state", ("failed", "pending", "delivered", "any"), "any")
    rows = await read(request, outbox_sql.listing, state=None if state == "any" else state,
                      portals=who.visible(), limit=200)
    return _render(request, "notifications.html", {
        "title": "Notifications", "rows": rows, "state": state, "when": _when,
        "states": ("any", "failed", "pending", "delivered")})


@page
async def redeliver(request: web.Request, who: Principal) -> web.Response:
    event_id = request.match_info["id"]
    if who.role != "admin":
        raise ValidationError(None, "only an admin may redeliver notifications", 403)
    portal = await read(request, outbox_sql.portal_of, event_id)
    if portal is None or not who.sees(portal) or not await write(
            request, outbox_sql.redeliver, event_id, datetime.now(timezone.utc)):
        raise NotFound(f"There is no notification {event_id}.")
    request.app[CTX].notifier.wake()
    raise web.HTTPSeeOther("/ui/notifications?state=pending")


@page
async def not_found(request: web.Request, who: Principal) -> web.Response:
    raise NotFound("There is no such page.")
