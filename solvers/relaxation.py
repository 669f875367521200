"""Constraint relaxation (Pelánek; Křivánek 2011, §2.3 "Constraint Relaxation").

Sudoku is a set of pairwise "cells differ" constraints, one for every pair of peers.
The metric removes ``k`` of them at random (45 in the thesis) and counts the solutions of
the relaxed puzzle: hard puzzles gain solutions faster, easy ones have more redundancy.
The metric is the mean count over ``removals`` random relaxations (the thesis does not
say how many; fairgrid defaults to 20).

Choices where the thesis is silent: only constraints that involve at least one empty cell
are candidates for removal (a constraint between two givens constrains nothing); counts
stop at ``limit`` (default 1,000) or after ``max_nodes`` search nodes (default 200,000;
a sparse 17-clue puzzle can otherwise spend seconds proving dead ends), so the metric is
a mean of capped counts, and the result says how many were capped. The counter is
a depth-first search choosing at every node the empty cell with the fewest candidates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ._rng import seed_of, spawn_seeds
from .grid import Puzzle, geometry

DEFAULT_K = 45
DEFAULT_REMOVALS = 20
DEFAULT_LIMIT = 1000
DEFAULT_MAX_NODES = 200_000


@njit(inline="always")
def _set(grid, cnt, nbr, deg, c, d, delta):
    for k in range(deg[c]):
        cnt[nbr[c, k], d] += delta


@njit(cache=True, error_model="numpy")
def relaxed_count_kernel(givens, nbr, deg, size, limit, max_nodes):
    """Solutions under the constraint graph (nbr, deg); stops at ``limit`` solutions or
    ``max_nodes`` search nodes. Returns (count, nodes)."""
    ncells = givens.shape[0]
    grid = givens.astype(np.int64)
    cnt = np.zeros((ncells, size + 1), dtype=np.int64)
    for c in range(ncells):
        if grid[c] != 0:
            _set(grid, cnt, nbr, deg, c, grid[c], 1)
    for c in range(ncells):  # a given clashing with a given under the graph: no solution
        if grid[c] != 0 and cnt[c, grid[c]] > 0:
            return 0, 0
    nodes = 0
    sc = np.empty(ncells, dtype=np.int64)
    sd = np.empty(ncells, dtype=np.int64)
    top = -1
    count = 0
    while True:
        best = -1
        bestn = size + 1
        dead = False
        for c in range(ncells):
            if grid[c] == 0:
                n = 0
                for d in range(1, size + 1):
                    if cnt[c, d] == 0:
                        n += 1
                if n < bestn:
                    bestn = n
                    best = c
                    if n == 0:
                        dead = True
                        break
        if best < 0:
            count += 1
            if count >= limit:
                return count, nodes
        elif not dead:
            nodes += 1
            if nodes > max_nodes:
                return count, nodes
            top += 1
            sc[top] = best
            sd[top] = 0
        # advance the deepest open cell to its next digit, backtracking as needed
        while top >= 0:
            c = sc[top]
            if grid[c] != 0:
                _set(grid, cnt, nbr, deg, c, grid[c], -1)
                grid[c] = 0
            d = sd[top] + 1
            while d <= size and cnt[c, d] > 0:
                d += 1
            if d <= size:
                grid[c] = d
                sd[top] = d
                _set(grid, cnt, nbr, deg, c, d, 1)
                break
            top -= 1
        if top < 0:
            return count, nodes


def constraint_pairs(puzzle: Puzzle) -> np.ndarray:
    """All peer pairs (a < b) with at least one empty cell: the removable constraints."""
    geo = geometry(puzzle.box_size)
    a = np.repeat(np.arange(puzzle.ncells), geo.peers.shape[1])
    b = geo.peers.reshape(-1)
    keep = (a < b) & ((puzzle.givens[a] == 0) | (puzzle.givens[b] == 0))
    return np.stack([a[keep], b[keep]], axis=1)


def _graph(ncells: int, pairs: np.ndarray):
    deg = np.bincount(pairs.reshape(-1), minlength=ncells).astype(np.int64)
    nbr = np.full((ncells, max(int(deg.max(initial=0)), 1)), -1, dtype=np.int64)
    fill = np.zeros(ncells, dtype=np.int64)
    for a, b in pairs:
        nbr[a, fill[a]] = b
        fill[a] += 1
        nbr[b, fill[b]] = a
        fill[b] += 1
    return nbr, deg


def relaxed_count(puzzle: Puzzle, removed: np.ndarray, limit: int = DEFAULT_LIMIT,
                  max_nodes: int = DEFAULT_MAX_NODES) -> int:
    """Solutions (capped at ``limit``) once the constraints ``removed`` (pairs) are dropped."""
    pairs = constraint_pairs(puzzle)
    if len(removed):
        drop = {(int(min(a, b)), int(max(a, b))) for a, b in removed}
        pairs = np.array([p for p in pairs.tolist() if tuple(p) not in drop],
                         dtype=np.int64).reshape(-1, 2)
    # constraints between two givens hold anyway: the counter only needs the rest
    nbr, deg = _graph(puzzle.ncells, pairs)
    return int(relaxed_count_kernel(puzzle.givens.astype(np.int64), nbr, deg, puzzle.size,
                                    int(limit), int(max_nodes))[0])


@dataclass(frozen=True)
class RelaxationResult:
    mean_count: float          # the thesis' metric (mean of capped counts)
    mean_log10: float          # mean of log10(count), steadier for regressions
    capped: int                # removals whose count reached the limit or the node budget
    counts: tuple[int, ...]


def relaxation_metric(puzzle: Puzzle, *, rng, k: int = DEFAULT_K,
                      removals: int = DEFAULT_REMOVALS, limit: int = DEFAULT_LIMIT,
                      max_nodes: int = DEFAULT_MAX_NODES) -> RelaxationResult:
    """Mean solution count over ``removals`` random removals of ``k`` constraints."""
    if k < 0 or removals < 1 or limit < 1:
        raise ValueError("need k >= 0, removals >= 1 and limit >= 1")
    seed = seed_of(rng)
    pairs = constraint_pairs(puzzle)
    k = min(k, len(pairs))
    counts = []
    capped = 0
    for s in spawn_seeds(seed, removals):
        gen = np.random.default_rng(int(s))
        keep = np.ones(len(pairs), dtype=bool)
        keep[gen.choice(len(pairs), size=k, replace=False)] = False
        nbr, deg = _graph(puzzle.ncells, pairs[keep])
        n, nodes = relaxed_count_kernel(puzzle.givens.astype(np.int64), nbr, deg,
                                        puzzle.size, int(limit), int(max_nodes))
        counts.append(int(n))
        capped += int(n >= limit or nodes > max_nodes)
    arr = np.array(counts, dtype=float)
    return RelaxationResult(float(arr.mean()), float(np.log10(np.maximum(arr, 1)).mean()),
                            capped, tuple(counts))
