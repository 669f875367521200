"""Webhook bodies: JSON -> a typed solve, or ValidationError naming the field.

The body of ``POST /v1/webhooks/solves`` (see docs/openapi.yaml)::

    {"type": "solve.completed", "portal": "demo", "submission_id": "s-000123",
     "tournament_id": "gp-2026-r7",                      (optional)
     "player_id": "p-42",
     "puzzle": {"id": "gp7-3", "givens": "..."},         (givens optional if registered)
     "started_at": "2026-11-21T10:00:00Z",
     "moves": [{"t_ms": 5230, "cell": 12, "digit": 4}, ...]}

``t_ms`` is milliseconds since ``started_at`` and never decreases; ``cell`` is 0-based
row-major; ``digit`` is 1..size, or 0 for an erase; a move may carry ``"kind": "note"``
(pencil marks: stored, ignored by scoring). Unknown fields are kept in the raw payload.
Checks that need the puzzle (cell and digit ranges, moves on givens) are in
:func:`check_and_replay`.

Well-formed bodies take a fast path: msgspec decodes the envelope into typed fields and
hands over the moves as raw JSON text, which one compiled pass reads into arrays (~20 us a
webhook, where building ~250 Python objects with a generic parser and reading them back
took ~140 us). Anything the fast path is not sure of (an unknown field outside the moves, a
float where an integer belongs, an escape in a key, a repeated key, a bad value) goes to
the checked path: orjson, then move by move, for the error that names the field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

import msgspec
import numpy as np
import orjson
from numba import njit

MAX_ID_LENGTH = 200
MAX_GIVENS_LENGTH = 5000  # puzzle text; both the fast and the checked path hold to it
MAX_T_MS = 10 ** 12
MOVE_KINDS = ("place", "note")
_KINDS = frozenset(MOVE_KINDS)


class ValidationError(ValueError):
    """A malformed (400) or invalid (422) body; ``field`` says where, e.g. moves[17].cell."""

    def __init__(self, field: str | None, message: str, status: int = 422):
        super().__init__(message)
        self.field = field
        self.status = status


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


def parse_json(body: bytes) -> dict:
    """The JSON object in ``body``; ValidationError(400) for anything else.

    orjson (3x faster than the standard library here, and strict: no NaN/Infinity, UTF-8
    only, nesting depth and integers to 64 bits bounded) does the parsing.
    """
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ValidationError(None, f"body is not valid JSON: {exc}", 400) from None
    if not isinstance(data, dict):
        raise ValidationError(None, "body must be a JSON object", 400)
    return data


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
    if not _well_formed(t_ms, cell, digit):
        return None
    return t_ms, cell, digit, np.array([x == "note" for x in k], dtype=bool)


@njit(cache=True, nogil=True)
def _well_formed(t_ms, cell, digit):
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
    started_at = parse_time(data.get("started_at"), "started_at")
    moves = data.get("moves")
    if not isinstance(moves, list):
        raise ValidationError("moves", "must be a list")
    columns = _moves_fast(moves) or _moves_checked(moves)
    return SolveEvent(portal, submission_id, tournament_id, player_id, puzzle_id, givens,
                      started_at, *columns)


def parse_body(body: bytes) -> SolveEvent:
    """The solve in a webhook body (not yet checked against its puzzle); ValidationError
    (400 or 422) naming the field otherwise."""
    return _parse_fast(body) or parse_solve(parse_json(body))


class _Puzzle(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    givens: str | None = None


class _Envelope(msgspec.Struct, forbid_unknown_fields=True):
    """A solve.completed body with no unknown fields (those take the checked path, which
    keeps them in the raw payload all the same). ``moves`` stays JSON text: msgspec checks
    its syntax, :func:`_scan_moves` reads it."""
    type: str
    portal: str
    submission_id: str
    player_id: str
    puzzle: _Puzzle
    started_at: str
    moves: msgspec.Raw
    tournament_id: str | None = None


_ENVELOPE = msgspec.json.Decoder(_Envelope)


def _id_ok(value: str | None) -> bool:
    return value is not None and 0 < len(value) <= MAX_ID_LENGTH


def _parse_fast(body: bytes) -> SolveEvent | None:
    """The SolveEvent of a well-formed body, exactly as :func:`parse_solve` builds it;
    None whenever the checked path must decide (it then finds the error, if any)."""
    try:
        env = _ENVELOPE.decode(body)
    except (msgspec.DecodeError, ValueError):  # a ValueError: bad UTF-8 in a string
        return None
    if not body.isascii():  # msgspec skips over the moves' strings: make sure of UTF-8
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return None
    puzzle = env.puzzle
    if (env.type != "solve.completed" or not _id_ok(env.portal)
            or not _id_ok(env.submission_id) or not _id_ok(env.player_id)
            or not _id_ok(puzzle.id)
            or not (env.tournament_id is None or _id_ok(env.tournament_id))
            or not (puzzle.givens is None or len(puzzle.givens) <= MAX_GIVENS_LENGTH)):
        return None
    try:
        started_at = parse_time(env.started_at, "started_at")
    except ValidationError:
        return None
    text = np.frombuffer(env.moves, dtype=np.uint8)
    cols = np.empty((3, text.size // 20 + 1), dtype=np.int64)  # a move takes >= 20 bytes
    note = np.empty(cols.shape[1], dtype=np.bool_)
    n = _scan_moves(text, cols, note)
    if n < 0:
        return None
    t_ms, cell, digit = cols[0, :n], cols[1, :n], cols[2, :n]
    if not _well_formed(t_ms, cell, digit):
        return None
    return SolveEvent(env.portal, env.submission_id, env.tournament_id, env.player_id,
                      puzzle.id, puzzle.givens, started_at, t_ms, cell, digit, note[:n])


# the bytes the move scanner looks for
_SPACE, _TAB, _LF, _CR = 32, 9, 10, 13
_QUOTE, _BACKSLASH, _COLON, _COMMA = 34, 92, 58, 44
_LBRACKET, _RBRACKET, _LBRACE, _RBRACE = 91, 93, 123, 125
_MINUS, _PLUS, _ZERO, _NINE, _DOT, _E, _UPPER_E = 45, 43, 48, 57, 46, 101, 69
_LOWER_A, _LOWER_Z = 97, 122
_T_MS, _CELL, _DIGIT, _KIND = (np.frombuffer(k, dtype=np.uint8).copy()
                               for k in (b"t_ms", b"cell", b"digit", b"kind"))
_NOTE, _PLACE = (np.frombuffer(k, dtype=np.uint8).copy() for k in (b"note", b"place"))
_UNSURE = -1


@njit(cache=True, nogil=True)
def _skip_space(text, i):
    while i < text.size and (text[i] == _SPACE or text[i] == _TAB or text[i] == _LF
                             or text[i] == _CR):
        i += 1
    return i


@njit(cache=True, nogil=True)
def _equals(text, start, stop, word):
    if stop - start != word.size:
        return False
    for k in range(word.size):
        if text[start + k] != word[k]:
            return False
    return True


@njit(cache=True, nogil=True)
def _end_of_string(text, i, escapes):
    """The index after the string that opens at ``text[i]`` (a quote); -1 when it holds
    a backslash and ``escapes`` is False, or never ends."""
    i += 1
    while i < text.size:
        ch = text[i]
        if ch == _QUOTE:
            return i + 1
        if ch == _BACKSLASH:
            if not escapes:
                return _UNSURE
            i += 1
        i += 1
    return _UNSURE


@njit(cache=True, nogil=True)
def _integer(text, i):
    """(value, index after it) of the JSON integer at ``text[i]``; index -1 for anything
    else (a fraction, an exponent, more than 18 digits, not a number)."""
    negative = i < text.size and text[i] == _MINUS
    if negative:
        i += 1
    start, value = i, 0
    while i < text.size and _ZERO <= text[i] <= _NINE:
        value = value * 10 + (text[i] - _ZERO)
        i += 1
    if i == start or i - start > 18:
        return 0, _UNSURE
    if i < text.size and (text[i] == _DOT or text[i] == _E or text[i] == _UPPER_E):
        return 0, _UNSURE
    return (-value if negative else value), i


@njit(cache=True, nogil=True)
def _end_of_number(text, i):
    """The index after the JSON number at ``text[i]``; -1 for one that might not fit a
    double (orjson rejects those): more than 100 characters, or a 3-digit exponent."""
    start, exponent = i, -1
    while i < text.size:
        ch = text[i]
        if ch == _E or ch == _UPPER_E:
            exponent = 0
        elif _ZERO <= ch <= _NINE:
            if exponent >= 0:
                exponent += 1
        elif ch != _MINUS and ch != _PLUS and ch != _DOT:
            break
        i += 1
    if i - start > 100 or exponent > 2:
        return _UNSURE
    return i


@njit(cache=True, nogil=True)
def _skip_value(text, i):
    """The index after the JSON value at ``text[i]`` (msgspec has checked the syntax);
    -1 when it holds a number that might not fit a double (the checked path decides)."""
    depth = 0
    while i < text.size:
        ch = text[i]
        if ch == _QUOTE:
            i = _end_of_string(text, i, True)
            if i < 0:
                return _UNSURE
        elif ch == _MINUS or _ZERO <= ch <= _NINE:
            i = _end_of_number(text, i)
            if i < 0:
                return _UNSURE
        elif ch == _LBRACKET or ch == _LBRACE:
            depth += 1
            i += 1
        elif ch == _RBRACKET or ch == _RBRACE:
            depth -= 1
            i += 1
        elif _LOWER_A <= ch <= _LOWER_Z:  # true, false, null
            while i < text.size and _LOWER_A <= text[i] <= _LOWER_Z:
                i += 1
        else:  # white space, commas, colons
            i += 1
        if depth == 0:
            return i
    return _UNSURE


@njit(cache=True, nogil=True)
def _scan_moves(text, cols, note):
    """Read a JSON array of moves into ``cols`` (t_ms, cell, digit rows) and ``note``; the
    number of moves, or -1 when the checked path must decide: not an array of objects, a
    required field missing or repeated, a value that is not an integer (or "place" /
    "note" for kind), an escape in a key or kind. Unknown fields are skipped (unless they
    hold a number that might not fit a double)."""
    i = _skip_space(text, 0)
    if i >= text.size or text[i] != _LBRACKET:
        return _UNSURE
    i = _skip_space(text, i + 1)
    n = 0
    if i < text.size and text[i] == _RBRACKET:
        return 0
    while True:
        if i >= text.size or text[i] != _LBRACE or n >= note.size:
            return _UNSURE
        i = _skip_space(text, i + 1)
        seen = 0
        t = c = d = 0
        is_note = False
        if i < text.size and text[i] == _RBRACE:
            return _UNSURE  # {} lacks the required fields
        while True:
            if i >= text.size or text[i] != _QUOTE:
                return _UNSURE
            key_end = _end_of_string(text, i, False)
            if key_end < 0:
                return _UNSURE
            key_start, key_stop = i + 1, key_end - 1
            i = _skip_space(text, key_end)
            if i >= text.size or text[i] != _COLON:
                return _UNSURE
            i = _skip_space(text, i + 1)
            field = 0
            if _equals(text, key_start, key_stop, _T_MS):
                field = 1
            elif _equals(text, key_start, key_stop, _CELL):
                field = 2
            elif _equals(text, key_start, key_stop, _DIGIT):
                field = 4
            elif _equals(text, key_start, key_stop, _KIND):
                field = 8
            if field & seen:
                return _UNSURE  # a repeated key: the checked path keeps the last
            seen |= field
            if field == 0:
                i = _skip_value(text, i)
            elif field == 8:
                if i >= text.size or text[i] != _QUOTE:
                    return _UNSURE
                end = _end_of_string(text, i, False)
                if end < 0:
                    return _UNSURE
                if _equals(text, i + 1, end - 1, _NOTE):
                    is_note = True
                elif not _equals(text, i + 1, end - 1, _PLACE):
                    return _UNSURE
                i = end
            else:
                value, i = _integer(text, i)
                if field == 1:
                    t = value
                elif field == 2:
                    c = value
                else:
                    d = value
            if i < 0:
                return _UNSURE
            i = _skip_space(text, i)
            if i < text.size and text[i] == _COMMA:
                i = _skip_space(text, i + 1)
                continue
            if i < text.size and text[i] == _RBRACE:
                break
            return _UNSURE
        if seen & 7 != 7:
            return _UNSURE
        cols[0, n], cols[1, n], cols[2, n] = t, c, d
        note[n] = is_note
        n += 1
        i = _skip_space(text, i + 1)
        if i < text.size and text[i] == _COMMA:
            i = _skip_space(text, i + 1)
            continue
        if i < text.size and text[i] == _RBRACKET:
            return n
        return _UNSURE


def same_content(a: str, b: str) -> bool:
    """Whether two webhook bodies carry the same submission: equal as canonical JSON
    (sorted keys, no white space), which is what an identical resubmission means. Only
    resubmissions of a stored id ask this, so it is not on every webhook's path."""
    if a == b:
        return True
    try:
        return (orjson.dumps(orjson.loads(a), option=orjson.OPT_SORT_KEYS)
                == orjson.dumps(orjson.loads(b), option=orjson.OPT_SORT_KEYS))
    except orjson.JSONDecodeError:
        return False


def check_and_replay(event: SolveEvent, givens: np.ndarray, solution: np.ndarray,
                     size: int) -> bool:
    """Check the moves against the puzzle (cell and digit ranges, no move on a given;
    ValidationError names the first bad move) and say whether replaying the placements
    and erasures (notes ignored) ends in ``solution``."""
    problem, i, complete = _replay(event.cell, event.digit, event.note, givens, solution, size)
    if problem == _OK:
        return complete
    c, d = int(event.cell[i]), int(event.digit[i])
    if problem == _BAD_CELL:
        raise ValidationError(f"moves[{i}].cell", f"must be 0..{givens.size - 1}, got {c}")
    if problem == _BAD_DIGIT:
        raise ValidationError(f"moves[{i}].digit", f"must be 0..{size} (0 erases), got {d}")
    raise ValidationError(f"moves[{i}].cell", f"cell {c} is a given")


_OK, _BAD_CELL, _BAD_DIGIT, _ON_GIVEN = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def _replay(cell, digit, note, givens, solution, size):
    """(problem, index of the first bad move, complete): one pass over the moves (numpy
    did it in ~15 array operations, ~35 us a webhook; this takes ~1 us)."""
    ncells = givens.size
    grid = givens.astype(np.int64)
    for i in range(cell.size):
        c = cell[i]
        if c < 0 or c >= ncells:
            return _BAD_CELL, i, False
        if digit[i] < 0 or digit[i] > size:
            return _BAD_DIGIT, i, False
        if givens[c] != 0:
            return _ON_GIVEN, i, False
        if not note[i]:
            grid[c] = digit[i]
    return _OK, -1, (grid == solution).all()


def warm_up() -> None:
    """Load (or compile, the first time) the compiled checks, so that the first webhook
    does not wait for them."""
    _scan_moves(np.frombuffer(b'[{"t_ms": 0, "cell": 0, "digit": 0, "x": [1, "a"]}]',
                              dtype=np.uint8), np.empty((3, 4), dtype=np.int64),
                np.empty(4, dtype=np.bool_))
    _well_formed(*[np.zeros(1, dtype=np.int64)] * 3)
    _replay(np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=bool),
            np.zeros(4, dtype=np.int8), np.zeros(4, dtype=np.int64), 4)
