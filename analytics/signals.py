"""Evidence from one solve: the signals, each a number with a direction.

Each signal measures something people do when they solve and a copier does not, or
something people cannot do. Signals fall into families of evidence; two signals of one
family (the two order correlations, the two pacing measures) are not independent, so
the decision (:mod:`.calibration`) counts a family once.

======================  ====================================================  ====  ==========
signal                  value                                                 odd   family
======================  ====================================================  ====  ==========
``order_sa``            Spearman ρ of the fill order with the SA-predicted    low   order
                        median order (Křivánek 2011, §4.1)
``order_consensus``     Spearman ρ with the order other players used on the   low   order
                        puzzle (once the nightly job keeps one)
``unforced``            bits the board did not give: over the placements      high  deduction
                        that were not a naked or hidden single while some
                        single was on offer, Σ log2 (digits the board still
                        allowed in that cell). Stuck points (no single
                        anywhere) do not count: people need a harder
                        technique or a guess there.
``speed``               log solve time below the expected one, in the         low   speed
                        null's sds (expected time of the puzzle and, where
                        known, the player's skill)
``pace_variation``      sd of the log intervals between placements: people    low   pacing
                        take seconds on one cell and minutes on another, a
                        copier types at an even pace
``pacing_difficulty``   Spearman ρ between each delay and the step's          low   pacing
                        difficulty: people slow down on hard steps
``switch``              how much steadier the pace became at the most likely  high  switch
                        change point of the log intervals (log of the sd
                        before over the sd after, at least
                        :data:`SWITCH_MIN` placements each side): a solve
                        that turns from human to machine part-way (a
                        solve whose notes carried the thinking is judged
                        against such solves: :data:`NOTES_SWITCH`)
``paste``               client-reported paste events (only when the portal    high  client
                        sends ``client``; :mod:`.client_signals`)
``away``                bits placed unproved just after coming back to the    high  client
                        page (recorder's block only; :mod:`.client_signals`)
``log_match``           how alike the time before each placement is to        high  log_match
                        another player's earlier solve of the puzzle, as a
                        z (the normal quantile of its p; :mod:`.log_match`):
                        judged only below :data:`LOG_MATCH_JUDGED`
======================  ====================================================  ====  ==========

An unfinished solve that filled less than :data:`MIN_COVERAGE` of the empty cells is
judged on ``unforced`` (and ``paste``) only; speed needs a finished grid.

Mistakes and erasures are reported with the evidence but not scored: they are common
among honest players and absent from most, so their absence proves little.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fairgrid.solvers import deduction as engine
from fairgrid.solvers.propagation import NOT_DEDUCIBLE
from fairgrid.solvers.puzzle_types import DEFAULT_TYPE, puzzle_type

from .client_signals import client_signals
from .deduction import Deduction, deduce, needed_words
from .fill_order import FillOrder

SIGNALS = ("order_sa", "order_consensus", "unforced", "unproven", "speed",
           "pace_variation", "pacing_difficulty", "switch", "paste", "away", "log_match")
LOW_IS_ODD = {"order_sa": True, "order_consensus": True, "unforced": False,
              "unproven": False, "speed": True, "pace_variation": True,
              "pacing_difficulty": True, "switch": False, "paste": False,
              "away": False, "log_match": False}
FAMILY = {"order_sa": "order", "order_consensus": "order", "unforced": "deduction",
          "unproven": "deduction", "speed": "speed", "pace_variation": "pacing",
          "pacing_difficulty": "pacing", "switch": "switch", "paste": "client",
          "away": "client", "log_match": "log_match"}
# A solve's likeness to other players' logs of its puzzle is a family of its verdict only
# below this p, where it flags alone (``calibration.STRONG_P``): a family that joins the
# combination only when it is small would bias it, and two people's logs are almost
# never alike. Shown in the evidence (``Evidence.log_match``) whatever its p.
LOG_MATCH_JUDGED = 1e-6
# The null key of ``switch`` for solves whose notes carried the thinking (the player's
# own, noted first, or the portal's; told only where the technique ladder replays the
# solve: 9x9 Sudoku): the placements of such a solve read what the notes show, a phase as
# steady as the notes are complete, so its switch is compared with such solves only.
# Learnt per level by the nightly job; until then not judged (the cold-start nulls come
# from a simulator without notes).
NOTES_SWITCH = "switch_notes"
# How well a fill order agrees with the SA prediction is a property of the puzzle more
# than of its level (among 20 dailies, honest people's median rho ran from 0.04 to 0.66,
# each within 0.12 of its puzzle's simulated centre): a level learns how far its real
# solves stray from each puzzle's simulated centre, under this null key, and a puzzle's
# order null after a nightly run is its own centre moved by that offset.
ORDER_OFFSET = "order_sa_offset"
MIN_CELLS = 8  # fewer filled cells than this: order and pacing signals are not computed
# an unfinished solve filling less than this share of the empty cells is judged only on
# what does not depend on its length (unforced digits, paste): the order and pacing
# nulls describe whole solves, and a correlation over ten cells says little
MIN_COVERAGE = 0.8
SWITCH_MIN = 8  # placements on each side of a change point
INTERVAL_FLOOR_MS = 50.0  # intervals below this are one gesture (the log needs a floor)
# Writing a digit takes the same time at any pace, so the faster a person solves, the
# more of each interval is that motion and the evener the pace: the honest models of
# bench/players.py that time the writing of each digit get evener by a factor of
# 6^0.12-0.19 from the expected pace to six times it, at the median
# (bench/pace_evenness.py); the allowance is the least of them.
PACE_ALLOWANCE = 0.12
PACE_ALLOWANCE_UPTO = 10.0  # no further: beyond 10x the expected speed is the speed's case


# A stall's first cell (no single on offer, after a placement that had one) is weighed by
# how soon it came, in bands of the solve's median interval between placements: within
# 1x, 2x, 4x, or longer. People slow down where a step needs a technique; a copy is
# typed at one pace. Of the stall starts of 32 Tough and Diabolical dailies, 3 solves a
# model each (experiments/stall_pace.py --per-level 16, seeds 11 and 12), the honest
# models came within 1x at most 5 % of the time, within 2x 20 %, within 4x 36 % (the
# pencilmark model the most each time); the human-order copier 51-52 %, 82-85 %,
# 96-97 %. QUICK_HONEST, the most of a person's starts taken to come within each band's
# end for people nobody modelled, keeps a margin over the models' (2x, 1.25x, 1.4x);
# QUICK_COPY sits below the copier's own shares, which gives a season's sum its best
# odds of reaching the line over the 13-17 stall starts of a 20-puzzle season (larger
# ratios for quick starts, and larger costs for slow ones, spread the sum more than they
# move it). Bands rather than one cut: a start at a copy's own pace is stronger evidence
# than one at twice it, and a long think is stronger evidence against a copy than a
# start just past twice it.
STALL_BANDS = (1.0, 2.0, 4.0)
QUICK_HONEST = (0.10, 0.25, 0.50)
QUICK_COPY = (0.40, 0.70, 0.90)
# the log-likelihood ratio of a stall start in each band, quickest first (+1.39, +0.69,
# -0.22, -1.61): a band's share of a copy's starts over the most of a person's. The
# ratios fall from band to band, so anyone whose starts come within each band's end no
# more often than QUICK_HONEST has a mean ratio of at most one (its mean is one at
# exactly those shares, and slower starts only lower it).
STALL_START_LR = tuple(
    math.log((c1 - c0) / (h1 - h0))
    for (c0, c1), (h0, h1) in zip(zip((0.0, *QUICK_COPY), (*QUICK_COPY, 1.0)),
                                  zip((0.0, *QUICK_HONEST), (*QUICK_HONEST, 1.0))))
MIN_PACED_PLACEMENTS = 12   # placements a solve needs to say anything of its stalls' pace


def placement_gaps(t_ms) -> np.ndarray | None:
    """The intervals between a solve's placements (``t_ms``: each placement's time, in
    fill order), floored at :data:`INTERVAL_FLOOR_MS`; None for fewer than
    :data:`MIN_PACED_PLACEMENTS` placements or times that are not all numbers."""
    t = np.asarray(t_ms, dtype=float)
    if t.size < MIN_PACED_PLACEMENTS or not np.isfinite(t).all():
        return None
    return np.maximum(np.diff(t), INTERVAL_FLOOR_MS)


def stall_starts(t_ms, stall, marked=None) -> tuple[int, ...] | None:
    """The solve's stall starts (a placement with no single on offer, ``stall``, after
    one that had one) in each band of :data:`STALL_BANDS`: how many came within the
    first band's multiple of the solve's median interval between placements, how many
    within the next, and so on, the last count those that took longer; a start the
    player's own marks proved at that moment (``marked``) is neither: a note-taker who
    found the step in the notes places it at once. None where :func:`placement_gaps`
    is, for a log whose median interval is at the floor (times that do not resolve one
    placement from the next: a portal stamping moves in batches), and for a solve
    without a stall start."""
    gaps = placement_gaps(t_ms)
    if gaps is None:
        return None
    median = float(np.median(gaps))
    at = np.asarray(stall, dtype=bool)
    start = at[1:] & ~at[:-1]
    if marked is not None:
        start &= ~np.asarray(marked, dtype=bool)[1:]
    if median <= INTERVAL_FLOOR_MS or not start.any():
        return None
    band = np.searchsorted(STALL_BANDS, gaps[start] / median, side="left")
    return tuple(int(n) for n in np.bincount(band, minlength=len(STALL_BANDS) + 1))


def stall_pace_llr(t_ms, stall, marked=None) -> float | None:
    """The solve's log-likelihood ratio of a copy against honest play by how quickly
    each stall's first cell came (:func:`stall_starts`; :data:`STALL_START_LR` a band),
    which the player verdict adds up over a season. Its mean is at most one for anyone
    whose starts come within each band's end no more often than :data:`QUICK_HONEST`
    says. None where :func:`stall_starts` is."""
    got = stall_starts(t_ms, stall, marked)
    if got is None:
        return None
    return float(sum(n * lr for n, lr in zip(got, STALL_START_LR)))


def pace_variation(intervals_ms) -> float:
    """The ``pace_variation`` signal: the sd of the log intervals between placements."""
    return float(np.log(np.maximum(intervals_ms, INTERVAL_FLOOR_MS)).std())


def pace_allowance(expected_log_s: float, duration_ms: float) -> float:
    """How much evener than at the expected pace people are at this solve's speed: the
    factor k^:data:`PACE_ALLOWANCE` for a solve k times faster than the puzzle's expected
    time (k at most :data:`PACE_ALLOWANCE_UPTO`), 1 at the expected pace or slower. The
    decision scales ``pace_variation`` by it before an even pace may flag on its own
    (:func:`.calibration.judge`)."""
    if not (duration_ms > 0 and np.isfinite(expected_log_s)):
        return 1.0
    ahead = float(expected_log_s) - np.log(duration_ms / 1000.0)
    return float(np.exp(PACE_ALLOWANCE * min(max(ahead, 0.0), np.log(PACE_ALLOWANCE_UPTO))))


def solve_pace(duration_ms: float, expected_log_s: float) -> float:
    """A finished solve's pace: ln(time / the puzzle's expected time for an average
    player), skill left out (``Evidence.pace``; the player verdict's ``own_pace``)."""
    return round(math.log(max(duration_ms, 1) / 1000.0) - float(expected_log_s), 4)


def average_ranks(x: np.ndarray) -> np.ndarray:
    """``scipy.stats.rankdata(x)`` (ties share their average rank, 1-based) for ``x``
    without NaN, in plain numpy: scipy's version costs ~50 µs of checks per call, and
    scoring ranks four arrays per solve."""
    x = np.asarray(x)
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    new = np.empty(x.size, dtype=bool)
    new[:1] = True
    np.not_equal(xs[1:], xs[:-1], out=new[1:])
    bounds = np.flatnonzero(np.append(new, True))  # each tie group's start, then the end
    average = (bounds[:-1] + bounds[1:] + 1) / 2.0
    ranks = np.empty(x.size, dtype=float)
    ranks[order] = average[np.cumsum(new) - 1]
    return ranks


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's ρ (average ranks for ties); NaN when either side is constant or has a
    NaN (as scipy's)."""
    if a.size < 3 or np.isnan(a).any() or np.isnan(b).any():
        return float("nan")
    ra, rb = average_ranks(a), average_ranks(b)
    sa, sb = ra.std(), rb.std()
    if sa == 0 or sb == 0:
        return float("nan")
    return float(np.mean((ra - ra.mean()) * (rb - rb.mean())) / (sa * sb))


@dataclass(frozen=True, eq=False)
class PuzzleFacts:
    """What scoring needs to know about a puzzle (all from its analysis)."""

    givens: np.ndarray
    box_size: int
    solution: np.ndarray
    predicted_rank: np.ndarray          # SA median rank per cell (NaN for givens)
    expected_log_s: float               # expected log solve time, seconds
    sd_log: float                       # residual sd of log-time around it
    consensus_rank: np.ndarray | None = None
    # the puzzle type (``solvers.puzzle_types``): its givens and solution are in move
    # values, its grid is ``shape`` (rows, cols; None: box_size² × box_size²)
    puzzle_type: str = DEFAULT_TYPE
    shape: tuple[int, int] | None = None
    # the rung of the puzzle's own hardest step (``analytics.deduction.puzzle_rung``);
    # None: the placements are judged on the bare board (types without the ladder)
    hardest_rung: int | None = None
    # what ``expected_log_s`` rests on ("calibration": the shipped one; "portal fit": the
    # nightly job's); None where it is too unsure (its own sd above ``PACE_MAX_SD``) for
    # a player's solves to be compared by it (``Evidence.pace``)
    time_basis: str | None = None

    @property
    def order(self) -> int:
        """The box size under its name before (read-only; kept for one release)."""
        return self.box_size

    @property
    def deducible_by_ladder(self) -> bool:
        """Whether the technique ladder judges its placements (9×9, the ladder's type)."""
        return (self.hardest_rung is not None and self.box_size == 3
                and puzzle_type(self.puzzle_type).technique_ladder)

    @property
    def blank(self) -> int:
        """What a free cell left empty counts as at the end of a solve (see
        ``solvers.puzzle_types``: Nurikabe's undotted cells are island)."""
        return puzzle_type(self.puzzle_type).blank

    @property
    def grid_shape(self) -> tuple[int, int]:
        if self.shape is not None:
            return self.shape
        size = self.box_size * self.box_size
        return size, size


@dataclass(frozen=True, eq=False)
class Replayed:
    """Per-placement evidence of a solve, in fill order."""

    cells: np.ndarray
    times_ms: np.ndarray
    technique: np.ndarray     # 0 naked single, 1 hidden single, 2 not deducible
    options: np.ndarray       # singles on offer at that moment
    cands: np.ndarray         # digits the board still allowed in the placed cell
    intervals_ms: np.ndarray  # time since the previous placement (first: since start)
    difficulty: np.ndarray    # the step difficulty used by pacing_difficulty
    # what proved each placement (the ladder and the player's marks), where it judges
    deduction: Deduction | None = None


def unforced_placements(rep: Replayed) -> np.ndarray:
    """Per placement, whether ``unforced`` counts it: where the player's notes show
    their eliminations, a fish or harder while a single was on offer
    (:attr:`Deduction.unforced`); elsewhere the bare board's measure
    (:func:`unforced_bits`). A trial made while a single was on offer counts: it may
    prove the cell, but people take the single first."""
    found = rep.deduction
    return found.unforced if found is not None and found.worked else unforced_bits(rep) > 0


def _deduction_signals(rep: Replayed) -> dict[str, float]:
    """``unforced`` and, where the ladder judges, ``unproven`` (see the module doc)."""
    found = rep.deduction
    if found is None:
        return {"unforced": float(unforced_bits(rep).sum())}
    unforced = (found.bits(found.unforced) if found.worked
                else float(unforced_bits(rep).sum()))
    return {"unforced": unforced, "unproven": found.bits(found.unproven)}


def notes_carried(rep: Replayed) -> bool:
    """Whether the solve's notes carried its thinking: the player noted most cells
    before placing, or the portal kept the candidates (:data:`NOTES_SWITCH`)."""
    notes = None if rep.deduction is None else rep.deduction.notes
    return notes is not None and (notes.thinking or notes.auto)


def null_for(null: dict, carried: bool) -> dict:
    """The nulls one solve is judged against: for a solve whose notes ``carried`` the
    thinking (:func:`notes_carried`), ``switch`` against such solves' (none yet: not
    judged)."""
    if not carried:
        return null
    out = {k: v for k, v in null.items() if k not in ("switch", NOTES_SWITCH)}
    if NOTES_SWITCH in null:
        out["switch"] = null[NOTES_SWITCH]
    return out


def unforced_bits(rep: Replayed) -> np.ndarray:
    """Per placement, the bits the board did not give (0 for singles and stuck points):
    the bare board's measure, for types the technique ladder does not judge."""
    unforced = (rep.technique == NOT_DEDUCIBLE) & (rep.options > 0)
    return np.where(unforced, np.log2(np.maximum(rep.cands, 1)), 0.0)


NEEDED_LIMIT = 10  # placements per solve whose need is worked out


def techniques_needed(facts: PuzzleFacts, rep: Replayed, limit: int = NEEDED_LIMIT
                      ) -> dict[int, tuple[str, int]]:
    """For the ``limit`` quickest placements that were no single at that moment (9×9
    puzzles), what a person needed to deduce that cell there: {placement index: (words,
    rung)}, the lowest rung of the deduction engine's ladder whose closure, with every
    single placed round after round, reaches the cell (:func:`fairgrid.solvers.
    deduction.needed`, compiled: about 0.4 ms for ten cells of a nearly empty
    board), or :data:`.deduction.BEYOND_WORDS` (rung :data:`~fairgrid.solvers.
    deduction.UNPROVEN`) when not even an xy-chain does. A cell placed instantly that
    only a chain could give is what people do not do. The chain rung's searches are
    bounded per solve; a cell that needed one after they were spent is left out."""
    if not puzzle_type(facts.puzzle_type).technique_ladder or facts.box_size != 3:
        return {}
    stuck = np.flatnonzero(rep.technique == NOT_DEDUCIBLE)
    ask = np.zeros(len(rep.cells), dtype=bool)
    ask[stuck[np.argsort(rep.intervals_ms[stuck], kind="stable")][:limit]] = True
    if not ask.any():
        return {}
    rungs = engine.needed(facts.givens, facts.solution, rep.cells, ask)
    return {int(k): (needed_words(int(rungs[k])), int(rungs[k]))
            for k in np.flatnonzero(ask) if rungs[k] != engine.NOT_ANALYSED}


BREAK_CAP = 3.0  # 20x the solve's median interval: a break, not a pace


def change_point(intervals_ms: np.ndarray) -> tuple[float, int]:
    """(statistic, split) of the point where the pace steadies most: the split ``k`` (an
    index into ``intervals_ms``) of the most likely change in mean and variance of the
    log intervals (the Gaussian likelihood ratio), among splits with at least
    :data:`SWITCH_MIN` intervals each side after which the pace is steadier; the
    statistic is log(sd before / sd after) there. (0.0, -1) when the solve is too short
    or the pace never steadies."""
    li = np.log(np.maximum(np.asarray(intervals_ms, dtype=float), INTERVAL_FLOOR_MS))
    n = li.size
    if n < 2 * SWITCH_MIN:
        return 0.0, -1
    # a pause past BREAK_CAP (log) over the solve's median interval counts at that: one
    # break (lunch, a daily left open) would otherwise make the pace before it look
    # erratic and the pace after it, the same, "steadier"
    li = np.minimum(li, np.median(li) + BREAK_CAP)
    # running sums give every split's two variances in one pass
    c1 = np.cumsum(li)
    c2 = np.cumsum(li * li)
    k = np.arange(SWITCH_MIN, n - SWITCH_MIN + 1)
    m1 = c1[k - 1] / k
    v1 = np.maximum(c2[k - 1] / k - m1 * m1, 0.0025)
    rest = n - k
    m2 = (c1[-1] - c1[k - 1]) / rest
    # the sd after is floored at 0.05 (±5 %): below that it only measures rounding
    v2 = np.maximum((c2[-1] - c2[k - 1]) / rest - m2 * m2, 0.0025)
    steadier = v2 < v1
    if not steadier.any():
        return 0.0, -1
    v = max(float(li.var()), 0.0025)
    lr = np.where(steadier, n * np.log(v) - k * np.log(v1) - rest * np.log(v2), -np.inf)
    best = int(np.argmax(lr))
    return float(0.5 * np.log(v1[best] / v2[best])), int(k[best])


def replay_solve(facts: PuzzleFacts, fill: FillOrder, moves=None) -> Replayed:
    """The placements of a fill order replayed from the givens: what "deducible at that
    moment" means is the puzzle type's (``PuzzleType.replay``); with the solve's
    ``moves`` (t_ms, cell, digit, note), where the ladder judges, also what proved each
    (:func:`.deduction.deduce`)."""
    tech, options, cands = puzzle_type(facts.puzzle_type).replay(
        facts.givens, facts.grid_shape, fill.cells, facts.solution)
    found = None
    if moves is not None and facts.deducible_by_ladder:
        found = deduce(facts.givens, facts.solution, fill, *moves)
    times = fill.times_ms.astype(float)
    intervals = np.diff(np.concatenate([[0.0], times]))
    difficulty = 1.0 / np.maximum(options, 1) + (tech == NOT_DEDUCIBLE)
    return Replayed(fill.cells, fill.times_ms, tech, options, cands, intervals, difficulty,
                    found)


def compute(facts: PuzzleFacts, fill: FillOrder, duration_ms: int, *, skill: float = 0.0,
            skill_sd: float = 0.0, client: dict | None = None,
            replayed: Replayed | None = None, moves=None) -> dict[str, float]:
    """The raw value of every signal that applies to this solve (NaN-free dict);
    ``moves`` (t_ms, cell, digit, note) let the ladder judge its placements."""
    out: dict[str, float] = {}
    rep = replayed or replay_solve(facts, fill, moves)
    cells = fill.cells
    n_empty = int(np.count_nonzero(np.asarray(facts.givens) == 0))
    out.update(_deduction_signals(rep))
    if cells.size < MIN_COVERAGE * n_empty:
        pass  # judged on what does not depend on its length
    elif cells.size >= MIN_CELLS:
        mine = fill.rank[cells].astype(float)
        rho = spearman(mine, facts.predicted_rank[cells])
        if np.isfinite(rho):
            out["order_sa"] = rho
        if facts.consensus_rank is not None:
            rho = spearman(mine, np.asarray(facts.consensus_rank, dtype=float)[cells])
            if np.isfinite(rho):
                out["order_consensus"] = rho
        iv = rep.intervals_ms[1:]  # the first interval includes reading the puzzle
        if iv.size >= 3 and iv.mean() > 0:
            out["pace_variation"] = pace_variation(iv)
            rho = spearman(iv, rep.difficulty[1:])
            if np.isfinite(rho):
                out["pacing_difficulty"] = rho
        if iv.size >= 2 * SWITCH_MIN:
            out["switch"] = change_point(iv)[0]
    if fill.complete:
        # a whole solve inside one millisecond (every move at one instant) counts as
        # one: the fastest a log can say, not a reason to skip the speed signal
        out["speed"] = float((np.log(max(duration_ms, 1) / 1000.0) - facts.expected_log_s
                              + skill) / np.hypot(facts.sd_log, skill_sd))
    out.update(client_signals(client, rep))
    return out
