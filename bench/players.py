"""Seeded player models for the detection benchmark: honest people who solve unlike the
service's own simulator, and cheaters who hide.

Every model is a function ``fn(text, solution, rng, total_s, **person) -> PlayerLog``
(registries :data:`HONEST` and :data:`HIDING_CHEATS`); ``person`` are the model's habits
(:func:`draw_person` draws them; pass the same ones for every solve of one person).
Deductions come from :mod:`fairgrid.solvers.techniques` only: the honest models share
no code with :mod:`fairgrid.analytics.simulate` or :mod:`fairgrid.solvers.propagation`,
whose honest model the service's cold-start nulls are fitted on.

Move logs
---------
A :class:`PlayerLog` is exactly a webhook's move log: ``t_ms`` milliseconds since the
start, never decreasing (moves a portal makes together share one); ``cell`` 0-based
row-major; ``digit`` 1..size places, 0 erases; ``note`` True for a pencil-mark event;
plus ``cheated`` (per move: a digit the player copied rather than found) and the model.

Pencil marks (the service implements the same rules; :func:`screen` replays them):

* a note event ``(cell, d > 0)`` toggles the mark ``d`` in the cell;
* a note event ``(cell, 0)`` clears all the cell's marks;
* placing a digit hides the cell's marks; erasing the digit shows them again (a note
  event on a filled cell changes the hidden marks);
* no move, note or digit, lands on a given.

Time
----
A move is preceded by *think* time (relative weights, scaled so that the log lasts
``total_s``: the caller draws that around the puzzle's expected time), *motor* time
(seconds: a note tap, writing a digit; squeezed in proportion when together they would
take more than :data:`MOTOR_SHARE` of ``total_s``, as a fast player taps faster) and
*pauses* (breaks, a cheater looking up the solution: seconds on top of ``total_s``).
Each model draws its own think times (see its docstring); a person's habits (how much
harder steps slow them, how noisy they are) are drawn per person.

Honest models: :func:`pencil_marker`, :func:`auto_notes`, :func:`sweeper`,
:func:`ladder`, and :func:`pencilmark_player` (PyPI's pencilmark, a solver this project
did not write: ``bench/honest_pencilmark.py``). Cheaters: :func:`hint_at_stall`,
:func:`hint_at_hardest`, :func:`partial`, :func:`assisted`, :func:`stuck_copier`,
:func:`human_order_copier`, :func:`difficulty_copier`; those that solve honestly in part
do it as a pencil marker or a sweeper (``base``).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np

from fairgrid.analytics.simulate import webhook_moves
from fairgrid.solvers import parse
from fairgrid.solvers import techniques as tq
from fairgrid.solvers.grid import Puzzle
from fairgrid.solvers.techniques import WEIGHT, Board, Step, singles

MOTOR_SHARE = 0.6      # motor time may take at most this share of total_s
MAX_THINK_WEIGHT = 7.0  # exp(slope * weight) is capped here: a guess is a long think, not all of it
TIDY = (tq.pointing, tq.claiming, tq.naked_pair, tq.hidden_pair)
TRIPLES = (tq.naked_triple, tq.hidden_triple)
HARD = ((tq.x_wing, "x-wing"), (tq.swordfish, "swordfish"), (tq.xy_wing, "xy-wing"),
        (tq.xyz_wing, "xyz-wing"), (tq.naked_quad, "naked quad"), (tq.jellyfish, "jellyfish"),
        (tq.hidden_quad, "hidden quad"), (tq.simple_colouring, "simple colouring"),
        (tq.xy_chain, "xy-chain"))
CEILINGS = (4.4, 5.6, 6.6)  # hardest technique a marking player knows: wings, colouring, chains
_RANK = {k: i for i, k in enumerate(tq.SINGLES)}


# ---------------------------------------------------------------------------- the log

@dataclass(frozen=True, eq=False)
class PlayerLog:
    """One solve as a webhook move log, with the moves that were cheated."""

    model: str
    t_ms: np.ndarray = field(repr=False)
    cell: np.ndarray = field(repr=False)
    digit: np.ndarray = field(repr=False)
    note: np.ndarray = field(repr=False)
    cheated: np.ndarray = field(repr=False)
    base: str = ""       # the honest behaviour a cheater shows where it does not cheat

    @property
    def placed(self) -> np.ndarray:
        """Per move: a digit placed (not a note, not an erasure)."""
        return ~self.note & (self.digit > 0)

    @property
    def cheated_moves(self) -> np.ndarray:
        """Indices into the log of the cheated placements."""
        return np.flatnonzero(self.cheated)

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(t_ms, cell, digit, note), what the scoring takes."""
        return self.t_ms, self.cell, self.digit, self.note

    def moves(self) -> list[dict]:
        """The log as webhook ``moves`` entries."""
        return webhook_moves(self.t_ms, self.cell, self.digit, self.note)


def screen(text: str, t_ms, cell, digit, note) -> tuple[np.ndarray, list[int]]:
    """Replay a move log under the module's pencil-mark rules: the final (digits, marks as
    bit masks, bit d-1 for d). ValueError for a move on a given or time running back."""
    givens = parse(text).givens
    value = givens.astype(np.int64).copy()
    marks = [0] * givens.size
    prev = 0
    for t, c, d, n in zip(np.asarray(t_ms).tolist(), np.asarray(cell).tolist(),
                          np.asarray(digit).tolist(), np.asarray(note).tolist()):
        if t < prev:
            raise ValueError(f"t_ms runs back from {prev} to {t}")
        prev = t
        if givens[c]:
            raise ValueError(f"a {'note' if n else 'digit'} on the given cell {c}")
        if n:
            marks[c] = 0 if d == 0 else marks[c] ^ (1 << (d - 1))
        else:
            value[c] = d
    return value, marks


class _Log:
    """A move log being written: the screen (digits and marks, under the module's rules)
    and, per move, the time before it (think weight, motor seconds, pause seconds)."""

    def __init__(self, givens: np.ndarray):
        self.given = givens != 0
        self.value = givens.astype(int).tolist()
        self.marks = [0] * givens.size
        self.rows: list[tuple] = []
        self._gap = [0.0, 0.0, 0.0]

    def think(self, w: float) -> None:
        self._gap[0] += w

    def motor(self, s: float) -> None:
        self._gap[1] += s

    def pause(self, s: float) -> None:
        self._gap[2] += s

    def _move(self, cell: int, digit: int, note: bool, cheated: bool) -> None:
        if self.given[cell]:
            raise AssertionError(f"a model moved on the given cell {cell}")
        self.rows.append((*self._gap, cell, digit, note, cheated))
        self._gap = [0.0, 0.0, 0.0]

    def place(self, cell: int, digit: int, cheated: bool = False) -> None:
        self.value[cell] = digit
        self._move(cell, digit, False, cheated)

    def erase(self, cell: int) -> None:
        self.value[cell] = 0
        self._move(cell, 0, False, False)

    def toggle(self, cell: int, digit: int) -> None:
        self.marks[cell] ^= 1 << (digit - 1)
        self._move(cell, digit, True, False)

    def times_s(self, total_s: float) -> np.ndarray:
        """Each move's time in seconds: think scaled to fill total_s beside the motor time
        (squeezed to at most MOTOR_SHARE of it), pauses on top."""
        gap = np.array([r[:3] for r in self.rows], dtype=float).reshape(-1, 3)
        think, motor, pause = gap[:, 0], gap[:, 1], gap[:, 2]
        m = motor.sum()
        squeeze = min(1.0, MOTOR_SHARE * total_s / m) if m > 0 else 1.0
        w = think.sum()
        scale = (total_s - squeeze * m) / w if w > 0 else 0.0
        return np.cumsum(think * scale + motor * squeeze + pause)

    def finish(self, model: str, total_s: float, base: str = "") -> PlayerLog:
        return _as_log(model, self.times_s(total_s), self.rows, base)


def _as_log(model: str, t_s: np.ndarray, rows, base: str = "") -> PlayerLog:
    cols = list(zip(*rows)) if rows else [()] * 7
    t_ms = np.maximum.accumulate(np.round(np.asarray(t_s, float) * 1000).astype(np.int64))
    return PlayerLog(model, t_ms, np.array(cols[3], np.int64), np.array(cols[4], np.int64),
                     np.array(cols[5], bool), np.array(cols[6], bool), base)


def _inputs(text: str, solution) -> tuple[Puzzle, list[int]]:
    """The puzzle and its solution as a list; ValueError when they do not agree."""
    puzzle = parse(text)
    sol = [int(ch) for ch in solution] if isinstance(solution, str) \
        else np.asarray(solution, np.int64).tolist()
    if len(sol) != puzzle.givens.size:
        raise ValueError(f"the solution has {len(sol)} cells, the puzzle "
                         f"{puzzle.givens.size}")
    g = puzzle.givens.tolist()
    bad = [c for c in range(len(g)) if g[c] and g[c] != sol[c]]
    if bad or min(sol) < 1:
        raise ValueError(f"the solution does not complete the givens (cell "
                         f"{bad[0] if bad else sol.index(min(sol))})")
    return puzzle, sol


def _digits(mask: int) -> list[int]:
    return [d + 1 for d in range(mask.bit_length()) if mask >> d & 1]


def _scan_key(box_size: int, mode: str) -> np.ndarray:
    """Each cell's position when a person scans by rows, columns or blocks."""
    b = box_size
    size = b * b
    r, c = np.divmod(np.arange(size * size), size)
    if mode == "rows":
        return r * size + c
    if mode == "cols":
        return c * size + r
    block = (r // b) * b + c // b
    return block * size + (r % b) * b + c % b


def _model_step(board: Board, solution: list[int]) -> Step:
    """The technique model's next step from ``board`` (solve_with_techniques' rule:
    singles, the ladder cheapest first, a guess of the solution's digit last)."""
    step = tq.take_single(board)
    if step is None:
        for fn in tq.ladder_for(board.box_size):
            step = fn(board)
            if step is not None:
                return step
        cand = board.cand
        c = min((c for c, m in enumerate(cand) if m), key=lambda c: (cand[c].bit_count(), c))
        step = Step("guess", placements=((c, solution[c]),), because=(c,))
    return step


def _technique_order(values: list[int], box_size: int, solution: list[int]
                     ) -> list[tuple[int, int, str]]:
    """(cell, digit, technique) of the placements solve_with_techniques makes from the
    board ``values`` (0 = empty), in its order."""
    puzzle = Puzzle(box_size, np.array(values, np.int64))
    return tq.solve_with_techniques(puzzle, np.array(solution)).placements()


# ---------------------------------------------------------------------- person habits

# each model's habits: name -> a draw from the rng (a person keeps theirs over a season)
PERSONS: dict[str, dict[str, Callable]] = {
    "pencil_marker": {
        "tidy": lambda r: r.uniform(0.1, 0.95),     # per round: apply the eliminations seen
        "triples": lambda r: r.uniform(0.0, 0.5),   # per tidy: look for triples too
        "slope": lambda r: r.uniform(0.25, 0.7),    # log think per unit of technique weight
        "shape": lambda r: r.uniform(1.5, 4.0),     # gamma noise shape (mean 1)
        "tap_s": lambda r: r.uniform(0.3, 1.5),     # a note tap
        "ceiling": lambda r: float(r.choice(CEILINGS)),
    },
    "auto_notes": {
        "tidy": lambda r: r.uniform(0.05, 0.4),
        "slope": lambda r: r.uniform(0.3, 0.8),
        "sigma": lambda r: r.uniform(0.4, 0.9),     # log-normal noise
        "locality": lambda r: r.uniform(0.0, 1.5),  # preference for singles near the last
        "tap_s": lambda r: r.uniform(0.3, 1.0),
        "ceiling": lambda r: float(r.choice(CEILINGS)),
    },
    "sweeper": {
        "alpha": lambda r: r.uniform(0.6, 1.1),     # think ~ checks ** alpha
        "shape": lambda r: r.uniform(1.5, 4.0),
        "slope": lambda r: r.uniform(0.4, 0.9),     # at stalls: exp(slope * weight)
        "slip_rate": lambda r: r.uniform(0.0, 0.05),
        "break_p": lambda r: 0.3,
    },
    "ladder": {
        "slope": lambda r: r.uniform(0.3, 1.0),
        "sigma": lambda r: r.uniform(0.3, 0.7),
        "distraction": lambda r: r.uniform(0.0, 0.05),
    },
}


def draw_person(model: str, rng: np.random.Generator, **given) -> dict:
    """A person's habits for ``model`` (see :data:`PERSONS`), ``given`` ones kept."""
    if model not in PERSONS:
        raise ValueError(f"no habits for {model!r}; models: {sorted(PERSONS)}")
    unknown = set(given) - set(PERSONS[model])
    if unknown:
        raise ValueError(f"{model} has no habit {sorted(unknown)[0]!r}")
    return {k: (given[k] if given.get(k) is not None else draw(rng))
            for k, draw in PERSONS[model].items()}


# ----------------------------------------------------------------------- the players

class _Player:
    """One solve in progress: what the person knows (a technique Board: digits placed
    and the candidates left after their own eliminations), the log, the habits.
    ``stall_hook(player) -> bool`` sees every stall (no single on offer) first; a
    cheater's hook places something there and returns True."""

    def __init__(self, puzzle: Puzzle, solution: list[int], rng, person: dict,
                 stall_hook=None):
        self.puzzle, self.sol, self.rng, self.p = puzzle, solution, rng, person
        self.board = Board.of(puzzle)
        self.log = _Log(puzzle.givens)
        self.stall_hook = stall_hook

    def put(self, cell: int, digit: int, cheated: bool = False) -> None:
        """Write a correct digit; the board learns it, the marks are kept up."""
        if digit != self.sol[cell]:
            raise AssertionError(f"a deduction placed {digit} in cell {cell}")
        self.log.place(cell, digit, cheated)
        self.board.place(cell, digit)
        self.after_put(cell, digit)

    def after_put(self, cell: int, digit: int) -> None:
        pass

    def stall(self) -> bool:
        return self.stall_hook is not None and bool(self.stall_hook(self))

    def open_cells(self) -> list[int]:
        """Cells empty on the board and on the screen."""
        return [c for c, v in enumerate(self.board.value) if not v and not self.log.value[c]]

    def hard_think(self, weight: float) -> None:
        """The long think before a step beyond the player's routine."""
        self.log.think(3.0 * math.exp(self.p["slope"] * min(weight, MAX_THINK_WEIGHT))
                       * self.rng.gamma(2.0, 0.5))


class _Marker(_Player):
    """A player with pencil marks on the screen, kept equal to the board's candidates."""

    def tap(self) -> float:
        return self.p["tap_s"] * self.rng.gamma(4.0, 0.25)

    def mark_everything(self, portal: bool) -> None:
        """Every candidate of every empty cell as a note: tapped cell by cell in reading
        order, or by the portal all at one instant."""
        for c, m in enumerate(self.board.cand):
            for d in _digits(m):
                if not portal:
                    self.log.motor(self.tap())
                self.log.toggle(c, d)

    def strike(self, eliminations) -> None:
        """Remove marks by hand, the board learning the eliminations."""
        for c, d in eliminations:
            if self.log.marks[c] >> (d - 1) & 1:
                self.log.motor(self.tap())
                self.log.toggle(c, d)
            self.board.eliminate(c, d)

    def peer_marks(self, cell: int, digit: int) -> list[int]:
        """Empty peers (on the screen) still showing the mark ``digit``."""
        bit = 1 << (digit - 1)
        return [p for p in sorted(self.board.peers[cell])
                if not self.log.value[p] and self.log.marks[p] & bit]

    def think_step(self, weight: float, factor: float = 1.0) -> None:
        """Think before a step of ``weight``, ``factor`` times the usual."""
        raise NotImplementedError

    def tidy(self, steps: int = 1_000) -> bool:
        """Apply up to ``steps`` eliminations of locked candidates and pairs (triples
        sometimes) the marks show; whether any was found."""
        ladder = TIDY + (TRIPLES if self.rng.random() < self.p.get("triples", 0.0) else ())
        done = 0
        while done < steps:
            step = next((s for s in (fn(self.board) for fn in ladder) if s is not None), None)
            if step is None:
                break
            self.think_step(step.weight)
            self.strike(step.eliminations)
            done += 1
        return done > 0

    def hard(self) -> bool:
        """The harder techniques the person knows, after a long think."""
        for fn, name in HARD:
            if WEIGHT[name] > self.p["ceiling"]:
                break
            step = fn(self.board)
            if step is not None:
                self.hard_think(step.weight)
                self.strike(step.eliminations)
                return True
        return False

    def guess(self) -> None:
        """Nothing the person knows progresses: try a candidate of a cell with fewest
        marks (two, mostly). Right: it stays. Wrong: singles follow from it for a few
        placements until a contradiction shows, then those digits are erased and the
        guessed candidate struck."""
        cand = self.board.cand
        fewest = min(m.bit_count() for m in cand if m)
        cell = int(self.rng.choice([c for c, m in enumerate(cand) if m.bit_count() == fewest]))
        digit = int(self.rng.choice(_digits(cand[cell])))
        self.hard_think(WEIGHT["guess"])
        if digit == self.sol[cell]:
            self.log.motor(self.rng.uniform(1.0, 3.0))
            self.put(cell, digit)
            return
        trial = self.board.copy()
        placed = []
        c, d = cell, digit
        for _ in range(1 + int(self.rng.integers(0, 6))):
            trial.place(c, d)
            self.log.motor(self.rng.uniform(1.0, 3.0))
            self.log.place(c, d)
            placed.append((c, d, self.screen_effect(c, d)))
            offers = singles(trial)
            if trial.broken() or not offers:
                break
            c, d, _ = min(offers, key=lambda o: (_RANK[o[2]], o[0]))
        self.think_step(WEIGHT["forcing"])  # seeing the contradiction
        for c, d, removed in reversed(placed):
            self.log.motor(self.rng.uniform(0.5, 1.5))
            self.log.erase(c)
            for p in removed:       # the portal took these marks away: put them back
                self.log.motor(self.tap())
                self.log.toggle(p, d)
        self.strike(((cell, digit),))

    def screen_effect(self, cell: int, digit: int) -> list[int]:
        """What placing a digit does to other cells' marks at once (a portal's): the
        cells whose mark it removed."""
        return []

    def stuck(self) -> None:
        """No single on offer: a cheater's hook, else eliminations, harder techniques, a
        guess."""
        if not (self.stall() or self.tidy() or self.hard()):
            self.guess()


class _PencilMarker(_Marker):
    """See :func:`pencil_marker`."""

    struck_s = 0.0   # seconds spent striking marks after the last placement

    def think_step(self, weight: float, factor: float = 1.0) -> None:
        k = self.p["shape"]
        self.log.think(factor * math.exp(self.p["slope"] * min(weight, MAX_THINK_WEIGHT))
                       * self.rng.gamma(k, 1 / k))

    def after_put(self, cell: int, digit: int) -> None:
        self.struck_s = look = self.rng.uniform(0.2, 0.6)   # a look round the peers first
        self.log.motor(look)
        for p in self.peer_marks(cell, digit):
            tap = self.tap()
            self.struck_s += tap
            self.log.motor(tap)
            self.log.toggle(p, digit)

    def run(self) -> None:
        rng = self.rng
        self.log.think(2.0 * rng.gamma(4.0, 0.25))   # the first look
        self.mark_everything(portal=False)
        keys = [_scan_key(self.puzzle.box_size, m) for m in ("rows", "cols", "blocks")]
        while not self.board.solved:
            if rng.random() < 0.01:
                self.log.pause(rng.uniform(20, 120))  # a drink, a look away
            offers = singles(self.board)
            if offers and rng.random() < self.p["tidy"]:
                self.tidy()
                offers = singles(self.board)
            if not offers:
                self.stuck()
                continue
            # a burst: every single the marks show, in the order the eye scans them
            key = keys[int(rng.integers(3))]
            start = int(rng.integers(key.size))
            cells = {c: d for c, d, _ in offers}
            self.think_step(min(WEIGHT[k] for _, _, k in offers), 1 / math.sqrt(len(cells)))
            self.struck_s = 0.0
            for c in sorted(cells, key=lambda c: (key[c] - start) % key.size):
                if not self.board.value[c]:   # 1-3 s from the last placement, strikes included
                    self.log.motor(max(0.3, rng.uniform(1.0, 3.0) - self.struck_s))
                    self.put(c, cells[c])


class _AutoNotes(_Marker):
    """See :func:`auto_notes`."""

    def think_step(self, weight: float, factor: float = 1.0) -> None:
        self.log.think(factor * math.exp(self.p["slope"] * min(weight, MAX_THINK_WEIGHT)
                                         + self.rng.normal(0, self.p["sigma"])))

    def screen_effect(self, cell: int, digit: int) -> list[int]:
        removed = self.peer_marks(cell, digit)
        for p in removed:                 # the portal, at the placement's instant
            self.log.toggle(p, digit)
        return removed

    def after_put(self, cell: int, digit: int) -> None:
        self.screen_effect(cell, digit)

    def run(self) -> None:
        rng, geo = self.rng, self.puzzle.geometry
        self.mark_everything(portal=True)
        self.log.think(4.0 * rng.gamma(4.0, 0.25))
        if rng.random() < 0.15:
            self.log.pause(rng.uniform(60, 180))
        last = None
        while not self.board.solved:
            offers = singles(self.board)
            if offers and rng.random() < self.p["tidy"] and self.tidy(steps=1):
                continue
            if not offers:
                self.stuck()
                continue
            # a person sees lone marks first, then hidden singles, and near where they were
            ease = np.array([{tq.NAKED_SINGLE: 3.0, tq.FULL_HOUSE: 3.0, tq.HIDDEN_BOX: 1.5,
                              tq.HIDDEN_LINE: 1.0}[k] for _, _, k in offers])
            if last is not None:
                dist = np.array([abs(int(geo.row[c]) - int(geo.row[last]))
                                 + abs(int(geo.col[c]) - int(geo.col[last]))
                                 for c, _, _ in offers])
                ease = ease * np.exp(-self.p["locality"] * dist / 3)
            c, d, technique = offers[int(rng.choice(len(offers), p=ease / ease.sum()))]
            self.think_step(WEIGHT[technique], 1 / len(offers) ** 0.3)
            self.log.motor(rng.uniform(0.4, 1.2))
            self.put(c, d)
            last = c


class _Sweeper(_Player):
    """See :func:`sweeper`."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.checks = 0.0
        self.slips: list[list] = []   # [wrong cell, right cell, digit, placements to go]
        self.placements = 0
        n_empty = int((self.puzzle.givens == 0).sum())
        self.break_at = (int(self.rng.integers(0, n_empty))
                         if self.rng.random() < self.p["break_p"] else -1)

    def think_checks(self) -> None:
        k = self.p["shape"]
        self.log.think(max(self.checks, 1.0) ** self.p["alpha"] * self.rng.gamma(k, 1 / k))
        self.checks = 0.0

    def put(self, cell: int, digit: int, cheated: bool = False) -> None:
        for s in [s for s in self.slips if s[0] == cell]:
            self.fix(s)         # a digit meant for a cell holding a slip shows the slip
        super().put(cell, digit, cheated)

    def fix(self, slip: list) -> None:
        """The player sees the wrong digit: erase it, write the right one."""
        wrong, right, digit, _ = slip
        self.slips.remove(slip)
        self.log.think(self.rng.gamma(2.0, 1.0))
        self.log.motor(self.rng.uniform(0.5, 1.5))
        self.log.erase(wrong)
        self.log.motor(self.rng.uniform(0.5, 2.0))
        self.log.place(right, digit)

    def write(self, cell: int, digit: int, in_block: bool) -> None:
        """Place a found digit, or slip: the digit in another empty cell of the block (a
        box sweep) or another digit in the cell, noticed 1 to ~15 placements later."""
        rng = self.rng
        for s in [s for s in self.slips if s[0] == cell or s[3] <= 0]:
            self.fix(s)
        self.think_checks()
        if self.placements == self.break_at:
            self.log.pause(rng.uniform(120, 300))
        self.placements += 1
        self.log.motor(rng.uniform(0.5, 1.5))
        if rng.random() < self.p["slip_rate"]:
            if in_block:
                block = self.puzzle.geometry.units[2 * self.puzzle.size
                                                   + int(self.puzzle.geometry.block[cell])]
                other = [int(c) for c in block if c != cell and not self.board.value[c]
                         and not self.log.value[c]]
                fits = [c for c in other   # a misread: where the digit is not in plain view
                        if all(self.log.value[p] != digit for p in self.board.peers[c])]
                other = fits or other
                target = (int(rng.choice(other)), digit) if other else None
            else:
                seen = {self.log.value[p] for p in self.board.peers[cell]}
                pool = [d for d in range(1, self.puzzle.size + 1) if d != digit and d not in seen]
                target = (cell, int(rng.choice(pool))) if pool else None
            if target is not None:
                self.log.place(*target)
                self.board.place(cell, digit)
                self.slips.append([target[0], cell, digit, 1 + int(rng.geometric(0.15))])
                return
        for s in self.slips:
            s[3] -= 1
        self.put(cell, digit)

    def sweep(self) -> bool:
        """One pass over the digits, cross-hatching every block for each; whether any
        digit was placed."""
        rng, size, geo = self.rng, self.puzzle.size, self.puzzle.geometry
        start = 1 if rng.random() < 0.6 else int(rng.integers(1, size + 1))
        found = False
        for k in range(size):
            d, bit = (start - 1 + k) % size + 1, 1 << ((start - 1 + k) % size)
            blocks = rng.permutation(size) if rng.random() < 0.2 else range(size)
            for b in blocks:
                block = geo.units[2 * size + int(b)]
                spots = [int(c) for c in block if self.board.cand[c] & bit]
                self.checks += 1.0 if spots else 0.3   # a block holding d is a glance
                if len(spots) == 1:
                    self.write(spots[0], d, True)
                    found = True
        return found

    def scan_cells(self) -> bool:
        """Naked singles, cell by cell in reading order: the first one found."""
        for c, m in enumerate(self.board.cand):
            if m:
                self.checks += 1.0
                if not m & (m - 1):
                    self.write(c, m.bit_length(), False)
                    return True
        return False

    def run(self) -> None:
        self.log.think(20.0 * self.rng.gamma(4.0, 0.25))   # reading the grid
        while not self.board.solved:
            if self.sweep() or self.scan_cells():
                continue
            lines = [o for o in singles(self.board) if o[2] == tq.HIDDEN_LINE]
            if lines:                      # rows and columns, after a longer look
                self.checks += 3.0 * self.puzzle.size
                c, d, _ = lines[int(self.rng.integers(len(lines)))]
                self.write(c, d, False)
                continue
            if self.stall():
                continue
            step = _model_step(self.board, self.sol)
            self.hard_think(step.weight)
            for c, d in step.eliminations:
                self.board.eliminate(c, d)
            for c, d in step.placements:
                self.write(c, d, False)
        for s in list(self.slips):
            self.fix(s)


class _Ladder(_Player):
    """See :func:`ladder`."""

    def think_step(self, weight: float) -> None:
        w = math.exp(self.p["slope"] * min(weight, MAX_THINK_WEIGHT)
                     + self.rng.normal(0, self.p["sigma"]))
        if self.rng.random() < self.p["distraction"]:
            w *= self.rng.uniform(3.0, 8.0)
        self.log.think(w)

    def run(self) -> None:
        rng = self.rng
        key = _scan_key(self.puzzle.box_size, ("rows", "cols", "blocks")[int(rng.integers(3))])
        cursor = int(rng.integers(key.size))
        self.log.think(10.0 * rng.gamma(4.0, 0.25))
        while not self.board.solved:
            offers = singles(self.board)
            if offers:
                rank = min(_RANK[k] for _, _, k in offers)
                c, d, technique = min((o for o in offers if _RANK[o[2]] == rank),
                                       key=lambda o: (key[o[0]] - key[cursor]) % key.size)
                self.think_step(WEIGHT[technique])
                self.log.motor(rng.uniform(0.5, 1.5))
                self.put(c, d)
                cursor = c
                continue
            if self.stall():
                continue
            step = _model_step(self.board, self.sol)
            self.think_step(step.weight)
            for c, d in step.eliminations:
                self.board.eliminate(c, d)
            for c, d in step.placements:
                self.log.motor(rng.uniform(0.5, 1.5))
                self.put(c, d)
                cursor = c


# --------------------------------------------------------------------- honest models

def _honest(cls, name, text, solution, rng, total_s, person, stall_hook=None):
    puzzle, sol = _inputs(text, solution)
    player = cls(puzzle, sol, rng, draw_person(name, rng, **person), stall_hook)
    player.run()
    return player


def pencil_marker(text: str, solution, rng: np.random.Generator, total_s: float,
                  **person) -> PlayerLog:
    """An honest player who works from hand-written pencil marks.

    Writes every candidate of every cell as a note first (reading order, a tap of
    0.3–1.5 s each, the person's own tap speed with gamma noise). Then rounds: with
    probability ``tidy`` (per person, 0.1–0.95: from occasional to almost every round)
    it first applies every elimination its marks show — pointing, claiming, naked and
    hidden pairs, triples in some rounds — *even while a single is on offer elsewhere*,
    striking marks by hand; then it places, in a burst 1–3 s apart, every single its
    marks show, in the order its eye scans (rows, columns or blocks from a random
    start), so a digit its own eliminations made a single can come before a single the
    bare board offers. After each placement it strikes that digit from the peers' marks
    by hand (a look, then a tap each). With no single in its marks it tidies; when that
    finds nothing, the harder techniques it knows (x-wing up to its ``ceiling``: wings,
    colouring or chains) after a long think; as a last resort it guesses a candidate of a
    cell with fewest marks (wrong about half the time: then it follows singles from the
    guess for up to six placements, sees the contradiction, erases them and strikes the
    guess). Think before a round or step: exp(slope × technique weight) × gamma noise
    (shape per person), the round's think shorter when many singles are on offer; a
    20–120 s pause in 1 % of rounds.
    """
    return _honest(_PencilMarker, "pencil_marker", text, solution, rng, total_s,
                   person).log.finish("pencil_marker", total_s)


def auto_notes(text: str, solution, rng: np.random.Generator, total_s: float,
               **person) -> PlayerLog:
    """An honest player on a portal that keeps candidate notes automatically.

    The portal writes every candidate as a note at t = 0 (hundreds of note events at
    one instant) and, at each placement, removes that digit from the peers' marks at
    the placement's instant (note events with its t_ms). The person takes one single at
    a time — lone marks first (3:1.5:1 for naked/full house, box, line), near the last
    placement (``locality``) — and now and then (``tidy``, 0.05–0.4 per step) or when
    no single is left strikes marks by hand with one locked-candidate or pair step;
    beyond those, the harder techniques up to its ``ceiling`` after a long think, then a
    guess as :func:`pencil_marker` does (the marks the portal removed for a wrong digit
    are put back by hand). Think: log-normal, exp(slope × weight + N(0, sigma)), shorter
    with many singles on offer; one 1–3 min break in 15 % of solves.
    """
    return _honest(_AutoNotes, "auto_notes", text, solution, rng, total_s,
                   person).log.finish("auto_notes", total_s)


def sweeper(text: str, solution, rng: np.random.Generator, total_s: float,
            **person) -> PlayerLog:
    """An honest player without notes who sweeps digit by digit.

    A pass takes the digits 1..size (from 1 mostly, sometimes another start) and for each
    cross-hatches every block (reading order, shuffled in a fifth of the passes),
    placing each hidden single it finds; passes repeat while they find something. A
    stalled pass turns to naked singles (cells in reading order), then to hidden singles
    in rows and columns, then, after a long think, to the technique model's next step
    (eliminations kept in the head). Think before a placement: (checks since the last
    one) ** alpha × gamma noise, a block already holding the digit costing a glance.
    Slips: with ``slip_rate`` (0–5 %) a found digit goes into another empty cell of the
    block (or another digit into the cell), noticed 1 to ~15 placements later (seconds
    to minutes), erased and written right. A 2–5 min break at a random placement in 30 %
    of solves.
    """
    return _honest(_Sweeper, "sweeper", text, solution, rng, total_s,
                   person).log.finish("sweeper", total_s)


def ladder(text: str, solution, rng: np.random.Generator, total_s: float,
           **person) -> PlayerLog:
    """An honest player who follows the technique ladder without notes.

    Each step is the technique model's (solve_with_techniques: the cheapest kind of
    single on offer, else the cheapest technique that progresses, else a guess), but
    among the singles of that kind it takes the next one in its own scan order (rows,
    columns or blocks) from the last cell it filled, not the lowest cell. Think before
    each step: log-normal, exp(slope × technique weight + N(0, sigma)), slope 0.3–1.0
    per person; a distraction (think × 3–8) on up to 5 % of steps.
    """
    return _honest(_Ladder, "ladder", text, solution, rng, total_s,
                   person).log.finish("ladder", total_s)


def pencilmark_player(text: str, solution, rng: np.random.Generator, total_s: float,
                      *, notes: bool = False) -> PlayerLog:
    """PyPI pencilmark's route (``bench/honest_pencilmark.py``, needs the test extras);
    with ``notes`` it writes every candidate first and strikes peers' marks after each
    placement."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    from honest_pencilmark import pencilmark_solve

    t, c, d, n = pencilmark_solve(text, np.asarray(_inputs(text, solution)[1]), rng,
                                  total_s=total_s, notes=notes)
    return PlayerLog("pencilmark", t, c, d, n, np.zeros(t.size, bool))


HONEST: dict[str, Callable[..., PlayerLog]] = {
    "pencil_marker": pencil_marker, "auto_notes": auto_notes, "sweeper": sweeper,
    "ladder": ladder, "pencilmark": pencilmark_player}


# ---------------------------------------------------------------------------- cheats

BASES = {"pencil_marker": _PencilMarker, "sweeper": _Sweeper}


def _base(base: str | None, rng) -> str:
    if base is None:
        return ("pencil_marker", "sweeper")[int(rng.integers(2))]
    if base not in BASES:
        raise ValueError(f"base must be one of {sorted(BASES)}, got {base!r}")
    return base


def _hint_cells(player: _Player, k: int, pick: str = "random") -> list[int]:
    """``k`` empty cells to hint: random ones, or (``fewest``) each time one of those
    with the fewest candidates on the board, as a hint button that shows the cell
    easiest to fill would."""
    cells = player.open_cells()
    if pick == "random":
        return [int(c) for c in player.rng.choice(cells, size=min(k, len(cells)),
                                                  replace=False)]
    out: list[int] = []
    for _ in range(min(k, len(cells))):
        left = [c for c in cells if c not in out]
        fewest = min(player.board.cand[c].bit_count() for c in left)
        out.append(int(player.rng.choice(
            [c for c in left if player.board.cand[c].bit_count() == fewest])))
    return out


def hint_at_stall(text: str, solution, rng: np.random.Generator, total_s: float, *,
                  base: str | None = None, pick: str = "random", **person) -> PlayerLog:
    """Solves by singles only (as a ``base`` pencil marker that never tidies, or a
    sweeper); at every stall (no single on offer) thinks 15–45 s, then types 1–3 cells
    of the solution 3–10 s apart and goes on by singles. The hinted cells are random
    empty cells (not the ones a solver would reveal next), or with ``pick="fewest"``
    those with the fewest candidates; they are chosen together at the stall, so the
    second and third can come after the first opened a single."""
    base = _base(base, rng)
    if pick not in ("random", "fewest"):
        raise ValueError(f"pick must be 'random' or 'fewest', got {pick!r}")

    def hook(player: _Player) -> bool:
        if not player.open_cells():
            return False          # every empty cell holds a slip: the person sees them first
        player.log.pause(player.rng.uniform(15, 45))
        for i, c in enumerate(_hint_cells(player, int(player.rng.integers(1, 4)), pick)):
            if i:
                player.log.pause(player.rng.uniform(3, 10))
            player.put(c, player.sol[c], cheated=True)
        return True

    if base == "pencil_marker":
        person["tidy"] = 0.0
    return _honest(BASES[base], base, text, solution, rng, total_s, person,
                   hook).log.finish("hint_at_stall", total_s, base)


def hint_button(text: str, solution, rng: np.random.Generator, total_s: float, *,
                base: str | None = None, **person) -> PlayerLog:
    """:func:`hint_at_stall` with a portal's hint button: each hinted cell one with the
    fewest candidates on the board, the cell easiest to fill."""
    return hint_at_stall(text, solution, rng, total_s, base=base, pick="fewest", **person)


def hint_at_hardest(text: str, solution, rng: np.random.Generator, total_s: float, *,
                    base: str | None = None, **person) -> PlayerLog:
    """Honest (a ``base`` pencil marker or sweeper) but for one hint: at the hardest
    stall of its solve — the stall whose next technique-model step weighs most — it
    thinks as long as for a hard step, then types the cell the technique model would
    place next from there (what a portal's hint button reveals). A solve without a
    stall (singles all the way) has no hint: its log is honest, ``cheated`` empty."""
    base = _base(base, rng)
    seed = int(rng.integers(2 ** 63))
    weights: list[float] = []

    def record(player: _Player) -> bool:
        weights.append(_model_step(player.board.copy(), player.sol).weight)
        return False

    _honest(BASES[base], base, text, solution, np.random.default_rng(seed), total_s,
            dict(person), record)
    target = int(np.argmax(weights)) if weights else -1
    seen = [0]

    def hint(player: _Player) -> bool:
        seen[0] += 1
        if seen[0] - 1 != target:
            return False
        b = player.board.copy()
        while True:
            step = _model_step(b, player.sol)
            if step.placements:
                break
            b.apply(step)
        player.hard_think(weights[target])
        c, d = step.placements[0]
        player.put(c, d, cheated=True)
        return True

    return _honest(BASES[base], base, text, solution, np.random.default_rng(seed), total_s,
                   dict(person), hint).log.finish("hint_at_hardest", total_s, base)


def _cut(log: PlayerLog, text: str, sol: list[int], k: int) -> tuple[int, list[int]]:
    """The moves of ``log`` up to the one after which ``k`` empty cells hold their right
    digit, and the screen's digits there."""
    value = parse(text).givens.astype(int).tolist()
    right = 0
    for i in range(log.t_ms.size):
        if log.note[i]:
            continue
        c, d = int(log.cell[i]), int(log.digit[i])
        right += (d == sol[c]) - (value[c] == sol[c])
        value[c] = d
        if right >= k:
            return i + 1, value
    return log.t_ms.size, value


@dataclass(frozen=True)
class CopyPlan:
    """A copy of the rest: the honest log it is cut from (``full``, the whole solve the
    person would have made), how many of its moves are kept (``end``) and the rest of
    the solution in the technique model's order, (cell, digit, technique) each."""

    base: str
    full: PlayerLog
    end: int
    rest: list[tuple[int, int, str]]


def _plan_from(base: str, full: PlayerLog, end: int, value: list[int], text: str,
               sol: list[int]) -> CopyPlan:
    known = [v if v == sol[c] else 0 for c, v in enumerate(value)]
    return CopyPlan(base, full, end, _technique_order(known, parse(text).box_size, sol))


def copy_plan(name: str, text: str, solution, rng, total_s: float, base: str | None,
              person: dict, share: float) -> CopyPlan:
    """Honest (``base``) until ``share`` of the empty cells hold their digit; the rest
    of the solution in the technique model's order from there."""
    base = _base(base, rng)
    puzzle, sol = _inputs(text, solution)
    honest = _honest(BASES[base], base, text, solution, rng, total_s, person)
    full = honest.log.finish(name, total_s, base)
    n_empty = int((puzzle.givens == 0).sum())
    end, value = _cut(full, text, sol, int(round(share * n_empty)))
    return _plan_from(base, full, end, value, text, sol)


def stuck_plan(name: str, text: str, solution, rng, total_s: float, base: str | None,
               person: dict) -> CopyPlan:
    """Honest (``base``) until its first stall (no single on offer where the person
    looks); the rest of the solution in the technique model's order from there. A solve
    without a stall keeps every move and copies nothing."""
    base = _base(base, rng)
    _, sol = _inputs(text, solution)
    at: list[int] = []

    def record(player: _Player) -> bool:
        if not at:
            at.append(len(player.log.rows))
        return False

    honest = _honest(BASES[base], base, text, solution, rng, total_s, person, record)
    full = honest.log.finish(name, total_s, base)
    if not at:
        return CopyPlan(base, full, full.t_ms.size, [])
    # the screen there: the moves before the stall replayed (a slip's digit included)
    value, _ = screen(text, *(a[:at[0]] for a in full.arrays))
    return _plan_from(base, full, at[0], value.tolist(), text, sol)


def _typed_rest(name: str, plan: CopyPlan, delays: Callable, first_s: float = 0.0
                ) -> PlayerLog:
    """The plan's honest moves, then its rest typed: ``delays(honest intervals in s,
    n)`` gives the delays, ``first_s`` more before the first copied cell."""
    full, end, rest = plan.full, plan.end, plan.rest
    if not rest:
        return replace(full, model=name)
    placed_t = full.t_ms[:end][full.placed[:end]] / 1000.0
    gaps = np.diff(placed_t)
    gaps = gaps[gaps > 0] if gaps.size and (gaps > 0).any() else np.array([5.0])
    t0 = full.t_ms[end - 1] / 1000.0 if end else 0.0
    wait = np.asarray(delays(gaps, len(rest)), dtype=float)
    wait[0] += first_s
    t = t0 + np.cumsum(wait)
    rows = [(0, 0, 0, int(full.cell[i]), int(full.digit[i]), bool(full.note[i]), False)
            for i in range(end)]
    rows += [(0, 0, 0, c, d, False, True) for c, d, _ in rest]
    t_s = np.concatenate([full.t_ms[:end] / 1000.0, t])
    return _as_log(name, t_s, rows, plan.base)


def _copy_rest(name: str, text: str, solution, rng, total_s: float, base: str | None,
               person: dict, share: float, delays: Callable) -> tuple[PlayerLog, CopyPlan]:
    """Honest (``base``) until ``share`` of the empty cells hold their digit, then the
    rest of the solution in the technique model's order; ``delays(honest intervals in s,
    n)`` gives the copy's delays. The log and the plan it was cut from."""
    plan = copy_plan(name, text, solution, rng, total_s, base, person, share)
    return _typed_rest(name, plan, delays), plan


def _paced(rng) -> Callable:
    """A copy's delays at a human-looking pace: log-normal, the median 0.6–1.2x the
    median of the honest intervals, sd 0.5–0.9 in log, not tied to the steps."""
    ratio, sigma = float(rng.uniform(0.6, 1.2)), float(rng.uniform(0.5, 0.9))

    def delays(gaps, n):
        return np.exp(np.log(np.median(gaps) * ratio) + rng.normal(0, sigma, n))

    return delays


def partial_and_plan(text: str, solution, rng: np.random.Generator, total_s: float, *,
                     base: str | None = None, **person) -> tuple[PlayerLog, CopyPlan]:
    """:func:`partial`'s log and the plan it was cut from (the honest solve it copies
    the end of)."""
    share = float(rng.uniform(0.4, 0.7))
    return _copy_rest("partial", text, solution, rng, total_s, base, person, share,
                      _paced(rng))


def partial(text: str, solution, rng: np.random.Generator, total_s: float, *,
            base: str | None = None, **person) -> PlayerLog:
    """Honest (a ``base`` pencil marker or sweeper, its own timing) until a random 40–70 %
    of the empty cells hold their digit, then types the rest of the solution in the
    order solve_with_techniques places them from that board (cells holding a wrong digit
    are overwritten; notes stop), at a human-looking pace: log-normal delays whose
    median is 0.6–1.2x the median interval between its honest placements, sd 0.5–0.9
    in log, not tied to the steps."""
    return partial_and_plan(text, solution, rng, total_s, base=base, **person)[0]


def assisted_and_plan(text: str, solution, rng: np.random.Generator, total_s: float, *,
                      base: str | None = None, **person) -> tuple[PlayerLog, CopyPlan]:
    """:func:`assisted`'s log and the plan it was cut from."""
    speedup = float(rng.uniform(1.5, 3.0))

    def delays(gaps, n):
        return rng.choice(gaps, n) / speedup

    return _copy_rest("assisted", text, solution, rng, total_s, base, person, 0.6, delays)


def assisted(text: str, solution, rng: np.random.Generator, total_s: float, *,
             base: str | None = None, **person) -> PlayerLog:
    """Honest (a ``base`` pencil marker or sweeper) for 60 % of the empty cells, then
    the rest of the solution in solve_with_techniques' order, each delay one of its own
    honest intervals drawn at random and made 1.5–3x shorter (the spread of its pace
    kept, so the pace does not turn steady at the switch)."""
    return assisted_and_plan(text, solution, rng, total_s, base=base, **person)[0]


def stuck_copier_and_plan(text: str, solution, rng: np.random.Generator, total_s: float,
                          *, base: str | None = None, **person
                          ) -> tuple[PlayerLog, CopyPlan]:
    """:func:`stuck_copier`'s log and the plan it was cut from."""
    base = _base(base, rng)
    delays = _paced(rng)
    think = float(rng.uniform(15, 45))
    plan = stuck_plan("stuck_copier", text, solution, rng, total_s, base, person)
    return _typed_rest("stuck_copier", plan, delays, think), plan


def stuck_copier(text: str, solution, rng: np.random.Generator, total_s: float, *,
                 base: str | None = None, **person) -> PlayerLog:
    """Honest (a ``base`` pencil marker or sweeper) until its first stall (no single on
    offer: a technique has to be found); there it thinks 15–45 s, gives up and types
    the rest of the solution in the order solve_with_techniques places it (cells holding
    a wrong digit are overwritten; notes stop), at :func:`partial`'s pace, not slowing
    at the stalls that follow. What a person who opens a solver when stuck does, where
    :func:`partial` copies from a random point. A solve without a stall is honest."""
    return stuck_copier_and_plan(text, solution, rng, total_s, base=base, **person)[0]


# the cheats that copy the end of an honest solve: each gives its log and that solve's
# plan (experiments/copy_tail.py sets one beside the other)
COPIES: dict[str, Callable[..., tuple[PlayerLog, CopyPlan]]] = {
    "partial": partial_and_plan, "assisted": assisted_and_plan,
    "stuck_copier": stuck_copier_and_plan}


def _copy(name: str, text: str, solution, rng, total_s: float, slope: float
          ) -> PlayerLog:
    puzzle, sol = _inputs(text, solution)
    order = tq.solve_with_techniques(puzzle, np.array(sol)).placements()
    weight = np.array([WEIGHT[tech] for _, _, tech in order])
    sigma = float(rng.uniform(0.5, 0.9))
    delays = np.exp(slope * weight + rng.normal(0, sigma, weight.size))
    total = total_s / float(rng.uniform(2.5, 4.5))
    t = np.cumsum(delays) / delays.sum() * total
    return _as_log(name, t, [(0, 0, 0, c, d, False, True) for c, d, _ in order])


def human_order_copier(text: str, solution, rng: np.random.Generator, total_s: float
                       ) -> PlayerLog:
    """The whole solution typed in solve_with_techniques' placement order, in total
    2.5–4.5x faster than ``total_s`` (what the person would take honestly), each delay
    log-normal (sd 0.5–0.9 in log) and independent of the step's difficulty."""
    return _copy("human_order_copier", text, solution, rng, total_s, 0.0)


def difficulty_copier(text: str, solution, rng: np.random.Generator, total_s: float
                      ) -> PlayerLog:
    """As :func:`human_order_copier`, but each delay grows with the step's technique
    weight (exp(slope × weight), slope 0.8–1.5, a hard step's weight credited to the
    placement it opened): a copier who slows where a person would."""
    return _copy("difficulty_copier", text, solution, rng, total_s,
                 float(rng.uniform(0.8, 1.5)))


HIDING_CHEATS: dict[str, Callable[..., PlayerLog]] = {
    "hint_at_stall": hint_at_stall, "hint_button": hint_button,
    "hint_at_hardest": hint_at_hardest,
    "partial": partial, "assisted": assisted, "stuck_copier": stuck_copier,
    "human_order_copier": human_order_copier,
    "difficulty_copier": difficulty_copier}
