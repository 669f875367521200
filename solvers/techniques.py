"""The human technique model: a puzzle solved with the techniques people use, cheapest
first, every step recorded with its technique.

Each technique is a small pure function of a :class:`Board` (the placed digits and the
candidate set of every empty cell, a bit mask per cell) that returns the first
:class:`Step` it finds (its placements or eliminations and the cells that justify it),
or ``None``. :func:`solve_with_techniques` applies singles while any exist and, when
none does, the cheapest technique of :data:`LADDER` that makes progress, then looks for
singles again, as a solver with pencil marks does. The techniques follow their common
definitions (Sudopedia, the Sudoku Wiki, the HoDoKu and Sudoku Explainer technique
pages, Pelánek 2011 "Difficulty rating of Sudoku puzzles by a computational model"):

==================  ======  =======================================================
technique           weight  what it finds
==================  ======  =======================================================
full house          1.0     the last empty cell of a unit
hidden single box   1.2     a digit with one place left in a block (cross-hatching)
hidden single line  1.5     a digit with one place left in a row or column
naked single        2.3     a cell with one candidate left
pointing            2.6     a digit of a block confined to one line: not elsewhere on
                            that line
claiming            2.8     a digit of a line confined to one block: not elsewhere in
                            that block
naked pair          3.0     two cells of a unit with the same two candidates
x-wing              3.2     a digit on two places in each of two lines, the same two
                            cross lines
hidden pair         3.4     two digits with the same two places in a unit
naked triple        3.6     three cells of a unit whose candidates span three digits
swordfish           3.8     the fish of three lines
hidden triple       4.0     three digits confined to three cells of a unit
xy-wing             4.2     a two-candidate pivot {x,y} seeing pincers {x,z}, {y,z}: z
                            is not in a cell seeing both pincers
xyz-wing            4.4     pivot {x,y,z} seeing pincers {x,z}, {y,z}: z is not in a
                            cell seeing all three
naked quad          5.0     four cells of a unit spanning four digits
jellyfish           5.2     the fish of four lines
hidden quad         5.4     four digits confined to four cells of a unit
simple colouring    5.6     a digit's conjugate pairs two-coloured: a colour seen twice
                            in a unit is false (wrap); a cell seeing both colours
                            loses the digit (trap)
xy-chain            6.6     a chain of two-candidate cells, each link sharing a digit,
                            whose two ends can both hold z: z is not in a cell seeing
                            both ends
forcing             7.5+    assume a candidate, apply singles: a contradiction removes
                            it (Nishio / contradiction forcing; +0.1 per 4 singles
                            placed before the shortest contradiction showed, so at
                            most 8.5 with :data:`FORCING_CAP`)
guess               10.0    nothing above progresses: the solution's digit of a cell
                            with fewest candidates (no daily newspaper puzzle needs it)
==================  ======  =======================================================

The weights order the techniques the way the Sudoku Explainer scale does (the numbers
are that scale's where it has the technique); :func:`technique_features` turns a run
into features and the expected-time model (:mod:`fairgrid.analytics.expected_time`)
learns what each is worth in seconds from human solve times.

The deduction engine (:mod:`fairgrid.solvers.deduction`) asks which of these a
placement needed, with eight more techniques people use. They are not on
:data:`LADDER` (the expected-time model was fitted on it, and its runs stay as they
were); :data:`DEDUCTION_RUNGS` orders them with the others into the engine's rungs, and
:func:`deduction_closure` is the reference its closures are tested against:

=======================  ======  ================================================
technique                weight  what it finds
=======================  ======  ================================================
finned x-wing            3.4     an x-wing whose base lines also hold the digit in
                                 fins within one block: the cover cells of that
                                 block lose it (sashimi included)
finned swordfish         4.0     the same with three lines
skyscraper               4.2     two parallel strong links with one end each on a
                                 common cross line: a cell seeing both other ends
                                 loses the digit (often a sashimi x-wing's too)
empty rectangle          4.3     a block's places on one row and one column, and a
                                 strong link from that row: the link's far end's
                                 cross cell on the column loses the digit
two-string kite          4.4     a row and a column strong link with an end each in
                                 a common block: a cell seeing both far ends loses it
w-wing                   4.4     two {x,y} cells joined by a strong link on x: a cell
                                 seeing both loses y
unique rectangle type 1  4.5     three corners {x,y} of a two-block rectangle: the
                                 fourth is neither (a unique puzzle only)
bug+1                    5.6     all cells two candidates but one with three: the
                                 digit it would leave three times in its units is its
                                 value (a unique puzzle only)
=======================  ======  ================================================

Sources of these weights: Sudoku Explainer 1.2.1 rates unique rectangle type 1 at 4.5
and BUG type 1 at 5.6; SukakuExplainer (an Explainer fork that has the single-digit
patterns) rates a skyscraper 4.2, a two-string kite 4.4 and a w-wing 4.4. Neither has
the finned fish or the empty rectangle: HoDoKu's scores put a finned x-wing (130) by
its x-wing (140), a finned swordfish (200) above its swordfish (150), and the empty
rectangle (120) by its skyscraper (130) and kite (150); 3.4, 4.0 and 4.3 here are our
placing on the Explainer scale.

Deterministic: among singles the cheapest kind is taken, lowest cell first; each advanced
technique scans units, digits and cells in a fixed order. The same puzzle gives the same
steps everywhere. Pure Python on int bit masks: a daily puzzle takes a few milliseconds,
a diabolical one tens (``python bench/techniques.py``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from itertools import combinations
from typing import Callable, Iterator

import numpy as np

from .grid import Puzzle, PuzzleError, geometry

FULL_HOUSE, HIDDEN_BOX, HIDDEN_LINE, NAKED_SINGLE = ("full house", "hidden single box",
                                                     "hidden single line", "naked single")
SINGLES = (FULL_HOUSE, HIDDEN_BOX, HIDDEN_LINE, NAKED_SINGLE)
WEIGHT = {FULL_HOUSE: 1.0, HIDDEN_BOX: 1.2, HIDDEN_LINE: 1.5, NAKED_SINGLE: 2.3,
          "pointing": 2.6, "claiming": 2.8, "naked pair": 3.0, "x-wing": 3.2,
          "hidden pair": 3.4, "naked triple": 3.6, "swordfish": 3.8, "hidden triple": 4.0,
          "xy-wing": 4.2, "xyz-wing": 4.4, "naked quad": 5.0, "jellyfish": 5.2,
          "hidden quad": 5.4, "simple colouring": 5.6, "xy-chain": 6.6, "forcing": 7.5,
          "guess": 10.0,
          # the deduction engine's extra techniques (not on LADDER; see DEDUCTION_LADDER)
          "finned x-wing": 3.4, "finned swordfish": 4.0, "skyscraper": 4.2,
          "empty rectangle": 4.3, "two-string kite": 4.4, "w-wing": 4.4,
          "unique rectangle type 1": 4.5, "bug+1": 5.6}
# the classes the features count (a person learns a family, not each size of it)
CLASS = {"pointing": "locked", "claiming": "locked", "naked pair": "pair",
         "hidden pair": "pair", "naked triple": "subset", "hidden triple": "subset",
         "naked quad": "subset", "hidden quad": "subset", "x-wing": "fish",
         "swordfish": "fish", "jellyfish": "fish", "xy-wing": "wing", "xyz-wing": "wing",
         "simple colouring": "chain", "xy-chain": "chain", "forcing": "forcing",
         "guess": "guess"}
CLASSES = ("locked", "pair", "subset", "fish", "wing", "chain", "forcing", "guess")
MAX_CHAIN = 8          # cells of an xy-chain
FORCING_CAP = 40       # singles an assumption may take to reach its contradiction


def _popcount(m: int) -> int:
    return m.bit_count()


def _digits(m: int):
    """The digits (1-based) of a candidate mask, ascending."""
    while m:
        low = m & -m
        yield low.bit_length()
        m ^= low


@dataclass(frozen=True)
class Step:
    """One deduction: ``technique``, the digits it places (cell, digit), the candidates it
    removes (cell, digit) and the cells whose candidates justify it (for a replay or an
    explanation)."""

    technique: str
    placements: tuple[tuple[int, int], ...] = ()
    eliminations: tuple[tuple[int, int], ...] = ()
    because: tuple[int, ...] = ()
    options: int = 0      # singles on offer when a single was taken
    extra: float = 0.0    # a forcing step's length bonus on the weight

    @property
    def weight(self) -> float:
        return min(WEIGHT[self.technique] + self.extra, 9.0) \
            if self.technique == "forcing" else WEIGHT[self.technique]


@functools.lru_cache(maxsize=None)
def _tables(box_size: int):
    geo = geometry(box_size)
    size = geo.size
    units = tuple(tuple(int(c) for c in u) for u in geo.units)
    rows, cols, blocks = units[:size], units[size:2 * size], units[2 * size:]
    peers = tuple(frozenset(int(p) for p in ps) for ps in geo.peers)
    cell_units = tuple((int(geo.row[c]), size + int(geo.col[c]), 2 * size + int(geo.block[c]))
                       for c in range(geo.ncells))
    return geo, units, rows, cols, blocks, peers, cell_units


class Board:
    """Placed digits and candidate masks (bit ``d-1`` for digit ``d``) of a grid.

    Candidates start as the digits no peer holds; :meth:`place` and :meth:`eliminate`
    keep them consistent. ``copy`` is cheap (two lists)."""

    __slots__ = ("box_size", "size", "full", "value", "cand", "geo", "units", "rows", "cols",
                 "blocks", "peers", "cell_units")

    def __init__(self, box_size: int, values=None):
        (self.geo, self.units, self.rows, self.cols, self.blocks, self.peers,
         self.cell_units) = _tables(box_size)
        self.box_size, self.size = box_size, box_size * box_size
        self.full = (1 << self.size) - 1
        n = self.geo.ncells
        self.value = [0] * n
        self.cand = [self.full] * n
        if values is not None:
            for c, d in enumerate(values):
                if d:
                    self.place(c, int(d))

    @property
    def order(self) -> int:
        """The box size under its name before (read-only; kept for one release)."""
        return self.box_size

    @classmethod
    def of(cls, puzzle: Puzzle) -> "Board":
        return cls(puzzle.box_size, puzzle.givens.tolist())

    def copy(self) -> "Board":
        other = object.__new__(Board)
        for name in Board.__slots__:
            setattr(other, name, getattr(self, name))
        other.value = self.value[:]
        other.cand = self.cand[:]
        return other

    def place(self, cell: int, digit: int) -> None:
        self.value[cell] = digit
        self.cand[cell] = 0
        clear = ~(1 << (digit - 1))
        cand = self.cand
        for p in self.peers[cell]:
            cand[p] &= clear

    def eliminate(self, cell: int, digit: int) -> None:
        self.cand[cell] &= ~(1 << (digit - 1))

    def apply(self, step: Step) -> None:
        for c, d in step.eliminations:
            self.eliminate(c, d)
        for c, d in step.placements:
            self.place(c, d)

    @property
    def solved(self) -> bool:
        return all(self.value)

    def broken(self) -> bool:
        """An empty cell without candidates, or a unit with a missing digit nowhere
        possible (what a wrong assumption leads to)."""
        value, cand = self.value, self.cand
        for c in range(len(value)):
            if not value[c] and not cand[c]:
                return True
        for unit in self.units:
            have = 0
            for c in unit:
                have |= cand[c] | ((1 << (value[c] - 1)) if value[c] else 0)
            if have != self.full:
                return True
        return False


# ----------------------------------------------------------------------------- singles

def singles(b: Board) -> list[tuple[int, int, str]]:
    """Every single on offer: (cell, digit, technique), a placement listed once under its
    cheapest technique."""
    found: dict[tuple[int, int], str] = {}
    cand = b.cand

    def offer(c, d, technique):
        old = found.get((c, d))
        if old is None or _RANK[technique] < _RANK[old]:
            found[(c, d)] = technique

    size = b.size
    for u, unit in enumerate(b.units):
        once = twice = 0
        empty = 0
        for c in unit:
            m = cand[c]
            if m:
                empty += 1
                twice |= once & m
                once |= m
        hidden = once & ~twice
        if not hidden:
            continue
        technique = FULL_HOUSE if empty == 1 else (HIDDEN_BOX if u >= 2 * size else HIDDEN_LINE)
        for c in unit:
            m = cand[c] & hidden
            if m:
                for d in _digits(m):
                    offer(c, d, technique)
    for c, m in enumerate(cand):
        if m and not m & (m - 1):
            offer(c, m.bit_length(), NAKED_SINGLE)
    return [(c, d, k) for (c, d), k in found.items()]


_RANK = {k: i for i, k in enumerate(SINGLES)}


def take_single(b: Board) -> Step | None:
    """The single a person takes: the cheapest technique on offer, lowest cell first."""
    offers = singles(b)
    if not offers:
        return None
    c, d, technique = min(offers, key=lambda o: (_RANK[o[2]], o[0], o[1]))
    return Step(technique, placements=((c, d),), options=len(offers))


# -------------------------------------------------------------------- locked candidates

def pointing(b: Board) -> Step | None:
    """A digit whose places in a block lie on one line is not elsewhere on that line."""
    return next(_pointings(b), None)


def _pointings(b: Board) -> Iterator[Step]:
    return _locked(b, b.blocks, (0, 1), "pointing")


def claiming(b: Board) -> Step | None:
    """A digit whose places in a line lie in one block is not elsewhere in that block."""
    return next(_claimings(b), None)


def _claimings(b: Board) -> Iterator[Step]:
    return _locked(b, b.rows + b.cols, (2,), "claiming")


def _locked(b, bases, axes, name) -> Iterator[Step]:
    """Every locked-candidates step, in scan order (a digit with one place in a base is a
    single's business, not this)."""
    cand, cell_units, size, units = b.cand, b.cell_units, b.size, b.units
    for base in bases:
        for d in range(1, size + 1):
            bit = 1 << (d - 1)
            where = [c for c in base if cand[c] & bit]
            if len(where) < 2:
                continue
            for axis in axes:
                target = cell_units[where[0]][axis]
                if any(cell_units[c][axis] != target for c in where):
                    continue
                gone = tuple((c, d) for c in units[target]
                             if cand[c] & bit and c not in where)
                if gone:
                    yield Step(name, eliminations=gone, because=tuple(where))


# ------------------------------------------------------------------------------ subsets

def _naked(b: Board, k: int, name: str) -> Iterator[Step]:
    """Every naked subset of ``k`` cells, in scan order; a cell with one candidate is a
    naked single, not part of a subset (the model never meets one here: it takes singles
    first; the deduction closure does, and must not spread a single's digit this way)."""
    cand = b.cand
    for unit in b.units:
        open_ = [c for c in unit if 2 <= _popcount(cand[c]) <= k]
        if len(open_) < k:
            continue
        for group in combinations(open_, k):
            union = 0
            for c in group:
                union |= cand[c]
            if _popcount(union) != k:
                continue
            gone = tuple((c, d) for c in unit if c not in group and cand[c] & union
                         for d in _digits(cand[c] & union))
            if gone:
                yield Step(name, eliminations=gone, because=group)


def _places(cand, cells, bit: int) -> int:
    """The positions (a bit mask over ``cells``) where the digit ``bit`` is a candidate."""
    where = 0
    for i, c in enumerate(cells):
        if cand[c] & bit:
            where |= 1 << i
    return where


def _hidden(b: Board, k: int, name: str) -> Iterator[Step]:
    cand = b.cand
    for unit in b.units:
        places = {}
        for d in range(1, b.size + 1):
            where = _places(cand, unit, 1 << (d - 1))
            if 2 <= _popcount(where) <= k:
                places[d] = where
        if len(places) < k:
            continue
        for digits in combinations(places, k):
            where = 0
            for d in digits:
                where |= places[d]
            if _popcount(where) != k:
                continue
            keep = sum(1 << (d - 1) for d in digits)
            cells = [unit[i] for i in range(len(unit)) if where >> i & 1]
            gone = tuple((c, d) for c in cells for d in _digits(cand[c] & ~keep))
            if gone:
                yield Step(name, eliminations=gone, because=tuple(cells))


def _naked_pairs(b): return _naked(b, 2, "naked pair")
def _naked_triples(b): return _naked(b, 3, "naked triple")
def _naked_quads(b): return _naked(b, 4, "naked quad")
def _hidden_pairs(b): return _hidden(b, 2, "hidden pair")
def _hidden_triples(b): return _hidden(b, 3, "hidden triple")
def _hidden_quads(b): return _hidden(b, 4, "hidden quad")
def naked_pair(b): return next(_naked_pairs(b), None)
def naked_triple(b): return next(_naked_triples(b), None)
def naked_quad(b): return next(_naked_quads(b), None)
def hidden_pair(b): return next(_hidden_pairs(b), None)
def hidden_triple(b): return next(_hidden_triples(b), None)
def hidden_quad(b): return next(_hidden_quads(b), None)


# --------------------------------------------------------------------------------- fish

def _fish(b: Board, k: int, name: str) -> Iterator[Step]:
    cand, size = b.cand, b.size
    for d in range(1, size + 1):
        bit = 1 << (d - 1)
        for bases, covers in ((b.rows, b.cols), (b.cols, b.rows)):
            lines = {}
            for i, line in enumerate(bases):
                where = _places(cand, line, bit)
                if 2 <= _popcount(where) <= k:
                    lines[i] = where
            if len(lines) < k:
                continue
            for chosen in combinations(lines, k):
                where = 0
                for i in chosen:
                    where |= lines[i]
                if _popcount(where) != k:
                    continue
                gone = []
                for j in range(size):
                    if where >> j & 1:
                        for i, c in enumerate(covers[j]):
                            if i not in chosen and cand[c] & bit:
                                gone.append((c, d))
                if gone:
                    base_cells = tuple(c for i in chosen for c in bases[i] if cand[c] & bit)
                    yield Step(name, eliminations=tuple(gone), because=base_cells)


def _x_wings(b): return _fish(b, 2, "x-wing")
def _swordfishes(b): return _fish(b, 3, "swordfish")
def _jellyfishes(b): return _fish(b, 4, "jellyfish")
def x_wing(b): return next(_x_wings(b), None)
def swordfish(b): return next(_swordfishes(b), None)
def jellyfish(b): return next(_jellyfishes(b), None)


# -------------------------------------------------------------------------------- wings

def xy_wing(b: Board) -> Step | None:
    """Pivot {x,y}; pincers {x,z} and {y,z} it sees: z is in one pincer, so not in a cell
    seeing both."""
    return next(_xy_wings(b), None)


def _xy_wings(b: Board) -> Iterator[Step]:
    cand, peers = b.cand, b.peers
    bival = [c for c, m in enumerate(cand) if m and _popcount(m) == 2]
    for pivot in bival:
        pm = cand[pivot]
        wings = [c for c in bival if c in peers[pivot] and _popcount(cand[c] & pm) == 1]
        for i, a in enumerate(wings):
            for w in wings[i + 1:]:
                za, zw = cand[a] & ~pm, cand[w] & ~pm
                if za != zw or cand[a] & pm == cand[w] & pm:
                    continue
                z = za.bit_length()
                gone = tuple((c, z) for c in peers[a] & peers[w]
                             if c != pivot and cand[c] & za)
                if gone:
                    yield Step("xy-wing", eliminations=tuple(sorted(gone)),
                               because=(pivot, a, w))


def xyz_wing(b: Board) -> Step | None:
    """Pivot {x,y,z}; pincers {x,z}, {y,z} it sees: z is in one of the three."""
    return next(_xyz_wings(b), None)


def _xyz_wings(b: Board) -> Iterator[Step]:
    cand, peers = b.cand, b.peers
    for pivot, pm in enumerate(cand):
        if not pm or _popcount(pm) != 3:
            continue
        wings = [c for c in peers[pivot] if cand[c] and _popcount(cand[c]) == 2
                 and cand[c] & pm == cand[c]]
        for i, a in enumerate(wings):
            for w in wings[i + 1:]:
                if cand[a] | cand[w] != pm:
                    continue
                zb = cand[a] & cand[w]
                z = zb.bit_length()
                gone = tuple((c, z) for c in peers[a] & peers[w] & peers[pivot]
                             if cand[c] & zb)
                if gone:
                    yield Step("xyz-wing", eliminations=tuple(sorted(gone)),
                               because=(pivot, a, w))


# ---------------------------------------------------------------------- colour, chains

def simple_colouring(b: Board) -> Step | None:
    """One digit's conjugate pairs (units where it has exactly two places), two-coloured
    per connected cluster: one colour is the truth. Two cells of one colour in a unit
    make that colour false (wrap); a cell seeing both colours loses the digit (trap)."""
    return next(_colourings(b), None)


def _colourings(b: Board) -> Iterator[Step]:
    """Every colouring step, in scan order: per cluster its wraps, then its trap."""
    cand, peers, size = b.cand, b.peers, b.size
    for d in range(1, size + 1):
        bit = 1 << (d - 1)
        links: dict[int, list[int]] = {}
        for unit in b.units:
            where = [c for c in unit if cand[c] & bit]
            if len(where) == 2:
                x, y = where
                links.setdefault(x, []).append(y)
                links.setdefault(y, []).append(x)
        seen: set[int] = set()
        for start in sorted(links):
            if start in seen:
                continue
            colour = {start: 0}
            todo = [start]
            while todo:
                c = todo.pop()
                for o in links[c]:
                    if o not in colour:
                        colour[o] = 1 - colour[c]
                        todo.append(o)
            seen |= colour.keys()
            if len(colour) < 4:  # a lone pair is a hidden pair's business, not colour's
                continue
            sides = ([c for c in colour if colour[c] == 0], [c for c in colour if colour[c] == 1])
            for side in sides:
                if any(o in peers[c] for i, c in enumerate(side) for o in side[i + 1:]):
                    yield Step("simple colouring", eliminations=tuple((c, d) for c in side),
                               because=tuple(sorted(colour)))
            s0, s1 = set(sides[0]), set(sides[1])
            gone = tuple((c, d) for c in range(len(cand))
                         if cand[c] & bit and c not in colour
                         and not peers[c].isdisjoint(s0) and not peers[c].isdisjoint(s1))
            if gone:
                yield Step("simple colouring", eliminations=gone,
                           because=tuple(sorted(colour)))


def xy_chain(b: Board) -> Step | None:
    """Two-candidate cells linked through a shared digit, each forcing the next: if the
    first cell is not z, the last one is; z is then in one end, so not in a cell seeing
    both ends. The shortest such chain (at most :data:`MAX_CHAIN` cells) that removes
    something, found breadth-first over (cell, digit it is forced to hold) states."""
    cand, peers = b.cand, b.peers
    bival = [c for c, m in enumerate(cand) if m and _popcount(m) == 2]
    nbrs = {c: [o for o in bival if o in peers[c]] for c in bival}
    best = None
    for start in bival:
        for z in _digits(cand[start]):
            zbit = 1 << (z - 1)
            first = (start, cand[start] & ~zbit)
            parent = {first: None}
            frontier = [first]
            for length in range(2, MAX_CHAIN + 1):
                if best is not None and length >= len(best[0]):
                    break
                nxt = []
                for state in frontier:
                    c, holds = state
                    for o in nbrs[c]:
                        if not cand[o] & holds:
                            continue
                        new = (o, cand[o] & ~holds)
                        if new in parent:
                            continue
                        parent[new] = state
                        nxt.append(new)
                        if length >= 3 and new[1] == zbit and o != start:
                            gone = tuple(sorted((x, z) for x in peers[start] & peers[o]
                                                if cand[x] & zbit))
                            if gone:
                                path, s = [], new
                                while s is not None:
                                    path.append(s[0])
                                    s = parent[s]
                                if best is None or len(path) < len(best[0]):
                                    best = (tuple(reversed(path)), gone)
                frontier = nxt
                if not frontier:
                    break
    if best is None:
        return None
    return Step("xy-chain", eliminations=best[1], because=best[0])


def _xy_chains(b: Board) -> Iterator[Step]:
    """Every xy-chain of 3 to :data:`MAX_CHAIN` cells that removes something: the same
    breadth-first search as :func:`xy_chain` from every start, without its shortest-first
    cut (a state is reached once, at its shortest length)."""
    cand, peers = b.cand, b.peers
    bival = [c for c, m in enumerate(cand) if m and _popcount(m) == 2]
    nbrs = {c: [o for o in bival if o in peers[c]] for c in bival}
    for start in bival:
        for z in _digits(cand[start]):
            zbit = 1 << (z - 1)
            first = (start, cand[start] & ~zbit)
            seen = {first}
            frontier = [first]
            for length in range(2, MAX_CHAIN + 1):
                nxt = []
                for c, holds in frontier:
                    for o in nbrs[c]:
                        if not cand[o] & holds:
                            continue
                        new = (o, cand[o] & ~holds)
                        if new in seen:
                            continue
                        seen.add(new)
                        nxt.append(new)
                        if length >= 3 and new[1] == zbit and o != start:
                            gone = tuple(sorted((x, z) for x in peers[start] & peers[o]
                                                if cand[x] & zbit))
                            if gone:
                                yield Step("xy-chain", eliminations=gone,
                                           because=(start, o))
                frontier = nxt


# ------------------------------------------------- techniques of the deduction engine only
# (not on LADDER: the expected-time model was fitted without them; see DEDUCTION_LADDER)

def _block_of(b: Board, c: int) -> int:
    return b.cell_units[c][2] - 2 * b.size


def _common(b: Board, x: int, y: int, bit: int) -> list[int]:
    """The cells seeing both ``x`` and ``y`` that hold the candidate ``bit``."""
    return sorted(c for c in b.peers[x] & b.peers[y] if b.cand[c] & bit)


def finned_x_wing(b: Board) -> Step | None:
    """An x-wing whose base lines also hold the digit in fins, all in one block: either
    the x-wing stands or a fin holds the digit, so a cover-line cell of the fins' block
    (outside the base lines) loses it. Sashimi x-wings (a base line left with one cover
    cell) are included."""
    return next(_finned_fish(b, 2, "finned x-wing"), None)


def finned_swordfish(b: Board) -> Step | None:
    """The finned fish of three lines (see :func:`finned_x_wing`)."""
    return next(_finned_fish(b, 3, "finned swordfish"), None)


def _finned_fish(b: Board, k: int, name: str) -> Iterator[Step]:
    """Every finned fish of ``k`` base lines, each with at least two places: covers are
    ``k`` cross lines holding every base place outside one block column (or row) of
    fins; a base line with one place is a single's business."""
    cand, size, box_size = b.cand, b.size, b.box_size
    chunk_of = (1 << box_size) - 1
    for d in range(1, size + 1):
        bit = 1 << (d - 1)
        for bases in (b.rows, b.cols):
            lines = {}
            for i, line in enumerate(bases):
                where = _places(cand, line, bit)
                if _popcount(where) >= 2:
                    lines[i] = where
            for chosen in combinations(lines, k):
                union = 0
                for i in chosen:
                    union |= lines[i]
                if _popcount(union) <= k:
                    continue  # a plain fish (or a broken board)
                for stack in range(box_size):
                    chunk = chunk_of << (box_size * stack)
                    need = k - _popcount(union & ~chunk)
                    inside = [j for j in range(size) if (union & chunk) >> j & 1]
                    if need < 1:
                        continue  # no cover line in the fins' block: nothing to remove
                    for cover_in in combinations(inside, need):
                        fins = union & chunk & ~sum(1 << j for j in cover_in)
                        if not fins:
                            continue
                        bands = {i // box_size for i in chosen if lines[i] & fins}
                        if len(bands) != 1:
                            continue
                        band = bands.pop()
                        gone = tuple((bases[i][j], d)
                                     for i in range(band * box_size, (band + 1) * box_size)
                                     if i not in chosen for j in cover_in
                                     if cand[bases[i][j]] & bit)
                        if gone:
                            yield Step(name, eliminations=gone, because=tuple(
                                c for i in chosen for c in bases[i] if cand[c] & bit))


def _conjugates(cand, bases, bit: int) -> list[tuple[int, int, int]]:
    """(line index, first cell, second cell) of every line where the digit has exactly
    two places (a strong link)."""
    out = []
    for i, line in enumerate(bases):
        where = [c for c in line if cand[c] & bit]
        if len(where) == 2:
            out.append((i, where[0], where[1]))
    return out


def skyscraper(b: Board) -> Step | None:
    """Two parallel lines where the digit has two places each, one end of each on a
    common cross line: one of the two other ends holds it, so a cell seeing both loses
    it."""
    return next(_skyscrapers(b), None)


def _skyscrapers(b: Board) -> Iterator[Step]:
    cand, size = b.cand, b.size
    for d in range(1, size + 1):
        bit = 1 << (d - 1)
        for bases, axis in ((b.rows, 1), (b.cols, 0)):  # axis: the cross line's unit axis
            pairs = _conjugates(cand, bases, bit)
            for n, (_, a1, a2) in enumerate(pairs):
                for _, c1, c2 in pairs[n + 1:]:
                    for base_a, top_a in ((a1, a2), (a2, a1)):
                        for base_c, top_c in ((c1, c2), (c2, c1)):
                            units = b.cell_units
                            if (units[base_a][axis] != units[base_c][axis]
                                    or units[top_a][axis] == units[top_c][axis]):
                                continue
                            gone = tuple((c, d) for c in _common(b, top_a, top_c, bit))
                            if gone:
                                yield Step("skyscraper", eliminations=gone,
                                           because=(base_a, top_a, base_c, top_c))


def two_string_kite(b: Board) -> Step | None:
    """A row and a column where the digit has two places each, one end of each in a
    common block (not the same cell): one of the two other ends holds it, so a cell
    seeing both loses it."""
    return next(_kites(b), None)


def _kites(b: Board) -> Iterator[Step]:
    cand, size = b.cand, b.size
    for d in range(1, size + 1):
        bit = 1 << (d - 1)
        rows, cols = _conjugates(cand, b.rows, bit), _conjugates(cand, b.cols, bit)
        for _, r1, r2 in rows:
            for _, c1, c2 in cols:
                for near_r, far_r in ((r1, r2), (r2, r1)):
                    for near_c, far_c in ((c1, c2), (c2, c1)):
                        if len({near_r, far_r, near_c, far_c}) < 4 \
                                or _block_of(b, near_r) != _block_of(b, near_c):
                            continue
                        gone = tuple((c, d) for c in _common(b, far_r, far_c, bit))
                        if gone:
                            yield Step("two-string kite", eliminations=gone,
                                       because=(far_r, near_r, near_c, far_c))


def empty_rectangle(b: Board) -> Step | None:
    """A block whose places for the digit lie on one of its rows and one of its columns
    (both arms used), and a line outside it where the digit has two places, one on the
    block's row (or column): if the cross cell of the other end and the block's column
    (or row) held the digit, the block would have none."""
    return next(_empty_rectangles(b), None)


def _empty_rectangles(b: Board) -> Iterator[Step]:
    cand, size, box_size = b.cand, b.size, b.box_size
    for d in range(1, size + 1):
        bit = 1 << (d - 1)
        col_links = _conjugates(cand, b.cols, bit)
        row_links = _conjugates(cand, b.rows, bit)
        for k, block in enumerate(b.blocks):
            where = [c for c in block if cand[c] & bit]
            if len(where) < 2:
                continue
            band, stack = k // box_size, k % box_size
            for r in range(band * box_size, (band + 1) * box_size):
                for c in range(stack * box_size, (stack + 1) * box_size):
                    rc = [(x // size, x % size) for x in where]
                    if any(xr != r and xc != c for xr, xc in rc) \
                            or not any(xr == r and xc != c for xr, xc in rc) \
                            or not any(xc == c and xr != r for xr, xc in rc):
                        continue
                    gone = set()
                    for line, x, y in col_links:  # a column outside the stack
                        for near, far in ((x, y), (y, x)):
                            if line // box_size != stack and near // size == r \
                                    and far // size // box_size != band:
                                target = far // size * size + c
                                if cand[target] & bit:
                                    gone.add((target, d))
                    for line, x, y in row_links:  # a row outside the band
                        for near, far in ((x, y), (y, x)):
                            if line // box_size != band and near % size == c \
                                    and far % size // box_size != stack:
                                target = r * size + far % size
                                if cand[target] & bit:
                                    gone.add((target, d))
                    if gone:
                        yield Step("empty rectangle", eliminations=tuple(sorted(gone)),
                                   because=tuple(where))


def w_wing(b: Board) -> Step | None:
    """Two cells {x,y} that do not see each other, and a unit where x has two places,
    one seeing each cell: they cannot both be x, so one is y, and a cell seeing both
    loses y."""
    return next(_w_wings(b), None)


def _w_wings(b: Board) -> Iterator[Step]:
    cand, peers = b.cand, b.peers
    bival = [c for c, m in enumerate(cand) if m and _popcount(m) == 2]
    for i, a in enumerate(bival):
        for w in bival[i + 1:]:
            if cand[w] != cand[a] or w in peers[a]:
                continue
            for x in _digits(cand[a]):
                xbit = 1 << (x - 1)
                ybit = cand[a] & ~xbit
                gone = tuple((c, ybit.bit_length()) for c in _common(b, a, w, ybit))
                if not gone:
                    continue
                for unit in b.units:
                    where = [c for c in unit if cand[c] & xbit]
                    if len(where) != 2 or a in where or w in where:
                        continue
                    p, q = where
                    if (p in peers[a] and q in peers[w]) \
                            or (p in peers[w] and q in peers[a]):
                        yield Step("w-wing", eliminations=gone, because=(a, w, p, q))


def unique_rectangle(b: Board) -> Step | None:
    """Unique rectangle type 1: four empty cells on two rows, two columns and two blocks,
    three of them holding only {x,y}: the fourth cannot be x or y, or the four could
    swap x and y and the puzzle would have two solutions. Sound only for a puzzle with
    one solution (fairgrid registers only those)."""
    return next(_unique_rectangles(b), None)


def _unique_rectangles(b: Board) -> Iterator[Step]:
    cand, size = b.cand, b.size
    for r1, r2 in combinations(range(size), 2):
        for c1, c2 in combinations(range(size), 2):
            corners = (r1 * size + c1, r1 * size + c2, r2 * size + c1, r2 * size + c2)
            if len({_block_of(b, c) for c in corners}) != 2:
                continue
            for n, fourth in enumerate(corners):
                rest = [cand[c] for i, c in enumerate(corners) if i != n]
                pair = rest[0]
                if _popcount(pair) != 2 or any(m != pair for m in rest):
                    continue
                if cand[fourth] & pair == pair and cand[fourth] != pair:
                    yield Step("unique rectangle type 1",
                               eliminations=tuple((fourth, d) for d in _digits(pair)),
                               because=corners)


def bug_plus_one(b: Board) -> Step | None:
    """BUG+1: every empty cell has two candidates but one, which has three. The digit of
    that cell seen three times in its units is its value: without it every unit would
    hold each candidate twice, a state with no or two solutions. Sound only for a puzzle
    with one solution."""
    return next(_bug_plus_ones(b), None)


def _bug_plus_ones(b: Board) -> Iterator[Step]:
    cand = b.cand
    empty = [c for c in range(len(cand)) if not b.value[c]]
    three = [c for c in empty if _popcount(cand[c]) == 3]
    if len(three) != 1 or any(_popcount(cand[c]) != 2 for c in empty if c != three[0]):
        return
    cell = three[0]
    counts = [[sum(1 for c in unit if cand[c] >> (d - 1) & 1) for d in range(1, b.size + 1)]
              for unit in b.units]
    mine = set(b.cell_units[cell])
    for d in _digits(cand[cell]):
        if all(counts[u][e - 1] - (u in mine and e == d) in (0, 2)
               for u in range(len(b.units)) for e in range(1, b.size + 1)):
            yield Step("bug+1", eliminations=tuple((cell, e) for e in _digits(cand[cell])
                                                   if e != d), because=(cell,))
            return


def _propagate(b: Board, cap: int) -> int | None:
    """Apply singles, every one on offer at a time, until solved, stuck or broken; the
    number of singles placed until the board broke, or None if it did not within
    ``cap``. (Placing all offers at once finds the same contradiction as one at a time,
    in a fraction of the scans; two offers that clash are the contradiction.)"""
    placed = 0
    while True:
        if b.broken():
            return placed
        offers = singles(b)
        if not offers:
            return None
        for c, d, _ in offers:
            if b.value[c] or not b.cand[c] >> (d - 1) & 1:
                return placed
            if placed == cap:
                return None
            b.place(c, d)
            placed += 1


def forcing(b: Board) -> Step | None:
    """Assume a candidate and apply singles: a contradiction refutes it. Candidates of
    two-candidate cells first (a person tries those), the shortest contradiction wins."""
    cand = b.cand
    cells = sorted((c for c, m in enumerate(cand) if m), key=lambda c: (_popcount(cand[c]), c))
    best = None
    for c in cells:
        for d in _digits(cand[c]):
            trial = b.copy()
            trial.place(c, d)
            n = _propagate(trial, FORCING_CAP if best is None else best[0] - 1)
            if n is not None and (best is None or n < best[0]):
                best = (n, c, d)
                if n == 0:
                    break
        if best is not None and _popcount(cand[c]) == 2 and best[0] <= 4:
            break
    if best is None:
        return None
    n, c, d = best
    return Step("forcing", eliminations=((c, d),), because=(c,), extra=0.1 * (n // 4))


LADDER: tuple[Callable[[Board], Step | None], ...] = (
    pointing, claiming, naked_pair, x_wing, hidden_pair, naked_triple, swordfish,
    hidden_triple, xy_wing, xyz_wing, naked_quad, jellyfish, hidden_quad,
    simple_colouring, xy_chain, forcing)


# The deduction engine's rungs (fairgrid.solvers.deduction), cheapest first: the techniques
# of rungs 1-5 (rung 0 is the singles). LADDER without forcing, plus techniques people
# use that the expected-time model was not fitted with.
DEDUCTION_RUNGS: tuple[tuple[Callable[[Board], Step | None], ...], ...] = (
    (pointing, claiming),
    (naked_pair, hidden_pair, naked_triple, hidden_triple, naked_quad, hidden_quad),
    (x_wing, swordfish, jellyfish, finned_x_wing, finned_swordfish, skyscraper,
     two_string_kite, empty_rectangle),
    (xy_wing, xyz_wing, w_wing, simple_colouring, unique_rectangle, bug_plus_one),
    (xy_chain,),
)
DEDUCTION_LADDER: tuple[Callable[[Board], Step | None], ...] = tuple(
    t for rung in DEDUCTION_RUNGS for t in rung)
# every step of a technique (its own function returns the first of them), and its name
_EVERY: dict[Callable, tuple[str, Callable[[Board], Iterator[Step]]]] = {
    pointing: ("pointing", _pointings), claiming: ("claiming", _claimings),
    naked_pair: ("naked pair", _naked_pairs), hidden_pair: ("hidden pair", _hidden_pairs),
    naked_triple: ("naked triple", _naked_triples),
    hidden_triple: ("hidden triple", _hidden_triples),
    naked_quad: ("naked quad", _naked_quads), hidden_quad: ("hidden quad", _hidden_quads),
    x_wing: ("x-wing", _x_wings), swordfish: ("swordfish", _swordfishes),
    jellyfish: ("jellyfish", _jellyfishes),
    finned_x_wing: ("finned x-wing", lambda b: _finned_fish(b, 2, "finned x-wing")),
    finned_swordfish: ("finned swordfish",
                       lambda b: _finned_fish(b, 3, "finned swordfish")),
    skyscraper: ("skyscraper", _skyscrapers), two_string_kite: ("two-string kite", _kites),
    empty_rectangle: ("empty rectangle", _empty_rectangles),
    xy_wing: ("xy-wing", _xy_wings), xyz_wing: ("xyz-wing", _xyz_wings),
    w_wing: ("w-wing", _w_wings), simple_colouring: ("simple colouring", _colourings),
    unique_rectangle: ("unique rectangle type 1", _unique_rectangles),
    bug_plus_one: ("bug+1", _bug_plus_ones), xy_chain: ("xy-chain", _xy_chains),
}


def technique_name(technique: Callable[[Board], Step | None]) -> str:
    """The name its steps carry (a :data:`WEIGHT` key) of a technique of
    :data:`DEDUCTION_LADDER`."""
    return _EVERY[technique][0]


def every_step(technique: Callable[[Board], Step | None], b: Board) -> Iterator[Step]:
    """Every step a technique of :data:`DEDUCTION_LADDER` finds on ``b``, each found on
    ``b`` as it is (apply none before the search ends). The technique itself returns the
    first, except :func:`xy_chain`, which returns the shortest chain."""
    return _EVERY[technique][1](b)


def deduction_closure(b: Board, rung: int) -> bool:
    """The reference for :func:`fairgrid.solvers.deduction.closure`: remove candidates
    with the techniques of rungs 1..``rung`` of :data:`DEDUCTION_RUNGS` until none
    removes more, never placing a digit. Each pass takes the lowest rung that removes
    something and applies every elimination that rung's techniques find on the board as
    it was (so the result does not depend on a scan order), then starts again from rung
    1. False when the board is (or becomes) broken; it stops there."""
    while True:
        if b.broken():
            return False
        for techniques in DEDUCTION_RUNGS[:rung]:
            gone = {(c, d) for t in techniques for step in every_step(t, b)
                    for c, d in step.eliminations if b.cand[c] >> (d - 1) & 1}
            if gone:
                for c, d in gone:
                    b.eliminate(c, d)
                break
        else:
            return True


def ladder_for(box_size: int) -> tuple[Callable[[Board], Step | None], ...]:
    """The ladder of a box size: from 16×16 up without forcing, whose search over every
    assumption grows with the cube of the size (a sparse 16×16 took a minute); a guess
    takes its place there."""
    return LADDER if box_size <= 3 else LADDER[:-1]


# ------------------------------------------------------------------------------ the run

@dataclass(frozen=True)
class TechniqueRun:
    """Every step of a solve by the technique model, in order."""

    steps: tuple[Step, ...]

    @property
    def hardest(self) -> Step | None:
        return max(self.steps, key=lambda s: s.weight, default=None)

    def counts(self) -> dict[str, int]:
        """Steps per technique, cheapest technique first."""
        found: dict[str, int] = {}
        for s in self.steps:
            found[s.technique] = found.get(s.technique, 0) + 1
        return {k: found[k] for k in WEIGHT if k in found}

    def placements(self) -> list[tuple[int, int, str]]:
        """(cell, digit, technique) of each placement in order; a single placed right
        after advanced steps is credited to the hardest of them."""
        out, pending = [], None
        for s in self.steps:
            if s.placements:
                for c, d in s.placements:
                    tech = s.technique if pending is None else pending.technique
                    out.append((c, d, tech))
                pending = None
            elif pending is None or s.weight > pending.weight:
                pending = s
        return out


def _next_step(b: Board, ladder, solution) -> Step:
    step = take_single(b)
    if step is None:
        for technique in ladder:
            step = technique(b)
            if step is not None:
                break
    if step is None:
        if solution is None:
            raise PuzzleError("the technique model is stuck and has no solution to "
                              "guess from")
        c = min((c for c, m in enumerate(b.cand) if m),
                key=lambda c: (_popcount(b.cand[c]), c))
        step = Step("guess", placements=((c, int(solution[c])),), because=(c,))
    return step


def technique_needed(box_size: int, values, cell: int, solution, *, ladder=None,
                     hardness: Callable[[Step], float] | None = None) -> Step:
    """What a person needed to deduce ``cell`` on the board ``values`` (the givens and
    the digits placed so far, 0 elsewhere): the hardest step the model takes from there
    until ``cell`` holds its digit, or the single that places it; hardest by
    ``hardness`` (default: the technique's weight). The model is cheapest-first, so no
    easier set of techniques would have placed the cell. Where ``ladder`` (default: the
    box size's) runs out, the step is a guess."""
    hardness = (lambda s: s.weight) if hardness is None else hardness
    b = Board(box_size, values)
    if b.value[cell]:
        raise ValueError(f"cell {cell} is already filled")
    ladder = ladder_for(box_size) if ladder is None else ladder
    hardest: Step | None = None
    while not b.value[cell]:
        offers = singles(b)
        mine = [o for o in offers if o[0] == cell]
        if mine:
            technique = min(mine, key=lambda o: _RANK[o[2]])[2]
            step = Step(technique, placements=((cell, mine[0][1]),))
        elif offers:
            # every single of the cheapest technique on offer at once: all sound, and a person
            # takes the cheap ones before looking for harder ones
            rank = min(_RANK[o[2]] for o in offers)
            technique = SINGLES[rank]
            step = Step(technique, placements=tuple(dict.fromkeys(
                (c, d) for c, d, k in offers if _RANK[k] == rank)))
        else:
            step = _next_step(b, ladder, solution)
        b.apply(step)
        if hardest is None or hardness(step) > hardness(hardest):
            hardest = step
    return hardest


def solve_with_techniques(puzzle: Puzzle, solution=None, *, ladder=None) -> TechniqueRun:
    """Solve ``puzzle`` the way a person with pencil marks does (see the module doc).

    ``solution`` (the unique one) is needed only when nothing in the ladder progresses
    (a guess places its digit); without it such a puzzle raises PuzzleError.
    """
    b = Board.of(puzzle)
    ladder = ladder_for(puzzle.box_size) if ladder is None else ladder
    steps: list[Step] = []
    while not b.solved:
        step = _next_step(b, ladder, solution)
        b.apply(step)
        steps.append(step)
        if b.broken():
            raise PuzzleError("the puzzle has no solution")
    return TechniqueRun(tuple(steps))


NEEDS = (("pair", 3.0), ("wing", 4.2), ("chain", 5.6))  # hardest-technique thresholds


def technique_features(run: TechniqueRun) -> dict[str, float]:
    """The run as expected-time features (names prefixed ``tq_``):

    * ``tq_<class>``: steps of each technique class (:data:`CLASSES`);
    * ``tq_advanced``: steps beyond singles; ``tq_stuck``: times singles ran out;
    * ``tq_hardest``: the hardest step's weight; ``tq_needs_pair|wing|chain``: 1 when
      the hardest step weighs at least a naked pair's, an xy-wing's, simple colouring's
      (so an x-wing counts as a pair, a quad or jellyfish as a wing: the thresholds are
      on the weight scale, where people's time jumps more than the scale says);
    * ``tq_naked_singles``, ``tq_line_singles``: placements taken as those kinds (no
      cheaper single was on offer);
    * ``tq_lone_steps``: placements with one single on offer; ``tq_log_options``: the
      mean log of the singles on offer; ``tq_scan``: Σ 1 / singles on offer (a
      placement with k on offer is found k times faster).
    """
    out = {f"tq_{k}": 0.0 for k in CLASSES}
    single = [s for s in run.steps if s.technique in SINGLES]
    advanced = [s for s in run.steps if s.technique not in SINGLES]
    for s in advanced:
        out[f"tq_{CLASS[s.technique]}"] += 1.0
    out["tq_advanced"] = float(len(advanced))
    out["tq_stuck"] = float(sum(1 for i, s in enumerate(run.steps)
                                if s.technique not in SINGLES
                                and (i == 0 or run.steps[i - 1].technique in SINGLES)))
    hardest = max((s.weight for s in run.steps), default=0.0)
    out["tq_hardest"] = hardest
    for name, weight in NEEDS:
        out[f"tq_needs_{name}"] = float(hardest >= weight)
    out["tq_naked_singles"] = float(sum(s.technique == NAKED_SINGLE for s in single))
    out["tq_line_singles"] = float(sum(s.technique == HIDDEN_LINE for s in single))
    options = np.array([s.options for s in single], dtype=float)
    out["tq_lone_steps"] = float(np.sum(options == 1))
    options = np.maximum(options, 1.0)  # a single step always has itself on offer
    out["tq_log_options"] = float(np.mean(np.log(options))) if options.size else 0.0
    out["tq_scan"] = float(np.sum(1.0 / options)) if options.size else 0.0
    for k, v in out.items():
        if not math.isfinite(v):
            raise AssertionError(f"feature {k} is not finite")
    return out


FEATURES = tuple(technique_features(TechniqueRun(())))
