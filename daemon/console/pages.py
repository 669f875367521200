"""What every console page shares: the console's state in the app, the ``page``
decorator (session, CSRF check on POST, HTML errors), rendering, and the formats for
people (times, durations). The pages themselves live in one module per family:
:mod:`.signin`, :mod:`.overview`, :mod:`.flags`, :mod:`.solves`, :mod:`.puzzles`,
:mod:`.exports`, :mod:`.notifications`. Every page reads through the repository with the
signed-in person's portals, so a page of another portal is a 404 exactly as in the API."""

from __future__ import annotations

import functools
import urllib.parse
from datetime import datetime, timezone

import aiohttp_jinja2
from aiohttp import web
from markupsafe import Markup

from ..ingest import ValidationError
from ..settings import proxy_networks
from ..text import ascii_int, same_secret, visible
from ..states import REVIEW_STATES, FlagState
from ..web.auth import Principal
from ..web.context import CTX
from ..web.queries import MAX_NOTE
from .sessions import COOKIE, LoginThrottle, Sessions

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


def segment(value) -> str:
    """``value`` as one path segment of a link: a ``/`` in a portal's id escaped too, so
    that ``p-1/case`` links to that player and not to p-1's case."""
    return urllib.parse.quote(str(value), safe="")


def case_link(portal: str, player: str) -> str:
    """The console page of a player's case."""
    return f"/ui/players/{segment(portal)}/{segment(player)}/case"


def secure(request: web.Request) -> bool:
    return request.secure or request.headers.get("X-Forwarded-Proto", "") == "https"


def render(request, name: str, context: dict, status: int = 200) -> web.Response:
    context.setdefault("who", request.get(WHO))
    context.setdefault("csrf", request[SESSION].csrf if request.get(SESSION) else None)
    return aiohttp_jinja2.render_template(name, request, context, status=status)


def error_page(request, status: int, message: str) -> web.Response:
    return render(request, "error.html", {"status": status, "message": message,
                                           "title": "Not found" if status == 404 else "Error"},
                   status=status)


UNREADABLE_FORM = ("The form could not be read (it is not UTF-8 text, or sends a file, "
                   "which no console form takes). Reload the page and try again.")


async def read_form(request: web.Request):
    """The posted form, or None when it cannot be read: a multipart field that is not
    UTF-8 makes aiohttp raise, which must be a 400, not a 500; and a file (a multipart
    part with a file name) is no text any console form takes, whose str() would be
    stored as a note."""
    try:
        form = await request.post()
    except (UnicodeDecodeError, ValueError):
        return None
    if any(not isinstance(v, str) for v in form.values()):
        return None
    return form


def _back_to(request: web.Request) -> str:
    """Where signing in returns to: the page asked for; for a form sent after the session
    ended (its decision is not recorded), the console page the form was on (its Referer),
    or the overview: a form's address is no page to land on."""
    if request.method in ("GET", "HEAD"):
        return request.path_qs
    ref = urllib.parse.urlsplit(request.headers.get("Referer", ""))
    if ref.path.startswith("/ui/") and ref.netloc in ("", request.host):
        return ref.path + (f"?{ref.query}" if ref.query else "")
    return "/ui/"


def _signed_in(request: web.Request):
    """(session, principal) of the request's console session; (None, None) without one."""
    session = request.app[CONSOLE].sessions.get(request.cookies.get(COOKIE))
    who = session and request.app[CTX].accounts.principal_of(session.user)
    return (session, who) if who is not None else (None, None)


def page(handler):
    """A page for signed-in people: the session, the CSRF check on POST, HTML errors."""
    @functools.wraps(handler)
    async def wrapped(request: web.Request) -> web.StreamResponse:
        session, who = _signed_in(request)
        if who is None:
            # the whole path and query as one value: an "&" in it must not end it
            raise web.HTTPSeeOther("/ui/login?" + urllib.parse.urlencode(
                {"next": _back_to(request)}))
        request[WHO], request[SESSION] = who, session
        if request.method == "POST":
            form = await read_form(request)
            if form is None:
                return error_page(request, 400, UNREADABLE_FORM)
            request[FORM] = form
            if not same_secret(str(form.get("csrf", "")), session.csrf):
                return error_page(request, 403, "This form is out of date or was not sent "
                                   "from the console (no valid CSRF token). Go back, reload "
                                   "the page and try again.")
        try:
            return await handler(request, who)
        except NotFound as exc:
            return error_page(request, 404, str(exc))
        except ValidationError as exc:
            status = exc.status if 400 <= exc.status < 500 else 400
            return error_page(request, status, f"{exc.field}: {exc}" if exc.field
                               else str(exc))
    return wrapped


def choice(query, name: str, allowed, default: str) -> str:
    """A query parameter that must be one of ``allowed``."""
    value = query.get(name, default) or default
    if value not in allowed:
        raise ValidationError(name, f"must be one of {', '.join(allowed)}", 400)
    return value


MAX_PAGE = 100_000   # page x page size must stay a query limit DuckDB takes


def page_number(query) -> int:
    """The ``page`` query parameter: a number from 1 to :data:`MAX_PAGE`."""
    try:
        page_no = ascii_int(query.get("page", "1"), 9)
        if page_no is None or not 1 <= page_no <= MAX_PAGE:
            raise ValueError
    except ValueError:
        raise ValidationError("page", f"must be a page number from 1 to {MAX_PAGE:,}",
                              400) from None
    return page_no


def decision(form, who: Principal, what: str, *,
             note_to_confirm: bool = False) -> tuple[str, str | None]:
    """The decision and note of a review form on ``what`` ("flags", "players") by
    ``who``, who must be allowed to review; with ``note_to_confirm``, confirming cheating
    needs a note (the player may ask why)."""
    state = str(form.get("state", ""))
    if state not in REVIEW_STATES:
        raise ValidationError("decision", "choose clear, confirm or reopen", 400)
    # a browser sends a textarea's line breaks as CRLF, which its own maxlength counts once
    note = str(form.get("note", "")).replace("\r\n", "\n").strip()
    note = note if visible(note) else None  # a note of zero-width spaces says nothing
    if note is not None and len(note) > MAX_NOTE:
        raise ValidationError("note", f"at most {MAX_NOTE:,} characters", 400)
    if note_to_confirm and state == FlagState.CONFIRMED and note is None:
        raise ValidationError("note", "confirming cheating needs a note saying why (the "
                              "player may ask)", 400)
    if not who.can_review:
        raise ValidationError(None, f"you may not review {what}", 403)
    return state, note


def form_kept(form, exc: ValidationError) -> dict:
    """A review form a rule refused, shown again as the reviewer filled it (a note is not
    lost to a rule): the keyword arguments of the page that holds the form. A reviewer
    who may not review (403) is refused, not shown the form again."""
    if exc.status == 403:
        raise exc
    return {"state": str(form.get("state", "")) or None, "note": str(form.get("note", "")),
            "status": 400, "notice": f"Not recorded: {exc.field}: {exc}. Your decision and "
                                     "note are kept in the form."}


def mmss(ms) -> str:
    if ms is None:
        return "–"
    s = int(round(ms / 1000))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def when(value) -> Markup:
    """A stored time for people: UTC in the page, the reader's local time once the
    script runs, the full time on hover. One outside what Python represents (stored
    before ingestion bounded times) arrives as DuckDB's text and is shown as it is."""
    if value is None:
        return Markup("–")
    if not isinstance(value, datetime):
        return Markup.escape(str(value))
    utc = value.astimezone(timezone.utc)
    return Markup('<time datetime="{}" title="{}" data-local>{}</time>').format(
        utc.isoformat(), utc.strftime("%Y-%m-%d %H:%M:%S UTC"),
        utc.strftime("%Y-%m-%d %H:%M UTC"))


@page
async def not_found(request: web.Request, who: Principal) -> web.Response:
    raise NotFound("There is no such page.")


async def unrouted(request: web.Request) -> web.StreamResponse:
    """The console's catch-all: a page's path asked with a method it does not take is a
    405 naming those it takes (once signed in: the sign-in comes first everywhere), any
    other path :func:`not_found`."""
    own = request.match_info.route.resource
    allowed: set[str] = set()
    for resource in request.app.router.resources():
        if resource is not own:
            match, methods = await resource.resolve(request)
            if match is None:
                allowed |= methods
    if allowed and _signed_in(request)[1] is not None:
        raise web.HTTPMethodNotAllowed(request.method, allowed)
    return await not_found(request)
