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
:func:`check_moves`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import orjson

MAX_ID_LENGTH = 200
MOVE_KINDS = ("place", "note")
_KINDS = frozenset(MOVE_KINDS)


class ValidationError(ValueError):
    """A malformed (400) or invalid (422) body; ``field`` says where, e.g. moves[17].cell."""

    def __init__(self, field: str | None, message: str, status: int = 422):
        super().__init__(message)
        self.field = field
        self.status = status


@dataclass(frozen=True, eq=False)
class SolveEvent:
    portal: str
    submission_id: str
    tournament_id: str | None
    player_id: str
    puzzle_id: str
    givens: str | None
    started_at: datetime
    t_ms: np.ndarray
    cell: np.ndarray
    digit: np.ndarray
    kind: np.ndarray
    canonical: bytes  # the payload as canonical JSON (sorted keys): what "identical" means


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
    (None, ...) when anything needs the checked path for a precise error."""
    # set(map(type, ...)) checks every element at C speed (bool is not int here)
    try:
        if moves and set(map(type, moves)) != {dict}:
            return None, None, None, None
        t = [m["t_ms"] for m in moves]
        c = [m["cell"] for m in moves]
        d = [m["digit"] for m in moves]
        k = [m.get("kind", "place") for m in moves]
    except KeyError:
        return None, None, None, None
    if moves and (set(map(type, t)) | set(map(type, c)) | set(map(type, d)) != {int}
                  or set(map(type, k)) != {str} or not set(k) <= _KINDS):
        return None, None, None, None
    try:
        t_ms = np.array(t, dtype=np.int64)
        cell = np.array(c, dtype=np.int64)
        digit = np.array(d, dtype=np.int64)
    except OverflowError:
        return None, None, None, None
    if t_ms.size and (t_ms[0] < 0 or t_ms[-1] > 10 ** 12 or (np.diff(t_ms) < 0).any()):
        return None, None, None, None
    return t_ms, cell, digit, np.array(k, dtype=object)


def _moves_checked(moves: list):
    """The move arrays, checking move by move; ValidationError names the first bad field."""
    n = len(moves)
    t_ms = np.empty(n, dtype=np.int64)
    cell = np.empty(n, dtype=np.int64)
    digit = np.empty(n, dtype=np.int64)
    kind = np.empty(n, dtype=object)
    prev = 0
    for i, move in enumerate(moves):
        where = f"moves[{i}]"
        if not isinstance(move, dict):
            raise ValidationError(where, "must be an object")
        for key in ("t_ms", "cell", "digit"):
            if key not in move:
                raise ValidationError(f"{where}.{key}", "is required")
        t = _int(move["t_ms"], f"{where}.t_ms")
        if t < 0 or t > 10 ** 12:
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
        kind[i] = k
    return t_ms, cell, digit, kind


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
    if givens is not None and (not isinstance(givens, str) or len(givens) > 5000):
        raise ValidationError("puzzle.givens", "must be puzzle text (see docs/puzzles.md)")
    started_at = parse_time(data.get("started_at"), "started_at")
    moves = data.get("moves")
    if not isinstance(moves, list):
        raise ValidationError("moves", "must be a list")
    t_ms, cell, digit, kind = _moves_fast(moves)
    if t_ms is None:
        t_ms, cell, digit, kind = _moves_checked(moves)
    canonical = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    return SolveEvent(portal, submission_id, tournament_id, player_id, puzzle_id, givens,
                      started_at, t_ms, cell, digit, kind, canonical)


def _first(mask: np.ndarray) -> int | None:
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else None


def check_moves(event: SolveEvent, givens: np.ndarray, size: int) -> None:
    """Check the moves against the puzzle: cell and digit ranges, no move on a given."""
    ncells = givens.size
    cell, digit = event.cell, event.digit
    bad_cell = (cell < 0) | (cell >= ncells)
    bad_digit = (digit < 0) | (digit > size)
    on_given = np.zeros(cell.size, dtype=bool)
    on_given[~bad_cell] = givens[cell[~bad_cell]] != 0
    first = [(i, k) for k, i in enumerate((_first(bad_cell), _first(bad_digit),
                                           _first(on_given))) if i is not None]
    if not first:
        return
    i, k = min(first)
    c, d = int(cell[i]), int(digit[i])
    if k == 0:
        raise ValidationError(f"moves[{i}].cell", f"must be 0..{ncells - 1}, got {c}")
    if k == 1:
        raise ValidationError(f"moves[{i}].digit", f"must be 0..{size} (0 erases), got {d}")
    raise ValidationError(f"moves[{i}].cell", f"cell {c} is a given")


def final_grid(event: SolveEvent, givens: np.ndarray) -> np.ndarray:
    """The board after replaying the placements and erasures (notes ignored)."""
    grid = givens.astype(np.int64).copy()
    place = event.kind == "place"
    cells, digits = event.cell[place][::-1], event.digit[place][::-1]
    last_cells, last = np.unique(cells, return_index=True)  # the last move on each cell
    grid[last_cells] = digits[last]
    return grid
