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
                                    parse_json)
from fairgrid.daemon.store.dedupe import same_content
from fairgrid.daemon.ingest.fast_path import parse_fast as _parse_fast
from fairgrid.daemon.ingest.signatures import Verifier, sign
from fairgrid.daemon.ingest.solve import (MAX_DEPTH, _moves_checked, _moves_fast, parse_solve,
                                          scoring_fields)
from fairgrid.daemon.testing import SECRET_A
from fairgrid.daemon.text import refused_char, shown

from ...fixtures import EASY

GIVENS, BOX_SIZE, SOLUTION = check_puzzle(EASY)
INFO = PuzzleInfo("easy", GIVENS, BOX_SIZE, SOLUTION)
SIZE = BOX_SIZE * BOX_SIZE


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
    if draw(st.booleans()):  # nesting in a move: at the bound, past it, far past it
        depth = draw(st.sampled_from([MAX_DEPTH - 3, MAX_DEPTH - 2, 900]))
        moves.append('{"t_ms": 0, "cell": 2, "digit": 4, "x": ' + "[" * depth
                     + "]" * depth + "}")
    top = [('"type"', '"solve.completed"'), ('"portal"', '"demo"'),
           ('"submission_id"', json.dumps(draw(st.sampled_from(
               ["s-1", "", "x" * 201, "é", "s\u202e1", "s\x00", "s\u200b", "名前 1"])))),
           ('"player_id"', '"p-1"'), ('"puzzle"', write([('"id"', '"easy"')])),
           ('"started_at"', json.dumps(draw(st.sampled_from(
               ["2026-11-21T10:00:00Z", "2026-11-21T12:00:00+02:00", "2026-11-21", "x"])))),
           ('"moves"', "[" + ",".join(moves) + "]")]
    if draw(st.booleans()):
        top.append(('"tournament_id"', json.dumps(draw(st.sampled_from(["t", None, 3])))))
    if draw(st.booleans()):
        top.append((json.dumps(draw(st.text(max_size=3))), json.dumps(draw(json_values))))
    if draw(st.booleans()):  # the portal client's block: an object, or not, maybe deep
        depth = draw(st.sampled_from([0, MAX_DEPTH - 2, MAX_DEPTH - 1]))
        client = draw(st.sampled_from(['{"paste_count": 2}', "null", '"x"', "[1]", "{}",
                                       '{"n": 1e400}', '{"n": 123456789012345678901}']))
        top.append(('"client"', "{" + '"a": ' + "[" * depth + "]" * depth + "}"
                    if depth else client))
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


def _named_twice(text: bytes) -> set[str]:
    """The keys some object of ``text`` gives twice, as the standard library reads it."""
    found = set()

    def hook(pairs):
        keys = [k for k, _ in pairs]
        found.update(k for i, k in enumerate(keys) if k in keys[:i])
        return dict(pairs)

    json.loads(text, object_pairs_hook=hook)
    return found


@settings(max_examples=300, deadline=None)
@given(json_texts())
def test_a_key_given_twice_is_refused_by_both_paths_as_the_stdlib_finds_it(text):
    """A body naming a key twice in one object is refused (first by what else is wrong
    with it, if anything), and a refusal for a repeat names a repeated key."""
    twice = _named_twice(text)
    try:
        parse_body(text)
    except ValidationError as exc:
        if "twice" in str(exc):
            assert exc.status == 400 and exc.field in twice, (exc.field, twice)
        return
    assert not twice


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


def test_same_content_ignores_key_order_white_space_and_how_a_number_is_written():
    a = json.dumps(body([{"t_ms": 1, "cell": 2, "digit": 4}]))
    b = json.dumps(dict(reversed(list(json.loads(a).items()))), indent=1)
    assert same_content(a, b) and same_content(a, a)
    assert not same_content(a, a.replace('"digit": 4', '"digit": 5'))
    # a retry serialised anew may write a whole number as 4.0: ingestion reads it alike
    assert same_content(a, a.replace('"t_ms": 1', '"t_ms": 1.0'))
    assert same_content(a, a.replace('"t_ms": 1', '"t_ms": 1e0'))
    assert not same_content(a, a.replace('"t_ms": 1', '"t_ms": 1.5'))
    assert not same_content(a, "not json")


# -- one depth bound, ids, what scoring reads -------------------------------------------

def _nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def _with(where: str, value: str, extra: bool = False) -> bytes:
    """An ordinary body as text with ``value`` (JSON text) as the client block or as an
    unknown field of the first move; ``extra``: an unknown top-level field too, which
    sends the body down the checked path."""
    text = json.dumps(body([{"t_ms": 1, "cell": 2, "digit": 4}]))
    if where == "client":
        text = text[:-1] + f', "client": {value}}}'
    else:
        text = text.replace('"digit": 4', f'"digit": 4, "x": {value}')
    if extra:
        text = text[:-1] + ', "extra": 1}'
    return text.encode()


@pytest.mark.parametrize("where, field, levels_at_bound", [
    ("client", "client", MAX_DEPTH - 1),   # the body, then the client's levels
    ("move", "moves[0].x", MAX_DEPTH - 3),  # the body, the moves, the move, then the value's
])
@pytest.mark.parametrize("extra", [False, True], ids=["fast path", "checked path"])
def test_one_depth_bound_holds_on_both_paths(where, field, levels_at_bound, extra):
    """A body nesting MAX_DEPTH levels is read, one level more is 422 naming the field,
    whichever path reads it; far deeper (past msgspec's recursion bound) too, with no
    exception escaping the fast path."""
    value = lambda levels: ("{" + '"a": ' + _nested(levels - 1) + "}"  # noqa: E731
                            if where == "client" else _nested(levels))
    at_bound = _with(where, value(levels_at_bound), extra)
    event = parse_body(at_bound)
    assert (_parse_fast(at_bound) is not None) == (not extra)
    if where == "client":
        assert event.client == json.loads(at_bound)["client"]
    for levels in (levels_at_bound + 1, 1000):
        deep = _with(where, value(levels), extra)
        assert _parse_fast(deep) is None
        with pytest.raises(ValidationError) as exc:
            parse_body(deep)
        assert (exc.value.field, exc.value.status) == (field, 422)
        assert f"{MAX_DEPTH} levels" in str(exc.value)


def test_the_client_block_is_an_object_read_alike_by_both_paths():
    for text in ('{"paste_count": 3, "device": {"kind": "tablet"}}', "null", "{}"):
        raw = _with("client", text)
        fast = _parse_fast(raw)
        assert fast is not None and _as_tuple(fast) == _as_tuple(parse_solve(parse_json(raw)))
        assert fast.client == json.loads(text)
    for text in ('"x"', "[1]", "3"):
        raw = _with("client", text)
        assert _parse_fast(raw) is None
        with pytest.raises(ValidationError) as exc:
            parse_body(raw)
        assert exc.value.field == "client"
    # a number msgspec passes and orjson refuses: the checked path says so, nothing
    # escapes; an integer past 64 bits both read as orjson does
    raw = _with("client", '{"n": 1e400}')
    assert _parse_fast(raw) is None
    with pytest.raises(ValidationError) as exc:
        parse_body(raw)
    assert exc.value.status == 400
    raw = _with("client", '{"n": 123456789012345678901}')
    assert _as_tuple(_parse_fast(raw)) == _as_tuple(parse_solve(parse_json(raw)))
    assert parse_body(json.dumps(body([]) | {"outcome": "abandoned"}).encode()).outcome \
        == "abandoned"


ID_FIELDS = [(["portal"], "portal"), (["submission_id"], "submission_id"),
             (["tournament_id"], "tournament_id"), (["player_id"], "player_id"),
             (["puzzle", "id"], "puzzle.id")]


@pytest.mark.parametrize("path, field", ID_FIELDS)
@pytest.mark.parametrize("char", ["\u202e", "\u2066", "\x00", "\x1b", "\u200b", "\u2028",
                                  "\ufeff"])
@pytest.mark.parametrize("escaped", [True, False], ids=["\\u escape", "raw UTF-8"])
def test_ids_with_control_or_formatting_characters_are_refused(path, field, char, escaped):
    data = body([{"t_ms": 1, "cell": 2, "digit": 4}])
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = f"p-{char}42"
    raw = json.dumps(data, ensure_ascii=escaped).encode()
    assert _parse_fast(raw) is None
    with pytest.raises(ValidationError) as exc:
        parse_body(raw)
    assert exc.value.field == field and exc.value.status == 422
    assert f"U+{ord(char):04X}" in str(exc.value)


def test_ids_in_other_scripts_and_with_spaces_are_taken():
    for pid in ("é-1", "名前", "player one", "\u05e9\u05dc\u05d5\u05dd"):  # Hebrew: RTL text
        data = body([{"t_ms": 1, "cell": 2, "digit": 4}]) | {"player_id": pid}
        raw = json.dumps(data, ensure_ascii=False).encode()
        fast = _parse_fast(raw)
        assert fast is not None and fast.player_id == pid
        assert _as_tuple(fast) == _as_tuple(parse_solve(parse_json(raw)))
    assert refused_char("p-42") is None and refused_char("p\u202e") == "\u202e"
    assert shown("p\u202e-42\x1b") == "p\\u202e-42\\u001b" and shown("名前") == "名前"


@pytest.mark.parametrize("msg_id", ["x" * 201, "msg\u202e-1", "msg\x01"])
def test_a_malformed_webhook_id_is_400_naming_the_header(msg_id):
    import time

    raw = json.dumps(body([])).encode()
    headers = sign(SECRET_A, msg_id, int(time.time()), raw)
    with pytest.raises(ValidationError) as exc:
        Verifier.from_portals({"demo": (SECRET_A,)}).verify(headers, raw, time.time())
    assert (exc.value.field, exc.value.status) == ("webhook-id", 400)


def test_a_timestamp_one_second_past_the_tolerance_is_refused_either_way():
    """The boundary on a fixed clock (over HTTP the wall clock moves under the test)."""
    from fairgrid.daemon.ingest.signatures import SignatureError

    raw = json.dumps(body([])).encode()
    headers = sign(SECRET_A, "msg-1", 1_000_000, raw)
    verifier = Verifier.from_portals({"demo": (SECRET_A,)})
    for now in (1_000_000 - 300, 1_000_000 + 300):
        assert verifier.verify(headers, raw, now) == ("demo", "msg-1")
    for now in (1_000_000 - 301, 1_000_000 + 301):
        with pytest.raises(SignatureError) as exc:
            verifier.verify(headers, raw, now)
        assert exc.value.reason == "expired"


def test_scoring_reads_what_ingestion_accepted_and_names_what_it_cannot():
    raw = _with("client", '{"paste_count": 2}').decode()
    assert scoring_fields(raw) == ({"paste_count": 2}, None)
    # stored before ingestion refused them: a client that is not an object counts as
    # none (as scoring always took it), a body nested too deep is named
    assert scoring_fields(_with("client", '"x"').decode()) == (None, None)
    with pytest.raises(ValidationError) as exc:
        scoring_fields(_with("client", _nested(1000)).decode())
    assert exc.value.field == "client"
