"""The moves rows that follow the acknowledging transaction.

The acknowledging transaction stores each submission's row with its raw body, which
holds every move. The ``moves`` rows follow a moment later, many batches to one insert
(a group commit costs ~7 ms however little it carries, and the moves insert was a third
of it: docs/benchmarks.md). ``moves_through`` records how far they got, in the same
transaction as the moves. Nobody sees the difference: a read marked ``needs_moves`` first
waits until every acknowledged submission's moves are stored, a writer call runs after
they are, and after a crash ``connect`` re-derives the missing ones from the raw bodies.
"""

from __future__ import annotations

import time

import numpy as np

# Pending moves are stored once the writer was idle for MOVES_IDLE_S, or, under load,
# between two batches once the oldest waited MOVES_MAX_AGE_S or MOVES_MAX_ROWS rows wait.
# That insert holds up the next batch: ~4 ms + ~0.3 ms per 1,000 rows (20 ms for 54,000),
# so under load it comes often and small rather than seldom and big (docs/benchmarks.md).
MOVES_IDLE_S = 0.02
MOVES_MAX_AGE_S = 0.25
MOVES_MAX_ROWS = 32_768


def move_columns(keys: np.ndarray, logs: list[tuple]) -> dict[str, np.ndarray] | None:
    """The moves table's columns for solves ``keys`` (sub_keys) with move logs ``logs``
    (t_ms, cell, digit, note arrays each); None when they hold no move."""
    sizes = [t_ms.size for t_ms, _c, _d, _n in logs]
    if not sum(sizes):
        return None
    return {
        "sub_key": np.repeat(keys, sizes),
        "seq": np.concatenate([np.arange(n, dtype=np.int32) for n in sizes]),
        "t_ms": np.concatenate([t for t, _c, _d, _n in logs]).astype(np.int64),
        "cell": np.concatenate([c for _t, c, _d, _n in logs]).astype(np.int16),
        "digit": np.concatenate([d for _t, _c, d, _n in logs]).astype(np.int16),
        "note": np.concatenate([n for _t, _c, _d, n in logs]).astype(bool),
    }


class PendingMoves:
    """Moves of acknowledged submissions not in the moves table yet (writer thread only)."""

    def __init__(self, max_age_s: float = MOVES_MAX_AGE_S, max_rows: int = MOVES_MAX_ROWS):
        self._parts: list[dict[str, np.ndarray]] = []
        self._rows = 0
        self._since: float | None = None  # time.monotonic() of the oldest
        self._max_age_s = max_age_s
        self._max_rows = max_rows

    def add(self, moves: dict[str, np.ndarray] | None) -> None:
        """A committed batch's moves (None: it had none, but moves_through must move)."""
        if moves is not None:
            self._parts.append(moves)
            self._rows += moves["seq"].size
        if self._since is None:
            self._since = time.monotonic()

    def due(self) -> bool:
        """Whether enough rows wait, or waited long enough, to insert between batches."""
        return self._since is not None and (
            self._rows >= self._max_rows or time.monotonic() - self._since >= self._max_age_s)

    def columns(self) -> dict[str, np.ndarray] | None:
        """Everything pending as one set of columns (None: no rows)."""
        if not self._parts:
            return None
        return {name: np.concatenate([part[name] for part in self._parts])
                for name in self._parts[0]}

    def stored(self) -> None:
        self._parts, self._rows, self._since = [], 0, None

    def retry_later(self) -> None:
        """The insert failed: try again when due again, not at once."""
        self._since = time.monotonic()
