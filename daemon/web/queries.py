"""What the organiser routes read from a request, checked in one place: query parameters
(one of a set of states, a number within bounds, a time), the page of rows asked for with
the cursor of the next, and a person's decision in a review's body (on a flag or on a
player's verdict)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Iterable

from aiohttp import web

from ..ingest import ValidationError, parse_time
from ..text import ascii_int
from ..states import REVIEW_STATES
from .auth import AuthError, Principal
from .responses import cursor, json_body, known_query, read_cursor
from .tokens import require_token

MAX_LIMIT = 500
MAX_NOTE = 4000
# query parameters renamed (docs/architecture.md#glossary): the old name still answers
QUERY_ALIASES = {"min_anomaly": "min_score"}


def query_state(request: web.Request, states: Iterable[str]) -> str | None:
    """The ``state`` asked for (None: every state); a 400 for one not in ``states``."""
    state = request.query.get("state")
    if state is not None and state not in states:
        raise ValidationError("state", f"must be one of {', '.join(states)}", 400)
    return state


def query_number(request: web.Request, name: str, convert, default, lo, hi):
    text = request.query.get(name)
    if name in QUERY_ALIASES and text is not None \
            and QUERY_ALIASES[name] in request.query:
        # which of the two would count is no one's guess to make, as for a repeated one
        raise ValidationError(name, f"is the new name of {QUERY_ALIASES[name]}: give one "
                              f"of the two", 400)
    if text is None and name in QUERY_ALIASES:
        name = QUERY_ALIASES[name]
        text = request.query.get(name)
    if text is None:
        return default
    try:
        value = convert(text)
        # int() and float() take "５" and "5_0" too, which nobody typed as a number
        if convert is int and ascii_int(text.lstrip("-"), 18) is None or \
                not text.isascii() or "_" in text or not math.isfinite(value):
            raise ValueError
    except ValueError:
        raise ValidationError(name, f"must be a number, got {text!r}", 400) from None
    if not lo <= value <= hi:
        raise ValidationError(name, f"must be between {lo} and {hi}", 400)
    return value


def query_time(request: web.Request, name: str) -> datetime | None:
    text = request.query.get(name)
    return None if text is None else parse_time(text, name, 400)


def page_limit(request: web.Request) -> int:
    """How many rows a page holds (``limit``, 50 unless asked, at most :data:`MAX_LIMIT`);
    read one more than this to know whether another page follows."""
    return query_number(request, "limit", int, 50, 1, MAX_LIMIT)


@dataclass(frozen=True)
class Listing:
    """What a list route is asked: by whom, which ``state``, a page of how many rows
    (``limit``), from where (``cursor``, read back; None: the first page)."""

    who: Principal
    state: str | None
    limit: int
    cursor: Any


def listing(request: web.Request, known: frozenset, states: Iterable[str],
            read_position: Callable) -> Listing:
    """The checked request of a list route that takes the query parameters ``known``,
    filters by one of ``states`` and pages with a cursor ``read_position`` reads back."""
    who = require_token(request, admin=False)
    known_query(request, known)
    return Listing(who, query_state(request, states), page_limit(request),
                   read_cursor(request, read_position))


def one_page(rows: list, limit: int, position: Callable[[Any], list]) -> tuple[list, str | None]:
    """The first ``limit`` of ``rows`` (read ``limit + 1``) and the cursor of the next
    page (None at the end), holding ``position`` of the last row shown."""
    if len(rows) <= limit:
        return rows, None
    rows = rows[:limit]
    return rows, cursor(position(rows[-1]))


@dataclass(frozen=True)
class Decision:
    """A person's decision in a review's body."""

    who: Principal
    state: str               # one of REVIEW_STATES
    note: str | None
    actor: Any               # as sent: ``organiser.actor_name`` checks it
    # a player's decision: the ``judged_at`` of the verdict it was made on (None: any)
    judged_at: str | None = None
    # the state the reviewer read (None: any): another decision since is a conflict
    seen: str | None = None


async def decision(request: web.Request, seen_states: Iterable[str] = (),
                   fields: frozenset[str] = frozenset({"state", "note", "actor", "seen"})
                   ) -> Decision:
    """``{"state": "cleared"|"confirmed"|"open", "note", "actor", "seen"}`` (and what
    else ``fields`` names: a player's ``judged_at``) from a caller who may review (a
    person's token or an admin service token: 403 otherwise); ``seen`` must be one of
    ``seen_states``; a 422 names a bad or unknown field."""
    who = require_token(request, admin=False)
    if not who.can_review:
        raise AuthError("reviews need a person's token or an admin token; an organiser "
                        "service token only reads", 403)
    known_query(request)
    body = await json_body(request, fields=fields)
    state = body.get("state")
    if state not in REVIEW_STATES:
        raise ValidationError("state", f"must be one of {list(REVIEW_STATES)}", 422)
    note = body.get("note")
    if note is not None and (not isinstance(note, str) or len(note) > MAX_NOTE):
        raise ValidationError("note", f"must be a string of at most {MAX_NOTE:,} characters",
                              422)
    judged_at = body.get("judged_at")
    if judged_at is not None and (not isinstance(judged_at, str) or len(judged_at) > 64):
        raise ValidationError("judged_at", "must be the verdict's judged_at as the API "
                              "gave it", 422)
    seen = body.get("seen")
    if seen is not None and (not isinstance(seen, str) or seen not in seen_states):
        raise ValidationError("seen", f"must be one of {list(seen_states)}: the state the "
                              "decision was made on", 422)
    return Decision(who, state, note, body.get("actor"), judged_at, seen)
