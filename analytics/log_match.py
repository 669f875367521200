"""Whether a solve's log repeats an earlier solve of the same puzzle (pure).

A log that *repeats* another person's solve (sent again from a second account, a
friend's, a streamed one typed back by a program) passes every signal a solve is judged
on alone: its order, pace and deductions are a real person's. What it cannot hide is
that the person is someone else: the time before each cell is theirs.

A solve's *timing print* (:func:`timing_print`) is, per cell, the log of the seconds
between the placement that left the cell's final digit and the placement before it
(the first: since the start); NaN for a cell without one and for a gap under
:data:`FLOOR_S`, which is one gesture or the portal's, not a person's thought. Two
prints of one puzzle are compared over the cells both timed, less those both filled
within :data:`MOTOR_S` (writing a digit takes everyone about as long, and two people's
quick endgame cells agree closely) (:func:`closest`): the difference ``d`` per cell,
less its median (a repeat slowed or sped up as a whole shifts every ``d`` alike), is
near 0 in every cell for a repeat and spread for two people, who spend their time on
different cells. Two tests, each against the most
alike two honest people may be (:data:`HONEST_SD`):

* *spread*: the sum of squares of ``d`` over all but the tenth of the cells furthest
  from the median (:data:`TRIM`: a repeat whose first gap, since the start, or a few
  others were changed), over HONEST_SD², is χ² with ``n − r − 1`` degrees of freedom
  when ``d`` is normal with sd HONEST_SD (smaller for people further apart), times the
  ``C(n, r)`` ways to leave ``r`` cells out: a repeat with a little noise added to
  every gap;
* *same gaps*: how many cells' ``d`` lie within :data:`CLOSE` of its median; an honest
  pair's chance per cell is taken as ``1 − exp(−√2 · CLOSE / HONEST_SD)`` (a Laplace
  law of that sd, peakier than the normal; a law peakier still would break the bound,
  which is why quick cells are left out), binomial over the cells: a repeat whose gaps
  were changed in a few cells only.

A pair's p is twice the smaller (either test may hold), and the solve's p that times the
number of earlier solves it was compared with (Bonferroni): one honest pair alike by
chance in a puzzle solved thousands of times must not flag. Only pairs whose
differences hold a dense cluster are tested (:func:`_screen`, one compiled pass); the
others' p is 1, which only raises it.

``HONEST_SD`` is a guard below what people's prints are measured to allow:
``bench/log_match.py`` pairs the honest models of ``bench/players.py`` (the pencilmark
model on code this project did not write among them) and the service's two simulated
players on sudoku.org.uk dailies; the most alike pair's sd is what the docs report
(docs/detection.md, "A log that repeats another").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit
# the distributions' special functions, not scipy.stats (which costs every command line
# half a second to import)
from scipy.special import bdtrc, chdtr, gammaln

FLOOR_S = 0.2        # gaps below this (one gesture, a portal's move) are not timed
MIN_CELLS = 20       # cells both prints time, fewer: no comparison
# a cell both logs filled this quickly is left out: the time to write a digit is alike
# for everyone, and two people's quick cells (an endgame typed in a burst) agree closely
MOTOR_S = 1.5
QUICK = np.float32(math.log(MOTOR_S))   # compared in the prints' own precision
SAME_SCREEN_Z = 3.0  # a row is tested when its densest cells could reach this z
HONEST_SD = 0.35     # the least sd of d two people's prints are taken to have
CLOSE = 0.05         # |d − median| within this: the same gap (5 % in time)
TRIM = 0.1           # the spread test leaves out this share of the cells, the furthest
SAME_GAP_Q = 1.0 - math.exp(-math.sqrt(2.0) * CLOSE / HONEST_SD)
PRINT_DTYPE = np.float32
# the evidence names the earlier solve, and the console shows it, only below this p: the
# closest of many ordinary solves is nobody's business
NAMED_BELOW = 0.05


def timing_print(t_ms, cell, digit, note, n_cells: int) -> np.ndarray:
    """A (2, n_cells) array: per cell, ln(seconds between the placement that left its
    final digit and the placement before it), NaN where no digit stands at the end (a
    given among them: no move lands on one) or the gap is under FLOOR_S; and that
    placement's rank among the placements (NaN where no digit stands)."""
    t = np.asarray(t_ms, dtype=np.float64) / 1000.0
    cell = np.asarray(cell, dtype=np.int64)
    digit = np.asarray(digit, dtype=np.int64)
    keep = (cell >= 0) & (cell < n_cells)
    if note is not None:
        keep &= ~np.asarray(note, dtype=bool)
    t, cell, digit = t[keep], cell[keep], digit[keep]
    out = np.full((2, n_cells), np.nan, dtype=PRINT_DTYPE)
    placed = digit > 0
    rank = np.cumsum(placed) - 1
    gaps = np.full(t.size, np.nan)
    gaps[placed] = np.diff(np.concatenate([[0.0], t[placed]]))
    final: dict[int, int] = {}   # cell -> its last move (an erasure leaves no digit)
    for k, c in enumerate(cell.tolist()):
        final[c] = k
    for c, k in final.items():
        if placed[k]:
            out[1, c] = rank[k]
            if gaps[k] >= FLOOR_S:
                out[0, c] = math.log(gaps[k])
    return out


def to_bytes(tp: np.ndarray) -> bytes:
    """A print as stored (``scores.timing_print``): float32, little-endian."""
    return np.asarray(tp, dtype="<f4").tobytes()


def from_bytes(blob: bytes | None, n_cells: int) -> np.ndarray | None:
    """A stored print; None when there is none or it is not one of ``n_cells`` cells."""
    if blob is None or len(blob) != 8 * n_cells:
        return None
    return np.frombuffer(blob, dtype="<f4").astype(PRINT_DTYPE).reshape(2, n_cells)


@dataclass(frozen=True)
class Match:
    """The earlier solve whose print is most like this one's, and how alike.

    ``index`` is its row among the prints compared; ``cells`` the cells both timed;
    ``same_gaps`` those whose gap matched within :data:`CLOSE`; ``sd`` the spread of
    the differences over all but the furthest tenth (NaN where the pair is too far
    apart to work it out); ``pair_p`` how often two honest people are at least this
    alike, at most; ``p`` that times ``compared`` (the earlier solves looked at); ``same_order``
    the cells placed at the same place in both orders."""

    index: int
    cells: int
    same_gaps: int
    sd: float
    pair_p: float
    p: float
    compared: int
    same_order: int


def closest(tp: np.ndarray, earlier: np.ndarray) -> Match | None:
    """The earlier print (``earlier[i]``, each as :func:`timing_print` makes them) most
    like ``tp``; None when none shares MIN_CELLS timed cells with it."""
    found = _likeness(tp, earlier)
    if found is None:
        return None
    rows, n, same, sd, pair, tight = found
    ties = np.flatnonzero(pair == pair.min())   # ties (p 1): the densest differences
    best = int(ties[np.argmax(tight[ties])])
    compared = int(np.asarray(earlier).shape[0])
    k = int(rows[best])
    tp = np.asarray(tp, dtype=PRINT_DTYPE)
    same_order = int(np.sum(np.isfinite(tp[1]) & (tp[1] == np.asarray(earlier)[k, 1])))
    return Match(k, int(n[best]), int(same[best]), float(sd[best]), float(pair[best]),
                 float(min(1.0, pair[best] * compared)), compared, same_order)


def pair_p(tp: np.ndarray, prints: np.ndarray) -> np.ndarray:
    """Per print of ``prints``, how often two people's logs are at least as alike as it
    and ``tp`` (1 where they share fewer than MIN_CELLS timed cells)."""
    out = np.ones(np.asarray(prints).shape[0] if np.ndim(prints) == 3 else 0)
    found = _likeness(tp, prints)
    if found is not None:
        out[found[0]] = found[4]
    return out


def _likeness(tp, prints):
    """(rows compared, cells, same gaps, spread, pair p, how dense the row's densest
    differences are) of ``tp`` against each print sharing MIN_CELLS timed cells with
    it; None when none does."""
    prints = np.asarray(prints, dtype=PRINT_DTYPE)
    tp = np.asarray(tp, dtype=PRINT_DTYPE)
    if prints.ndim != 3 or prints.shape[0] == 0 or prints.shape[1:] != tp.shape:
        return None
    # Only rows whose differences hold a dense cluster are tested: the same-gaps test
    # needs as many within CLOSE of the median as SAME_SCREEN_Z sds above its honest
    # mean, the spread test half within HONEST_SD / 2 of it, and a median-centred
    # window is inside a window of fixed bins' as wide. The others' p is taken as 1,
    # which only raises it; one compiled pass over every print finds them, and the
    # tests' sorts run on those rows alone.
    n_all, tight, loose = _screen(np.ascontiguousarray(prints[:, 0, :]),
                                  np.ascontiguousarray(tp[0]), QUICK)
    ok = n_all >= MIN_CELLS
    if not ok.any():
        return None
    rows = np.flatnonzero(ok)
    n, tight, loose = n_all[ok], tight[ok], loose[ok]
    need = n * SAME_GAP_Q + SAME_SCREEN_Z * np.sqrt(n * SAME_GAP_Q * (1 - SAME_GAP_Q))
    test = np.flatnonzero((tight >= need) | (loose * 2 >= n))
    same = np.zeros(n.size, dtype=np.int64)
    sd = np.full(n.size, np.nan)
    pair = np.ones(n.size)
    if test.size:
        picked = rows[test]
        d = prints[picked, 0, :] - tp[None, 0, :]
        both = np.isfinite(d) & ~((prints[picked, 0, :] < QUICK) & (tp[None, 0, :] < QUICK))
        n[test] = both.sum(axis=1)   # as the screen counted, the same threshold
        same[test], sd[test], pair[test] = _tests(np.where(both, d, np.nan), both, n[test])
    return rows, n, same, sd, pair, tight


BINS = 512   # the screen's bins of CLOSE; differences beyond ±BINS/2 pile at the ends


@njit(cache=True)
def _screen(gaps, own, quick):
    """Per print (a row of ``gaps``): the cells it and ``own`` both timed, leaving out
    those both filled under ``quick``; of their differences, binned by CLOSE, the most
    in 4 bins in a row and in 9 in a row (any window of 2·CLOSE, of HONEST_SD, lies
    within 3 or 8 such bins; one more for rounding)."""
    m, c = gaps.shape
    n = np.zeros(m, np.int64)
    tight = np.zeros(m, np.int64)
    loose = np.zeros(m, np.int64)
    counts = np.zeros(BINS + 16, np.int64)
    bins = np.zeros(c, np.int64)
    for i in range(m):
        k = 0
        for j in range(c):
            a, b = gaps[i, j], own[j]
            if np.isfinite(a) and np.isfinite(b) and not (a < quick and b < quick):
                v = (a - b) * (1.0 / CLOSE) + BINS // 2
                at = 0 if v < 0.0 else min(int(v), BINS - 1)   # int() floors from 0 up
                counts[at] += 1
                bins[k] = at
                k += 1
        n[i] = k
        # the densest window starts at an occupied bin
        for q in range(k):
            at = bins[q]
            run = counts[at] + counts[at + 1] + counts[at + 2] + counts[at + 3]
            tight[i] = max(tight[i], run)
            for r in range(4, 9):
                run += counts[at + r]
            loose[i] = max(loose[i], run)
        for q in range(k):
            counts[bins[q]] = 0
    return n, tight, loose


def _tests(d, both, n):
    """(same gaps, spread, pair p) of the rows of ``d`` (NaN outside ``both``)."""
    # a row's median from its sort (NaN sorts last): nanmedian is ten times slower
    ordered = np.sort(d, axis=1)
    lo, hi = (n - 1) // 2, n // 2
    centre = 0.5 * (np.take_along_axis(ordered, lo[:, None], 1)[:, 0]
                    + np.take_along_axis(ordered, hi[:, None], 1)[:, 0])
    dev = np.where(both, np.abs(d - centre[:, None]), np.inf)
    same = np.sum(dev <= CLOSE, axis=1)
    # the median's own cell is within CLOSE by construction: not counted
    p_same = bdtrc(np.maximum(same - 1, 0) - 1, n - 1, SAME_GAP_Q)  # P(X > k), 1 for k < 0
    # the spread of all but the TRIM share furthest from the median (a repeat whose
    # first gap, since the start, or a few others differ is still one); any n − r cells
    # of two people are this alike at most C(n, r) times as often as a given n − r.
    # Worked out only where half the cells lie within HONEST_SD / 2 of the median:
    # elsewhere its p is taken as 1, which only raises the pair's
    p_spread = np.ones(n.size)
    sd = np.full(n.size, np.nan)
    near = np.flatnonzero(np.sum(dev <= HONEST_SD / 2, axis=1) * 2 >= n)
    if near.size:
        nn = n[near]
        r = np.ceil(TRIM * nn).astype(np.int64)
        close = np.sort(dev[near], axis=1).astype(np.float64)
        kept = np.arange(close.shape[1])[None, :] < (nn - r)[:, None]
        ss = np.sum(np.where(kept, close, 0.0) ** 2, axis=1)
        log_ways = gammaln(nn + 1.0) - gammaln(r + 1.0) - gammaln(nn - r + 1.0)
        with np.errstate(divide="ignore"):  # a cdf of 0 is a log of -inf: p 0
            log_cdf = np.log(chdtr(nn - r - 1, ss / HONEST_SD ** 2))
        p_spread[near] = np.exp(np.minimum(0.0, log_ways + log_cdf))
        sd[near] = np.sqrt(ss / np.maximum(nn - r - 1, 1))
    return same, sd, np.minimum(1.0, 2.0 * np.minimum(p_same, p_spread))


@dataclass(frozen=True)
class Earlier:
    """The earlier solves of one puzzle a solve is compared with: their prints
    (``(M, 2, n)``) and, per row, what the evidence may name of it: its submission id
    when it came from the same portal, None when from another (a portal never reads
    another's ids)."""

    prints: np.ndarray
    names: tuple[str | None, ...]


@dataclass(frozen=True)
class LogMatch:
    """The evidence's record of the other solve most like this one
    (``Evidence.log_match``)."""

    # on the same portal, and only where p < NAMED_BELOW; else None
    submission_id: str | None
    cells: int
    same_gaps: int
    spread: float | None        # sd of the differences, in log (None: far apart)
    same_order: int
    compared: int
    p: float
    erased: bool = False        # the solve it named was erased since

    def to_json(self) -> dict:
        return {"submission_id": self.submission_id, "cells": self.cells,
                "same_gaps": self.same_gaps, "spread": self.spread,
                "same_order": self.same_order, "compared": self.compared, "p": self.p,
                "erased": self.erased}

    @classmethod
    def from_json(cls, doc) -> LogMatch | None:
        """A stored record; None for anything that is not one."""
        try:
            sid = doc.get("submission_id")
            spread = doc.get("spread")
            return cls(sid if isinstance(sid, str) else None, int(doc["cells"]),
                       int(doc["same_gaps"]), None if spread is None else float(spread),
                       int(doc["same_order"]),
                       int(doc["compared"]), float(doc["p"]), doc.get("erased") is True)
        except (AttributeError, KeyError, TypeError, ValueError):
            return None


def compare(t_ms, cell, digit, note, earlier: Earlier | None, n_cells: int
            ) -> LogMatch | None:
    """A solve's log against the earlier solves of its puzzle: the closest, or None when
    there is none to compare with."""
    if earlier is None or earlier.prints.shape[0] == 0:
        return None
    found = closest(timing_print(t_ms, cell, digit, note, n_cells), earlier.prints)
    if found is None:
        return None
    name = earlier.names[found.index] if found.p < NAMED_BELOW else None
    return LogMatch(name, found.cells, found.same_gaps,
                    round(found.sd, 4) if math.isfinite(found.sd) else None,
                    found.same_order, found.compared, found.p)
