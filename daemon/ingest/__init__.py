"""Ingestion: a webhook's signature, its body as a typed solve, and the checks against
its puzzle. Pure functions over bytes and arrays; the web layer calls them and storage
stores what they return.

* :mod:`.signatures` verifies Standard Webhooks signatures per portal;
* :func:`parse_body` reads a body: the compiled fast path (:mod:`.fast_path`), else the
  checked path (:mod:`.solve`) whose errors name the field;
* :mod:`.replay` checks the moves against the puzzle and says whether the solve ends in
  the solution; :mod:`.puzzles` checks a puzzle's text (unique solution);
* :mod:`.catalog` is the one part with state: the registered puzzles, cached, looked up
  by the name a portal gives them, and registration through the API.
"""

from __future__ import annotations

import numpy as np

from .fast_path import _scan_moves, parse_fast
from .replay import _replay, check_and_replay
from .solve import (SolveEvent, ValidationError, check_keys_once, deeper_than, parse_json,
                    parse_solve, parse_time, well_formed)


def parse_body(body: bytes) -> SolveEvent:
    """The solve in a webhook body (not yet checked against its puzzle); ValidationError
    (400 or 422) naming the field otherwise."""
    event = parse_fast(body)
    if event is None:
        data = parse_json(body)
        check_keys_once(body)
        event = parse_solve(data)
    return event


def moves_of(body: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The moves (t_ms, cell, digit, note) of a stored webhook body, parsed as the webhook
    parsed it (what storage re-derives the moves of a crash from)."""
    event = parse_body(body)
    return event.t_ms, event.cell, event.digit, event.note


def warm_up() -> None:
    """Load (or compile, the first time) the compiled checks, so that the first webhook
    does not wait for them."""
    _scan_moves(np.frombuffer(b'[{"t_ms": 0, "cell": 0, "digit": 0, "x": [1, "a"]}]',
                              dtype=np.uint8), np.empty((3, 4), dtype=np.int64),
                np.empty(4, dtype=np.bool_))
    well_formed(*[np.zeros(1, dtype=np.int64)] * 3)
    deeper_than(np.frombuffer(b'{"a": ["\\"", 1]}', dtype=np.uint8), 2)
    _replay(np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=bool),
            np.zeros(4, dtype=np.int64), np.zeros(4, dtype=np.int64), 4, 0)


__all__ = ["SolveEvent", "ValidationError", "parse_body", "parse_json", "parse_time",
           "check_and_replay", "moves_of", "warm_up"]
