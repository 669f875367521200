"""What a person could have known at each placement: the techniques that prove it, and
the player's own pencil marks (9×9 Sudoku; pure).

For every placement of a solve's fill order :func:`deduce` asks the deduction engine
(:mod:`fairgrid.solvers.deduction`) for the easiest rung of techniques that proves the
digit in that cell at that moment, with the eliminations a person keeps from moment to
moment, and, where that fails, whether the player's own marks of that moment prove it
(a pencil-marker places what *their* notes force). A placement is a person's work when
something up to the rung allowed at that moment proves it:

* at a stall (no single on the bare board), one rung above the easiest move on offer:
  a stuck person finds the easiest technique that moves, or one a little harder, and
  places the cell it proves; a long think followed by a cell an x-wing proves is a
  person, a cell nothing near the easiest move proves is what a solver shows;
* while a single is on offer, the hardest rung a stall before allowed (a person keeps
  what an x-wing found there and uses it again), never less than the subsets
  pencil-markers use anyway (they eliminate with pairs even then) — not the puzzle's
  own hardest step, which a hint taken once a single is back would hide behind;
* within a *hint run* — a placement :data:`RUN_GAP_MS` or less after one nothing
  proved, nothing between — the rungs of the placement before: the same look at the
  same stall, not a fresh one.

What nothing allowed proves may still be proved by a *trial*: the cell had two candidates
on the bare board and the other one leads by singles to a contradiction
(``engine.trial``), and the first digit placed there was right. Stuck people try the
other digit of a two-candidate cell and follow the singles it forces; a hint is a
random cell of the solution, rarely one a trial proves. A trial proves a cell
wherever it is made, but it is not a look at the board (``stall_look`` does not weigh
it), and made while a single was on offer it is still *unforced* (below): people take
the single first.

What nothing allowed proves, nor a trial, is *unproven*; a player who is right first
time at unproven cells knows what the board did not tell (a guess is wrong as often as
the candidates say). A placement that only a fish or harder proves, made while a single
was on offer elsewhere, is *unforced*: people take the single first; unless the solve
met a stall that needed that rung before (a person keeps what an x-wing found there).
Eliminations by locked candidates and subsets while a single is on offer are a
pencil-marker's habit, and a pencil-marker's log shows the marks
(:attr:`NoteLog.worked`); a log without such marks is judged on the bare board, where a
cell that was no single while one was on offer is unforced (``signals.unforced_bits``).

For a player's season, :meth:`Deduction.llr` weighs the solve as log-likelihood ratios
of a hint-taker against an honest player: ``right_first_time`` (right or wrong at the
first try where nothing allowed proved the cell, against the candidates left there),
``hint_run`` (whether such a cell was followed within seconds by another) and
``stall_look`` (how many looks at the board as it stood prove each cell placed at a
stall: a stuck person finds the easiest move and places what one look proves, a hint is
a random cell of the solution; where no number of looks proves it, how many candidates
the cell had beyond the fewest, counted as the player saw them (their own marks where
they kept them, else the bare board): a person who guesses picks a cell with the
fewest).
Each ratio's mean over honest play is at most one; the player verdict adds a solve's
three up (they read some placements twice, so the mean of their product is measured,
not built) and a season's product is a test martingale (``player_verdict``).

Pencil marks follow the webhook's rules (``docs/openapi.yaml``): a note move ``(cell,
d)`` toggles mark ``d``, ``(cell, 0)`` clears the cell's marks; a placed digit hides the
cell's marks, erasing it shows them again. Marks written by the portal, not the player
(:data:`AUTO_NOTES_MIN` at one instant), are the board's candidates: they prove nothing
a bare-board single would not, and the solve is not "notes first" for it. Marks count as
a player's proof only in a cell whose marks they narrowed (it held two or more before):
a lone mark written and then placed is a claim, not a deduction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from fairgrid.solvers import deduction as engine

# what each rung's proof needs, in the words the evidence uses ("nothing up to ... proves")
RUNG_WORDS = ("a single", "locked candidates", "a pair, triple or quad",
              "a fish (x-wing, swordfish, skyscraper, kite, empty rectangle)",
              "a wing (xy-, xyz-, w-wing), colouring or a uniqueness argument",
              "an xy-chain")
BEYOND_WORDS = "more than an xy-chain (a forcing chain, or a guess)"
TRIAL_WORDS = "a trial (the cell's other digit leads by singles to a contradiction)"
ALL_DIGITS = np.int64(0b1111111110)  # bit d for digit d (the engine's convention)
ALL_DIGITS_81 = np.full(81, ALL_DIGITS)
STALL_LOOKS = 2     # looks counted at a stall: one is a person's move, more is a search
STALL_FOLLOW = 2    # cells after a stall placement weighed with it (hints come 1-3 a stall)
AUTO_NOTES_MIN = 40        # marks written at one instant: the portal filled them in
NOTES_FIRST_SHARE = 0.5    # of the empty cells noted before the first placement
WORKED_STRIKES = 5         # marks struck by hand that show a player eliminating
ALLOWED_FLOOR = engine.SUBSET  # pencil-markers use pairs on any puzzle
RUN_GAP_MS = 15_000        # a placement this soon after one nothing proved: the same look
NOTES_RUNG = engine.SUBSET     # what a person applies to their own marks


def needed_words(rung: int) -> str:
    """What a rung of :func:`fairgrid.solvers.deduction.needed` needs, in words
    (:data:`~fairgrid.solvers.deduction.UNPROVEN`: more than the ladder has)."""
    if 0 <= rung <= engine.CHAIN:
        return RUNG_WORDS[rung]
    if rung == engine.UNPROVEN:
        return BEYOND_WORDS
    raise ValueError(f"no words for rung {rung} ({engine.rung_name(rung)})")


@dataclass(frozen=True, eq=False)
class NoteLog:
    """The player's pencil marks just before each fill (rows: fill order; columns:
    cells; bit d for digit d), which cells' marks were narrowed by then, and how the
    solve used marks."""

    masks: np.ndarray         # (fills, 81) int64
    narrowed: np.ndarray      # (fills, 81) bool: the cell had held two or more marks
    auto: bool                # the portal wrote the candidates
    notes_first: bool         # the player noted most empty cells before placing
    struck: int = 0           # marks the player removed by hand (not at a placement)

    @property
    def thinking(self) -> bool:
        """Whether the marks are the player's own thinking (written by hand, first)."""
        return self.notes_first and not self.auto

    @property
    def worked(self) -> bool:
        """Whether the player eliminated in their marks: noted by hand first, or struck
        :data:`WORKED_STRIKES` portal marks at moments of their own."""
        return self.thinking or self.struck >= WORKED_STRIKES

    def kept(self, k: int) -> np.ndarray:
        """The candidates the player kept at fill ``k``, per cell: their marks where they
        had narrowed the cell, every digit elsewhere (masks as for ``engine.closure``)."""
        mine = self.masks[k]
        return np.where((mine != 0) & self.narrowed[k], mine, ALL_DIGITS)


def read_notes(t_ms, cell, digit, note, givens, seq) -> NoteLog | None:
    """The marks at each fill (``seq``: the move index of each fill of the fill order),
    None for a solve without notes."""
    note = np.asarray(note, dtype=bool)
    if not note.any():
        return None
    t_ms, cell, digit = (np.asarray(a, dtype=np.int64) for a in (t_ms, cell, digit))
    givens = np.asarray(givens)
    empty = givens == 0
    seq = np.asarray(seq, dtype=np.int64)
    fill_at = np.full(t_ms.size, -1, dtype=np.int64)
    fill_at[seq] = np.arange(seq.size)
    masks = np.zeros((seq.size, 81), dtype=np.int64)
    narrowed = np.zeros((seq.size, 81), dtype=bool)
    struck = int(engine.marks_kernel(t_ms, cell, digit, note, empty, fill_at,
                                     np.sort(t_ms[~note]), masks, narrowed))
    first_place = int(np.argmax(~note)) if (~note).any() else note.size
    times = t_ms[note]
    _, counts = np.unique(times, return_counts=True)
    auto = bool(counts.max() >= AUTO_NOTES_MIN)
    noted_early = np.unique(cell[:first_place][note[:first_place]])
    notes_first = noted_early.size >= NOTES_FIRST_SHARE * max(int(empty.sum()), 1)
    return NoteLog(masks, narrowed, auto, bool(notes_first), struck)


def right_first_time(t_ms, cell, digit, note, givens, solution) -> np.ndarray:
    """Per cell, whether the first digit the player placed there was the solution's."""
    note = np.asarray(note, dtype=bool)
    cell, digit = np.asarray(cell, dtype=np.int64), np.asarray(digit, dtype=np.int64)
    first = np.zeros(np.asarray(givens).size, dtype=np.int64)
    for c, d, n in zip(cell.tolist(), digit.tolist(), note.tolist()):
        if not n and d and 0 <= c < first.size and not first[c]:
            first[c] = d
    return first == np.asarray(solution)


# At a cell nothing allowed proves, an honest player either saw a proof the ladder misses
# (right) or guessed (right one time in as many candidates as were left); a hint is
# right bar a slip of the finger.
SEEN_BEYOND = 0.5   # share of an honest player's unexplained cells proved beyond the ladder
HINT_SLIP = 0.02    # a hinted cell typed wrong
# An unexplained placement followed within RUN_GAP_MS by another: 8 of 30 such placements
# of hints taken at a stall, 0 of 5 of honest players (bench/players.py's models, 60
# solves each on 20 dailies); (0 + 1/2) / (5 + 1) for the honest share.
RUN_HINT = 8 / 30
RUN_HONEST = 0.5 / 6
# At a stall (and for a cell no bare single typed seconds after a stall placement one
# look did not prove, unless the eliminations carried to then prove it by the stall's
# easiest move's rung), how many looks at the bare board (every elimination up to the
# rung allowed there, all at once) prove the cell placed, and where none does, how many
# candidates the cell had beyond the fewest any empty cell had, as the player saw them
# (their own marks where they kept them, else the bare board: a stuck person who guesses
# picks a cell with the fewest; a hint is any cell): P(hinted) /
# P(honest) per outcome, from bench/players.py (python experiments/stall_looks.py
# --puzzles 16, seeds 11 and 12: 32 dailies, 3 solves per model each; never the seeds
# the benches report). Hints at the stall, of the placements a trial did not prove,
# right first time: 1 look 8 %, 2 looks 8 %, more 17 %, none at a cell with the fewest
# 15 %, one more 24 %, two or more 26 %; wrong first: a slip, 2 %. Honest models, per
# outcome the one that keeps the honest mean of the ratio at most one (the season's sum
# test needs it): 1 look 51 % (auto-notes; others up to 72 %), 2 looks 14 % (up to
# 18 %), more 9 % (auto-notes up to 13 %); none 10 % taken as 15 % for people nobody
# modelled (guesses that came out right, techniques beyond the ladder), split as
# measured: at the fewest 8 % (4-9.5 % per model and seed), one more 5 % (3-5 %), two or
# more 2 % (none of the models' 1,093 weighed stall placements: the guard alone; a cell
# typed seconds after a stall placement is measured on the board as it then stands,
# where a naked single may be on offer, so it is never at the fewest); wrong first 13 %
# (auto-notes' guesses).
# Index: looks 0..STALL_LOOKS, more; then none by the candidates beyond the fewest, 0, 1, 2+.
STALL_LOOK_LR = (0.0, math.log(0.08 / 0.51), math.log(0.08 / 0.14),
                 math.log(0.17 / 0.09))
STALL_NONE_LR = (math.log(0.15 / 0.08), math.log(0.24 / 0.05), math.log(0.26 / 0.02))
STALL_WRONG_LR = math.log(0.02 / 0.13)


def right_first_llr(right, cands) -> float:
    """Σ ln P(outcome | hinted) / P(outcome | honest) over cells nothing allowed proved:
    ``right`` whether the first digit there was right, ``cands`` the candidates left.
    Right at a two-candidate cell is ln(0.98 / 0.75) = 0.27; wrong is -3.2."""
    right = np.asarray(right, dtype=bool)
    n = np.maximum(np.asarray(cands, dtype=float), 2.0)
    honest_right = SEEN_BEYOND + (1.0 - SEEN_BEYOND) / n
    llr = np.where(right, np.log((1.0 - HINT_SLIP) / honest_right),
                   np.log(HINT_SLIP / (1.0 - honest_right)))
    return float(llr.sum())


def puzzle_rung(technique_names) -> int:
    """The rung of the hardest of a solve's techniques (the technique model's run of
    the puzzle): :data:`engine.UNPROVEN` when it needed one beyond the ladder (forcing,
    a guess)."""
    rung_of = {name: r for r, names in enumerate(engine.RUNG_TECHNIQUES) for name in names}
    return max((rung_of.get(t, engine.UNPROVEN) for t in technique_names), default=0)


def hardest_rung(givens, solution) -> int:
    """The rung of the hardest step the technique model needs for a 9×9 puzzle
    (milliseconds: its run of the puzzle)."""
    from fairgrid.solvers.grid import Puzzle
    from fairgrid.solvers.techniques import solve_with_techniques

    run = solve_with_techniques(Puzzle(3, np.asarray(givens)), np.asarray(solution))
    return puzzle_rung(s.technique for s in run.steps)


@dataclass(frozen=True, eq=False)
class Deduction:
    """Per placement of a fill order (see the module doc)."""

    proof: np.ndarray         # the easiest rung that proves it (engine codes; a proof
                              # after one layer of singles counts one rung harder)
    by_trial: np.ndarray      # proved by a trial: a two-candidate cell whose other digit
                              # leads by singles to a contradiction (engine.trial)
    offer: np.ndarray         # the easiest rung at which any cell was a single
    cands: np.ndarray         # candidates left in the cell (closure, or marks if fewer)
    right_first: np.ndarray   # the first digit placed in the cell was right
    allowed: np.ndarray       # per placement: the rung up to which a proof is a person's
    notes: NoteLog | None
    intervals_ms: np.ndarray  # per placement: time since the one before (first: the start)
    looks: np.ndarray         # at a stall, looks at the bare board that prove it
                              # (engine.looks; -1 elsewhere, or where the player's
                              # notes or a trial proved it and the first try was right)
    look_rung: np.ndarray     # the rung those looks used (the stall's)
    surplus: np.ndarray       # where no number of looks proves it: the cell's candidates
                              # less the fewest any empty cell had, on the player's own
                              # marks where they kept them, else on the bare board
                              # (-1 elsewhere)
    by_marks: np.ndarray      # the player's own marks of that moment proved it (asked at
                              # a stall, and where nothing allowed proved it)

    @cached_property
    def by_notes(self) -> np.ndarray:
        """Placements nothing allowed proved that the player's own marks of that moment
        did (:attr:`by_marks` where it is asked beyond a stall)."""
        return self.by_marks & (self.proof > self.allowed)

    @property
    def worked(self) -> bool:
        """The player's notes show their eliminations (:attr:`NoteLog.worked`)."""
        return self.notes is not None and self.notes.worked

    @property
    def stalls_met(self) -> np.ndarray:
        """Per placement, the hardest easiest-move of the stalls met before it (the
        rungs the player had to use)."""
        before = np.concatenate([[engine.SINGLE], self.offer[:-1]])
        return np.maximum.accumulate(np.minimum(before, engine.CHAIN)) if before.size \
            else before

    @cached_property
    def unexplained(self) -> np.ndarray:
        """Placements nothing up to the rung allowed proves, nor the player's marks, right
        first time or not (one the chain search had no budget left for counts as proved:
        never held against the player)."""
        return ((self.proof > self.allowed) & (self.proof != engine.NOT_ANALYSED)
                & ~self.by_notes & ~self.by_trial)

    @cached_property
    def tried(self) -> np.ndarray:
        """Placements nothing up to the rung allowed proved before the player's first
        try at the cell: the unexplained ones, and those whose first try was wrong
        whatever the player's marks proved by the time of the right digit (a note-taker
        who guessed wrong strikes the digit, and the marks then prove the other: what a
        wrong try taught explains nothing about the try)."""
        return self.unexplained | ((self.proof > self.allowed)
                                   & (self.proof != engine.NOT_ANALYSED) & ~self.right_first)

    @cached_property
    def unproven(self) -> np.ndarray:
        """Unexplained placements right first time: a guess would have been wrong as
        often as the candidates say."""
        return self.unexplained & self.right_first

    def proof_words(self, k: int) -> str | None:
        """What proved placement ``k``, in words; None when nothing allowed did."""
        if self.unexplained[k]:
            return None
        if self.by_notes[k]:
            return "the player's own notes"
        if self.by_trial[k]:
            return TRIAL_WORDS
        rung = int(self.proof[k])
        if rung == engine.NOT_ANALYSED:
            return "not searched (the chain budget was spent)"
        return RUNG_WORDS[rung] if rung <= engine.CHAIN else None

    def look_words(self, k: int) -> str | None:
        """For a placement made at a stall, how many looks at the board prove it, in
        words (or that the first digit tried there was wrong, which is what is weighed
        then); None elsewhere."""
        if self.looks[k] < 0:
            return None
        if not self.right_first[k]:     # weighed as a wrong try, whatever the looks
            return "the first digit tried there was wrong (a guess, as people make)"
        n = int(self.looks[k])
        if n <= STALL_LOOKS:
            return ("it was a single already", "one look at the board proves it",
                    "two rounds of eliminations prove it")[n]
        upto = RUNG_WORDS[min(int(self.look_rung[k]), engine.CHAIN)]
        if n == STALL_LOOKS + 1:
            return "more than two rounds of eliminations prove it"
        more = max(int(self.surplus[k]), 0)
        marks = " in the player's marks" if self.notes is not None and \
            not self.notes.auto and self.notes.narrowed[k].any() else ""
        return (f"no number of rounds of eliminations up to {upto} proves it; "
                + (f"it was among the cells with the fewest candidates{marks} (where a "
                   "guess goes)" if more == 0 else
                   f"it had {more} candidate{'s' if more > 1 else ''} more than the fewest "
                   f"any empty cell had{marks} (a guess goes to a cell with the fewest)"))

    def run_of(self, k: int) -> tuple[int, int]:
        """(first, last) placement of the hint run holding placement ``k``: unexplained
        placements each :data:`RUN_GAP_MS` or less after the one before."""
        u = self.unexplained
        first = last = k
        while first > 0 and u[first - 1] and self.intervals_ms[first] <= RUN_GAP_MS:
            first -= 1
        while last + 1 < u.size and u[last + 1] and self.intervals_ms[last + 1] <= RUN_GAP_MS:
            last += 1
        return first, last

    def hint_run_llr(self) -> float:
        """Σ ln LR over the unexplained placements but the last: whether the next
        placement came within :data:`RUN_GAP_MS`, unexplained too and right first time
        (a hint run goes on) or not (:data:`RUN_HINT`, :data:`RUN_HONEST`)."""
        u = self.unexplained
        follow = (u[1:] & (self.intervals_ms[1:] <= RUN_GAP_MS) & self.right_first[1:])[u[:-1]]
        on = int(np.count_nonzero(follow))
        return (on * math.log(RUN_HINT / RUN_HONEST)
                + (follow.size - on) * math.log((1 - RUN_HINT) / (1 - RUN_HONEST)))

    def right_first_llr(self) -> float:
        """The log-likelihood ratio (natural log, hinted vs honest) of being right or
        wrong first time at the placements nothing allowed proved before the first try
        (:attr:`tried`, :func:`right_first_llr`)."""
        return right_first_llr(self.right_first[self.tried], self.cands[self.tried])

    @property
    def unforced(self) -> np.ndarray:
        """Placements only a fish or harder proves, made while a single was on offer,
        harder than any stall before needed. A trial counts (``by_trial`` is left in on
        purpose): it may prove the cell, but people take the single first."""
        return ((self.proof >= engine.FISH) & (self.proof > self.stalls_met) & ~self.by_notes
                & (self.offer == engine.SINGLE))

    def stall_look_llr(self) -> float:
        """Σ ln LR over the placements made at a stall (or seconds after one that one
        look did not prove) and proved neither by the player's marks nor by a trial, or
        tried wrong first whatever proved them after (:attr:`looks`): how many looks at
        the board prove them (:data:`STALL_LOOK_LR`) and, where none does, how far the
        cell was from the fewest candidates (:data:`STALL_NONE_LR`), right first time;
        or wrong (:data:`STALL_WRONG_LR`)."""
        at = self.looks >= 0
        none = STALL_LOOKS + 2
        seen = zip(np.minimum(self.looks[at & self.right_first], none).tolist(),
                   self.surplus[at & self.right_first].tolist())
        return float(sum(STALL_LOOK_LR[x] if x < none else STALL_NONE_LR[min(max(s, 0), 2)]
                         for x, s in seen)
                     + np.count_nonzero(at & ~self.right_first) * STALL_WRONG_LR)

    def llr(self) -> dict[str, float]:
        """Per kind of evidence, the solve's log-likelihood ratio (natural log, cheating
        vs honest) that a player's season adds up."""
        return {"right_first_time": round(self.right_first_llr(), 4),
                "hint_run": round(self.hint_run_llr(), 4),
                "stall_look": round(self.stall_look_llr(), 4)}

    def bits(self, which: np.ndarray) -> float:
        """Σ log2(candidates left) over the placements ``which`` marks: what the board
        did not tell, at least a bit each."""
        return float(np.log2(np.maximum(self.cands[which], 2)).sum())


def person_rungs(offer) -> np.ndarray:
    """Per placement, the rung up to which a proof is a person's work (``offer``: the
    easiest rung on offer at each moment): at a stall one above its easiest move (beyond
    a chain, anything: the ladder is blind there); while a single is on offer, the
    hardest a stall before has shown the player using, and never less than the subsets
    people use anyway (a floor of locked candidates for players without marks catches
    no more hints on the bench's players)."""
    offer = np.asarray(offer, dtype=np.int64)
    stall = np.where(offer > engine.SINGLE, offer + 1, engine.SINGLE)
    shown = np.maximum.accumulate(np.minimum(stall, engine.CHAIN)) if offer.size \
        else stall
    return np.where(offer > engine.SINGLE, stall, np.maximum(ALLOWED_FLOOR, shown))


def deduce(givens, solution, fill, t_ms, cell, digit, note) -> Deduction:
    """The deduction behind each placement of ``fill`` (``analytics.fill_order``) of a
    9×9 Sudoku solve."""
    givens = np.asarray(givens, dtype=np.int64)
    solution = np.asarray(solution, dtype=np.int64)
    trace = engine.trace_placements(givens, solution, fill.cells)
    # a proof after one layer of singles placed in the head counts a rung harder
    proof = np.where(trace.rung == engine.NOT_ANALYSED, engine.NOT_ANALYSED,
                     np.minimum(trace.rung, trace.rung_d1 + 1))
    cands = trace.cands_closed.copy()
    right = right_first_time(t_ms, cell, digit, note, givens, solution)[fill.cells]
    notes = read_notes(t_ms, cell, digit, note, givens, fill.seq) if fill.seq is not None \
        else None
    n = fill.cells.size
    # Python lists in the loop: a numpy scalar read per test costs more than the test
    allowed = person_rungs(trace.offer).tolist()
    proof_, offer, rung = proof.tolist(), trace.offer.tolist(), trace.rung.tolist()
    right_ = right.tolist()
    # by_marks where nothing allowed proved the cell is the Deduction's by_notes
    by_trial, by_marks, far = [False] * n, [False] * n, [False] * n
    marks = notes is not None and not notes.auto
    looks = [-1] * n
    surplus = [-1] * n
    look_rungs = [0] * n
    since_stall = 0                     # placements since the last stall placement
    grid = givens.copy()
    intervals = np.diff(np.concatenate([[0], np.asarray(fill.times_ms, dtype=np.int64)]))
    gaps = intervals.tolist()
    for k, c in enumerate(fill.cells.tolist()):
        # a cell typed seconds after one nothing proved, nothing between: the same look
        # at the same stall (a hint run), judged by that stall's rungs
        if k and gaps[k] <= RUN_GAP_MS and proof_[k - 1] > allowed[k - 1] \
                and proof_[k - 1] != engine.NOT_ANALYSED and not by_marks[k - 1] \
                and not by_trial[k - 1]:
            allowed[k] = min(allowed[k], allowed[k - 1])
        # at a stall the ladder may not search beyond a wing (chains are blind spots)
        stall = offer[k] > engine.SINGLE and allowed[k] <= engine.CHAIN \
            and proof_[k] != engine.NOT_ANALYSED
        look_rung = allowed[k]
        # a cell no bare single, typed seconds after a stall placement one look did not
        # prove (a trial's included: it proves its own cell only): the same look at the
        # same stall (the hints after the first; at most STALL_FOLLOW of them, which
        # bounds the looks a copied stretch costs) -- unless what the player knew by then
        # proves it by the stall's easiest move's rung: one step of a technique can place
        # two cells
        since_stall = since_stall + 1 if k else 0
        if not stall and k and far[k - 1] and gaps[k] <= RUN_GAP_MS \
                and since_stall <= STALL_FOLLOW \
                and rung[k] > engine.SINGLE and proof_[k] != engine.NOT_ANALYSED \
                and proof_[k] >= look_rungs[k - 1]:
            stall, look_rung = True, look_rungs[k - 1]
        elif stall:
            since_stall = 0
        look_rungs[k] = look_rung
        d = int(solution[c])
        unexplained = proof_[k] > allowed[k]
        mine_prove = False
        if marks:
            mine = notes.masks[k]
            if (unexplained or stall) and notes.narrowed[k, c] and mine[c]:
                mine_prove = engine.proves(notes.kept(k), grid, c, d, NOTES_RUNG) \
                    <= NOTES_RUNG
                by_marks[k] = mine_prove
                if unexplained and right_[k]:  # after a wrong try the marks hold one fewer
                    cands[k] = min(int(cands[k]), bin(int(mine[c])).count("1"))
        # what nothing allowed proves, a trial on its two-candidate cell may: a person's
        # work, at a stall too (it is no look at the board, so it is not weighed as one),
        # however quickly it came (fast people try digits fast too); a first digit that
        # was wrong is a guess, which the evidence weighs as one
        if unexplained and proof_[k] != engine.NOT_ANALYSED and not by_marks[k] \
                and right_[k]:
            by_trial[k] = engine.trial(grid, c, d)
        # a wrong first try at a stall is weighed as one, whatever the marks it taught
        # the player prove by the right digit
        if stall and not by_trial[k] and (not mine_prove or not right_[k]):
            looks[k] = engine.looks(ALL_DIGITS_81, grid, c, d, look_rung, STALL_LOOKS)
            if looks[k] >= STALL_LOOKS + 2:
                # a guess goes to a cell with the fewest candidates the player sees: on
                # their own marks where they kept them (a cell their marks leave empty is
                # no place for one; the digit placed counts in its own cell)
                kept = None
                if marks:
                    kept = notes.kept(k).copy()
                    kept[c] |= np.int64(1) << d
                seen = engine.bare_counts(grid, kept)
                open_ = (grid == 0) & (seen > 0)
                surplus[k] = max(0, int(seen[c] - seen[open_].min()))
        # a cell the player's marks proved is their step, wrong try or not: what follows
        # it is theirs too
        far[k] = stall and not mine_prove and (looks[k] > 1 or by_trial[k])
        grid[c] = d
    allowed = np.asarray(allowed, dtype=np.int64)
    by_trial, by_marks = np.asarray(by_trial, dtype=bool), np.asarray(by_marks, dtype=bool)
    looks, surplus = np.asarray(looks, dtype=np.int64), np.asarray(surplus, dtype=np.int64)
    return Deduction(proof, by_trial, trace.offer, cands, right, allowed, notes,
                     intervals, looks, np.asarray(look_rungs, dtype=np.int64), surplus,
                     by_marks)
