"""The organiser console: server-rendered pages at ``/ui/`` for the people who review flags.

Same process and port as the API. Jinja2 templates and the one stylesheet and script ship
in the package; nothing is fetched from elsewhere, and every page is served under a
strict Content-Security-Policy (no inline script or style). Pictures are SVG drawn by
:mod:`.svg`. People sign in with a name and password (``fairgrid user add``); see
:mod:`.sessions`, :mod:`.pages` and the page modules it names.
"""

from __future__ import annotations

from datetime import timezone
from importlib import resources

import aiohttp_jinja2
import jinja2
from aiohttp import web

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")


async def _headers(request: web.Request, response: web.StreamResponse) -> None:
    if request.path.startswith("/ui"):
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"
        if not request.path.startswith("/ui/static/"):
            response.headers["Cache-Control"] = "no-store"


async def _to_console(request: web.Request) -> web.Response:
    raise web.HTTPFound("/ui/")


# the files under static/, served by name only: no path from a request reaches the disk
_STATIC = {f.name: f for f in resources.files(__name__).joinpath("static").iterdir()
           if f.is_file()}


async def _favicon(request: web.Request) -> web.FileResponse:
    return web.FileResponse(_STATIC["favicon.ico"], headers={"Cache-Control": "max-age=86400"})


async def _static(request: web.Request) -> web.StreamResponse:
    from .pages import not_found

    found = _STATIC.get(request.match_info["name"])
    if found is None:
        return await not_found(request)
    return web.FileResponse(found)


def setup(app: web.Application) -> None:
    from ..web.context import CTX
    from ..web.middleware import ERROR_PAGE
    from . import (exports, flags, notifications, overview, pages, players, puzzles, signin,
                   solves)

    from ..text import shown

    env = aiohttp_jinja2.setup(app, loader=jinja2.PackageLoader("fairgrid.daemon.console",
                                                                "templates"),
                               autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["shown"] = shown  # ids where no <bdi> may go (an <option>'s text)
    env.filters["segment"] = pages.segment  # ids in a link's path (urlencode keeps "/")
    env.globals.update(when=pages.when, mmss=pages.mmss, utc=timezone.utc)
    app[pages.CONSOLE] = console = pages.Console(app[CTX].settings)
    app[ERROR_PAGE] = pages.error_page  # what the error middleware answers on /ui/ paths
    app[CTX].on_sign_out.append(console.sessions.end_user)
    app.on_response_prepare.append(_headers)
    r = app.router
    r.add_get("/ui", _to_console)
    r.add_get("/favicon.ico", _favicon)
    r.add_get("/ui/login", signin.login_form)
    r.add_post("/ui/login", signin.login)
    r.add_post("/ui/logout", signin.logout)
    r.add_get("/ui/", overview.overview)
    r.add_get("/ui/flags", flags.flag_queue)
    r.add_get("/ui/flags/{id}", flags.flag_page)
    r.add_post("/ui/flags/review", flags.bulk_review)
    r.add_post("/ui/flags/{id}/review", flags.review)
    players.add_routes(r)
    r.add_get("/ui/players/{portal}/{player_id}", solves.player_page)
    r.add_get("/ui/puzzles", puzzles.puzzle_list)
    r.add_get("/ui/puzzles/{id:.+}", puzzles.puzzle_page)
    r.add_get("/ui/submissions/{portal}/{id}", solves.solve_page)
    r.add_get("/ui/search", solves.search)
    r.add_get("/ui/tournaments/{tournament}/flags.csv", exports.export_csv)
    r.add_get("/ui/notifications", notifications.notifications)
    r.add_post("/ui/notifications/{id}/redeliver", notifications.redeliver)
    r.add_get("/ui/static/{name}", _static)
    r.add_route("*", "/ui/{tail:.*}", pages.unrouted)
