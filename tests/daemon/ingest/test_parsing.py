"""The webhook validator against a plain-Python reading of the rules (docs/openapi.yaml).

The daemon takes a fast path (C-speed type checks, compiled move checks) for well-formed
bodies and a move-by-move path for precise errors; both must agree with this oracle. In
front of both, the webhook's fast path reads a body's JSON text directly; whatever it
returns must be what the checked path makes of the same text.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fairgrid.daemon.ingest.puzzles import PuzzleInfo, check_puzzle
from fairgrid.daemon.ingest import (ValidationError, check_and_replay, parse_body,
                                    parse_json, same_content)
from fairgrid.daemon.ingest.fast_path import parse_fast as _parse_fast
from fairgrid.daemon.ingest.solve import _moves_checked, _moves_fast, parse_solve

from ...fixtures import EASY

GIVENS, ORDER, SOLUTION = check_puzzle(EASY)
INFO = PuzzleInfo("easy", GIVENS, ORDER, SOLUTION)
SIZE = ORDER * ORDER


def oracle(moves: list[dict]) -> tuple[str | None, bool]:
    """(field of the first error or None, whether the log ends in the solution)."""
    prev = 0
    for i, m in enumerate(moves):
        t = m["t_ms"]
        if isinstance(t, bool) or not isinstance(t, (int, float)) or t != int(t):
            return f"moves[{i}].t_ms", False
        if t < 0 or t > 10 ** 12 or t < prev:
            return f"moves[{i}].t_ms", False
        prev = t
        for key in ("cell", "digit"):
            v = m[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v):
                return f"moves[{i}].{key}", False
            if not -(2 ** 31) <= v < 2 ** 31:  # stored as 32-bit at most: a shape error
                return f"moves[{i}].{key}", False
        if m.get("kind", "place") not in ("place", "note"):
            return f"moves[{i}].kind", False
    grid = [0 if ch == "." else int(ch) for ch in GIVENS]
    for i, m in enumerate(moves):
        c, d = int(m["cell"]), int(m["digit"])
        if not 0 <= c < 81:
            return f"moves[{i}].cell", False
        if not 0 <= d <= SIZE:
            return f"moves[{i}].digit", False
        if GIVENS[c] != ".":
            return f"moves[{i}].cell", False
        if m.get("kind", "place") == "place":
            grid[c] = d
    return None, "".join(map(str, grid)) == SOLUTION


def body(moves):
    return {"type": "solve.completed", "portal": "demo", "submission_id": "s-1",
            "player_id": "p-1", "puzzle": {"id": "easy"},
            "started_at": "2026-11-21T10:00:00Z", "moves": moves}


EMPTY = [i for i, ch in enumerate(GIVENS) if ch == "."]
number = st.one_of(st.integers(-2, 90), st.integers(-2, 90).map(float), st.booleans(),
                   st.just(2 ** 40), st.just("3"))


@st.composite
def move_logs(draw):
    """Mostly good logs (the solution in some order, with erasures, notes and wrong digits
    left in, maybe cut short) from a seed, then a few drawn mutations."""
    rng = random.Random(draw(st.integers(0, 2 ** 32)))
    moves, t = [], 0
    for c in rng.sample(EMPTY, len(EMPTY)):
        t += rng.randrange(5000)
        if rng.random() < 0.1:
            moves.append({"t_ms": t, "cell": c, "digit": rng.randrange(SIZE + 1),
                          "kind": "note"})
        if rng.random() < 0.1:  # a wrong digit or an erasure first, sometimes left there
            moves.append({"t_ms": t, "cell": c, "digit": rng.randrange(SIZE + 1)})
            if rng.random() < 0.5:
                continue
        moves.append({"t_ms": t, "cell": c, "digit": int(SOLUTION[c])})
    moves = moves[:len(moves) - draw(st.integers(0, 3))]
    for _ in range(draw(st.integers(0, 2))):
        i = draw(st.integers(0, len(moves) - 1))
        key = draw(st.sampled_from(["t_ms", "cell", "digit", "kind"]))
        value = draw(number if key != "kind" else st.sampled_from(["note", "place", "x"]))
        moves[i] = dict(moves[i], **{key: value})
    return moves


@settings(max_examples=300, deadline=None)
@given(move_logs())
def test_fast_and_checked_paths_agree_with_the_oracle(moves):
    field, complete = oracle(moves)
    try:
        event = parse_solve(body(moves))
        got = check_and_replay(event, INFO.givens_array, INFO.solution_array, SIZE)
    except ValidationError as exc:
        assert exc.field == field
        return
    assert field is None and got == complete
    fast = _moves_fast(moves)
    if fast is not None:  # the fast path's arrays are the checked path's
        for a, b in zip(fast, _moves_checked(moves)):
            assert a.dtype == b.dtype and np.array_equal(a, b)


@pytest.mark.parametrize("moves, field", [
    ([{"t_ms": 5, "cell": 2, "digit": 4}, {"t_ms": 4, "cell": 3, "digit": 1}], "moves[1].t_ms"),
    ([{"t_ms": -1, "cell": 2, "digit": 4}], "moves[0].t_ms"),
    ([{"t_ms": 10 ** 12 + 1, "cell": 2, "digit": 4}], "moves[0].t_ms"),
    ([{"t_ms": 1, "cell": 2, "digit": 4, "kind": ["note"]}], "moves[0].kind"),
])
def test_times_and_kinds_name_the_move(moves, field):
    with pytest.raises(ValidationError) as exc:
        parse_solve(body(moves))
    assert exc.value.field == field


def test_a_full_solve_is_complete_and_erasing_a_cell_makes_it_incomplete():
    moves = [{"t_ms": k, "cell": c, "digit": int(SOLUTION[c])} for k, c in enumerate(EMPTY)]
    check = lambda ms: check_and_replay(parse_solve(body(ms)), INFO.givens_array,  # noqa: E731
                                        INFO.solution_array, SIZE)
    assert check(moves) is True
    assert check(moves + [{"t_ms": 10 ** 6, "cell": EMPTY[0], "digit": 0}]) is False
    # a note on a filled cell changes nothing
    assert check(moves + [{"t_ms": 10 ** 6, "cell": EMPTY[0], "digit": 1,
                           "kind": "note"}]) is True


# -- the fast path over JSON text -------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10 ** 20, 10 ** 20)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=4)
    | st.sampled_from([1e300, 10 ** 120, -1.5e-7]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                max_size=3), max_leaves=6)
move_values = st.one_of(st.integers(-3, 90), st.sampled_from([5.0, 2.5, 1e3, -0.0, True, None,
                                                               "3", 2 ** 63, 10 ** 19]))


@st.composite
def json_texts(draw):
    """Webhook bodies as JSON text, written the ways a portal might: keys in any order,
    any white space, unknown fields, escapes, repeated keys, odd values."""
    space = st.sampled_from(["", " ", "\n  ", "\t"])

    def write(pairs):
        items = [f"{draw(space)}{key}{draw(space)}:{draw(space)}{value}"
                 for key, value in pairs]
        return "{" + ",".join(items) + draw(space) + "}"

    moves = []
    for k in range(draw(st.integers(0, 6))):
        pairs = [('"t_ms"', json.dumps(100 * k)), ('"cell"', json.dumps(EMPTY[k])),
                 ('"digit"', json.dumps(int(SOLUTION[EMPTY[k]])))]
        if draw(st.booleans()):
            pairs.append(('"kind"', json.dumps(draw(st.sampled_from(["note", "place"])))))
        for _ in range(draw(st.integers(0, 2))):
            change = draw(st.integers(0, 5))
            if change == 0:  # an unknown field with any value
                pairs.append((json.dumps(draw(st.text(max_size=3))),
                              json.dumps(draw(json_values))))
            elif change == 1:  # another value for a known field
                i = draw(st.integers(0, len(pairs) - 1))
                pairs[i] = (pairs[i][0], json.dumps(draw(move_values)))
            elif change == 2:  # a repeated key
                pairs.append(draw(st.sampled_from(pairs)))
            elif change == 3:  # an escaped key or kind
                pairs.append(('"ki\\u006ed"', '"note"'))
            elif change == 4:  # a missing field
                pairs.pop(draw(st.integers(0, len(pairs) - 1)))
            else:
                pairs.append(('"kind"', '"pl\\u0061ce"'))
        draw(st.randoms()).shuffle(pairs)
        moves.append(write(pairs))
    top = [('"type"', '"solve.completed"'), ('"portal"', '"demo"'),
           ('"submission_id"', json.dumps(draw(st.sampled_from(["s-1", "", "x" * 201, "é"])))),
           ('"player_id"', '"p-1"'), ('"puzzle"', write([('"id"', '"easy"')])),
           ('"started_at"', json.dumps(draw(st.sampled_from(
               ["2026-11-21T10:00:00Z", "2026-11-21T12:00:00+02:00", "2026-11-21", "x"])))),
           ('"moves"', "[" + ",".join(moves) + "]")]
    if draw(st.booleans()):
        top.append(('"tournament_id"', json.dumps(draw(st.sampled_from(["t", None, 3])))))
    if draw(st.booleans()):
        top.append((json.dumps(draw(st.text(max_size=3))), json.dumps(draw(json_values))))
    draw(st.randoms()).shuffle(top)
    return write(top).encode()


def _as_tuple(event):
    return tuple(v.tolist() + [str(v.dtype)] if isinstance(v, np.ndarray) else v
                 for v in (getattr(event, f) for f in event.__slots__))


@settings(max_examples=500, deadline=None)
@given(json_texts())
def test_the_fast_path_reads_json_text_as_the_checked_path_does(text):
    fast = _parse_fast(text)
    try:
        slow = parse_solve(parse_json(text))
    except ValidationError:
        assert fast is None  # the checked path names the error
        return
    if fast is not None:
        assert _as_tuple(fast) == _as_tuple(slow)


def test_the_fast_path_takes_ordinary_bodies():
    moves = [{"t_ms": k, "cell": c, "digit": int(SOLUTION[c]), "kind": "place"}
             for k, c in enumerate(EMPTY)] + [{"t_ms": 99, "cell": 0, "digit": 0,
                                               "kind": "note", "pressure": [0.5, None]}]
    text = json.dumps(body(moves), indent=2).encode()
    fast = _parse_fast(text)
    assert fast is not None and _as_tuple(fast) == _as_tuple(parse_solve(json.loads(text)))
    # what it leaves to the checked path is still read there
    for other in (body(moves) | {"extra": 1}, body([{"t_ms": 1.0, "cell": 2, "digit": 4}])):
        text = json.dumps(other).encode()
        assert _parse_fast(text) is None
        assert _as_tuple(parse_body(text)) == _as_tuple(parse_solve(other))


def test_same_content_ignores_key_order_and_white_space_only():
    a = json.dumps(body([{"t_ms": 1, "cell": 2, "digit": 4}]))
    b = json.dumps(dict(reversed(list(json.loads(a).items()))), indent=1)
    assert same_content(a, b) and same_content(a, a)
    assert not same_content(a, a.replace('"digit": 4', '"digit": 5'))
    assert not same_content(a, a.replace('"t_ms": 1', '"t_ms": 1.0'))
    assert not same_content(a, "not json")
