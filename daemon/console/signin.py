"""Signing in and out: the sign-in form with its own CSRF cookie, the throttle, and the
session cookie."""

from __future__ import annotations

import secrets

from aiohttp import web

from ..text import same_secret
from ..web.auth import Principal
from ..web.context import CTX
from .pages import CONSOLE, UNREADABLE_FORM, page, read_form, render, secure
from .sessions import COOKIE, client_address

LOGIN_COOKIE = "fairgrid_login"  # the sign-in form's CSRF token, before any session


def _next(value: str | None) -> str:
    """Only a console path: never an open redirect."""
    if value and value.startswith("/ui/") and not value.startswith("//"):
        return value
    return "/ui/"


async def login_form(request: web.Request, message: str | None = None,
                     status: int = 200) -> web.Response:
    token = secrets.token_urlsafe(24)
    resp = render(request, "login.html", {"title": "Sign in", "login_csrf": token,
                                           "message": message,
                                           "next": _next(request.query.get("next"))},
                   status=status)
    resp.set_cookie(LOGIN_COOKIE, token, httponly=True, samesite="Strict", path="/ui/",
                    secure=secure(request))
    return resp


async def login(request: web.Request) -> web.Response:
    form = await read_form(request)
    if form is None:
        return await login_form(request, UNREADABLE_FORM, 400)
    expected = request.cookies.get(LOGIN_COOKIE, "")
    if not expected or not same_secret(str(form.get("csrf", "")), expected):
        return await login_form(request, "The sign-in form expired; please sign in again.",
                                403)
    name, password = str(form.get("name", "")).strip(), str(form.get("password", ""))
    console = request.app[CONSOLE]
    address = client_address(request.remote, request.headers.getall("X-Forwarded-For", []),
                             console.proxies)
    # no account's name is longer than 64 characters: a longer one is counted (and kept)
    # by its first 65, so that a 1 MiB name costs the throttle no more than a short one
    keys = (f"name:{name.lower()[:65]}", f"addr:{address}")
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
                    secure=secure(request))
    resp.del_cookie(LOGIN_COOKIE, path="/ui/")
    raise resp


@page
async def logout(request: web.Request, who: Principal) -> web.Response:
    request.app[CONSOLE].sessions.end(request.cookies.get(COOKIE))
    resp = web.HTTPSeeOther("/ui/login")
    resp.del_cookie(COOKIE, path="/ui/")
    raise resp


