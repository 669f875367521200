"""A human-like propagation model for Nurikabe (Křivánek 2011, §4.2, after Babinčák's
"different dynamic metrics using solver simulating human solving"; the role the singles
model of §2.3 plays for Sudoku).

The model keeps a state (``-1`` unknown, ``0`` white, ``1`` black; clue cells start
white) and decides cells by the simple deductions people use, **one rule instance a
step, simplest rule first** (the first instance in cell order of the simplest rule that
applies; the model is deterministic):

====  ====================  ================================================================
 id   rule                  what it decides
====  ====================  ================================================================
 0    ``complete island``   an island as large as its clue is walled in: its unknown
                            neighbours are river (one step walls the whole island)
 1    ``shared neighbour``  an unknown cell next to two islands that hold clues would join
                            them: river
 2    ``unreachable``       an unknown cell no unfinished island can reach is river (reach:
                            paths through non-river cells, never next to another clue's
                            island, at most clue - size cells long)
 3    ``pool``              a 2×2 block with three river cells: the fourth is white
 4    ``island exit``       an unfinished island, or a white area without a clue, with one
                            unknown neighbour: that cell is white
 5    ``river exit``        a river segment smaller than the whole river with one unknown
                            neighbour: that cell is river
 6    ``last cell``         an island one cell short: an unknown cell next to every one of
                            its options is river (it would touch the finished island)
 7    ``island bottleneck`` an unfinished island that could not reach its size without an
                            unknown cell (all the cells it may use, that one left out, are
                            too few): that cell is white
 8    ``river bottleneck``  an unknown cell without which the river cells could not be
                            joined (through river and unknown cells): river
 9    ``hint``              (only when the caller passes the solution) the rules stall: the
                            first unknown cell next to a decided one is revealed
====  ====================  ================================================================

Every rule is sound: in a state that agrees with a solution it never decides a cell
against that solution (the tests check this over generated puzzles, from the start and
from random partial states). The rules are not complete; where they stall
the result says so (``stalled``, the unknown cells left). Choices made where the
sources are silent: the rule list and its order (the classic first deductions of
Nurikabe guides, simplest first); the reach bound counts each white cell on a path once
(an over-estimate, which keeps rule 2 sound); a hint reveals the first unknown cell in
cell order that touches a decided cell (else the first unknown cell).

:func:`deductions` applies every rule to a given state at once, which is what
"deducible at this moment" means for a Nurikabe move (:func:`deducible`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from .model import NurikabeError, NurikabePuzzle, as_grid, tables

RULES = ("complete island", "shared neighbour", "unreachable", "pool", "island exit",
         "river exit", "last cell", "island bottleneck", "river bottleneck", "hint")
(COMPLETE, SHARED, UNREACHABLE, POOL, ISLAND_EXIT, RIVER_EXIT, LAST_CELL, ISLAND_NECK,
 RIVER_NECK, HINT) = range(10)
NRULES = 9  # the deductions proper; HINT is no deduction


# ------------------------------------------------------------------------------- kernels

@njit(cache=True, nogil=True)
def _label(state, clue, nbr, want, comp, csize, cval, cnclue, ccells, cstart, stack):
    """Components of the cells whose state is ``want``: ``comp[cell]`` (-1 elsewhere),
    sizes, clue count and value, and the cells of component k at
    ``ccells[cstart[k]:cstart[k+1]]``. Numbered in order of their lowest cell."""
    n = state.shape[0]
    for c in range(n):
        comp[c] = -1
    k = 0
    fill = 0
    for s in range(n):
        if state[s] != want or comp[s] >= 0:
            continue
        cstart[k] = fill
        comp[s] = k
        stack[0] = s
        top = 1
        nclue = 0
        val = 0
        while top > 0:
            top -= 1
            c = stack[top]
            ccells[fill] = c
            fill += 1
            if clue[c] > 0:
                nclue += 1
                val = clue[c]
            for d in range(4):
                x = nbr[c, d]
                if x >= 0 and state[x] == want and comp[x] < 0:
                    comp[x] = k
                    stack[top] = x
                    top += 1
        csize[k] = fill - cstart[k]
        cnclue[k] = nclue
        cval[k] = val
        k += 1
    cstart[k] = fill
    return k


@njit(inline="always")
def _decide(dec, rule_of, c, colour, rule):
    """Record ``c`` := colour by ``rule`` unless a simpler rule decided it; 1 if new."""
    if dec[c] == -1:
        dec[c] = colour
        rule_of[c] = rule
        return 1
    return 0


@njit(inline="always")
def _usable(x, k, state, nbr, comp, cncl):
    """Whether island ``k`` may take cell ``x``: not river, not another clue's island, not
    next to one."""
    if state[x] == 1:
        return False
    if comp[x] >= 0 and comp[x] != k and cncl[comp[x]] > 0:
        return False
    for e in range(4):
        y = nbr[x, e]
        if y >= 0 and comp[y] >= 0 and comp[y] != k and cncl[comp[y]] > 0:
            return False
    return True


@njit(cache=True, nogil=True)
def _island_region(k, skip, stamp, state, nbr, comp, cncl, ccells, cstart, mark, stack):
    """The cells outside island ``k`` it could grow into, ``skip`` left out: their
    number, and the cells at ``stack[:number]`` (white cells of other areas count one
    each, an over-estimate)."""
    for q in range(cstart[k], cstart[k + 1]):
        mark[ccells[q]] = stamp
    if skip >= 0:
        mark[skip] = stamp
    top = 0
    head = 0
    for q in range(cstart[k], cstart[k + 1]):
        c = ccells[q]
        for d in range(4):
            x = nbr[c, d]
            if x >= 0 and mark[x] != stamp and _usable(x, k, state, nbr, comp, cncl):
                mark[x] = stamp
                stack[top] = x
                top += 1
    while head < top:
        c = stack[head]
        head += 1
        for d in range(4):
            x = nbr[c, d]
            if x >= 0 and mark[x] != stamp and _usable(x, k, state, nbr, comp, cncl):
                mark[x] = stamp
                stack[top] = x
                top += 1
    return top


@njit(cache=True, nogil=True)
def _river_necks(state, nbr, first, dec, rule_of, rule):
    """Unknown cells that separate river cells in the graph of non-white cells (Tarjan's
    articulation points, iterative): each is river. Returns the cells decided."""
    n = state.shape[0]
    root = -1
    nblack = 0
    for c in range(n):
        if state[c] == 1:
            nblack += 1
            if root < 0:
                root = c
    if nblack < 2:
        return 0
    disc = np.full(n, -1, np.int64)
    low = np.zeros(n, np.int64)
    blk = np.zeros(n, np.int64)        # river cells in the DFS subtree
    parent = np.full(n, -1, np.int64)
    nexte = np.zeros(n, np.int64)
    stack = np.empty(n, np.int64)
    cut = np.zeros(n, np.int8)
    kids = np.zeros(n, np.int64)       # DFS children of the root holding river cells
    t = 0
    disc[root] = t
    low[root] = t
    blk[root] = 1
    stack[0] = root
    top = 1
    while top > 0:
        c = stack[top - 1]
        if nexte[c] < 4:
            x = nbr[c, nexte[c]]
            nexte[c] += 1
            if x < 0 or state[x] == 0:
                continue
            if disc[x] < 0:
                t += 1
                disc[x] = t
                low[x] = t
                blk[x] = 1 if state[x] == 1 else 0
                parent[x] = c
                stack[top] = x
                top += 1
            elif x != parent[c]:
                low[c] = min(low[c], disc[x])
            continue
        top -= 1
        p = parent[c]
        if p >= 0:
            low[p] = min(low[p], low[c])
            blk[p] += blk[c]
            if blk[c] > 0:
                if p == root:
                    kids[p] += 1
                elif low[c] >= disc[p] and nblack - blk[c] - (state[p] == 1) > 0:
                    cut[p] = 1
    if blk[root] != nblack:
        return 0                        # the river is cut already: a contradiction
    if kids[root] >= 2:
        cut[root] = 1
    got = 0
    for c in range(n):
        if cut[c] and state[c] == -1:
            got += _decide(dec, rule_of, c, 1, rule)
            if first and got:
                break
    return got


@njit(cache=True, nogil=True)
def _rules(state, clue, nbr, blocks, black_total, first, dec, rule_of, only):
    """Apply the rules to ``state``: every instance of every rule (``first`` false), or
    the first instance of the simplest rule that applies (``first`` true). Decisions go
    to ``dec`` (colour) and ``rule_of``, where those are -1. ``only`` >= 0 restricts to
    one rule. Returns the number of cells decided."""
    n = state.shape[0]
    comp = np.empty(n, np.int64)
    csize = np.empty(n + 1, np.int64)
    cval = np.empty(n + 1, np.int64)
    cncl = np.empty(n + 1, np.int64)
    ccells = np.empty(n, np.int64)
    cstart = np.empty(n + 2, np.int64)
    rcomp = np.empty(n, np.int64)
    rsize = np.empty(n + 1, np.int64)
    rval = np.empty(n + 1, np.int64)
    rncl = np.empty(n + 1, np.int64)
    rcells = np.empty(n, np.int64)
    rstart = np.empty(n + 2, np.int64)
    stack = np.empty(n, np.int64)
    mark = np.zeros(n, np.int64)
    dist = np.zeros(n, np.int64)
    nw = _label(state, clue, nbr, 0, comp, csize, cval, cncl, ccells, cstart, stack)
    nr = _label(state, clue, nbr, 1, rcomp, rsize, rval, rncl, rcells, rstart, stack)
    total = 0
    stamp = 0
    for rule in range(NRULES):
        if only >= 0 and rule != only:
            continue
        got = 0
        if rule == COMPLETE:
            for k in range(nw):
                if cncl[k] == 1 and csize[k] == cval[k]:
                    for q in range(cstart[k], cstart[k + 1]):
                        for d in range(4):
                            x = nbr[ccells[q], d]
                            if x >= 0 and state[x] == -1:
                                got += _decide(dec, rule_of, x, 1, rule)
                    if first and got:
                        break
        elif rule == SHARED:
            for c in range(n):
                if state[c] != -1:
                    continue
                a = -1
                hit = False
                for d in range(4):
                    x = nbr[c, d]
                    if x >= 0 and comp[x] >= 0 and cncl[comp[x]] > 0:
                        if a == -1:
                            a = comp[x]
                        elif comp[x] != a:
                            hit = True
                if hit:
                    got += _decide(dec, rule_of, c, 1, rule)
                    if first and got:
                        break
        elif rule == UNREACHABLE:
            reach = np.zeros(n, np.int8)
            for k in range(nw):
                if cncl[k] != 1 or csize[k] >= cval[k]:
                    continue
                budget = cval[k] - csize[k]
                stamp += 1
                top = 0
                for q in range(cstart[k], cstart[k + 1]):
                    c = ccells[q]
                    mark[c] = stamp
                    dist[c] = 0
                    stack[top] = c
                    top += 1
                head = 0
                while head < top:           # breadth first: stack[head:top] is a queue
                    c = stack[head]
                    head += 1
                    if dist[c] >= budget:
                        continue
                    for d in range(4):
                        x = nbr[c, d]
                        if x < 0 or mark[x] == stamp or state[x] == 1:
                            continue
                        if comp[x] >= 0 and cncl[comp[x]] > 0:
                            continue        # another clue's island
                        ok = True
                        for e in range(4):
                            y = nbr[x, e]
                            if y >= 0 and comp[y] >= 0 and comp[y] != k and cncl[comp[y]] > 0:
                                ok = False
                        if not ok:
                            continue
                        mark[x] = stamp
                        dist[x] = dist[c] + 1
                        reach[x] = 1
                        stack[top] = x
                        top += 1
            for c in range(n):
                if state[c] == -1 and reach[c] == 0:
                    got += _decide(dec, rule_of, c, 1, rule)
                    if first and got:
                        break
        elif rule == POOL:
            for b in range(blocks.shape[0]):
                nb = 0
                u = -1
                for e in range(4):
                    c = blocks[b, e]
                    if state[c] == 1:
                        nb += 1
                    elif state[c] == -1:
                        u = c
                if nb == 3 and u >= 0:
                    got += _decide(dec, rule_of, u, 0, rule)
                    if first and got:
                        break
        elif rule == ISLAND_EXIT or rule == RIVER_EXIT:
            white = rule == ISLAND_EXIT
            ncomp = nw if white else nr
            for k in range(ncomp):
                if white:
                    if cncl[k] > 1 or (cncl[k] == 1 and csize[k] >= cval[k]):
                        continue
                    lo = cstart[k]
                    hi = cstart[k + 1]
                else:
                    if rsize[k] >= black_total:
                        continue
                    lo = rstart[k]
                    hi = rstart[k + 1]
                stamp += 1
                count = 0
                exit_cell = -1
                for q in range(lo, hi):
                    c = ccells[q] if white else rcells[q]
                    for d in range(4):
                        x = nbr[c, d]
                        if x >= 0 and state[x] == -1 and mark[x] != stamp:
                            mark[x] = stamp
                            count += 1
                            exit_cell = x
                if count == 1:
                    got += _decide(dec, rule_of, exit_cell, 0 if white else 1, rule)
                    if first and got:
                        break
        elif rule == LAST_CELL:
            for k in range(nw):
                if cncl[k] != 1 or cval[k] - csize[k] != 1:
                    continue
                stamp += 1
                nopt = 0
                for q in range(cstart[k], cstart[k + 1]):
                    for d in range(4):
                        x = nbr[ccells[q], d]
                        if x >= 0 and state[x] == -1 and mark[x] != stamp:
                            mark[x] = stamp
                            stack[nopt] = x
                            nopt += 1
                if nopt < 2:
                    continue
                # cells next to every option: count, per unknown neighbour of an option,
                # the options it touches (dist as counter, fresh stamp as "counted")
                stamp += 1
                for i in range(nopt):
                    for d in range(4):
                        y = nbr[stack[i], d]
                        if y < 0 or state[y] != -1:
                            continue
                        if mark[y] != stamp:
                            mark[y] = stamp
                            dist[y] = 0
                        dist[y] += 1
                for i in range(nopt):
                    for d in range(4):
                        y = nbr[stack[i], d]
                        if y >= 0 and state[y] == -1 and mark[y] == stamp \
                                and dist[y] == nopt:
                            got += _decide(dec, rule_of, y, 1, rule)
                if first and got:
                    break
        elif rule == ISLAND_NECK:
            for k in range(nw):
                if cncl[k] != 1 or csize[k] >= cval[k]:
                    continue
                need = cval[k] - csize[k]
                # candidates: the unknown cells the island may use at all
                stamp += 1
                ncand = _island_region(k, -1, stamp, state, nbr, comp, cncl, ccells,
                                       cstart, mark, stack)
                if ncand < need:
                    continue                # a contradiction; not this rule's business
                cand = stack[:ncand].copy()
                for i in range(ncand):
                    x = cand[i]
                    if state[x] != -1:
                        continue
                    stamp += 1
                    if _island_region(k, x, stamp, state, nbr, comp, cncl, ccells, cstart,
                                      mark, stack) < need:
                        got += _decide(dec, rule_of, x, 0, rule)
                if first and got:
                    break
        elif rule == RIVER_NECK:
            got += _river_necks(state, nbr, first, dec, rule_of, rule)
        total += got
        if first and got:
            break
    return total


@njit(cache=True, nogil=True)
def _solved(state, clue, nbr, blocks, black_total):
    """Whether a state without unknown cells follows every rule."""
    n = state.shape[0]
    for c in range(n):
        if state[c] == -1:
            return False
    comp = np.empty(n, np.int64)
    size = np.empty(n + 1, np.int64)
    val = np.empty(n + 1, np.int64)
    ncl = np.empty(n + 1, np.int64)
    cells = np.empty(n, np.int64)
    start = np.empty(n + 2, np.int64)
    stack = np.empty(n, np.int64)
    nw = _label(state, clue, nbr, 0, comp, size, val, ncl, cells, start, stack)
    for k in range(nw):
        if ncl[k] != 1 or size[k] != val[k]:
            return False
    nr = _label(state, clue, nbr, 1, comp, size, val, ncl, cells, start, stack)
    if nr > 1:
        return False
    for b in range(blocks.shape[0]):
        if state[blocks[b, 0]] + state[blocks[b, 1]] + state[blocks[b, 2]] \
                + state[blocks[b, 3]] == 4:
            return False
    return True


@njit(cache=True, nogil=True)
def propagate_kernel(state, clue, nbr, blocks, black_total, solution, use_hints,
                     out_rule, out_colour, out_cells, out_start):
    """Run the model from ``state`` (changed in place). Step ``s`` applied rule
    ``out_rule[s]`` giving colour ``out_colour[s]`` to
    ``out_cells[out_start[s]:out_start[s+1]]``. Returns (steps, hints)."""
    n = state.shape[0]
    dec = np.empty(n, np.int8)
    rule_of = np.empty(n, np.int64)
    steps = 0
    hints = 0
    fill = 0
    out_start[0] = 0
    while True:
        unknown = 0
        for c in range(n):
            unknown += state[c] == -1
        if unknown == 0:
            break
        for c in range(n):
            dec[c] = -1
            rule_of[c] = -1
        got = _rules(state, clue, nbr, blocks, black_total, True, dec, rule_of, -1)
        rule = -1
        if got:
            for c in range(n):
                if dec[c] != -1:
                    rule = rule_of[c]
                    break
        elif use_hints:
            pick = -1
            for c in range(n):
                if state[c] == -1:
                    if pick < 0:
                        pick = c
                    near = False
                    for d in range(4):
                        x = nbr[c, d]
                        if x >= 0 and state[x] != -1:
                            near = True
                    if near:
                        pick = c
                        break
            dec[pick] = solution[pick]
            rule = HINT
            hints += 1
        else:
            break
        colour = -1
        for c in range(n):
            if dec[c] != -1:
                state[c] = dec[c]
                colour = dec[c]
                out_cells[fill] = c
                fill += 1
        out_rule[steps] = rule
        out_colour[steps] = colour
        steps += 1
        out_start[steps] = fill
    return steps, hints


# ------------------------------------------------------------------------------ public API

@dataclass(frozen=True)
class PropagationStep:
    """One step of the model: the rule (a name of :data:`RULES`), the colour it gives
    (1 river, 0 island) and the cells it decides."""

    rule: str
    colour: int
    cells: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class PropagationResult:
    """A run of the model: its steps in order, whether it solved the puzzle, and where it
    stalled (``stalled``: no rule applies and no hint was allowed; ``unknown``: cells left
    undecided then). ``hints`` counts the cells revealed from the solution."""

    steps: tuple[PropagationStep, ...]
    solved: bool
    stalled: bool
    unknown: int
    hints: int
    state: np.ndarray = field(repr=False)

    @property
    def rule_counts(self) -> dict[str, int]:
        """Steps per rule."""
        counts = dict.fromkeys(RULES, 0)
        for s in self.steps:
            counts[s.rule] += 1
        return counts

    @property
    def hardest(self) -> int:
        """The highest rule id used (7 when a hint was needed; -1 for no step)."""
        return max((RULES.index(s.rule) for s in self.steps), default=-1)

    def order(self) -> np.ndarray:
        """The 0-based rank at which each cell was decided (-1: never, clues included):
        the model's fill order."""
        rank = np.full(self.state.size, -1, dtype=np.int64)
        n = 0
        for step in self.steps:
            for c in step.cells:
                if rank[c] < 0:
                    rank[c] = n
                    n += 1
        return rank


def as_state(puzzle: NurikabePuzzle, state) -> np.ndarray:
    """``state`` (-1 unknown, 0 white, 1 black; flat or (rows, cols)) as a flat int8 copy
    with the clue cells white, or NurikabeError."""
    arr = np.asarray(state)
    if arr.shape not in ((puzzle.ncells,), puzzle.shape):
        raise NurikabeError(f"a {puzzle.rows}x{puzzle.cols} state has {puzzle.ncells} "
                            f"cells, got shape {arr.shape}")
    arr = arr.reshape(-1).astype(np.int8)
    if not np.isin(arr, (-1, 0, 1)).all():
        raise NurikabeError("a state holds -1 (unknown), 0 (island) and 1 (river) only")
    if (arr[puzzle.clue_cells] == 1).any():
        c = int(puzzle.clue_cells[arr[puzzle.clue_cells] == 1][0])
        raise NurikabeError(f"the clue cell {puzzle.cell_name(c)} cannot be river")
    arr[puzzle.clue_cells] = 0
    return arr


def start_state(puzzle: NurikabePuzzle) -> np.ndarray:
    """The state before any move: clue cells white, every other cell unknown."""
    state = np.full(puzzle.ncells, -1, dtype=np.int8)
    state[puzzle.clue_cells] = 0
    return state


def propagate(puzzle: NurikabePuzzle, *, state=None, solution=None) -> PropagationResult:
    """Run the model from the start (or from ``state``) until the puzzle is solved or the
    rules stall; with ``solution`` a stall reveals a cell (a hint) instead (§4.2 model)."""
    st = start_state(puzzle) if state is None else as_state(puzzle, state)
    t = tables(puzzle.rows, puzzle.cols)
    n = puzzle.ncells
    sol = (np.zeros(n, np.int8) if solution is None
           else as_grid(puzzle, solution).astype(np.int8))
    out_rule = np.empty(n + 1, np.int64)
    out_colour = np.empty(n + 1, np.int64)
    out_cells = np.empty(n, np.int64)
    out_start = np.empty(n + 2, np.int64)
    nsteps, hints = propagate_kernel(st, puzzle.clues.astype(np.int64), t.nbr, t.blocks,
                                     puzzle.black_total, sol, solution is not None,
                                     out_rule, out_colour, out_cells, out_start)
    steps = tuple(PropagationStep(RULES[out_rule[s]], int(out_colour[s]),
                                  tuple(out_cells[out_start[s]:out_start[s + 1]].tolist()))
                  for s in range(nsteps))
    unknown = int((st == -1).sum())
    solved = unknown == 0 and bool(_solved(st, puzzle.clues.astype(np.int64), t.nbr,
                                           t.blocks, puzzle.black_total))
    grid_state = st.reshape(puzzle.shape)
    return PropagationResult(steps, solved, unknown > 0, unknown, int(hints), grid_state)


@dataclass(frozen=True, eq=False)
class Deductions:
    """What the rules force in one state: ``colour[cell]`` (-1 nothing, 0 island, 1 river)
    and ``rule[cell]`` (the id in :data:`RULES` of the simplest rule forcing it, -1)."""

    colour: np.ndarray
    rule: np.ndarray


def deductions(puzzle: NurikabePuzzle, state) -> Deductions:
    """Every cell the rules force in ``state`` at once, with the simplest rule forcing it."""
    st = as_state(puzzle, state)
    t = tables(puzzle.rows, puzzle.cols)
    dec = np.full(puzzle.ncells, -1, np.int8)
    rule_of = np.full(puzzle.ncells, -1, np.int64)
    _rules(st, puzzle.clues.astype(np.int64), t.nbr, t.blocks, puzzle.black_total, False,
           dec, rule_of, -1)
    return Deductions(dec.reshape(puzzle.shape), rule_of.reshape(puzzle.shape))


def deducible(puzzle: NurikabePuzzle, state, cell: int) -> bool:
    """Whether the rules force ``cell`` (river or island) in ``state`` at this moment."""
    if not 0 <= cell < puzzle.ncells:
        raise NurikabeError(f"cell {cell} is outside the {puzzle.rows}x{puzzle.cols} grid")
    return bool(deductions(puzzle, state).colour.reshape(-1)[cell] != -1)
