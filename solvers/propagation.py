"""The human-like constraint-propagation model (Pelánek; Křivánek 2011, §2.3 "Constraints
Propagation") and its difficulty metrics.

The model keeps a candidate set for every empty cell (the digits no peer holds) and
places one digit per step:

1. It collects every **naked single** (an empty cell with one candidate) and every
   **hidden single** (a digit with one possible cell in a row, column or block) and
   applies **one of them, chosen uniformly at random** ("In every step of the computation
   one of these techniques is used and applied. If there are more places where this can
   be done, one is chosen randomly"). A placement found by both techniques, or by a
   hidden single in two units, is one option, listed once.
2. When no single applies, it computes refutation scores and takes the cheapest step;
   its score is the difficulty of that step. Choices made where the thesis is silent:

   * the refutation score of a (cell, digit) assumption is 1 (the assumption) plus the
     number of randomly chosen simple steps (singles, as in 1.) after which a
     contradiction shows: an empty cell with no candidate, or a digit with no place left
     in a unit that lacks it. An assumption whose simple steps stall without a
     contradiction cannot be refuted (infinite score);
   * the model scores every wrong candidate of every empty cell (cells in a random
     order; a sequence longer than the best found so far is abandoned, it cannot be the
     minimum), **strikes the cheapest** from its cell and looks for singles again. A
     human who refutes a candidate gains exactly that elimination, and it often opens a
     single; requiring every wrong candidate of one cell to be refuted before anything
     happens left the model stuck on hard puzzles the thesis' model solved;
   * the placement that follows carries the sum of the refutation scores spent since
     the previous placement (``score``) and their maximum (``hardest``);
   * the thesis found a refutable candidate in every puzzle it tried; if none exists,
     the model places the correct digit of a cell with the fewest candidates and records
     a *guess* with score :data:`GUESS_SCORE`.

Only correct digits are ever placed: singles derived from the true candidate sets of a
puzzle with a unique solution are always right, and refutation steps place the solution's
digit (the model needs the solution, so the puzzle must be unique).

Metrics (§2.3): **serate-like** = the maximum over steps of the minimal refutation score
(0 for a puzzle that singles alone solve), **refutation sum** = the sum of the minimal
refutation scores of a run (every elimination step counts); both averaged over ``runs`` (30 in the thesis). Every run
also yields its per-placement evidence (cell, digit, technique, score, number of singles
on offer) that the analytics use as per-step difficulty.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ._rng import U32, below32, next_u64, seed_of, shuffle_prefix, spawn_seeds
from .backtracking import popcount, unique_solution
from .grid import Puzzle, PuzzleError, geometry, solves

NAKED, HIDDEN, REFUTATION, GUESS = 0, 1, 2, 3
TECHNIQUES = ("naked single", "hidden single", "refutation", "guess")
GUESS_SCORE = 1000
DEFAULT_RUNS = 30

_INF = np.int64(1 << 40)
_ONE = np.int64(1)


@njit(inline="always")
def _init_cands(grid, peers, ncells, full):
    cand = np.zeros(ncells, dtype=np.int64)
    for c in range(ncells):
        if grid[c] == 0:
            m = full
            for k in range(peers.shape[1]):
                d = grid[peers[c, k]]
                if d != 0:
                    m &= ~(_ONE << d)
            cand[c] = m
    return cand


@njit(inline="always")
def _board(givens, peers, size):
    """The starting board: (all-digits mask, grid, candidate masks)."""
    full = np.int64(0)
    for d in range(1, size + 1):
        full |= _ONE << d
    grid = givens.astype(np.int64)
    return full, grid, _init_cands(grid, peers, grid.shape[0], full)


@njit(inline="always")
def _single_lists(ncells):
    """Scratch for :func:`_singles`: the stamp per cell and the (cell, digit, technique)
    lists (a cell is listed once, so 3 per cell is ample)."""
    return (np.zeros(ncells, dtype=np.int64), np.empty(ncells * 3, dtype=np.int64),
            np.empty(ncells * 3, dtype=np.int64), np.empty(ncells * 3, dtype=np.int64))


@njit(inline="always")
def _place(grid, cand, c, d, peers):
    """Write ``d`` into ``c``; strike it from the peers. True if a peer is left empty-handed."""
    grid[c] = d
    cand[c] = 0
    bit = ~(_ONE << d)
    dead = False
    for k in range(peers.shape[1]):
        p = peers[c, k]
        if grid[p] == 0:
            cand[p] &= bit
            if cand[p] == 0:
                dead = True
    return dead


@njit(inline="always")
def _singles(grid, cand, units, ncells, full, stamp, tick, oc, od, ot):
    """List the distinct single placements; -1 when the board shows a contradiction."""
    n = 0
    for c in range(ncells):
        if grid[c] == 0:
            m = cand[c]
            if m == 0:
                return -1
            if (m & (m - 1)) == 0:
                d = 0
                while (m >> d) != 1:
                    d += 1
                oc[n] = c
                od[n] = d
                ot[n] = NAKED
                stamp[c] = tick
                n += 1
    size = units.shape[1]
    for u in range(units.shape[0]):
        once = np.int64(0)
        twice = np.int64(0)
        placed = np.int64(0)
        for k in range(size):
            c = units[u, k]
            if grid[c] != 0:
                placed |= _ONE << grid[c]
            else:
                m = cand[c]
                twice |= once & m
                once |= m
        if (full & ~placed & ~once) != 0:
            return -1
        hidden = once & ~twice
        while hidden != 0:
            low = hidden & -hidden
            hidden ^= low
            d = 0
            while (low >> d) != 1:
                d += 1
            for k in range(size):
                c = units[u, k]
                if grid[c] == 0 and (cand[c] & low) != 0:
                    if stamp[c] != tick:
                        stamp[c] = tick
                        oc[n] = c
                        od[n] = d
                        ot[n] = HIDDEN
                        n += 1
                    break
    return n


@njit(inline="always")
def _refute(grid, cand, sgrid, scand, c, d, peers, units, ncells, full, stamp, tick,
            oc, od, ot, bound, state):
    """Score of assuming ``d`` in ``c``: 1 + random simple steps to a contradiction.

    Returns (score or a value >= bound when abandoned / not refutable, rng state, tick).
    """
    sgrid[:] = grid
    scand[:] = cand
    if _place(sgrid, scand, c, d, peers):
        return np.int64(1), state, tick
    score = np.int64(1)
    while True:
        if score >= bound:
            return _INF, state, tick
        tick += 1
        n = _singles(sgrid, scand, units, ncells, full, stamp, tick, oc, od, ot)
        if n < 0:
            return score, state, tick
        if n == 0:
            return _INF, state, tick
        state, bits = next_u64(state)
        i = below32(bits >> U32, n)
        score += 1
        if _place(sgrid, scand, oc[i], od[i], peers):
            return score, state, tick


@njit(cache=True, error_model="numpy")
def human_run(givens, solution, peers, units, size, seed,
              out_cell, out_digit, out_tech, out_score, out_hardest, out_options):
    """One randomized run of the model; fills the per-placement arrays, returns their length."""
    ncells = givens.shape[0]
    full, grid, cand = _board(givens, peers, size)
    sgrid = np.empty(ncells, dtype=np.int64)
    scand = np.empty(ncells, dtype=np.int64)
    stamp, oc, od, ot = _single_lists(ncells)
    _, rc, rd, rt = _single_lists(ncells)  # the refutations' own lists (shared stamp)
    order = np.empty(ncells, dtype=np.int64)
    tick = np.int64(0)
    state = np.uint64(seed)
    empty = 0
    for c in range(ncells):
        if grid[c] == 0:
            empty += 1
    k = 0
    pending = np.int64(0)  # refutation scores spent since the last placement
    hardest = np.int64(0)  # the largest of them
    while empty > 0:
        tick += 1
        n = _singles(grid, cand, units, ncells, full, stamp, tick, oc, od, ot)
        if n > 0:
            state, bits = next_u64(state)
            i = below32(bits >> U32, n)
            c, d = oc[i], od[i]
            out_tech[k] = ot[i]
            out_options[k] = n
        else:
            # refutation: visit the empty cells in a random order, strike the wrong
            # candidate that is cheapest to refute, then look for singles again
            m = 0
            for c in range(ncells):
                if grid[c] == 0:
                    order[m] = c
                    m += 1
            state = shuffle_prefix(order, m, state)
            best = _INF
            best_cell = -1
            best_digit = 0
            for j in range(m):
                c = order[j]
                rest = cand[c] & ~(_ONE << solution[c])
                while rest != 0:
                    low = rest & -rest
                    rest ^= low
                    d = 0
                    while (low >> d) != 1:
                        d += 1
                    s, state, tick = _refute(grid, cand, sgrid, scand, c, d, peers, units,
                                             ncells, full, stamp, tick, rc, rd, rt, best,
                                             state)
                    if s < best:
                        best = s
                        best_cell = c
                        best_digit = d
            if best_cell >= 0:
                cand[best_cell] &= ~(_ONE << best_digit)
                pending += best
                if best > hardest:
                    hardest = best
                continue
            few = size + 1
            for j in range(m):
                cnt = popcount(np.uint64(cand[order[j]]))
                if cnt < few:
                    few = cnt
                    c = order[j]
            d = solution[c]
            out_tech[k] = GUESS
            pending += GUESS_SCORE
            hardest = GUESS_SCORE
            out_options[k] = 0
        if pending > 0 and out_tech[k] != GUESS:
            out_tech[k] = REFUTATION
        out_score[k] = pending
        out_hardest[k] = hardest
        pending = 0
        hardest = 0
        out_cell[k] = c
        out_digit[k] = d
        _place(grid, cand, c, d, peers)
        empty -= 1
        k += 1
    return k


@dataclass(frozen=True, eq=False)
class HumanRun:
    """One run of the model: a placement per empty cell, in the order the model made them.

    ``technique`` holds :data:`NAKED`, :data:`HIDDEN` (a single with nothing refuted
    since the last placement), :data:`REFUTATION` (a single that refutations opened) or
    :data:`GUESS`; ``score`` is the sum of the refutation scores spent on the way to the
    placement (0 for plain singles), ``hardest`` their maximum; ``options`` how many
    singles were on offer when it was made (fewer = harder to spot; 0 for a guess).
    """

    cells: np.ndarray
    digits: np.ndarray
    technique: np.ndarray
    score: np.ndarray
    hardest: np.ndarray
    options: np.ndarray

    @property
    def serate(self) -> int:
        return int(self.hardest.max(initial=0))

    @property
    def refutation_sum(self) -> int:
        return int(self.score.sum())

    def fill_rank(self, ncells: int) -> np.ndarray:
        """Rank (0-based step) at which each cell was filled; -1 for givens."""
        rank = np.full(ncells, -1, dtype=np.int64)
        rank[self.cells] = np.arange(self.cells.size)
        return rank


@dataclass(frozen=True, eq=False)
class HumanModelResult:
    """The model's metrics over ``runs`` seeded runs, with every run kept as evidence."""

    serate: float                # mean over runs of the max minimal refutation score
    refutation_sum: float        # mean over runs of the summed refutation scores
    refutation_steps: float      # mean number of steps that needed a refutation
    lone_single_steps: float     # mean number of steps where exactly one single was on offer
    mean_options: float          # mean number of singles on offer at a single step
    guesses: int                 # steps no refutation could justify, over all runs
    runs: tuple[HumanRun, ...] = field(repr=False)

    def metrics(self) -> dict[str, float]:
        return {"serate": self.serate, "refutation_sum": self.refutation_sum,
                "refutation_steps": self.refutation_steps,
                "lone_single_steps": self.lone_single_steps,
                "mean_options": self.mean_options}

    def median_fill_rank(self, ncells: int) -> np.ndarray:
        """The model's own fill-order prediction: median step per cell (NaN for givens)."""
        ranks = np.stack([r.fill_rank(ncells) for r in self.runs]).astype(float)
        out = np.full(ncells, np.nan)
        filled = ranks[0] >= 0
        out[filled] = np.median(ranks[:, filled], axis=0)
        return out


def _tables(box_size: int):
    geo = geometry(box_size)
    return geo.peers.astype(np.int64), geo.units.astype(np.int64)


def solution_of(puzzle: Puzzle) -> np.ndarray:
    """The unique solution, or PuzzleError (the model needs one to place correct digits)."""
    sol = unique_solution(puzzle)
    if sol is None:
        raise PuzzleError("the puzzle has no unique solution; the human-like model rates "
                          "only puzzles with exactly one")
    return np.asarray(sol, dtype=np.int64)


def run_once(puzzle: Puzzle, solution: np.ndarray, seed) -> HumanRun:
    """One run with an explicit kernel seed."""
    peers, units = _tables(puzzle.box_size)
    n = puzzle.ncells
    out = [np.empty(n, dtype=np.int64) for _ in range(6)]
    k = human_run(puzzle.givens.astype(np.int64), np.asarray(solution, dtype=np.int64),
                  peers, units, puzzle.size, np.uint64(seed), *out)
    return HumanRun(*(a[:k].copy() for a in out))


def human_model(puzzle: Puzzle, *, rng, runs: int = DEFAULT_RUNS,
                solution: np.ndarray | None = None) -> HumanModelResult:
    """Rate ``puzzle`` with the human-like model: ``runs`` seeded runs, metrics averaged.

    ``rng`` is an int seed or a numpy Generator (the same seed gives the same result);
    ``solution`` may be passed when already known (it is checked against the givens).
    """
    if runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs}")
    if solution is None:
        solution = solution_of(puzzle)
    solution = np.asarray(solution, dtype=np.int64)
    if solution.shape != (puzzle.ncells,) or not solves(puzzle, solution):
        raise PuzzleError("the solution passed does not match the puzzle's givens "
                          "or is no valid grid")
    seeds = spawn_seeds(seed_of(rng), runs)
    done = tuple(run_once(puzzle, solution, s) for s in seeds)
    singles = np.concatenate([r.options[r.technique != GUESS] for r in done])
    return HumanModelResult(
        serate=float(np.mean([r.serate for r in done])),
        refutation_sum=float(np.mean([r.refutation_sum for r in done])),
        refutation_steps=float(np.mean([np.sum(r.technique >= REFUTATION) for r in done])),

        lone_single_steps=float(np.mean([np.sum(r.options == 1) for r in done])),
        mean_options=float(singles.mean()) if singles.size else 0.0,
        guesses=int(sum(np.sum(r.technique == GUESS) for r in done)),
        runs=done)



NOT_DEDUCIBLE = 2


@njit(cache=True, error_model="numpy")
def replay_kernel(givens, cells, solution, peers, units, size, out_tech, out_options,
                  out_cands):
    """Replay placements ``cells`` (with the solution's digits) from the givens; for each,
    was it a single on the board of that moment (technique), how many singles were on
    offer (options), and how many digits the board still allowed in that cell (cands)?
    Non-singles get technique 2."""
    ncells = givens.shape[0]
    full, grid, cand = _board(givens, peers, size)
    stamp, oc, od, ot = _single_lists(ncells)
    for k in range(cells.shape[0]):
        c = cells[k]
        n = _singles(grid, cand, units, ncells, full, stamp, np.int64(k + 1), oc, od, ot)
        tech = NOT_DEDUCIBLE
        for i in range(max(n, 0)):
            if oc[i] == c:
                tech = ot[i]
                break
        out_tech[k] = tech
        out_options[k] = max(n, 0)
        m = cand[c]
        bits = 0
        while m:
            m &= m - 1
            bits += 1
        out_cands[k] = bits
        _place(grid, cand, c, solution[c], peers)


def replay(puzzle_givens: np.ndarray, box_size: int, cells: np.ndarray, solution: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Deducibility of each placement of a player's fill order (see :func:`replay_kernel`).

    Returns (technique per placement: NAKED, HIDDEN or NOT_DEDUCIBLE; singles on offer;
    candidates the board left in the placed cell).
    """
    peers, units = _tables(box_size)
    cells = np.asarray(cells, dtype=np.int64)
    tech = np.empty(cells.size, dtype=np.int64)
    options = np.empty(cells.size, dtype=np.int64)
    cands = np.empty(cells.size, dtype=np.int64)
    replay_kernel(np.asarray(puzzle_givens, dtype=np.int64), cells,
                  np.asarray(solution, dtype=np.int64), peers, units, box_size * box_size,
                  tech, options, cands)
    return tech, options, cands
