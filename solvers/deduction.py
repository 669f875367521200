"""Which technique proves each placement of a solve: the deduction engine (9×9 only).

A person with pencil marks removes candidates with techniques and keeps what they
removed; a digit is *proved* when its cell is a single in what is left (one candidate,
or the only place for the digit in a row, column or block). The engine asks, for every
placement of a solve's fill order, how strong a set of techniques the person needed
(:data:`RUNG_TECHNIQUES` names them):

==  ========  ==============================================================
 0  single    full house, hidden single, naked single (on the bare board)
 1  locked    pointing, claiming
 2  subset    naked and hidden pairs, triples, quads
 3  fish      x-wing, swordfish, jellyfish, finned (and sashimi) x-wing and
              swordfish, skyscraper, two-string kite, empty rectangle
 4  wing      xy-wing, xyz-wing, w-wing, simple colouring, unique rectangle
              type 1, BUG+1
 5  chain     xy-chain of up to 8 cells
==  ========  ==============================================================

The **closure at rung r** of a board removes candidates with every technique of rungs
1..r until none removes more, and never places a digit: each pass takes the lowest rung
that removes something, applies every elimination that rung finds on the board as it
was (all at once, so no scan order matters), and starts again from rung 1. A state
where a cell has no candidate or a unit has nowhere left for a missing digit is
*broken*: the closure stops there and says so. The techniques are those of
:data:`fairgrid.solvers.techniques.DEDUCTION_RUNGS`, the pure-Python reference the tests
hold this engine to, without their degenerate forms: a base line with one place or a
subset cell with one candidate is a single, and what a single implies is left to its
placement. Unique rectangle and BUG+1 assume the puzzle has one solution.

:func:`trace_placements` replays a fill order with the eliminations carried from moment
to moment: the closure at rung r at moment k starts from its own last state with the
placements since applied, cut to rung r-1's closure at moment k (so each rung's state
lies within the one below), and is closed again. It is lazy: at a moment the rungs are
closed upwards until one proves the placement, except at a stall (no single on the bare
board), where a stuck person hunts with everything they know and every rung is closed.
What a rung could have removed at a moment it was not closed, it removes later only if
the pattern is still there.

The techniques are not monotone: a pattern vanishes when one of its lines or cells is
down to one place or candidate (a single, which the closure does not place), so people
who eliminate in different orders reach different states, and the engine's one can
miss an elimination a person's path made. On the technique model's own fill order of
300 Sudoku Exchange puzzles (SE 5.0-9.3), 21 of 15,981 placements came out unproven
although the model had needed no more than the rungs up to chain; a single was on offer
at each of those moments and 14 of them were proved after one layer of singles
(``rung_d1``). Read ``rung`` together with ``rung_d1`` and ``offer``.

Bounds: every closure pass removes a candidate or ends the closure, so one closure makes
at most 730 passes, and a carried state at most 729 removing passes over a whole trace.
The chain rung's search is the costly step (7 µs at worst on 200 diabolical boards,
more on a board full of two-candidate cells): a trace makes at most ``chain_budget`` of
them (:data:`DEFAULT_CHAIN_BUDGET`; in ``bench/deduction.py`` a daily puzzle's own order
needed a median of 1 and at most 8, a random order of its cells 5 and at most 17), and
a placement that needs the chain rung after they are spent reports
:data:`NOT_ANALYSED`, never :data:`UNPROVEN` ("no technique up to ``max_rung`` proves
it"). Not covered: X-chains and other single-digit chains beyond skyscraper, kite and
empty rectangle, remote pairs, unique rectangles beyond type 1, ALS, sue de coq,
forcing chains and nets; a cell only those prove is :data:`UNPROVEN`. One forcing step
has a question of its own, asked of one cell at a time (:func:`trial`): whether the
other candidate of a two-candidate cell leads by singles to a contradiction, what a
stuck person tries.

:func:`needed` asks, for chosen placements of a fill order, what a person needed to
reach that cell from the board as it stood: the lowest rung whose closure, with every
single placed round after round, makes it a single (the evidence of a flagged solve
names it for its quickest placements).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .grid import PuzzleError, geometry
from .techniques import (DEDUCTION_RUNGS, FORCING_CAP, MAX_CHAIN, SINGLES, Board,
                         every_step, singles, technique_name)

SINGLE, LOCKED, SUBSET, FISH, WING, CHAIN = range(6)
UNPROVEN = 6        # no technique up to max_rung proves it
NOT_ANALYSED = 7    # the chain budget ran out before the chain rung could be asked
CONTRADICTION = 8   # proves(): the candidates are broken before the cell is proved
RUNG_NAMES = ("single", "locked", "subset", "fish", "wing", "chain")
# the techniques of each rung, cheapest first, by their names in techniques.WEIGHT
RUNG_TECHNIQUES: tuple[tuple[str, ...], ...] = (SINGLES,) + tuple(
    tuple(technique_name(t) for t in rung) for rung in DEDUCTION_RUNGS)
DEFAULT_CHAIN_BUDGET = 24     # chain searches per trace
OK, BROKEN, SPENT = 0, 1, 2   # how a closure ended

# ------------------------------------------------------------------------------ tables

_GEO = geometry(3)
_UNITS = _GEO.units.astype(np.int64)                 # unit -> its 9 cells
_PEERS = _GEO.peers.astype(np.int64)                 # cell -> its 20 peers
_CU = np.stack([_GEO.row, 9 + _GEO.col, 18 + _GEO.block], axis=1).astype(np.int64)
_CPOS = np.stack([_GEO.col, _GEO.row, (_GEO.row % 3) * 3 + _GEO.col % 3],
                 axis=1).astype(np.int64)            # cell -> its position in each unit
_SEES = np.zeros((81, 81), dtype=np.bool_)
for _c in range(81):
    _SEES[_c, _GEO.peers[_c]] = True
_POP = np.array([bin(i).count("1") for i in range(1024)], dtype=np.int64)
_LOG = np.zeros(1024, dtype=np.int64)                # bit -> its index
for _k in range(10):
    _LOG[1 << _k] = _k
_FULL = np.int64(0b1111111110)
_ONE = np.int64(1)


# ------------------------------------------------------------------- board primitives

@njit(cache=True)
def _bare(grid, cand):
    """The candidates no peer's digit excludes (0 for filled cells)."""
    for c in range(81):
        if grid[c] != 0:
            cand[c] = 0
        else:
            m = _FULL
            for k in range(20):
                m &= ~(_ONE << grid[_PEERS[c, k]])
            cand[c] = m & _FULL


@njit(cache=True)
def _positions(cand, pos):
    """pos[u, d]: where digit d may go in unit u (bit k for the unit's k-th cell)."""
    for u in range(27):
        for d in range(10):
            pos[u, d] = 0
        for k in range(9):
            m = cand[_UNITS[u, k]]
            while m != 0:
                low = m & -m
                pos[u, _LOG[low]] |= _ONE << k
                m ^= low


@njit(cache=True)
def _broken(grid, cand):
    """An empty cell without candidates, a unit with a digit nowhere, or a digit twice."""
    for c in range(81):
        if grid[c] == 0 and cand[c] == 0:
            return True
    for u in range(27):
        placed = np.int64(0)
        have = np.int64(0)
        for k in range(9):
            c = _UNITS[u, k]
            if grid[c] != 0:
                bit = _ONE << grid[c]
                if placed & bit:
                    return True
                placed |= bit
            else:
                have |= cand[c]
        if (placed | have) != _FULL:
            return True
    return False


@njit(cache=True)
def _keeps(grid, cand, solution):
    """Does every empty cell still allow its solution digit?"""
    for c in range(81):
        if grid[c] == 0 and (cand[c] >> solution[c]) & 1 == 0:
            return False
    return True


@njit(cache=True)
def _strike_common(x, y, bit, cand, elim):
    """Remove ``bit`` from every cell seeing both ``x`` and ``y``."""
    for k in range(20):
        p = _PEERS[x, k]
        if _SEES[y, p] and cand[p] & bit:
            elim[p] |= bit


@njit(cache=True)
def _groups(masks, n, gi, gu):
    """Every group of 2-4 of the ``n`` items whose masks together hold as many bits as
    the group has items: (the items as a bit mask, the union) into gi, gu; the count."""
    g = 0
    for i in range(n):
        for j in range(i + 1, n):
            u2 = masks[i] | masks[j]
            p2 = _POP[u2]
            if p2 > 4:
                continue
            if p2 == 2:
                gi[g] = (_ONE << i) | (_ONE << j)
                gu[g] = u2
                g += 1
            for l in range(j + 1, n):
                u3 = u2 | masks[l]
                p3 = _POP[u3]
                if p3 > 4:
                    continue
                if p3 == 3:
                    gi[g] = (_ONE << i) | (_ONE << j) | (_ONE << l)
                    gu[g] = u3
                    g += 1
                for q in range(l + 1, n):
                    u4 = u3 | masks[q]
                    if _POP[u4] == 4:
                        gi[g] = (_ONE << i) | (_ONE << j) | (_ONE << l) | (_ONE << q)
                        gu[g] = u4
                        g += 1
    return g


# ---------------------------------------------------------------- rung 1: locked

@njit(cache=True)
def _locked(cand, pos, elim):
    """Pointing (a block's places on one line) and claiming (a line's in one block)."""
    for b in range(18, 27):
        for d in range(1, 10):
            p = pos[b, d]
            if _POP[p] < 2:
                continue
            bit = _ONE << d
            first = _UNITS[b, _LOG[p & -p]]
            for kind in range(2):
                # one block row (kind 0) or column (kind 1) holds every place
                if kind == 0:
                    one = (p & 7) == p or (p & 0o70) == p or (p & 0o700) == p
                else:
                    one = (p & 0o111) == p or (p & 0o222) == p or (p & 0o444) == p
                if one:
                    line = _CU[first, kind]
                    for k in range(9):
                        c = _UNITS[line, k]
                        if _CU[c, 2] != b:
                            elim[c] |= cand[c] & bit
    for line in range(18):
        kind = 0 if line < 9 else 1
        for d in range(1, 10):
            p = pos[line, d]
            if _POP[p] < 2:
                continue
            if (p & 7) != p and (p & 0o70) != p and (p & 0o700) != p:
                continue
            bit = _ONE << d
            b = _CU[_UNITS[line, _LOG[p & -p]], 2]
            for k in range(9):
                c = _UNITS[b, k]
                if _CU[c, kind] != line:
                    elim[c] |= cand[c] & bit


# ---------------------------------------------------------------- rung 2: subsets

@njit(cache=True)
def _subsets(cand, pos, elim, items, ids, gi, gu):
    """Naked and hidden pairs, triples and quads of every unit."""
    for u in range(27):
        n = 0
        for k in range(9):
            m = cand[_UNITS[u, k]]
            if 2 <= _POP[m] <= 4:  # a subset's cells hold at most 4 candidates
                items[n] = m
                ids[n] = k
                n += 1
        for g in range(_groups(items, n, gi, gu)):
            inside = np.int64(0)
            for i in range(n):
                if (gi[g] >> i) & 1:
                    inside |= _ONE << ids[i]
            for k in range(9):
                if (inside >> k) & 1 == 0:
                    c = _UNITS[u, k]
                    elim[c] |= cand[c] & gu[g]
        n = 0
        for d in range(1, 10):
            if 2 <= _POP[pos[u, d]] <= 4:
                items[n] = pos[u, d]
                ids[n] = d
                n += 1
        for g in range(_groups(items, n, gi, gu)):
            keep = np.int64(0)
            for i in range(n):
                if (gi[g] >> i) & 1:
                    keep |= _ONE << ids[i]
            for k in range(9):
                if (gu[g] >> k) & 1:
                    c = _UNITS[u, k]
                    elim[c] |= cand[c] & ~keep


# ------------------------------------------------------------------- rung 3: fish

@njit(cache=True)
def _fish(cand, pos, elim, items, ids, gi, gu):
    """X-wing, swordfish, jellyfish: 2-4 base lines whose places lie on as many cover
    lines; the cover lines lose the digit outside the base lines."""
    for d in range(1, 10):
        bit = _ONE << d
        for o in range(2):
            n = 0
            for i in range(9):
                p = pos[9 * o + i, d]
                if 2 <= _POP[p] <= 4:
                    items[n] = p
                    ids[n] = i
                    n += 1
            for g in range(_groups(items, n, gi, gu)):
                base = np.int64(0)
                for i in range(n):
                    if (gi[g] >> i) & 1:
                        base |= _ONE << ids[i]
                for j in range(9):
                    if (gu[g] >> j) & 1:
                        for i in range(9):
                            if (base >> i) & 1 == 0:
                                c = _UNITS[9 * (1 - o) + j, i]
                                elim[c] |= cand[c] & bit


@njit(cache=True)
def _finned_cover(cand, pos, elim, d, o, lines, k, union, s):
    """Eliminations of the finned fish on base lines ``lines[:k]`` (their places'
    union is ``union``) with its fins in block column (or row) ``s``: every choice of
    the cover lines there."""
    bit = _ONE << d
    chunk = np.int64(7) << (3 * s)
    need = k - _POP[union & ~chunk]
    inside = union & chunk
    if need < 1 or _POP[inside] <= need:
        return
    t = inside
    while t != 0:  # every subset of the fins' columns, as the covers there
        if _POP[t] == need:
            fins = inside & ~t
            band = -1
            ok = True
            for i in range(k):
                if pos[9 * o + lines[i], d] & fins:
                    if band == -1:
                        band = lines[i] // 3
                    elif band != lines[i] // 3:
                        ok = False
            if ok:
                for i in range(3 * band, 3 * band + 3):
                    based = False
                    for m in range(k):
                        if lines[m] == i:
                            based = True
                    if not based:
                        for j in range(9):
                            if (t >> j) & 1:
                                c = _UNITS[9 * o + i, j]
                                elim[c] |= cand[c] & bit
        t = (t - 1) & inside


@njit(cache=True)
def _finned(cand, pos, elim, items, ids):
    """Finned (and sashimi) x-wings and swordfish: base lines with at least two places,
    every place outside one block's fins on the cover lines; cover cells in the fins'
    block, off the base lines, lose the digit. Searched per block column of fins: a
    base line has at most k-1 places outside it."""
    lines = np.empty(3, dtype=np.int64)
    for d in range(1, 10):
        for o in range(2):
            for s in range(3):
                chunk = np.int64(7) << (3 * s)
                n = 0
                for i in range(9):
                    p = pos[9 * o + i, d]
                    if _POP[p] >= 2 and _POP[p & ~chunk] <= 2:
                        items[n] = p
                        ids[n] = i
                        n += 1
                for a in range(n):
                    for b in range(a + 1, n):
                        u2 = items[a] | items[b]
                        out2 = _POP[u2 & ~chunk]
                        if out2 > 2:
                            continue
                        lines[0] = ids[a]
                        lines[1] = ids[b]
                        if out2 <= 1 and _POP[u2] > 2:
                            _finned_cover(cand, pos, elim, d, o, lines, 2, u2, s)
                        for e in range(b + 1, n):
                            u3 = u2 | items[e]
                            if _POP[u3 & ~chunk] <= 2 and _POP[u3] > 3:
                                lines[2] = ids[e]
                                _finned_cover(cand, pos, elim, d, o, lines, 3, u3, s)


@njit(cache=True)
def _links(pos, d, first, last, ca, cb):
    """The strong links (two places) of digit ``d`` in units first..last-1: their
    cells into ca, cb; the count."""
    n = 0
    for u in range(first, last):
        p = pos[u, d]
        if _POP[p] == 2:
            ca[n] = _UNITS[u, _LOG[p & -p]]
            cb[n] = _UNITS[u, _LOG[p & (p - 1)]]
            n += 1
    return n


@njit(cache=True)
def _single_digit(cand, pos, elim, la, lb, ra, rb):
    """Skyscraper, two-string kite and empty rectangle."""
    for d in range(1, 10):
        bit = _ONE << d
        nr = _links(pos, d, 0, 9, ra, rb)      # rows
        nc = _links(pos, d, 9, 18, la, lb)     # columns
        # skyscrapers: two parallel links with one end each on a common cross line
        for o in range(2):
            n = nr if o == 0 else nc
            xa = ra if o == 0 else la
            xb = rb if o == 0 else lb
            cross = 1 if o == 0 else 0
            for i in range(n):
                for j in range(i + 1, n):
                    for f in range(2):
                        base_i = xa[i] if f == 0 else xb[i]
                        top_i = xb[i] if f == 0 else xa[i]
                        for g in range(2):
                            base_j = xa[j] if g == 0 else xb[j]
                            top_j = xb[j] if g == 0 else xa[j]
                            if _CU[base_i, cross] == _CU[base_j, cross] and \
                                    _CU[top_i, cross] != _CU[top_j, cross]:
                                _strike_common(top_i, top_j, bit, cand, elim)
        # kites: a row link and a column link with one end each in a common block
        for i in range(nr):
            for j in range(nc):
                for f in range(2):
                    near_r = ra[i] if f == 0 else rb[i]
                    far_r = rb[i] if f == 0 else ra[i]
                    for g in range(2):
                        near_c = la[j] if g == 0 else lb[j]
                        far_c = lb[j] if g == 0 else la[j]
                        if near_r == near_c or near_r == far_c or far_r == near_c \
                                or far_r == far_c or _CU[near_r, 2] != _CU[near_c, 2]:
                            continue
                        _strike_common(far_r, far_c, bit, cand, elim)
        # empty rectangles
        for b in range(18, 27):
            p = pos[b, d]
            if _POP[p] < 2:
                continue
            band = (b - 18) // 3
            stack = (b - 18) % 3
            for i in range(3):
                row_arm = np.int64(7) << (3 * i)
                for j in range(3):
                    col_arm = np.int64(0o111) << j
                    centre = _ONE << (3 * i + j)
                    if p & ~(row_arm | col_arm) or p & row_arm & ~centre == 0 \
                            or p & col_arm & ~centre == 0:
                        continue
                    r = 3 * band + i
                    c = 3 * stack + j
                    for m in range(nc):  # a column link outside the stack, one end on row r
                        for f in range(2):
                            near = la[m] if f == 0 else lb[m]
                            far = lb[m] if f == 0 else la[m]
                            if near // 9 == r and (near % 9) // 3 != stack \
                                    and (far // 9) // 3 != band:
                                t = 9 * (far // 9) + c
                                elim[t] |= cand[t] & bit
                    for m in range(nr):  # a row link outside the band, one end on column c
                        for f in range(2):
                            near = ra[m] if f == 0 else rb[m]
                            far = rb[m] if f == 0 else ra[m]
                            if near % 9 == c and (near // 9) // 3 != band \
                                    and (far % 9) // 3 != stack:
                                t = 9 * r + far % 9
                                elim[t] |= cand[t] & bit


# ------------------------------------------------------------------- rung 4: wings

@njit(cache=True)
def _bivalues(cand, out):
    n = 0
    for c in range(81):
        if _POP[cand[c]] == 2:
            out[n] = c
            n += 1
    return n


@njit(cache=True)
def _wings(cand, pos, elim, bival, nb):
    """XY-wings, XYZ-wings and W-wings."""
    for i in range(nb):
        pivot = bival[i]
        pm = cand[pivot]
        for j in range(nb):
            a = bival[j]
            if not _SEES[pivot, a] or _POP[cand[a] & pm] != 1:
                continue
            for l in range(j + 1, nb):
                w = bival[l]
                if not _SEES[pivot, w] or _POP[cand[w] & pm] != 1:
                    continue
                z = cand[a] & ~pm
                if z != cand[w] & ~pm or cand[a] & pm == cand[w] & pm:
                    continue
                for k in range(20):
                    p = _PEERS[a, k]
                    if p != pivot and _SEES[w, p] and cand[p] & z:
                        elim[p] |= z
    for pivot in range(81):
        pm = cand[pivot]
        if _POP[pm] != 3:
            continue
        for j in range(20):
            a = _PEERS[pivot, j]
            if _POP[cand[a]] != 2 or cand[a] & ~pm:
                continue
            for l in range(j + 1, 20):
                w = _PEERS[pivot, l]
                if _POP[cand[w]] != 2 or cand[w] & ~pm or cand[a] | cand[w] != pm:
                    continue
                z = cand[a] & cand[w]
                for k in range(20):
                    p = _PEERS[a, k]
                    if _SEES[w, p] and _SEES[pivot, p]:
                        elim[p] |= cand[p] & z
    for i in range(nb):
        a = bival[i]
        for j in range(i + 1, nb):
            w = bival[j]
            if cand[w] != cand[a] or _SEES[a, w]:
                continue
            m = cand[a]
            while m != 0:
                x = m & -m
                m ^= x
                y = cand[a] & ~x
                dx = _LOG[x]
                for u in range(27):
                    p = pos[u, dx]
                    if _POP[p] != 2:
                        continue
                    s = _UNITS[u, _LOG[p & -p]]
                    t = _UNITS[u, _LOG[p & (p - 1)]]
                    if s == a or s == w or t == a or t == w:
                        continue
                    if (_SEES[s, a] and _SEES[t, w]) or (_SEES[s, w] and _SEES[t, a]):
                        _strike_common(a, w, y, cand, elim)
                        break


@njit(cache=True)
def _colouring(cand, pos, elim, adj, nadj, colour, cluster, queue):
    """Simple colouring of every digit's strong links: a colour twice in a unit is false
    (wrap); a cell seeing both colours loses the digit (trap). Clusters of 4+ cells."""
    for d in range(1, 10):
        bit = _ONE << d
        for c in range(81):
            nadj[c] = 0
            colour[c] = -1
            cluster[c] = -1
        for u in range(27):
            p = pos[u, d]
            if _POP[p] == 2:
                x = _UNITS[u, _LOG[p & -p]]
                y = _UNITS[u, _LOG[p & (p - 1)]]
                adj[x, nadj[x]] = y
                nadj[x] += 1
                adj[y, nadj[y]] = x
                nadj[y] += 1
        for start in range(81):
            if nadj[start] == 0 or colour[start] >= 0:
                continue
            colour[start] = 0
            cluster[start] = start
            queue[0] = start
            size = 1
            head = 0
            while head < size:
                c = queue[head]
                head += 1
                for k in range(nadj[c]):
                    o = adj[c, k]
                    if colour[o] < 0:
                        colour[o] = 1 - colour[c]
                        cluster[o] = start
                        queue[size] = o
                        size += 1
            if size < 4:
                continue
            for side in range(2):
                wrap = False
                for i in range(size):
                    for j in range(i + 1, size):
                        x = queue[i]
                        y = queue[j]
                        if colour[x] == side and colour[y] == side and _SEES[x, y]:
                            wrap = True
                if wrap:
                    for i in range(size):
                        if colour[queue[i]] == side:
                            elim[queue[i]] |= bit
            for x in range(81):
                if cand[x] & bit == 0 or cluster[x] == start:
                    continue
                seen = 0
                for i in range(size):
                    if _SEES[x, queue[i]]:
                        seen |= 1 << colour[queue[i]]
                if seen == 3:
                    elim[x] |= bit


@njit(cache=True)
def _uniqueness(grid, cand, pos, elim):
    """Unique rectangle type 1 and BUG+1 (both assume a puzzle with one solution)."""
    # three corners hold the pair, so one row holds two of them: start from that row
    for r in range(9):
        for i in range(9):
            pair = cand[9 * r + i]
            if _POP[pair] != 2:
                continue
            for j in range(i + 1, 9):
                if cand[9 * r + j] != pair:
                    continue
                for r2 in range(9):
                    if r2 == r or ((r2 // 3 == r // 3) == (j // 3 == i // 3)):
                        continue  # the rectangle must span two blocks
                    a = 9 * r2 + i
                    b = 9 * r2 + j
                    if cand[a] == pair and cand[b] & pair == pair and cand[b] != pair:
                        elim[b] |= pair
                    if cand[b] == pair and cand[a] & pair == pair and cand[a] != pair:
                        elim[a] |= pair
    extra = -1
    for c in range(81):
        if grid[c] == 0:
            k = _POP[cand[c]]
            if k == 3 and extra == -1:
                extra = c
            elif k != 2:
                return
    if extra == -1:
        return
    m = cand[extra]
    while m != 0:
        low = m & -m
        m ^= low
        d = _LOG[low]
        bug = True
        for u in range(27):
            for e in range(1, 10):
                k = _POP[pos[u, e]]
                if e == d and (_CU[extra, 0] == u or _CU[extra, 1] == u
                               or _CU[extra, 2] == u):
                    k -= 1
                if k != 0 and k != 2:
                    bug = False
        if bug:
            elim[extra] |= cand[extra] & ~low
            return


# ------------------------------------------------------------------- rung 5: chains

@njit(cache=True)
def _xy_chains(cand, elim, bival, nb, lit, adj, nadj, stamp, fa, fb):
    """Every xy-chain of 3..MAX_CHAIN cells, breadth-first over "cell holds digit"
    literals from each start (a literal is reached once, at its shortest length)."""
    # literal 2i + t: bival[i] holds its t-th digit (lowest first)
    index = np.full(81, -1, dtype=np.int64)
    for i in range(nb):
        index[bival[i]] = i
        low = cand[bival[i]] & -cand[bival[i]]
        lit[2 * i] = low
        lit[2 * i + 1] = cand[bival[i]] & ~low
    for i in range(nb):
        x = bival[i]
        for t in range(2):
            h = lit[2 * i + t]
            n = 0
            for k in range(20):
                j = index[_PEERS[x, k]]
                if j >= 0 and cand[bival[j]] & h:
                    adj[2 * i + t, n] = 2 * j + (1 if lit[2 * j] == h else 0)
                    n += 1
            nadj[2 * i + t] = n
    tick = np.int64(0)
    for i in range(2 * nb):
        stamp[i] = 0
    for s in range(2 * nb):
        start = bival[s // 2]
        z = lit[s ^ 1]
        tick += 1
        stamp[s] = tick
        fa[0] = s
        nf = 1
        for length in range(2, MAX_CHAIN + 1):
            nn = 0
            for f in range(nf):
                node = fa[f]
                for k in range(nadj[node]):
                    nxt = adj[node, k]
                    if stamp[nxt] == tick:
                        continue
                    stamp[nxt] = tick
                    fb[nn] = nxt
                    nn += 1
                    end = bival[nxt // 2]
                    if length >= 3 and lit[nxt] == z and end != start:
                        _strike_common(start, end, z, cand, elim)
            for f in range(nn):
                fa[f] = fb[f]
            nf = nn
            if nf == 0:
                break


# ----------------------------------------------------------------------- the closure

@njit(cache=True)
def _workspace():
    return (np.zeros((27, 10), dtype=np.int64),      # 0 pos
            np.zeros(81, dtype=np.int64),            # 1 elim
            np.zeros(16, dtype=np.int64),            # 2 items
            np.zeros(16, dtype=np.int64),            # 3 ids
            np.zeros(256, dtype=np.int64),           # 4 group items
            np.zeros(256, dtype=np.int64),           # 5 group unions
            np.zeros(81, dtype=np.int64),            # 6 bivalue cells / link ends
            np.zeros(162, dtype=np.int64),           # 7 literal digits / link ends
            np.zeros((162, 20), dtype=np.int64),     # 8 adjacency
            np.zeros(162, dtype=np.int64),           # 9 adjacency sizes
            np.zeros(162, dtype=np.int64),           # 10 stamps / colours
            np.zeros(162, dtype=np.int64),           # 11 frontier / clusters
            np.zeros(162, dtype=np.int64),           # 12 frontier / queue
            np.zeros(27, dtype=np.int64),            # 13 link ends
            np.zeros(27, dtype=np.int64))            # 14 link ends


@njit(cache=True)
def _rung(q, grid, cand, ws):
    """Every elimination of rung ``q``'s techniques on the board as it is, into ws[1]."""
    pos, elim = ws[0], ws[1]
    for c in range(81):
        elim[c] = 0
    if q == LOCKED:
        _locked(cand, pos, elim)
    elif q == SUBSET:
        _subsets(cand, pos, elim, ws[2], ws[3], ws[4], ws[5])
    elif q == FISH:
        _fish(cand, pos, elim, ws[2], ws[3], ws[4], ws[5])
        _finned(cand, pos, elim, ws[2], ws[3])
        _single_digit(cand, pos, elim, ws[6], ws[7], ws[13], ws[14])
    elif q == WING:
        nb = _bivalues(cand, ws[6])
        _wings(cand, pos, elim, ws[6], nb)
        _colouring(cand, pos, elim, ws[8], ws[9], ws[10], ws[11], ws[12])
        _uniqueness(grid, cand, pos, elim)
    elif q == CHAIN:
        nb = _bivalues(cand, ws[6])
        _xy_chains(cand, elim, ws[6], nb, ws[7], ws[8], ws[9], ws[10], ws[11], ws[12])


@njit(cache=True)
def _close(grid, cand, rung, ws, budget, first):
    """Close ``cand`` at ``rung`` in place (see the module doc): OK, BROKEN, or SPENT
    when the chain rung was needed with budget[0] at 0 (``cand`` is then sound but not
    closed). ``first`` > 1 says ``cand`` is closed at rung first-1 already (the first
    pass skips those rungs). budget[1] counts the chain searches made, budget[1+q] the
    passes that asked rung q."""
    pos, elim = ws[0], ws[1]
    while True:
        if _broken(grid, cand):
            return BROKEN
        _positions(cand, pos)
        progressed = False
        for q in range(first, rung + 1):
            if q == CHAIN:
                if budget[0] <= 0:
                    return SPENT
                budget[0] -= 1
                budget[1] += 1
            budget[1 + q] += 1
            _rung(q, grid, cand, ws)
            for c in range(81):
                if elim[c] & cand[c]:
                    cand[c] &= ~elim[c]
                    progressed = True
            if progressed:
                break
        if not progressed:
            return OK
        first = 1


@njit(cache=True)
def _single_at(cand, pos, c, d):
    """Is ``c`` a single for ``d``: its one candidate, or ``d``'s one place in a unit?"""
    if cand[c] == _ONE << d:
        return True
    for i in range(3):
        if pos[_CU[c, i], d] == _ONE << _CPOS[c, i]:
            return True
    return False


@njit(cache=True)
def _singles(cand, pos, cells, digits):
    """Every (cell, digit) single (a cell listed once per digit); their count."""
    n = 0
    for c in range(81):
        if _POP[cand[c]] == 1:
            cells[n] = c
            digits[n] = _LOG[cand[c]]
            n += 1
    for u in range(27):
        for d in range(1, 10):
            p = pos[u, d]
            if _POP[p] == 1:
                c = _UNITS[u, _LOG[p]]
                seen = False
                for i in range(n):
                    if cells[i] == c and digits[i] == d:
                        seen = True
                        break
                if not seen:
                    cells[n] = c
                    digits[n] = d
                    n += 1
    return n


@njit(cache=True)
def _single_cells(cand, pos, mark):
    """How many cells are singles (for some digit)."""
    for c in range(81):
        mark[c] = _POP[cand[c]] == 1
    for u in range(27):
        for d in range(1, 10):
            p = pos[u, d]
            if _POP[p] == 1:
                mark[_UNITS[u, _LOG[p]]] = True
    n = 0
    for c in range(81):
        n += mark[c]
    return n


@njit(cache=True)
def _place(grid, cand, c, d):
    grid[c] = d
    cand[c] = 0
    clear = ~(_ONE << d)
    for k in range(20):
        cand[_PEERS[c, k]] &= clear


@njit(cache=True)
def _place_singles(grid, cand, solution, sc, sd, n):
    """Place the ``n`` singles (sc[i], sd[i]); False, leaving them half placed, at the
    first that is not ``solution``'s digit (unsound techniques, or not the puzzle's one
    solution)."""
    for i in range(n):
        if sd[i] != solution[sc[i]]:
            return False
        if grid[sc[i]] == 0:
            _place(grid, cand, sc[i], sd[i])
    return True


@njit(cache=True)
def eliminations_kernel(grid, cand, q):
    """What one pass of rung ``q`` alone removes from ``cand`` (for tests)."""
    ws = _workspace()
    _positions(cand, ws[0])
    _rung(q, grid, cand, ws)
    return ws[1] & cand


@njit(cache=True)
def closure_kernel(grid, cand, rung, budget):
    """Close ``cand`` (already within the bare candidates of ``grid``) at ``rung``."""
    return _close(grid, cand, rung, _workspace(), budget, 1)


@njit(cache=True)
def proves_kernel(grid, cand, cell, digit, max_rung):
    """The lowest rung whose closure of ``cand`` makes ``cell`` a single for
    ``digit``; UNPROVEN, or CONTRADICTION if the candidates break first."""
    ws = _workspace()
    budget = np.array([1 << 30, 0, 0, 0, 0, 0, 0], dtype=np.int64)
    for r in range(max_rung + 1):
        # closed at r-1 already: the pass at r starts there
        if _close(grid, cand, r, ws, budget, max(r, 1)) == BROKEN:
            return CONTRADICTION
        _positions(cand, ws[0])
        if _single_at(cand, ws[0], cell, digit):
            return r
    return UNPROVEN


# ----------------------------------------------------------------------- the trace

@njit(cache=True)
def _one_layer(grid, cand, r, solution, cell, ws, budget, sgrid, scand, sc, sd, reuse):
    """Place every single of ``cand`` (rung ``r``'s closure), close again at ``r``: is
    ``cell`` then a single for its digit? 1 yes, 0 no, -1 the state contradicted the
    solution, -2 the chain budget ran out. ``reuse``: ``cand`` is rung r-1's closure
    too and sgrid, scand hold its layer closed at r-1 (a closure at r passes through
    the one at r-1 first, so it goes on from there)."""
    pos = ws[0]
    first = r
    if not reuse:
        first = 1
        _positions(cand, pos)
        n = _singles(cand, pos, sc, sd)
        if n == 0:
            return 0
        for c in range(81):
            sgrid[c] = grid[c]
            scand[c] = cand[c]
        if not _place_singles(sgrid, scand, solution, sc, sd, n):
            return -1
    if r > 0:
        st = _close(sgrid, scand, r, ws, budget, first)
        if st == SPENT:
            return -2
        if st == BROKEN:
            return -1
    elif _broken(sgrid, scand):
        return -1
    if not _keeps(sgrid, scand, solution):
        return -1
    _positions(scand, pos)
    return 1 if _single_at(scand, pos, cell, solution[cell]) else 0


@njit(cache=True)
def trace_kernel(givens, solution, cells, max_rung, d1_from, budget,
                 out_rung, out_d1, out_offer, out_offers, out_bare, out_closed):
    """Fill the per-placement arrays (see :func:`trace_placements`); returns -1, or the
    index of the placement where a closure contradicted ``solution``."""
    ws = _workspace()
    pos = ws[0]
    grid = givens.copy()
    closed = np.empty((max_rung + 1, 81), dtype=np.int64)
    _bare(grid, closed[0])
    for r in range(1, max_rung + 1):
        closed[r, :] = closed[0]
    mark = np.zeros(81, dtype=np.bool_)
    sgrid = np.empty(81, dtype=np.int64)
    scand = np.empty(81, dtype=np.int64)
    sc = np.empty(81 * 9, dtype=np.int64)
    sd = np.empty(81 * 9, dtype=np.int64)
    chain_ok = True
    for k in range(cells.shape[0]):
        c = cells[k]
        d = solution[c]
        rung = UNPROVEN
        offer = UNPROVEN
        offers = 0
        top = 0
        for r in range(max_rung + 1):
            if r > 0:
                if r == CHAIN and not chain_ok:
                    if rung == UNPROVEN:
                        rung = NOT_ANALYSED
                    break
                cur = closed[r]
                same = True
                for x in range(81):
                    cur[x] &= closed[r - 1, x]
                    same = same and cur[x] == closed[r - 1, x]
                # nothing carried beyond rung r-1's closure: only rung r can add
                st = _close(grid, cur, r, ws, budget, r if same else 1)
                if st == SPENT:
                    chain_ok = False  # its state is no longer closed: never read again
                    if rung == UNPROVEN:
                        rung = NOT_ANALYSED
                    break
                if st == BROKEN or not _keeps(grid, cur, solution):
                    return k
            top = r
            if r == 0:
                _positions(closed[r], pos)  # (a closure leaves pos of its final state)
            if offer == UNPROVEN:
                n = _single_cells(closed[r], pos, mark)
                if n > 0:
                    offer = r
                    offers = n
            if rung == UNPROVEN and _single_at(closed[r], pos, c, d):
                rung = r
            # at a stall (no single on the bare board) a person hunts with every
            # technique they know: there every rung is closed, so that what it removes
            # is carried on even where this placement needed less
            if rung != UNPROVEN and offer == 0:
                break
        if rung == NOT_ANALYSED and offer == UNPROVEN:
            offer = NOT_ANALYSED
        d1 = rung
        if rung >= d1_from:
            layered = -1  # the rung whose layer sgrid, scand hold, closed
            for r in range(offer, min(top + 1, rung)):  # no single below offer
                if r == CHAIN and not chain_ok:
                    break
                reuse = r > 0 and layered == r - 1
                if reuse:
                    for x in range(81):
                        if closed[r, x] != closed[r - 1, x]:
                            reuse = False
                            break
                got = _one_layer(grid, closed[r], r, solution, c, ws, budget,
                                 sgrid, scand, sc, sd, reuse)
                layered = r
                if got == -1:
                    return k
                if got == -2:
                    chain_ok = False
                    if rung == UNPROVEN:
                        d1 = NOT_ANALYSED
                    break
                if got == 1:
                    d1 = r
                    break
        out_rung[k] = rung
        out_d1[k] = d1
        out_offer[k] = offer
        out_offers[k] = offers
        out_bare[k] = _POP[closed[0, c]]
        out_closed[k] = _POP[closed[top, c]]
        grid[c] = d
        for r in range(max_rung + 1):
            _place(grid, closed[r], c, d)
    return -1


# ------------------------------------------------------------------ what a cell needed

@njit(cache=True)
def _needed(grid, cell, solution, max_rung, ws, budget, cand, sc, sd):
    """The lowest rung r at which closing ``grid``'s bare candidates and placing every
    single, round after round, makes ``cell`` a single for its digit (see
    :func:`needed`); ``grid`` is changed."""
    pos = ws[0]
    _bare(grid, cand)
    d = solution[cell]
    r = 0
    while True:     # each round places a digit or climbs a rung: at most 81 + max_rung
        if r > 0:
            st = _close(grid, cand, r, ws, budget, 1)
            if st == SPENT:
                return NOT_ANALYSED
            if st == BROKEN:
                return CONTRADICTION
        elif _broken(grid, cand):
            return CONTRADICTION
        if not _keeps(grid, cand, solution):
            return CONTRADICTION
        _positions(cand, pos)
        if _single_at(cand, pos, cell, d):
            return r
        n = _singles(cand, pos, sc, sd)
        if n == 0:
            if r == max_rung:
                return UNPROVEN
            r += 1
            continue
        if not _place_singles(grid, cand, solution, sc, sd, n):
            return CONTRADICTION


@njit(cache=True)
def needed_kernel(givens, solution, cells, ask, max_rung, budget, out):
    """``out[k]``: for each placement ``k`` with ``ask[k]``, :func:`_needed` on the board
    just before it (the givens and the placements before it, each its solution digit);
    -1 where not asked."""
    ws = _workspace()
    grid = givens.copy()
    g = np.empty(81, dtype=np.int64)
    cand = np.empty(81, dtype=np.int64)
    sc = np.empty(81 * 9, dtype=np.int64)
    sd = np.empty(81 * 9, dtype=np.int64)
    for k in range(cells.shape[0]):
        out[k] = -1
        if ask[k]:
            for x in range(81):
                g[x] = grid[x]
            out[k] = _needed(g, cells[k], solution, max_rung, ws, budget, cand, sc, sd)
        grid[cells[k]] = solution[cells[k]]


# ------------------------------------------------------------------ a fresh look

@njit(cache=True)
def look_kernel(grid, cand, cell, digit, max_rung, max_looks):
    """How many looks at the board make ``cell`` a single for ``digit`` (0: it is one
    already): each look removes, all at once, every candidate that any technique of
    rungs 1..max_rung finds on the board as it then is. ``max_looks`` + 1 when more are
    needed; ``max_looks`` + 2 when no number of looks does (they stop removing, or the
    candidates break). ``cand`` is changed."""
    ws = _workspace()
    pos, elim = ws[0], ws[1]
    acc = np.zeros(81, dtype=np.int64)
    look = 0
    while True:     # each look removes a candidate or ends: at most 730
        if _broken(grid, cand):
            return max_looks + 2
        _positions(cand, pos)
        if _single_at(cand, pos, cell, digit):
            return look if look <= max_looks else max_looks + 1
        for c in range(81):
            acc[c] = 0
        for q in range(1, max_rung + 1):
            _rung(q, grid, cand, ws)
            for c in range(81):
                acc[c] |= elim[c]
        moved = False
        for c in range(81):
            if acc[c] & cand[c]:
                cand[c] &= ~acc[c]
                moved = True
        if not moved:
            return max_looks + 2
        look += 1


# ------------------------------------------------------------------ a trial

@njit(cache=True)
def trial_kernel(grid, cell, digit, cap):
    """Does the other candidate of two-candidate ``cell`` (on the bare board) lead by
    singles to a contradiction within ``cap`` singles placed? Every single on offer is
    placed at once, round after round: two that clash (two digits for a cell, a digit
    twice in a unit) are the contradiction, and a round that would pass ``cap`` is not
    placed (so the answer does not depend on the order singles are found in)."""
    g = grid.copy()
    cand = np.empty(81, dtype=np.int64)
    _bare(g, cand)
    m = cand[cell]
    if _POP[m] != 2 or (m >> digit) & 1 == 0:
        return False
    _place(g, cand, cell, _LOG[m & ~(_ONE << digit)])
    pos = np.zeros((27, 10), dtype=np.int64)
    sc = np.empty(81 * 9, dtype=np.int64)
    sd = np.empty(81 * 9, dtype=np.int64)
    placed = 0
    while True:
        if _broken(g, cand):
            return True
        _positions(cand, pos)
        n = _singles(cand, pos, sc, sd)
        if n == 0:
            return False
        for i in range(n):
            for j in range(i + 1, n):
                if sc[i] == sc[j] or (sd[i] == sd[j] and _SEES[sc[i], sc[j]]):
                    return True
        if placed + n > cap:
            return False
        for i in range(n):
            _place(g, cand, sc[i], sd[i])
        placed += n


# ------------------------------------------------------------------ pencil marks

@njit(cache=True)
def marks_kernel(t_ms, cell, digit, note, empty, fill_at, placed_t, masks, narrowed):
    """Replay a move log's pencil marks (a note ``(cell, d)`` toggles mark d, ``(cell,
    0)`` clears the cell's marks; a placed digit hides them): fill row ``fill_at[i]`` of
    ``masks`` (the marks of the cells still empty) and ``narrowed`` (a cell that has
    held two or more marks) just before move i, where fill_at[i] >= 0. ``placed_t``:
    the sorted times of the placements. Returns how many marks were removed by hand (a
    note removing a mark at an instant no placement shares: not the portal's strike)."""
    marks = np.zeros(81, dtype=np.int64)
    peak = np.zeros(81, dtype=np.int64)
    filled = np.zeros(81, dtype=np.bool_)
    struck = 0
    for i in range(t_ms.shape[0]):
        c = cell[i]
        d = digit[i]
        if c < 0 or c >= 81 or not empty[c] or d < 0 or d > 9:
            continue
        if note[i]:
            if d > 0 and (marks[c] >> d) & 1:
                j = np.searchsorted(placed_t, t_ms[i])
                if j >= placed_t.shape[0] or placed_t[j] != t_ms[i]:
                    struck += 1
            marks[c] = 0 if d == 0 else marks[c] ^ (_ONE << d)
            n = _POP[marks[c] & 1023]
            if n > peak[c]:
                peak[c] = n
            continue
        k = fill_at[i]
        if k >= 0:
            for x in range(81):
                masks[k, x] = 0 if filled[x] else marks[x]
                narrowed[k, x] = peak[x] >= 2
        filled[c] = d != 0
    return struck


# ------------------------------------------------------------------------ Python API

@dataclass(frozen=True, eq=False)
class PlacementTrace:
    """Per placement of a fill order (arrays of the order's length):

    * ``rung``: the lowest rung whose closure makes the cell a single just before it
      was placed; :data:`UNPROVEN` if none up to ``max_rung`` does,
      :data:`NOT_ANALYSED` if the chain rung was needed after the budget ran out;
    * ``rung_d1``: the same after one layer of placements (every single of the rung's
      closure placed, closed again), worked out where ``rung >= d1_from`` (elsewhere it
      equals ``rung``); never above ``rung``;
    * ``offer``: the lowest rung at which any empty cell was a single (the easiest move
      on offer), ``offers`` how many cells were singles there;
    * ``cands_bare``: candidates the bare board left in the cell, ``cands_closed``:
      those left by the highest closure worked out at that moment.

    ``chain_searches`` is how many chain-rung searches the trace made.
    """

    rung: np.ndarray
    rung_d1: np.ndarray
    offer: np.ndarray
    offers: np.ndarray
    cands_bare: np.ndarray
    cands_closed: np.ndarray
    chain_searches: int
    max_rung: int


def rung_name(rung: int) -> str:
    """'single' .. 'chain', 'unproven', 'not analysed' or 'contradiction'."""
    if 0 <= rung < len(RUNG_NAMES):
        return RUNG_NAMES[rung]
    return {UNPROVEN: "unproven", NOT_ANALYSED: "not analysed",
            CONTRADICTION: "contradiction"}[rung]


def _check_rung(max_rung: int) -> int:
    if not isinstance(max_rung, (int, np.integer)) or not 0 <= max_rung <= CHAIN:
        raise ValueError(f"max_rung must be an int 0..{CHAIN}, got {max_rung!r}")
    return int(max_rung)


def _grid_of(values, name: str) -> np.ndarray:
    grid = np.asarray(values)
    if grid.shape != (81,) or not np.issubdtype(grid.dtype, np.integer):
        raise PuzzleError(f"{name} must be 81 integers (the deduction engine is 9×9 "
                          f"only), got shape {grid.shape}")
    if grid.min() < 0 or grid.max() > 9:
        raise PuzzleError(f"{name} holds a digit outside 0..9")
    return grid.astype(np.int64)


def _masks_of(cand_masks, grid: np.ndarray) -> np.ndarray:
    masks = np.asarray(cand_masks)
    if masks.shape != (81,) or not np.issubdtype(masks.dtype, np.integer):
        raise ValueError(f"candidate masks must be 81 integers, got shape {masks.shape}")
    bare = np.empty(81, dtype=np.int64)
    _bare(grid, bare)
    return masks.astype(np.int64) & bare


def _cell_question(cand_masks, grid, cell: int, digit: int):
    """(grid, masks) checked for a question about one empty cell and one digit."""
    grid = _grid_of(grid, "grid")
    cand = _masks_of(cand_masks, grid)
    if not 0 <= cell < 81 or grid[cell]:
        raise ValueError(f"cell {cell} is not an empty cell of the grid")
    if not 1 <= digit <= 9:
        raise ValueError(f"digit must be 1..9, got {digit}")
    return grid, cand


def bare_counts(grid, cand_masks=None) -> np.ndarray:
    """Per cell, how many digits no peer's digit excludes (0 for filled cells): the
    candidates of the bare board, before any technique; with ``cand_masks`` (anyone's
    pencil marks, as for :func:`closure`), those of them the bare board leaves."""
    grid = _grid_of(grid, "grid")
    if cand_masks is not None:
        return _POP[_masks_of(cand_masks, grid)]
    bare = np.empty(81, dtype=np.int64)
    _bare(grid, bare)
    return _POP[bare]


@dataclass(frozen=True, eq=False)
class Closure:
    """A closure's candidate masks (bit d for digit d, 0 for filled cells) and whether
    the candidates were broken (then ``candidates`` is the state where it stopped)."""

    candidates: np.ndarray
    broken: bool


def closure(cand_masks, grid, max_rung: int = CHAIN) -> Closure:
    """Close candidate masks (bit d for digit d, the :mod:`propagation` convention) on
    the board ``grid`` (81 digits, 0 = empty) at ``max_rung``. The masks are first cut
    to the candidates the board's digits leave; they may be anyone's pencil marks, right
    or wrong: a broken state stops the closure and is reported, never raised."""
    grid = _grid_of(grid, "grid")
    cand = _masks_of(cand_masks, grid)
    budget = np.array([1 << 30, 0, 0, 0, 0, 0, 0], dtype=np.int64)
    st = closure_kernel(grid, cand, _check_rung(max_rung), budget)
    return Closure(cand, st == BROKEN)


def proves(cand_masks, grid, cell: int, digit: int, max_rung: int = CHAIN) -> int:
    """The lowest rung whose closure of these candidate masks on ``grid`` makes
    ``cell`` a single for ``digit`` (0 when it already is one): :data:`UNPROVEN` when
    none up to ``max_rung`` does, :data:`CONTRADICTION` when the candidates break
    before. Masks as for :func:`closure`."""
    grid, cand = _cell_question(cand_masks, grid, cell, digit)
    return int(proves_kernel(grid, cand, int(cell), int(digit), _check_rung(max_rung)))


def looks(cand_masks, grid, cell: int, digit: int, max_rung: int,
          max_looks: int = 3) -> int:
    """How many looks at the board (every elimination of rungs 1..``max_rung`` on the
    board as it stands, all at once) make ``cell`` a single for ``digit``, from these
    candidate masks: 0 when it is one already, ``max_looks`` + 1 when more than
    ``max_looks`` are needed, ``max_looks`` + 2 when no number of looks proves it. A
    stuck person who finds the easiest move places a cell one look proves; a cell
    several looks away is a chain of deductions nobody makes in their head between two
    placements. Masks as for :func:`closure`; the chain rung is not searched here."""
    grid, cand = _cell_question(cand_masks, grid, cell, digit)
    rung = min(_check_rung(max_rung), WING)
    return int(look_kernel(grid, cand, int(cell), int(digit), rung, max(int(max_looks), 0)))


def trial(grid, cell: int, digit: int, cap: int = FORCING_CAP) -> bool:
    """Is ``digit`` in ``cell`` proved by a *trial*: the cell has two candidates on the
    bare board ``grid`` (81 digits, 0 = empty), and assuming the other one leads by
    singles (every one on offer placed at once, round after round) to a contradiction
    within ``cap`` singles? A stuck person who tries the other digit of a two-candidate
    cell and follows the singles it forces does this (the technique model's ``forcing``
    step, tried on one cell); a solution's digit typed in a cell nothing proved, whose
    other candidate breaks nothing by singles, is not."""
    grid = _grid_of(grid, "grid")
    if not 0 <= cell < 81 or grid[cell]:
        raise ValueError(f"cell {cell} is not an empty cell of the grid")
    if not 1 <= digit <= 9:
        raise ValueError(f"digit must be 1..9, got {digit}")
    return bool(trial_kernel(grid, int(cell), int(digit), max(int(cap), 0)))


def _fill_order_of(givens, solution, cells):
    """(givens, solution, cells) checked: a 9×9 puzzle, its solution, and a fill order."""
    givens = _grid_of(givens, "givens")
    solution = _grid_of(solution, "solution")
    if solution.min() < 1 or np.any((givens != 0) & (givens != solution)):
        raise PuzzleError("the solution does not complete the givens")
    if np.any(np.sort(solution[_UNITS], axis=1) != np.arange(1, 10)):
        raise PuzzleError("the solution is not a valid grid")
    cells = np.asarray(cells, dtype=np.int64).reshape(-1)
    if cells.size and (cells.min() < 0 or cells.max() > 80):
        raise ValueError("a placed cell is outside 0..80")
    if np.any(givens[cells] != 0) or np.unique(cells).size != cells.size:
        raise ValueError("a placed cell is a given or is filled twice")
    return givens, solution, cells


def trace_placements(givens, solution, cells, *, max_rung: int = CHAIN,
                     d1_from: int = SUBSET,
                     chain_budget: int = DEFAULT_CHAIN_BUDGET) -> PlacementTrace:
    """For each placement of a fill order (``cells``, each filled with its digit of
    ``solution``, the puzzle's unique solution), the easiest rung that proves it at that
    moment (see :class:`PlacementTrace` and the module doc). ``cells`` may stop before
    the grid is full. Raises PuzzleError for a grid that is not 9×9, a solution that
    does not fit the givens, or one a closure contradicts (a puzzle with more than one
    solution); ValueError for a cell given or filled twice."""
    givens, solution, cells = _fill_order_of(givens, solution, cells)
    max_rung = _check_rung(max_rung)
    if chain_budget < 0:
        raise ValueError(f"chain_budget must be >= 0, got {chain_budget}")
    n = cells.size
    out = [np.empty(n, dtype=np.int64) for _ in range(6)]
    budget = np.array([chain_budget, 0, 0, 0, 0, 0, 0], dtype=np.int64)
    bad = trace_kernel(givens, solution, cells, max_rung, int(d1_from), budget, *out)
    if bad >= 0:
        raise PuzzleError(f"placement {bad}: the techniques contradict the solution "
                          "given; it is not the puzzle's unique solution")
    return PlacementTrace(*out, chain_searches=int(budget[1]), max_rung=max_rung)


def _ask_of(ask, cells: np.ndarray) -> np.ndarray:
    ask = np.asarray(ask, dtype=np.bool_).reshape(-1)
    if ask.shape != cells.shape:
        raise ValueError(f"ask must have one flag per placement, got {ask.size} "
                         f"for {cells.size}")
    return ask


def needed(givens, solution, cells, ask, *, max_rung: int = CHAIN,
           chain_budget: int = DEFAULT_CHAIN_BUDGET) -> np.ndarray:
    """For the placements of a fill order marked in ``ask``, what a person needed to
    deduce that cell from the board just before it (the givens and the placements
    before it): the lowest rung r at which closing the bare candidates at r and placing
    every single, round after round, makes the cell a single for its digit. With
    cheapest-first solving that is the hardest rung a person uses on the way to the
    cell, whatever else they place first (:func:`fairgrid.solvers.techniques.
    technique_needed` asks the same of the technique model's ladder, one step at a time
    in pure Python). :data:`UNPROVEN` when nothing up to ``max_rung`` gets there,
    :data:`NOT_ANALYSED` when the chain rung was needed after ``chain_budget`` searches
    (shared by the whole order) were spent; -1 where not asked. Checks as
    :func:`trace_placements`."""
    givens, solution, cells = _fill_order_of(givens, solution, cells)
    ask = _ask_of(ask, cells)
    if chain_budget < 0:
        raise ValueError(f"chain_budget must be >= 0, got {chain_budget}")
    out = np.empty(cells.size, dtype=np.int64)
    budget = np.array([chain_budget, 0, 0, 0, 0, 0, 0], dtype=np.int64)
    needed_kernel(givens, solution, cells, ask, _check_rung(max_rung), budget, out)
    if np.any(out == CONTRADICTION):
        raise PuzzleError("the techniques contradict the solution given; it is not the "
                          "puzzle's unique solution")
    return out


# ------------------------------------------------------- the same in pure Python

def _close_reference(b, rung: int, budget: list[int], first: int) -> int:
    """:func:`_close` on a :class:`~fairgrid.solvers.techniques.Board` with the
    reference techniques."""
    while True:
        if b.broken():
            return BROKEN
        progressed = False
        for q in range(first, rung + 1):
            if q == CHAIN:
                if budget[0] <= 0:
                    return SPENT
                budget[0] -= 1
                budget[1] += 1
            gone = {(c, d) for t in DEDUCTION_RUNGS[q - 1] for step in every_step(t, b)
                    for c, d in step.eliminations if b.cand[c] >> (d - 1) & 1}
            if gone:
                for c, d in gone:
                    b.eliminate(c, d)
                progressed = True
                break
        if not progressed:
            return OK
        first = 1


def _keeps_reference(b, solution) -> bool:
    return all(b.value[c] or b.cand[c] >> (solution[c] - 1) & 1 for c in range(81))


def _place_offered(b, offered, solution) -> bool:
    """:func:`_place_singles` on a reference board: False, placing nothing, when a
    single is not ``solution``'s digit."""
    if any(solution[c] != d for c, d in offered):
        return False
    for c, d in offered:
        if not b.value[c]:
            b.place(c, d)
    return True


def _one_layer_reference(b, r: int, solution, cell: int, budget: list[int]) -> int:
    """:func:`_one_layer` in pure Python."""
    offered = {(c, d) for c, d, _ in singles(b)}
    if not offered:
        return 0
    s = b.copy()
    if not _place_offered(s, offered, solution):
        return -1
    if r > 0:
        st = _close_reference(s, r, budget, 1)
        if st == SPENT:
            return -2
        if st == BROKEN:
            return -1
    elif s.broken():
        return -1
    if not _keeps_reference(s, solution):
        return -1
    return int((cell, int(solution[cell])) in {(c, d) for c, d, _ in singles(s)})


def trace_reference(givens, solution, cells, *, max_rung: int = CHAIN,
                    d1_from: int = SUBSET,
                    chain_budget: int = DEFAULT_CHAIN_BUDGET) -> PlacementTrace:
    """:func:`trace_placements` in pure Python on the reference techniques
    (:data:`fairgrid.solvers.techniques.DEDUCTION_RUNGS`), step for step the same
    trace: what the tests compare the engine with and the benchmark's reference (two
    to three orders of magnitude slower)."""
    givens = _grid_of(givens, "givens")
    solution = _grid_of(solution, "solution")
    cells = [int(c) for c in np.asarray(cells).reshape(-1)]
    max_rung = _check_rung(max_rung)
    boards = [Board(3, givens.tolist()) for _ in range(max_rung + 1)]
    budget = [chain_budget, 0]
    chain_ok = True
    out = [np.empty(len(cells), dtype=np.int64) for _ in range(6)]
    for k, c in enumerate(cells):
        d = int(solution[c])
        rung = offer = UNPROVEN
        offers = top = 0
        for r in range(max_rung + 1):
            if r > 0:
                if r == CHAIN and not chain_ok:
                    if rung == UNPROVEN:
                        rung = NOT_ANALYSED
                    break
                cur, below = boards[r], boards[r - 1]
                cur.cand = [a & b for a, b in zip(cur.cand, below.cand)]
                st = _close_reference(cur, r, budget, r if cur.cand == below.cand else 1)
                if st == SPENT:
                    chain_ok = False
                    if rung == UNPROVEN:
                        rung = NOT_ANALYSED
                    break
                if st == BROKEN or not _keeps_reference(cur, solution):
                    raise PuzzleError(f"placement {k}: the techniques contradict the "
                                      "solution given")
            top = r
            offered = singles(boards[r])
            if offer == UNPROVEN and offered:
                offer, offers = r, len({o[0] for o in offered})
            if rung == UNPROVEN and any(o[0] == c and o[1] == d for o in offered):
                rung = r
            if rung != UNPROVEN and offer == 0:
                break
        if rung == NOT_ANALYSED and offer == UNPROVEN:
            offer = NOT_ANALYSED
        d1 = rung
        if rung >= d1_from:
            for r in range(min(top + 1, rung)):
                if r == CHAIN and not chain_ok:
                    break
                got = _one_layer_reference(boards[r], r, solution, c, budget)
                if got == -1:
                    raise PuzzleError(f"placement {k}: the techniques contradict the "
                                      "solution given")
                if got == -2:
                    chain_ok = False
                    if rung == UNPROVEN:
                        d1 = NOT_ANALYSED
                    break
                if got == 1:
                    d1 = r
                    break
        for arr, v in zip(out, (rung, d1, offer, offers, boards[0].cand[c].bit_count(),
                                 boards[top].cand[c].bit_count())):
            arr[k] = v
        for b in boards:
            b.place(c, d)
    return PlacementTrace(*out, chain_searches=budget[1], max_rung=max_rung)


def trial_reference(grid, cell: int, digit: int, cap: int = FORCING_CAP) -> bool:
    """:func:`trial` with the reference singles (``techniques.singles``)."""
    b = Board(3, np.asarray(grid).tolist())
    m = b.cand[cell]
    if bin(m).count("1") != 2 or not m >> (digit - 1) & 1:
        return False
    b.place(cell, (m & ~(1 << (digit - 1))).bit_length())
    placed = 0
    while True:
        if b.broken():
            return True
        offers = [(c, d) for c, d, _ in singles(b)]
        if not offers:
            return False
        if len({c for c, _ in offers}) < len(offers) or any(
                d == e and c != x and x in b.peers[c]
                for i, (c, d) in enumerate(offers) for x, e in offers[i + 1:]):
            return True
        if placed + len(offers) > cap:
            return False
        for c, d in offers:
            b.place(c, d)
        placed += len(offers)


def needed_reference(givens, solution, cells, ask, *, max_rung: int = CHAIN,
                     chain_budget: int = DEFAULT_CHAIN_BUDGET) -> np.ndarray:
    """:func:`needed` with the reference techniques."""
    givens, solution, cells = _fill_order_of(givens, solution, cells)
    ask = _ask_of(ask, cells)
    max_rung = _check_rung(max_rung)
    budget = [chain_budget, 0]
    out = np.full(cells.size, -1, dtype=np.int64)
    grid = givens.tolist()
    for k, cell in enumerate(cells.tolist()):
        if ask[k]:
            out[k] = _needed_reference(Board(3, grid), cell, solution, max_rung, budget)
        grid[cell] = int(solution[cell])
    if np.any(out == CONTRADICTION):
        raise PuzzleError("the techniques contradict the solution given")
    return out


def _needed_reference(b, cell: int, solution, max_rung: int, budget: list[int]) -> int:
    d = int(solution[cell])
    r = 0
    while True:
        if r > 0:
            st = _close_reference(b, r, budget, 1)
            if st == SPENT:
                return NOT_ANALYSED
            if st == BROKEN:
                return CONTRADICTION
        elif b.broken():
            return CONTRADICTION
        if not _keeps_reference(b, solution):
            return CONTRADICTION
        offered = {(c, x) for c, x, _ in singles(b)}
        if (cell, d) in offered:
            return r
        if not offered:
            if r == max_rung:
                return UNPROVEN
            r += 1
            continue
        if not _place_offered(b, offered, solution):
            return CONTRADICTION
