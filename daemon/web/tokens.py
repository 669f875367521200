"""Who calls a route: the bearer token of a request, as a :class:`~.auth.Principal`."""

from __future__ import annotations

from aiohttp import web

from .auth import AuthError, Principal
from .context import CTX


def require_token(request: web.Request, *, admin: bool) -> Principal:
    """Who calls, from ``Authorization: Bearer <token>`` (a service token from the config
    or a person's API token): 401 without a known token, 403 for an organiser on an admin
    route."""
    ctx = request.app[CTX]
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthError("missing bearer token")
    who = ctx.accounts.from_token(token.strip(), ctx.settings)
    if who is None and ctx.secrets.reload():  # a token added since the last look?
        who = ctx.accounts.from_token(token.strip(), ctx.settings)
    if who is None:
        raise AuthError("unknown token")
    if admin and who.role != "admin":
        raise AuthError("this route needs an admin; an organiser is not enough", 403)
    return who
