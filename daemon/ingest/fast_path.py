"""The fast path of webhook parsing.

msgspec decodes the envelope into typed fields and hands over the moves as raw JSON text,
which one compiled pass reads into arrays (~20 us a webhook, where building ~250 Python
objects with a generic parser and reading them back took ~140 us); a second compiled pass
makes sure no object names a key twice, which msgspec would take in silence (~9 us for 81
moves). Anything this path is not sure of (an unknown field outside the moves, a float
where an integer belongs, an escape in a key, a key given twice, a bad value, nesting past
:data:`.solve.MAX_DEPTH`, an id with a character ids may not hold) returns None, and the
checked path (:mod:`.solve`) decides, with an error that names the field. No exception
escapes it.
"""

from __future__ import annotations

import msgspec
import numpy as np
import orjson
from numba import njit

from ..text import refused_char
from .client_block import check_client
from .solve import (DOT_IDS, KEYS_ONCE, MAX_DEPTH, MAX_GIVENS_LENGTH, MAX_ID_LENGTH,
                    OUTCOMES, PUZZLE_TYPES, SolveEvent, ValidationError, deeper_than,
                    parse_time, repeated_key, well_formed)

_NO_CLIENT = msgspec.Raw(b"null")  # (msgspec.Raw takes no None: absent reads as null)


class _Puzzle(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    givens: str | None = None
    puzzle_type: str | None = None


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
    outcome: str | None = None
    client: msgspec.Raw = _NO_CLIENT


_ENVELOPE = msgspec.json.Decoder(_Envelope)


def _id_ok(value: str | None) -> bool:
    # isascii() and isprintable() run in C: an ASCII id costs no Python loop
    return (value is not None and 0 < len(value) <= MAX_ID_LENGTH and value not in DOT_IDS
            and (value.isascii() and value.isprintable() or refused_char(value) is None))


def _client(raw: msgspec.Raw):
    """The client block as the checked path reads it: None for none, False when the
    checked path must decide (not an object, nested too deep, or holding a number
    orjson refuses)."""
    text = memoryview(raw)
    if text == b"null":
        return None
    array = np.frombuffer(text, dtype=np.uint8)
    if array.size == 0 or array[0] != _LBRACE or deeper_than(array, MAX_DEPTH - 1):
        return False
    try:
        return orjson.loads(text)  # the checked path's parser: the same values
    except orjson.JSONDecodeError:
        return False


def parse_fast(body: bytes) -> SolveEvent | None:
    """The SolveEvent of a well-formed body, exactly as :func:`parse_solve` builds it;
    None whenever the checked path must decide (it then finds the error, if any)."""
    try:
        env = _ENVELOPE.decode(body)
    except (msgspec.DecodeError, ValueError, RecursionError):
        # a ValueError: bad UTF-8 in a string; a RecursionError: nesting past msgspec's
        # bound, which follows the interpreter's recursion limit
        return None
    if not body.isascii():  # msgspec skips over the moves' strings: make sure of UTF-8
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if repeated_key(np.frombuffer(body, dtype=np.uint8)) != KEYS_ONCE:
        return None  # msgspec keeps a repeated key's last value: the checked path refuses
    puzzle = env.puzzle
    if (env.type != "solve.completed" or not _id_ok(env.portal)
            or not _id_ok(env.submission_id) or not _id_ok(env.player_id)
            or not _id_ok(puzzle.id)
            or not (env.tournament_id is None or _id_ok(env.tournament_id))
            or not (env.outcome is None or env.outcome in OUTCOMES)
            or not (puzzle.givens is None or len(puzzle.givens) <= MAX_GIVENS_LENGTH)
            or not (puzzle.puzzle_type is None or puzzle.puzzle_type in PUZZLE_TYPES)):
        return None
    try:
        started_at = parse_time(env.started_at, "started_at")
    except ValidationError:
        return None
    client = None if env.client is _NO_CLIENT else _client(env.client)
    if client is False or client and "version" in client:
        return None  # a versioned block is checked, and named when wrong, on the other path
    try:
        check_client(client)        # an old portal's block: its paste count
    except ValidationError:
        return None
    text = np.frombuffer(env.moves, dtype=np.uint8)
    cols = np.empty((3, text.size // 20 + 1), dtype=np.int64)  # a move takes >= 20 bytes
    note = np.empty(cols.shape[1], dtype=np.bool_)
    n = _scan_moves(text, cols, note)
    if n < 0:
        return None
    t_ms, cell, digit = cols[0, :n], cols[1, :n], cols[2, :n]
    if not well_formed(t_ms, cell, digit):
        return None
    return SolveEvent(env.portal, env.submission_id, env.tournament_id, env.player_id,
                      puzzle.id, puzzle.givens, started_at, t_ms, cell, digit, note[:n],
                      puzzle.puzzle_type, env.outcome, client)


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
_VALUE_LEVELS = MAX_DEPTH - 3  # a move's value sits under the body, the moves, the move


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
    -1 when it holds a number that might not fit a double, or nests more than
    _VALUE_LEVELS deep (the checked path decides)."""
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
            if depth > _VALUE_LEVELS:
                return _UNSURE
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
                return _UNSURE  # a repeated key: the checked path refuses it
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
