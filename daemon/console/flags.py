"""The flag queue (cards to scan, filters, sorts, bulk decisions), a flag's page with its
review form and its place in the queue, and recording decisions. A flag opened from the
queue carries the queue's filters in its address, so after a decision the next flag of
that queue opens."""

from __future__ import annotations

import hashlib
import hmac
import urllib.parse
from dataclasses import dataclass
from datetime import datetime, timezone

from aiohttp import web

from fairgrid.analytics.evidence import NAMES, rarity, signal_name
from fairgrid.solvers.puzzle_types import DEFAULT_TYPE

from ..errors import Conflict
from ..ingest import ValidationError
from ..states import FLAG_STATES, REVIEW_STATES, FlagState
from ..store.repository import console as sql
from ..store.repository import organiser as organiser_sql
from ..web.auth import Principal
from ..web.context import CTX, read, write
from ..web.organiser import actor_name, record_review
from ..text import ascii_int, same_secret
from .pages import (FORM, SESSION, NotFound, choice, decision, error_page, form_kept, mmss,
                    page, page_number, render)
from .solves import solve_view

PAGE_SIZE = 50
STATES = (FlagState.OPEN.value, FlagState.CLEARED.value, FlagState.CONFIRMED.value,
          FlagState.WITHDRAWN.value, "any")  # the queue's filter, in the order offered
# evidence strength filters: the combined p-value at most
STRENGTHS = {"any": None, "1e-3": 1e-3, "1e-5": 1e-5, "1e-6": 1e-6}
STRENGTH_WORDS = {"any": "any", "1e-3": "below 1 in 1,000", "1e-5": "below 1 in 100,000",
                  "1e-6": "below 1 in a million"}
SORT_WORDS = {"newest": "newest first", "oldest": "oldest first",
              "strongest": "strongest evidence first", "tournament": "by tournament"}
REASONS = ("any", *NAMES, "unforced")
DECISIONS = {FlagState.CLEARED: "Clear (honest)", FlagState.CONFIRMED: "Confirm (cheating)",
             FlagState.OPEN: "Reopen"}
DONE_WORDS = {FlagState.CLEARED: "cleared", FlagState.CONFIRMED: "confirmed",
              FlagState.OPEN: "reopened"}


@dataclass(frozen=True)
class Queue:
    """A queue's filters and order, as the flag list's query string holds them."""

    state: str = FlagState.OPEN.value
    sort: str = "newest"
    strength: str = "any"
    reason: str = "any"
    level: str = ""
    tournament: str = ""
    player: str = ""

    @classmethod
    def of(cls, query) -> Queue:
        level = query.get("level", "") or ""
        if level and ascii_int(level, 4) is None:
            raise ValidationError("level", "must be a level number", 400)
        return cls(state=choice(query, "state", STATES, FlagState.OPEN.value),
                   sort=choice(query, "sort", tuple(sql.SORTS), "newest"),
                   strength=choice(query, "strength", tuple(STRENGTHS), "any"),
                   reason=choice(query, "reason", REASONS, "any"), level=level,
                   tournament=query.get("tournament", "") or "",
                   player=(query.get("player", "") or "").strip())

    def filters(self) -> dict:
        """The repository's keyword arguments."""
        return {"tournament": self.tournament or None,
                "state": None if self.state == "any" else self.state,
                "player": self.player or None, "max_p": STRENGTHS[self.strength],
                "reason": None if self.reason == "any" else self.reason,
                "level": int(self.level) if self.level else None, "sort": self.sort}

    def query(self, **extra) -> str:
        """The query string of this queue (defaults left out), with ``extra``."""
        fields = {k: v for k, v in vars(self).items()
                  if v != getattr(Queue, k, None) and v != ""}
        return urllib.parse.urlencode({**fields, **{k: v for k, v in extra.items()
                                                    if v is not None}})


def age(then: datetime, now: datetime) -> str:
    """How long ago, in the largest unit that fits: "5 min", "3 h", "2 days"."""
    seconds = max(0, int((now - then).total_seconds()))
    for size, unit in ((86400, "day"), (3600, "h"), (60, "min")):
        if seconds >= size:
            n = seconds // size
            return f"{n} {unit}{'s' if unit == 'day' and n != 1 else ''} ago"
    return "just now"


RAISED = "raised by scoring: "


def plain_note(note: str | None) -> str:
    """A history note for people: a flag scoring raised before its notes were in words
    names its signals, which are put in words here."""
    if not note or not note.startswith(RAISED) or ";" in note:
        return note or ""
    return RAISED + "; ".join(signal_name(r.strip()) for r in note[len(RAISED):].split(","))


def standing_words(n: int) -> str:
    return f"{n} flag{'' if n == 1 else 's'} standing"


def card(row: dict, now: datetime) -> dict:
    """What a queue card shows of a flag, in words."""
    kind = row.get("puzzle_type") or DEFAULT_TYPE
    expected = row.get("expected_s")
    return {**row, "strength": rarity(row["p_value"]) if row["p_value"] is not None
            else "not scored",
            "chips": [(r, signal_name(r, kind)) for r in row.get("reasons") or ()],
            "taken": mmss(row["duration_ms"]),
            "expected": mmss(1000 * expected) if expected else None,
            "standing_words": standing_words(row["standing"]),
            "age": age(row["created_at"], now)}


@page
async def flag_queue(request: web.Request, who: Principal) -> web.Response:
    q = Queue.of(request.query)
    page_no = page_number(request.query)
    rows, total = await read(request, sql.flag_queue, who.visible(), **q.filters(),
                             offset=(page_no - 1) * PAGE_SIZE, limit=PAGE_SIZE)
    pages = max(1, -(-total // PAGE_SIZE))
    now = datetime.now(timezone.utc)
    tournaments = await read(request, sql.tournaments, who.visible())
    levels = await read(request, sql.levels, who.visible())
    first = (page_no - 1) * PAGE_SIZE + 1
    return render(request, "flags.html", {
        "title": "Flags", "rows": [card(r, now) for r in rows], "total": total,
        "page": page_no, "pages": pages, "shown_from": first,
        "shown_to": first + len(rows) - 1,
        "prev": "/ui/flags?" + q.query(page=page_no - 1) if page_no > 1 else None,
        "next": "/ui/flags?" + q.query(page=page_no + 1) if page_no < pages else None,
        "beyond": page_no > pages and total > 0, "first_page": "/ui/flags?" + q.query(),
        "tournaments": tournaments, "levels": levels, "f": q, "qs": q.query(),
        "states": STATES, "sorts": SORT_WORDS, "strengths": STRENGTH_WORDS,
        "reasons": [(r, signal_name(r) if r != "any" else "any") for r in REASONS],
        "decided": await _decided(request, who),
        "decisions": [(s, DECISIONS[s]) for s in (FlagState.CLEARED, FlagState.CONFIRMED)],
        "export": (f"/ui/tournaments/{urllib.parse.quote(q.tournament, safe='')}/flags.csv"
                   if q.tournament else None)})


def _bulk_tag(request: web.Request, n: int) -> str:
    """``?bulk=`` for ``n`` flags decided: the count and a tag only this session can
    make, so that a link cannot tell a reviewer that decisions were recorded."""
    key = request[SESSION].csrf.encode()
    return f"{n}-{hmac.new(key, f'bulk {n}'.encode(), hashlib.sha256).hexdigest()[:16]}"


async def _decided(request: web.Request, who: Principal) -> str | None:
    """The notice after a decision: what was recorded (``?decided=ID``, or ``?bulk=``
    as :func:`_bulk_tag` wrote it)."""
    count, _, _ = request.query.get("bulk", "").partition("-")
    n = ascii_int(count, 9)
    if n is not None and request.get(SESSION) is not None and same_secret(
            request.query["bulk"], _bulk_tag(request, n)):
        # the flags the decision changed: one already so changes nothing
        return (f"{n} flag{'' if n == 1 else 's'} decided." if n else
                "Nothing changed: every flag ticked was in that state already.")
    decided = ascii_int(request.query.get("decided"))
    if decided is None:
        return None
    row = await read(request, sql.flag, decided, who.visible())
    if row is None:
        return None
    return f"Flag {row['id']} is {DONE_WORDS.get(row['state'], row['state'])}."


def _flag_id(request: web.Request) -> int:
    flag_id = ascii_int(request.match_info["id"])
    if flag_id is None:
        raise NotFound("There is no such flag.")
    return flag_id


@page
async def flag_page(request: web.Request, who: Principal) -> web.Response:
    return await _flag_page(request, who, _flag_id(request), Queue.of(request.query))


async def _flag_page(request: web.Request, who: Principal, flag_id: int, q: Queue, *,
                     notice: str | None = None, state: str | None = None, note: str = "",
                     status: int = 200) -> web.Response:
    """The flag; with ``notice``, above a decision form holding ``state`` and ``note``
    as the reviewer sent them."""
    row = await read(request, sql.flag, flag_id, who.visible())
    if row is None:
        raise NotFound(f"There is no flag {flag_id}.")
    history = await read(request, sql.history, flag_id)
    before, after = await read(request, sql.neighbours, who.visible(), flag_id, **q.filters())
    decisions = [(s, DECISIONS[s]) for s in REVIEW_STATES if s != row["state"]
                 and not (s == FlagState.OPEN and row["state"] == FlagState.WITHDRAWN)]
    qs = q.query()
    return render(request, "flag.html", {
        "title": f"Flag {flag_id}", "flag": row, "history": history, "decisions": decisions,
        "qs": qs, "queue": "/ui/flags?" + qs,
        "prev_flag": f"/ui/flags/{before}?{qs}" if before else None,
        "next_flag": f"/ui/flags/{after}?{qs}" if after else None,
        "decided": await _decided(request, who), "plain_note": plain_note,
        "notice": notice, "chosen": state, "note": note,
        **await solve_view(request, row)}, status=status)


def seen_state(form, states) -> str | None:
    """The form's ``seen``: the state the page showed (None: a form without it)."""
    seen = str(form.get("seen", "")) or None
    if seen is not None and seen not in states:
        raise ValidationError("seen", "is not a state this page shows: reload the page", 400)
    return seen


def _queue_of_form(form) -> Queue:
    """The queue a decision was made from (the form's ``queue``, its query string)."""
    return Queue.of(dict(urllib.parse.parse_qsl(str(form.get("queue", "")))))


@page
async def review(request: web.Request, who: Principal) -> web.Response:
    """One decision; then the next flag of the queue it came from opens (or the queue,
    at its end)."""
    flag_id = _flag_id(request)
    form = request[FORM]
    q = _queue_of_form(form)
    try:
        state, note = decision(form, who, "flags", note_to_confirm=True)
    except ValidationError as exc:
        return await _flag_page(request, who, flag_id, q, **form_kept(form, exc))
    _, after = await read(request, sql.neighbours, who.visible(), flag_id, **q.filters())
    try:
        history = await record_review(request, who, flag_id, state, note,
                                      seen=seen_state(form, FLAG_STATES))
    except Conflict as exc:
        why = f"{exc} while you read it" if exc.field == "seen" else str(exc)
        return await _flag_page(
            request, who, flag_id, q, state=state, note=note or "", status=409,
            notice=f"Not recorded: {why}. Read it below; your decision and note are kept "
                   "in the form.")
    if history is None:
        raise NotFound(f"There is no flag {flag_id}.")
    target = f"/ui/flags/{after}" if after else "/ui/flags"
    raise web.HTTPSeeOther(f"{target}?{q.query(decided=flag_id)}")


@page
async def bulk_review(request: web.Request, who: Principal) -> web.Response:
    """One decision with one note for the flags ticked in the queue."""
    form = request[FORM]
    state, note = decision(form, who, "flags", note_to_confirm=True)
    q = _queue_of_form(form)  # a bad queue is refused before anything is decided
    # each ticked flag as "id:state", the state the queue showed (or a bare id)
    got = {}
    for v in form.getall("flag", []):
        text, _, seen = str(v).partition(":")
        flag_id = ascii_int(text)
        if flag_id is None or (seen and seen not in FLAG_STATES):
            raise ValidationError("flag", "must be flag ids", 400)
        got[flag_id] = seen or None
    ids = sorted(got)
    if not ids:
        raise ValidationError("flag", "tick the flags to decide", 400)
    try:  # all or none, checked and written in one transaction
        changed: list[int] = []
        dismissed: list[int] = []
        missing = await write(request, organiser_sql.review_many, got, state, note,
                              actor_name(who), datetime.now(timezone.utc), who.visible(),
                              changed, dismissed)
    except Conflict as exc:
        if exc.field != "seen":
            return error_page(request, 409, f"Not recorded, none of them: {exc}.")
        return error_page(request, 409, "Not recorded, none of them: another decision was "
                          f"made while you read the queue ({exc}). Go back, reload "
                          "the queue and decide again.")
    if missing is not None:
        raise NotFound(f"There is no flag {missing}.")
    verdicts = request.app[CTX].scorer.verdicts
    if verdicts is not None and changed:  # the players' verdicts, judged again at once
        await verdicts.after_flag_review(changed, dismissed)
    raise web.HTTPSeeOther(f"/ui/flags?{q.query(bulk=_bulk_tag(request, len(changed)))}")

