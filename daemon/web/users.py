"""People and their tokens (admin routes; ``fairgrid user`` calls them).

``GET /v1/users``, ``POST /v1/users`` ``{"name", "role", "portals", "all_portals",
"password"}``, ``PATCH /v1/users/{name}`` (role, portals, all_portals, password,
disabled), ``POST /v1/users/{name}/tokens`` ``{"label"}`` (the token is in the answer,
once), and ``GET /v1/me`` (any caller: who the server takes you for).
"""

from __future__ import annotations

from aiohttp import web

from ..documents import iso
from ..ingest import ValidationError
from ..ingest.solve import one_line
from .auth import NAME, ROLES, check_password
from .tokens import require_token
from .context import CTX
from .responses import error, json_body, json_response, known_query

USER_FIELDS = frozenset({"name", "role", "portals", "all_portals", "password"})
CHANGE_FIELDS = frozenset({"role", "portals", "all_portals", "password", "disabled"})


def _user_doc(user: dict) -> dict:
    return {"name": user["name"], "role": user["role"], "portals": user["portals"],
            "all_portals": user["role"] == "admin" or user["all_portals"],
            "disabled": user["disabled"], "has_password": bool(user["password_hash"]),
            "created_at": iso(user["created_at"]), "changed_at": iso(user["changed_at"])}


async def _body(request: web.Request, allowed: frozenset) -> dict:
    return await json_body(request, fields=allowed)


def _checked(request: web.Request, body: dict) -> dict:
    """The fields of a user body, validated (422 naming the first bad one)."""
    out = {}
    if "role" in body:
        if body["role"] not in ROLES:
            raise ValidationError("role", f"must be one of {', '.join(ROLES)}", 422)
        out["role"] = body["role"]
    if "portals" in body:
        portals = body["portals"]
        ctx = request.app[CTX]
        if not isinstance(portals, list) or not all(isinstance(p, str) for p in portals):
            raise ValidationError("portals", "must be a list of portal names", 422)
        if not set(portals) <= set(ctx.settings.portals):
            ctx.secrets.reload()  # a portal added since the last look is known at once
        known = ctx.settings.portals
        for p in portals:
            if p not in known:
                raise ValidationError("portals", f"no portal {p!r} (known: "
                                      f"{', '.join(sorted(known)) or 'none'})", 422)
        out["portals"] = sorted(set(portals))
    if "all_portals" in body:
        if not isinstance(body["all_portals"], bool):
            raise ValidationError("all_portals", "must be true or false", 422)
        if body["all_portals"] and out.get("portals"):
            raise ValidationError("all_portals", "every portal, or the portals listed: "
                                  "not both", 422)
        out["all_portals"] = body["all_portals"]
    if "password" in body:
        try:
            out["password"] = check_password(body["password"])
        except ValueError as exc:
            raise ValidationError("password", str(exc), 422) from None
    if "disabled" in body:
        if not isinstance(body["disabled"], bool):
            raise ValidationError("disabled", "must be true or false", 422)
        out["disabled"] = body["disabled"]
    return out


def _scope(fields: dict, current: dict | None) -> dict:
    """``fields`` with the portals the person will see settled. A body that names
    ``portals`` or ``all_portals`` sets the scope as a whole (the list, or every portal);
    otherwise an organiser keeps theirs, a new organiser and an admin made an organiser
    see no portal until granted some (fail closed), and an admin sees every portal."""
    role = fields.get("role") or current["role"]
    if fields.keys() & {"portals", "all_portals"}:
        every = fields.get("all_portals", False)
        portals = [] if every else fields.get("portals", [])
    elif current is not None and current["role"] == role:
        portals, every = current["portals"], current["all_portals"]
    else:
        portals, every = [], False
    if role == "admin":
        if portals:
            raise ValidationError("portals", "an admin sees every portal; scope organisers "
                                  "instead", 422)
        every = True
    return {**fields, "portals": portals, "all_portals": every}


async def get_users(request: web.Request) -> web.Response:
    require_token(request, admin=True)
    known_query(request)
    return json_response({"users": [_user_doc(u) for u in request.app[CTX].accounts.users()]})


async def post_user(request: web.Request) -> web.Response:
    require_token(request, admin=True)
    known_query(request)
    body = await _body(request, USER_FIELDS)
    name = body.get("name")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ValidationError("name", "must be 1 to 64 letters, digits, '.', '_', '@' or "
                              "'-', starting with a letter or digit", 422)
    if "role" not in body:
        raise ValidationError("role", f"is required (one of {', '.join(ROLES)})", 422)
    fields = _scope(_checked(request, body), None)
    accounts = request.app[CTX].accounts
    if not await accounts.add(name, fields["role"], fields["portals"], fields["all_portals"],
                              fields.get("password")):
        return error(409, f"user {name!r} exists, or one whose name differs only in letter "
                          "case", "name")
    return json_response(_user_doc(accounts.user(name)), status=201)


async def patch_user(request: web.Request) -> web.Response:
    require_token(request, admin=True)
    known_query(request)
    name = request.match_info["name"]
    fields = _checked(request, await _body(request, CHANGE_FIELDS))
    accounts = request.app[CTX].accounts
    current = accounts.user(name)
    if current is not None and fields.keys() & {"role", "portals", "all_portals"}:
        fields = _scope(fields, current)
    if not await accounts.change(name, fields):
        return error(404, f"no user {name!r}")
    if fields.get("disabled") or "password" in fields:
        for sign_out in request.app[CTX].on_sign_out:
            sign_out(name)
    return json_response(_user_doc(accounts.user(name)))


async def post_token(request: web.Request) -> web.Response:
    require_token(request, admin=True)
    known_query(request)
    name = request.match_info["name"]
    body = await _body(request, frozenset({"label"}))
    label = body.get("label")
    if label is not None and (not isinstance(label, str) or len(label) > 200):
        raise ValidationError("label", "must be a string of at most 200 characters", 422)
    if label is not None:
        one_line(label, "label")
    token = await request.app[CTX].accounts.new_token(name, label)
    if token is None:
        return error(404, f"no enabled user {name!r}")
    return json_response({"user": name, "label": label, "token": token}, status=201)


async def get_me(request: web.Request) -> web.Response:
    who = require_token(request, admin=False)
    known_query(request)
    return json_response({"name": who.name, "role": who.role, "person": who.person,
                          "portals": who.visible()})
