"""Webhook bodies: JSON -> a typed solve, or ValidationError naming the field.

The body of ``POST /v1/webhooks/solves`` (see docs/openapi.yaml)::

    {"type": "solve.completed", "portal": "demo", "submission_id": "s-000123",
     "tournament_id": "gp-2026-r7",                      (optional)
     "player_id": "p-42",
     "puzzle": {"id": "gp7-3", "givens": "...",          (givens optional if registered)
                "puzzle_type": "sudoku"},                (optional: sudoku, nurikabe)
     "started_at": "2026-11-21T10:00:00Z",
     "outcome": "finished",                              (optional: abandoned, timed_out)
     "client": {"version": 1, "hidden": [...], ...},     (optional: the page's signals,
                                                          client_block.py)
     "moves": [{"t_ms": 5230, "cell": 12, "digit": 4}, ...]}

``t_ms`` is milliseconds since ``started_at`` and never decreases; ``cell`` is 0-based
row-major; ``digit`` is the move's value in the puzzle's type: 1..size for Sudoku, 1
(river) or 2 (island) for Nurikabe, 0 erasing; a move may carry ``"kind": "note"``
(pencil marks: stored, ignored by scoring). Unknown fields are kept in the raw payload.
Ids hold no control or formatting characters (:mod:`fairgrid.daemon.text`), and the body
nests at most :data:`MAX_DEPTH` levels, so that whatever reads it later (scoring, the
recovery of moves after a crash) can.

This module is the checked path: orjson, then move by move, for the error that names the
field. Well-formed bodies take the fast path first (:mod:`.fast_path`); checks that need
the puzzle (cell and digit ranges, moves on givens) are in :mod:`.replay`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np
import orjson
from numba import njit

from fairgrid.solvers.puzzle_types import TYPES

from ..errors import ValidationError

from ..text import describe, refused_char
from .client_block import check_client

MAX_ID_LENGTH = 200
MAX_DEPTH = 32  # nesting levels of a JSON body, the body itself being the first
EARLIEST_START = datetime(2000, 1, 1, tzinfo=timezone.utc)  # no solve started before it
MAX_GIVENS_LENGTH = 5000  # puzzle text; both the fast and the checked path hold to it
MAX_T_MS = 10 ** 12
MOVE_KINDS = ("place", "note")
OUTCOMES = ("finished", "abandoned", "timed_out")  # what the portal may report
PUZZLE_TYPES = TYPES  # puzzle.puzzle_type, when given
_KINDS = frozenset(MOVE_KINDS)


@dataclass(eq=False, slots=True)  # not frozen: a frozen init costs ~10 us per webhook
class SolveEvent:
    portal: str
    submission_id: str
    tournament_id: str | None
    player_id: str
    puzzle_id: str
    givens: str | None
    started_at: datetime
    t_ms: np.ndarray  # int64
    cell: np.ndarray  # int64
    digit: np.ndarray  # int64
    note: np.ndarray  # bool: kind "note" (a pencil mark), not a placement
    puzzle_type: str | None = None  # as sent (None: not said; the puzzle's own, or Sudoku)
    outcome: str | None = None  # as the portal reports it (OUTCOMES), if it does
    client: dict | None = None  # the portal client's signals, if sent (scoring reads them)


def parse_json(body: bytes) -> dict:
    """The JSON object in ``body``; ValidationError(400) for anything else, (422) naming
    the field that nests deeper than :data:`MAX_DEPTH` levels.

    orjson (3x faster than the standard library here, and strict: no NaN/Infinity, UTF-8
    only, integers to 64 bits bounded) does the parsing; its own depth bound (1,024) is
    deeper than other readers of a stored body cope with, hence :data:`MAX_DEPTH`.
    """
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ValidationError(None, f"body is not valid JSON: {exc}", 400) from None
    if not isinstance(data, dict):
        raise ValidationError(None, "body must be a JSON object", 400)
    if deeper_than(np.frombuffer(body, dtype=np.uint8), MAX_DEPTH):
        raise ValidationError(_deep_field(data), f"nests deeper than the {MAX_DEPTH} "
                              f"levels a body may have (the body itself is the first)")
    return data


@njit(cache=True, nogil=True)
def deeper_than(text, levels):
    """Whether the JSON text (bytes) nests arrays and objects more than ``levels`` deep
    (brackets inside strings do not count)."""
    depth, i = 0, 0
    while i < text.size:
        ch = text[i]
        if ch == 34:  # a string: skip it, escapes included
            i += 1
            while i < text.size and text[i] != 34:
                i += 2 if text[i] == 92 else 1
        elif ch == 91 or ch == 123:
            depth += 1
            if depth > levels:
                return True
        elif ch == 93 or ch == 125:
            depth -= 1
        i += 1
    return False


KEYS_ONCE, KEYS_UNSURE = -1, -2
_MAX_KEYS_COMPARED = 64  # keys of one object compared pairwise; more: the stdlib decides


@njit(cache=True, nogil=True)
def repeated_key(text):
    """The offset of the first key a JSON object of ``text`` (valid JSON) names twice;
    ``KEYS_ONCE`` when none does, ``KEYS_UNSURE`` when this scan cannot tell (an escape
    in a key, nesting past 64 levels, an object with many keys)."""
    first = np.empty(64, dtype=np.int64)       # per open container: its first key's slot
    starts = np.empty(text.size // 3 + 1, dtype=np.int64)  # a key takes >= 3 bytes
    stops = np.empty_like(starts)
    depth, nkeys, i = 0, 0, 0
    while i < text.size:
        ch = text[i]
        if ch == 34:
            start, escaped = i + 1, False
            i += 1
            while i < text.size and text[i] != 34:
                if text[i] == 92:
                    escaped = True
                    i += 1
                i += 1
            stop = i
            j = i + 1
            while j < text.size and (text[j] == 32 or text[j] == 9 or text[j] == 10
                                     or text[j] == 13):
                j += 1
            if j < text.size and text[j] == 58:  # a string before a colon is a key
                if escaped or nkeys - first[depth - 1] >= _MAX_KEYS_COMPARED:
                    return KEYS_UNSURE
                for k in range(first[depth - 1], nkeys):
                    if stops[k] - starts[k] == stop - start:
                        same = True
                        for m in range(stop - start):
                            if text[starts[k] + m] != text[start + m]:
                                same = False
                                break
                        if same:
                            return start
                starts[nkeys], stops[nkeys] = start, stop
                nkeys += 1
        elif ch == 91 or ch == 123:
            if depth == first.size:
                return KEYS_UNSURE
            first[depth] = nkeys
            depth += 1
        elif ch == 93 or ch == 125:
            depth -= 1
            nkeys = first[depth]  # the closed object's keys are no one's now
        i += 1
    return KEYS_ONCE


def check_keys_once(body: bytes) -> None:
    """ValidationError (400) naming a key some object of ``body`` (valid JSON) gives
    twice: which value counts differs between readers (orjson and msgspec keep the last,
    others the first), so a body that names one twice means nothing certain."""
    at = repeated_key(np.frombuffer(body, dtype=np.uint8))
    if at == KEYS_ONCE:
        return
    if at == KEYS_UNSURE:
        json.loads(body, object_pairs_hook=_once)
        return
    _twice(body[at:body.index(b'"', at)].decode("utf-8"))


def _once(pairs: list[tuple[str, object]]) -> None:
    """``object_pairs_hook``: refuse an object that names a key twice."""
    seen = set()
    for key, _ in pairs:
        if key in seen:
            _twice(key)
        seen.add(key)


def _twice(key: str):
    raise ValidationError(key, "is given twice in one object: which would count is no "
                          "one's guess to make", 400)


def _nests(value, levels: int) -> bool:
    """Whether a parsed JSON value nests more than ``levels`` levels (a scalar: none)."""
    if not isinstance(value, (dict, list)):
        return False
    if levels <= 0:
        return True
    return any(_nests(v, levels - 1) for v in (value.values() if isinstance(value, dict)
                                                else value))


def _deep_field(data: dict) -> str | None:
    """The field of a body that nests too deep: a top-level key, or a move's
    (``moves[3].x``). Only asked of bodies that do, so its cost is theirs."""
    for key, value in data.items():
        if not _nests(value, MAX_DEPTH - 1):
            continue
        if key == "moves" and isinstance(value, list):
            for i, move in enumerate(value):
                for name, item in (move.items() if isinstance(move, dict) else ()):
                    if _nests(item, MAX_DEPTH - 3):
                        return f"moves[{i}].{name}"
                if _nests(move, MAX_DEPTH - 2):
                    return f"moves[{i}]"
        return key
    return None


DOT_IDS = (".", "..")  # a path segment a browser resolves: a link to them leads elsewhere


def check_id(value: str, field: str, status: int = 422) -> None:
    """ValidationError naming ``field`` when an id holds a character ids may not hold
    (control and formatting characters: :mod:`fairgrid.daemon.text`) or is ``.`` or
    ``..``, which no link can name: browsers resolve them even escaped (``%2e%2e``)."""
    if value in DOT_IDS:
        raise ValidationError(field, f"must not be {value!r} (a link to it would lead "
                                     "to another page)", status)
    one_line(value, field, status)


def one_line(value: str, field: str, status: int = 422) -> None:
    """ValidationError naming ``field`` when a name shown in the console and the history
    (a review's actor, a token's label) holds a control or formatting character: a
    U+202E or a newline there changes what a reader sees around it."""
    ch = refused_char(value)
    if ch is not None:
        raise ValidationError(field, f"must not hold control or formatting characters "
                                     f"(it holds {describe(ch)})", status)


def parse_time(text, field: str, status: int = 422) -> datetime:
    """An ISO 8601 time with a zone (``Z`` allowed); ValidationError naming ``field``."""
    if not isinstance(text, str):
        raise ValidationError(field, "must be an ISO 8601 time with a zone", status)
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValidationError(field, "must be an ISO 8601 time with a zone", status) from None
    if value.tzinfo is None:
        raise ValidationError(field, "must include a time zone (e.g. Z)", status)
    return value


def _string(obj: dict, key: str, where: str, required: bool = True) -> str | None:
    value = obj.get(key)
    if value is None:
        if required:
            raise ValidationError(where + key, "is required")
        return None
    if not isinstance(value, str) or not value:
        raise ValidationError(where + key, "must be a non-empty string")
    if len(value) > MAX_ID_LENGTH:
        raise ValidationError(where + key, f"must be at most {MAX_ID_LENGTH} characters")
    check_id(value, where + key)
    return value


def _int(value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValidationError(where, "must be an integer")
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise ValidationError(where, "must be an integer")
        value = int(value)
    return value


def _moves_fast(moves: list):
    """The move arrays when every move is well-formed (one pass, no per-field errors);
    None when anything needs the checked path for a precise error."""
    # set(map(type, ...)) checks every element at C speed (bool is not int here)
    try:
        if moves and set(map(type, moves)) != {dict}:
            return None
        t = [m["t_ms"] for m in moves]
        c = [m["cell"] for m in moves]
        d = [m["digit"] for m in moves]
        k = [m.get("kind", "place") for m in moves]
    except KeyError:
        return None
    if moves and (set(map(type, t)) | set(map(type, c)) | set(map(type, d)) != {int}
                  or set(map(type, k)) != {str} or not set(k) <= _KINDS):
        return None
    try:
        t_ms = np.array(t, dtype=np.int64)
        cell = np.array(c, dtype=np.int64)
        digit = np.array(d, dtype=np.int64)
    except OverflowError:
        return None
    if not well_formed(t_ms, cell, digit):
        return None
    return t_ms, cell, digit, np.array([x == "note" for x in k], dtype=bool)


@njit(cache=True, nogil=True)
def well_formed(t_ms, cell, digit):
    """Times within 0..MAX_T_MS and never decreasing, cells and digits within 32 bits
    (what the checked path demands before any puzzle is looked at)."""
    prev = 0
    for i in range(t_ms.size):
        if t_ms[i] < prev or t_ms[i] > MAX_T_MS:
            return False
        prev = t_ms[i]
        if not (-2 ** 31 <= cell[i] < 2 ** 31 and -2 ** 31 <= digit[i] < 2 ** 31):
            return False
    return True


def _moves_checked(moves: list):
    """The move arrays, checking move by move; ValidationError names the first bad field."""
    n = len(moves)
    t_ms = np.empty(n, dtype=np.int64)
    cell = np.empty(n, dtype=np.int64)
    digit = np.empty(n, dtype=np.int64)
    note = np.empty(n, dtype=bool)
    prev = 0
    for i, move in enumerate(moves):
        where = f"moves[{i}]"
        if not isinstance(move, dict):
            raise ValidationError(where, "must be an object")
        for key in ("t_ms", "cell", "digit"):
            if key not in move:
                raise ValidationError(f"{where}.{key}", "is required")
        t = _int(move["t_ms"], f"{where}.t_ms")
        if t < 0 or t > MAX_T_MS:
            raise ValidationError(f"{where}.t_ms", "must be between 0 and 10^12")
        if t < prev:
            raise ValidationError(f"{where}.t_ms", f"goes backwards ({t} after {prev})")
        prev = t
        t_ms[i] = t
        cell[i] = _small_int(move["cell"], f"{where}.cell")
        digit[i] = _small_int(move["digit"], f"{where}.digit")
        k = move.get("kind", "place")
        if k not in MOVE_KINDS:
            raise ValidationError(f"{where}.kind", f"must be one of {', '.join(MOVE_KINDS)}")
        note[i] = k == "note"
    return t_ms, cell, digit, note


def _small_int(value, where: str) -> int:
    value = _int(value, where)
    if not -(2 ** 31) <= value < 2 ** 31:
        raise ValidationError(where, f"is out of range: {value}")
    return value


def parse_solve(data: dict) -> SolveEvent:
    """Check the shape of a solve.completed body (not yet against its puzzle)."""
    if data.get("type") != "solve.completed":
        raise ValidationError("type", "must be \"solve.completed\"")
    portal = _string(data, "portal", "")
    submission_id = _string(data, "submission_id", "")
    tournament_id = _string(data, "tournament_id", "", required=False)
    player_id = _string(data, "player_id", "")
    puzzle = data.get("puzzle")
    if not isinstance(puzzle, dict):
        raise ValidationError("puzzle", "must be an object with an id")
    puzzle_id = _string(puzzle, "id", "puzzle.")
    givens = puzzle.get("givens")
    if givens is not None and (not isinstance(givens, str)
                               or len(givens) > MAX_GIVENS_LENGTH):
        raise ValidationError("puzzle.givens", "must be puzzle text (see docs/puzzles.md)")
    type_name = puzzle.get("puzzle_type")
    if type_name is not None and (not isinstance(type_name, str) or type_name not in PUZZLE_TYPES):
        raise ValidationError("puzzle.puzzle_type",
                              f"must be one of {', '.join(PUZZLE_TYPES)}, got {type_name!r}")
    started_at = parse_time(data.get("started_at"), "started_at")
    outcome = data.get("outcome")
    if outcome is not None and outcome not in OUTCOMES:
        raise ValidationError("outcome", f"must be one of {', '.join(OUTCOMES)}")
    client = data.get("client")
    if client is not None and not isinstance(client, dict):
        raise ValidationError("client", "must be an object (the portal client's signals)")
    check_client(client)
    moves = data.get("moves")
    if not isinstance(moves, list):
        raise ValidationError("moves", "must be a list")
    columns = _moves_fast(moves) or _moves_checked(moves)
    return SolveEvent(portal, submission_id, tournament_id, player_id, puzzle_id, givens,
                      started_at, *columns, type_name, outcome, client)


def scoring_fields(raw: str) -> tuple[dict | None, str | None]:
    """What scoring reads of a stored body: its ``client`` block and its reported
    ``outcome``, parsed as ingestion parses (:func:`parse_json`: the same parser, the same
    depth bound), so a body ingestion accepted always reads. ValidationError for one
    stored before those bounds that breaks them. A ``client`` that is not an object
    (stored before ingestion refused those) counts as none, as scoring always took it."""
    data = parse_json(raw.encode("utf-8"))
    client, outcome = data.get("client"), data.get("outcome")
    return (client if isinstance(client, dict) else None,
            outcome if isinstance(outcome, str) and outcome in OUTCOMES else None)

