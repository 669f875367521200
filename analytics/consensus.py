"""The human consensus fill order of a puzzle, and how far honest solves stray from it.

Input: for every eligible solve of a puzzle, the rank at which each cell was filled (the
order of each cell's last placement). Per cell: the median rank and its interquartile
range over the solves. The consensus order ranks the cells by that median (ties share
the lowest rank). Each solve's agreement with the consensus is the Pearson correlation
of its ranks with the consensus ranks over the cells it filled; the null of the
``order_consensus`` signal is the robust centre and scale of those correlations
(median, 1.4826·MAD, widened by :func:`calibration.guard` to the variation between people).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .calibration import guard


@dataclass(frozen=True, eq=False)
class Consensus:
    """One puzzle's consensus: per-cell median rank and IQR (NaN for cells no solve
    filled), and the null (centre, scale) of solves' correlation with it (None when no
    solve had a defined correlation)."""

    median: np.ndarray
    spread: np.ndarray
    null: tuple[float, float] | None

    def as_lists(self, digits: int = 2) -> tuple[list, list]:
        """Median and spread per cell as JSON lists (None where no value), rounded."""
        def values(a):
            return [None if np.isnan(v) else round(float(v), digits) for v in a]
        return values(self.median), values(self.spread)


def _min_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties sharing the lowest (SQL's rank())."""
    ordered = np.sort(values)
    return np.searchsorted(ordered, values, side="left") + 1.0


def _row_correlations(ranks: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Pearson correlation of each row of ``ranks`` (NaN: cell not filled) with
    ``other`` over the row's filled cells; NaN where either side is constant."""
    mask = ~np.isnan(ranks)
    n = mask.sum(axis=1)
    x = np.where(mask, ranks, 0.0)
    y = np.where(mask, other[None, :], 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = x.sum(axis=1) / n
        my = y.sum(axis=1) / n
        dx = np.where(mask, x - mx[:, None], 0.0)
        dy = np.where(mask, y - my[:, None], 0.0)
        sxy = (dx * dy).sum(axis=1)
        sxx = (dx * dx).sum(axis=1)
        syy = (dy * dy).sum(axis=1)
        rho = sxy / np.sqrt(sxx * syy)
    rho[(n < 2) | (sxx == 0) | (syy == 0)] = np.nan
    return rho


def consensus(solve: np.ndarray, cell: np.ndarray, rank: np.ndarray,
              ncells: int) -> Consensus:
    """The consensus of one puzzle from rows (solve index, cell, rank of that cell in
    that solve): one row per filled cell per solve."""
    solve = np.asarray(solve, dtype=np.int64)
    _, row = np.unique(solve, return_inverse=True)
    ranks = np.full((row.max() + 1 if row.size else 0, ncells), np.nan)
    ranks[row, np.asarray(cell, dtype=np.int64)] = np.asarray(rank, dtype=float)
    filled = ~np.isnan(ranks).all(axis=0)
    median = np.full(ncells, np.nan)
    spread = np.full(ncells, np.nan)
    if filled.any():
        sub = ranks[:, filled]
        median[filled] = np.nanmedian(sub, axis=0)
        q75, q25 = np.nanpercentile(sub, [75, 25], axis=0)
        spread[filled] = q75 - q25
    cons_rank = np.full(ncells, np.nan)
    cons_rank[filled] = _min_ranks(median[filled])
    rho = _row_correlations(ranks[:, filled], cons_rank[filled])
    rho = rho[np.isfinite(rho)]
    null = None
    if rho.size:
        centre = float(np.median(rho))
        mad = float(np.median(np.abs(rho - centre)))
        null = guard("order_consensus", centre, 1.4826 * mad)
    return Consensus(median, spread, null)
