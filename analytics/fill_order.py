"""A move log → the order in which the player filled the cells, with mistakes and erasures.

A cell's **fill time** is the time of the placement that put its final, correct digit
there and stayed: a cell filled wrong and corrected later counts at the correction; a
cell filled right, erased and refilled counts at the refill. Givens are not ranked. The
**fill order** ranks the cells by fill time (ties by move sequence), 0 = first.

Counted along the way: ``mistakes`` (placements of a digit that is not the solution's),
``erasures`` (digit 0 on a filled cell), ``overwrites`` (a digit on a filled cell) and
``notes`` (pencil-mark events, which are otherwise ignored). Moves on givens are ignored
(the daemon rejects them on ingestion), and so is a move that leaves its cell as it was
(the digit it shows typed again, an empty cell erased): a portal that logs every key
press sends those, and a cell re-typed at the end was not filled then.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True, eq=False)
class FillOrder:
    """The fill order of one solve. ``rank[c]`` is -1 for givens and unfilled cells."""

    rank: np.ndarray = field(repr=False)
    fill_ms: np.ndarray = field(repr=False)       # -1 where rank is -1
    cells: np.ndarray = field(repr=False)         # cells in fill order
    times_ms: np.ndarray = field(repr=False)      # their fill times
    mistakes: int = 0
    erasures: int = 0
    overwrites: int = 0
    notes: int = 0
    complete: bool = False                        # every empty cell ends correct
    seq: np.ndarray | None = field(default=None, repr=False)  # each fill's move index

    @property
    def filled(self) -> int:
        return int(self.cells.size)


def fill_order(t_ms, cell, digit, note, givens, solution, blank: int = 0) -> FillOrder:
    """Extract the fill order from a move log (arrays of equal length; ``note`` boolean).
    ``blank``: what a free cell left empty counts as at the end (Nurikabe: island, so a
    solve that shades the river right is complete without a dot in every island)."""
    t_ms = np.asarray(t_ms, dtype=np.int64)
    cell = np.asarray(cell, dtype=np.int64)
    digit = np.asarray(digit, dtype=np.int64)
    note = np.asarray(note, dtype=bool) if note is not None else np.zeros(t_ms.size, bool)
    givens = np.asarray(givens)
    solution = np.asarray(solution)
    n = givens.size
    # plain lists in the loop over moves (a pencil-marker's log holds hundreds)
    board = givens.astype(np.int64).tolist()
    fill_ms, fill_seq = [-1] * n, [-1] * n
    mistakes = erasures = overwrites = 0
    is_given = givens != 0
    given, sol = is_given.tolist(), solution.tolist()
    for i, (t, c, d, noted) in enumerate(zip(t_ms.tolist(), cell.tolist(), digit.tolist(),
                                             note.tolist(), strict=True)):
        if noted or given[c]:
            continue
        if d == board[c]:
            continue  # the digit the cell shows (a double tap): the board did not change
        if d == 0:
            if board[c] != 0:
                erasures += 1
            board[c] = 0
            fill_ms[c] = -1
            continue
        if board[c] != 0:
            overwrites += 1
        board[c] = d
        if d == sol[c]:
            fill_ms[c] = t
            fill_seq[c] = i
        else:
            mistakes += 1
            fill_ms[c] = -1
    board = np.asarray(board, dtype=np.int64)
    fill_ms = np.asarray(fill_ms, dtype=np.int64)
    fill_seq = np.asarray(fill_seq, dtype=np.int64)
    done = np.flatnonzero((fill_ms >= 0) & ~is_given)
    order = done[np.lexsort((fill_seq[done], fill_ms[done]))]
    rank = np.full(n, -1, dtype=np.int64)
    rank[order] = np.arange(order.size)
    final = np.where(board == 0, blank, board)
    complete = bool(np.all(final[~is_given] == solution[~is_given]))
    return FillOrder(rank, fill_ms, order, fill_ms[order], mistakes, erasures, overwrites,
                     int(note.sum()), complete, fill_seq[order])
