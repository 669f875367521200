"""A player's verdict over a season: each kind of evidence added up on its own (pure).

One solve of a selective cheater is weak evidence; a season of them is strong. The
verdict reads what scoring stored for each of a player's solves (:func:`solve_facts`),
with each finished solve's pace priced again against the expected time in force
(:func:`priced`), and judges each *kind* of evidence apart:

* **per family of signals** (deduction, client; not the :data:`STYLE_KINDS`, which a
  person's way of playing can keep odd in every solve, nor the :data:`SOLVE_KINDS`,
  which flag a solve by themselves): the solve's family p (the
  smallest member's p times the members, as scoring counts a family once) makes the
  solve *weakly odd* (p < :data:`WEAK_P`) or *odd* (p < :data:`STRONG_P`) for that
  family;
* **per counted signal** (``unproven``, ``unforced``: digits no technique proved, or
  placed while a single was on offer): weakly odd when the solve has any (at least
  :data:`MIN_BITS`), odd when the signal's p is below :data:`STRONG_P`. A person's
  guard allows a bit in any solve, so one hint per solve never makes a solve odd by its
  family; how *often* a player's solves hold one is what adds up;
* **hints** (:data:`HINTS`), the solve's hint ratios together (``Evidence.llr``:
  right first time at unproven cells, hint runs, how far from one look at the board the
  cells placed at a stall were; one solve's sum is its ratio): their sum over the
  season, each solve capped at :data:`STRONG_LLR` (:func:`_llr_kind`: a ratio whose
  honest mean is at most one makes a test martingale, so an honest season reaches a sum
  S with probability at most e^-S; the null's ``llr_offset`` takes off what an honest
  model's mean was measured above one). One kind, not three: the three read the same
  placements, and one test spends the ratios' share of ``alpha`` once;
* **stall pace** (:data:`STALL_PACE`), the solve's likelihood ratio ``Evidence.llr``
  ``stall_pace`` (``signals.stall_pace_llr``): how soon each stall's first cell (no
  single on offer, after a placement that had one) came, in bands of the solve's median
  interval between placements: about at once, as a copy types it, or after a while, as
  a person who has to find a technique does; added up over the season like the hints,
  with a share of its own;
* **the solve's combined p** (all families together, as scoring combines them): weakly
  odd below :data:`WEAK_P`, odd below :data:`STRONG_P`;
* **flagged solves**: odd when scoring flagged the solve;
* **own pace** (:data:`OWN_PACE`): a finished solve weakly odd when it was
  :data:`PACE_WEAK` quicker than the player's usual pace (the median of their nearest
  finished solves of the same type and time basis, each against its puzzle's expected
  time, :func:`_own_pace`), odd when :data:`PACE_STRONG` quicker, or :data:`PACE_WEAK`
  quicker with no slow-down at its stalls (:data:`PACE_FLAT`);
* **tempo**: how much longer each player takes over a placement made at a stall (no
  single on the board: a technique has to be found) than over the others, pooled over
  the season (the slope of log delay on "at a stall"), against the population's (people
  slow down where a step needs a technique, each by their own amount; a copier's delays
  follow nothing).

A count kind is judged by the beta-binomial tail of its odd (and weakly odd) solves
among the season's, with the honest rate and how much one person's own rate varies
around it (its squared coefficient of variation, learnt apart for the weakly odd and the
odd level) from the null, over the whole season and over every window of :data:`WINDOW`
solves (so many ordinary solves cannot hide a run of odd ones; the windows are
Bonferroni-corrected). A count has no magnitude, so one extreme solve counts as one.
A kind's p is its smallest test's times the tests; the player's p is the smallest kind's
p over its share of ``alpha`` (a weighted Bonferroni, :func:`_shares`: the hints have
:data:`RATIO_SHARE`, the stall pace :data:`STALL_PACE_SHARE` and the tempo
:data:`TEMPO_SHARE`, the count kinds the remainder); the player is flagged below
``alpha``.

**The null** (:class:`PlayerNull`) holds each kind's honest rates and correlation and
the population's tempo. The cold-start one ships in ``data/player_null.json``
(``bench/player_seasons.py --null-out``: seasons of every honest model, each kind's
rate the highest of the models', and each model's tempo kept apart: a season's tempo p
is the largest under any of them, so whoever slows down like any model is safe); the
nightly job learns a portal's own (:func:`learn_null`; its unflagged players include
copiers, so the :data:`SCREENED` kinds are learnt from the players they do not already
find odd). Either way :func:`guard` keeps
rates and correlation at least at floors, and the tempo's between-person spread at least
at a floor with its 10th percentile no higher than a cap, to protect people nobody
modelled.

A verdict says how much it rests on (``rests_on``): a season too short for any kind to
reach ``alpha`` even if every solve were odd says so. Every finding is a sentence naming
its solves.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from importlib import resources
from typing import Iterable, Mapping, NamedTuple, Sequence

import numpy as np
from scipy.special import betaln, gammaln, stdtr

from fairgrid.solvers.puzzle_types import DEFAULT_TYPE

from .calibration import POISSON_SIGNALS
from .evidence import finite_or_none
from .signals import FAMILY, placement_gaps, solve_pace

WEAK_P, STRONG_P = 0.15, 0.01   # a family's p that makes a solve weakly odd, odd
STRONG_LLR = math.log(30.0)     # the most one solve's log-ratio counts in a season
MIN_BITS = 0.5                  # a counted signal's value that makes a solve weakly odd
WINDOW = 20                     # solves in a window (a run of odd solves)
WINDOW_STEP = 10                # windows start every this many solves
ALPHA = 1e-3                    # default player false-positive target per season
RATIO_SHARE = 0.4               # of alpha, for the hints' likelihood-ratio kind
TEMPO_SHARE = 0.2               # of alpha, for the tempo
STALL_PACE_SHARE = 0.2          # of alpha, for the stall pace's likelihood-ratio kind
# the most a ratio kind's offset may take off a solve: a model whose mean ratio is above
# 1.1 means the ratio is wrong, not that the offset should hide it (nor a stored value
# switch the kind off)
OFFSET_CAP = math.log(1.1)
# solves with a slope the tempo test needs: one solve's slope is heavy-tailed (a break
# taken at an easy step), and the t tail of a spread estimated from fewer solves is too
# unsure (simulated at 10^-4, against a null at its spread floor: up to 12x the nominal
# rate at 5 solves, 2-5x at 8; against one fitted with its players' noise, below it)
MIN_TEMPO_SOLVES = 8
# the tempo's p is multiplied by 1 + this / n² (n solves with a stall): honest players
# drawn from a null at its guard, each solve's slow-down with an sd of 1.6 to 3 (the
# honest models' own reach 2.1 at their 95th percentile), fall below the tempo's line
# (p = 2e-4) up to 3.3x as often as the t says at 8 solves, 2.3x at 10, 1.5x at 20; with
# this, at most as often (experiments/tempo_calibration.py, seeds 0 and 1)
TEMPO_FEW_SOLVES = 400.0
# ... that a player needs to count in a population's tempo (a pooled slope, not a test)
MIN_NULL_TEMPO_SOLVES = 5
# players a tempo null is learnt from: it is fitted on the slow-down's lower tail (the
# 10th and 25th percentile), which fewer players do not place
MIN_TEMPO_PLAYERS = 30
Z10, Z25 = 1.2815516, 0.6744898  # the standard normal's upper decile and quartile
# floors of the null (the guard): the least a rate, the correlation between one
# person's solves and the spread of people's tempo slopes may be
RATE_FLOOR = {"weak": 0.05, "strong": 0.004}
# a person's own rate of odd solves varies around the population's by a squared
# coefficient of variation of at least CV2_FLOOR (one person commonly has twice another's)
CV2_FLOOR, CV2_CAP = 1.0, 20.0
# the most a rate may be: a kind every honest solve is odd in says nothing, and the
# beta-binomial needs a rate below one
RATE_CAP = 0.99
# the least between-person sd of the slow-down at a stall (log delay) a tempo null may
# claim: one person commonly takes 1.35x as long at a stall as another
SLOPE_SD_FLOOR = 0.3
# the least per-solve sd of a player's own slow-down the tempo test assumes: a solve
# holds a stall or two, each delay varying by half its log or more
SOLVE_SLOPE_SD_FLOOR = 0.5
# a tempo null never claims that fewer than one person in ten slows down less than this
# at a stall (log 5x; its 10th percentile is taken no higher). The simulated honest
# models all slow down more; so, on average, do real solvers: a placement at a stall
# costs sudoku.org.uk's about 8x an average single (experiments/stall_cost.py)
SLOPE_Q10_LIMIT = math.log(5.0)
FLAGGED = "flagged"
COMBINED = "combined"
TEMPO = "tempo"
HINTS = "hints"                 # the solve's likelihood ratios (Evidence.llr) together
STALL_PACE = "stall_pace"       # how quickly each stall's first cell came (Evidence.llr)
OWN_PACE = "own_pace"           # a solve far quicker than the player's own others
# kinds whose odd level is as dispersed as the weak one: no style of play is odd by them
# far more often than the rest, and their odd solves are few enough that the handful of
# cheaters a portal's population holds would set a dispersion of their own
ONE_DISPERSION = frozenset({OWN_PACE})
# Kinds a portal's null learns only from players it does not already find odd (below
# SCREEN_P, judged against the shipped null, then again SCREEN_ROUNDS times against
# what it learns): a player's own pace is no style, so a player odd by it is a case, and
# a portal where one player in ten copies some puzzles would otherwise learn from their
# copies that copying at three times one's pace is normal
SCREENED = frozenset({OWN_PACE})
SCREEN_P, SCREEN_ROUNDS = 0.003, 2
# a finished solve is measured against the median pace of the player's other finished
# solves once there are this many: fewer do not place a person's usual time
MIN_PACE_OTHERS = 7
# ... of the nearest this many in the order played, so that a player who gets quicker
# over a long season (a novice learning: 3-5x in months) is measured against their
# pace at the time, not their first weeks'
PACE_NEIGHBOURS = 20
# how much quicker than that median (ln of the ratio) makes a solve weakly odd, odd
PACE_WEAK, PACE_STRONG = math.log(2.0), math.log(2.7)
# ... and a solve PACE_WEAK quicker is odd too when its placements at a stall took no
# longer than the rest (its slope in log delay at most PACE_FLAT): a copy is quick and
# shows no search for the hard step, while a good day speeds a person's singles and
# stalls alike (the models' assumption: docs/detection.md says whom it leaves unguarded).
# The honest models' solves with a stall are this flat in 0-4 %, and one of their 20,000
# solves is 2x quicker as well
PACE_FLAT = 0.0
# Families a person's own way of playing can keep odd in most of their solves, so a
# season of them is a person, not a case: speed (skill, which the nightly job learns;
# elite players are fast in every solve), order (an order of their own: island by
# island, digit by digit), pacing and switch (an even hand; a pace that turns when the
# notes are done). Each still counts in every solve's own verdict and in ``combined``.
STYLE_KINDS = frozenset({"speed", "order", "pacing", "switch"})
# Families a solve's own verdict settles: a log that repeats another player's is flagged
# by itself (it is judged only when it is all but certain), and the flagged solve counts
# in the season's ``flagged`` kind.
SOLVE_KINDS = frozenset({"log_match"})
# the families a season adds up
FAMILIES = tuple(f for f in dict.fromkeys(FAMILY.values())
                 if f not in STYLE_KINDS | SOLVE_KINDS)
WORDS = {"order": "filled cells in an order unlike how people solve the puzzle",
         "deduction": "placed digits the board did not give at that moment",
         "speed": "solved faster than expected",
         "pacing": "kept a pace that did not follow the steps",
         "switch": "turned to a machine-like pace part-way",
         "client": "pasted into the grid",
         "unproven": "had cells no technique proved, right at the first try",
         "unforced": "placed digits the board did not give while a single was on offer",
         FLAGGED: "were flagged for review",
         COMBINED: "were unusual on all the evidence together",
         HINTS: "weighed towards hints",
         STALL_PACE: "had stalls whose first cell came as soon as an ordinary step "
                     "(within twice the solve's median interval)",
         OWN_PACE: "were far quicker than the player's usual pace"}
# what each of a solve's likelihood ratios says when it weighs towards a hint
RATIO_WORDS = {"stall_look": "cells placed at a stall that one look at the board does not "
                             "prove",
               "right_first_time": "cells no technique proved, right at the first try",
               "hint_run": "cells nothing proved, typed in a run seconds apart"}


# each likelihood-ratio kind and the solve's ratios (SolveFacts.llr) it adds up
RATIO_KINDS = {HINTS: tuple(RATIO_WORDS), STALL_PACE: (STALL_PACE,)}
# ... what its ratio weighs for, and what counts against it
RATIO_FOR = {HINTS: "hints", STALL_PACE: "a copy"}
RATIO_AGAINST = {HINTS: "the solves that looked honest count against it",
                 STALL_PACE: "each stall whose first cell took longer counts against it; "
                             "people slow down where a step needs a technique"}
# each kind's fixed share of alpha (:func:`_shares`)
FIXED_SHARES = {HINTS: RATIO_SHARE, STALL_PACE: STALL_PACE_SHARE, TEMPO: TEMPO_SHARE}


def words(kind: str) -> str:
    return WORDS.get(kind, "showed " + kind.replace("_", " "))


# ------------------------------------------------------------------- one solve's facts

@dataclass(frozen=True)
class SolveFacts:
    """What the verdict reads of one scored solve."""

    submission_id: str
    family_p: Mapping[str, float]
    flagged: bool
    llr: Mapping[str, float] = field(default_factory=dict)
    slope: tuple[float, float] | None = None  # (Σ xy, Σ xx) of log delay on "at a stall"
    counted: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # (value, p)
    p_value: float | None = None                # the solve's combined p
    pace: float | None = None   # ln(time / the puzzle's expected time), skill left out
    # which solves a pace compares with: those of one puzzle type whose expected times
    # rest on one basis (the shipped calibration, or the nightly job's fit)
    pace_group: str | None = None
    finished: bool = False      # the grid was solved: only a finished solve has a pace
    puzzle_type: str = DEFAULT_TYPE

    def to_json(self) -> dict:
        """The compact stored form (``scores.season_facts``; the id is the row's): what a
        season reads of a solve, some 500 bytes, where the evidence it comes from is some
        14 KB to read and parse for every solve of a season at every judgement."""
        return {"facts": FACTS_VERSION, "family_p": dict(self.family_p),
                "flagged": self.flagged, "llr": dict(self.llr),
                "slope": None if self.slope is None else list(self.slope),
                "counted": {k: list(v) for k, v in self.counted.items()},
                "p_value": self.p_value, "pace": self.pace, "pace_group": self.pace_group,
                "finished": self.finished, "puzzle_type": self.puzzle_type}

    @classmethod
    def from_json(cls, submission_id: str, doc: Mapping) -> SolveFacts:
        """The facts :meth:`to_json` stored; raises (KeyError, TypeError, ValueError) on
        a document that is not one."""
        if doc["facts"] != FACTS_VERSION:
            raise ValueError(f"season facts of version {doc['facts']!r}")
        slope = doc["slope"]
        return cls(submission_id, {str(k): _number(v) for k, v in doc["family_p"].items()},
                   bool(doc["flagged"]), {str(k): _number(v) for k, v in doc["llr"].items()},
                   None if slope is None else (_number(slope[0]), _number(slope[1])),
                   {str(k): (_number(v), _number(p)) for k, (v, p) in doc["counted"].items()},
                   finite_or_none(doc["p_value"]), finite_or_none(doc["pace"]),
                   doc["pace_group"] if isinstance(doc["pace_group"], str) else None,
                   bool(doc["finished"]), str(doc["puzzle_type"]))


# the version of SolveFacts.to_json's form: a new form comes with a migration that clears
# scores.season_facts, so that the verdict reads each solve's evidence again
FACTS_VERSION = 1


def _number(value) -> float:
    """A stored number that must be one (a finite float)."""
    if type(value) is float and math.isfinite(value):   # nearly every one: read quickly
        return value
    out = finite_or_none(value)
    if out is None:
        raise ValueError(f"not a finite number: {value!r}")
    return out


def solve_facts(submission_id: str, evidence: Mapping) -> SolveFacts:
    """A solve's facts from its stored evidence (``Evidence.to_json``, any version), its
    pace as priced at scoring (:func:`priced` prices it against the time in force)."""
    members: dict[str, list[float]] = {}
    counted = {}
    for s in evidence.get("signals") or ():
        p = finite_or_none(s["p"])
        if p is None:           # a p that is no number says nothing (never "ordinary")
            continue
        p = min(1.0, max(0.0, p))
        fam = s.get("family") or FAMILY.get(s["name"], s["name"])
        members.setdefault(fam, []).append(p)
        value = finite_or_none(s.get("value"))
        if s["name"] in POISSON_SIGNALS and value is not None:
            counted[s["name"]] = (value, p)
    fam_p = {f: min(1.0, min(ps) * len(ps)) for f, ps in members.items()}
    llr = {k: v for k, v in ((k, finite_or_none(v))
                             for k, v in (evidence.get("llr") or {}).items())
           if v is not None}
    timeline = evidence.get("timeline") or ()
    t_ms = [finite_or_none(p["t_ms"]) for p in timeline]
    basis = evidence.get("pace_basis")
    pace = finite_or_none(evidence.get("pace")) if isinstance(basis, str) else None
    kind = evidence.get("puzzle_type") or DEFAULT_TYPE
    return SolveFacts(submission_id, fam_p, bool(evidence.get("flagged")), llr,
                      None if None in t_ms else
                      _slope_sums(t_ms, [p.get("singles_on_offer") == 0 for p in timeline]),
                      counted,
                      finite_or_none(evidence.get("p_value")), pace,
                      f"{kind}/{basis}" if pace is not None else None,
                      (evidence.get("counts") or {}).get("complete") is True, str(kind))


def solved_again(puzzles: Sequence[str | None], finished: Sequence[bool],
                 ends: Sequence[float] | None = None) -> list[bool]:
    """Per solve of a season (oldest first: each one's puzzle, None where not known,
    whether it was finished and, with ``ends``, when it ended), whether the season
    leaves it out because its puzzle counts as another of its solves. Each puzzle counts
    once: as the first solve to finish it, or where none did, its first attempt. A person
    who solves a puzzle again remembers it: the second time is quicker and its hard
    steps come at once, as a copy's would, and it is no new evidence either way.
    "First" goes by when a solve ended, not when it started: a slow solve started first
    and finished after a quick one would otherwise put the quick one out of the season
    as a replay. Attempts given up before the finish are part of it
    (:func:`time_spent` adds their time); many of them would otherwise count a puzzle
    many times over."""
    first: dict[str, tuple] = {}
    for k, (puzzle, ended) in enumerate(zip(puzzles, finished, strict=True)):
        if puzzle is not None and ended:
            at = (ends[k] if ends is not None else k, k)
            if puzzle not in first or at < first[puzzle]:
                first[puzzle] = at
    tried: set[str] = set()
    out = []
    for k, puzzle in enumerate(puzzles):
        if puzzle is None:
            out.append(False)
        elif puzzle in first:
            out.append(k != first[puzzle][1])
        else:
            out.append(puzzle in tried)
            tried.add(puzzle)
    return out


def ends_of(starts: Sequence, durations: Sequence[float]) -> list[float] | None:
    """When each solve ended (ms since the epoch), for :func:`solved_again`; None when a
    start is not a time (one stored before ingestion bounded times arrives as text):
    the season's order then stands in for it."""
    if not all(isinstance(at, datetime) for at in starts):
        return None
    return [at.timestamp() * 1000 + ms for at, ms in zip(starts, durations, strict=True)]


def time_spent(puzzles: Sequence[str | None], finished: Sequence[bool],
               durations: Sequence[float]) -> list[float]:
    """Per solve of a season (as :func:`solved_again` reads it), the time the player
    spent on its puzzle by its end: a finished solve's own and that of the attempts at
    the puzzle given up before it. Priced on its own, a finish after one's own attempt
    (the hard steps found then) reads as several times quicker than the player's pace."""
    given_up: dict[str, float] = {}
    out = []
    for puzzle, ended, ms in zip(puzzles, finished, durations, strict=True):
        out.append(ms + (given_up.get(puzzle, 0.0) if ended else 0.0))
        if puzzle is not None and not ended:
            given_up[puzzle] = given_up.get(puzzle, 0.0) + ms
    return out


def priced(facts: SolveFacts, expected, duration_ms: float, **changes) -> SolveFacts:
    """``facts`` with a finished solve's pace measured against ``expected``
    (``puzzle_model.ExpectedTime``: its puzzle's expected time in force now) from the
    solve's ``duration_ms``, rather than the one it was scored with: a season's solves
    scored under different rating runs then compare (a nightly fit moves puzzles'
    expected times, and solves older than its re-scoring window keep the old one). With
    any other ``changes`` of its fields (one copy: a season makes one per solve)."""
    if expected is not None:
        pace = (finite_or_none(solve_pace(duration_ms, expected.log_s))
                if facts.finished and expected.basis is not None else None)
        changes.update(pace=pace, pace_group=None if pace is None else
                       f"{facts.puzzle_type}/{expected.basis}")
    # a copy with the fields changed: dataclasses.replace re-runs __init__, which costs
    # more than the rest of reading a stored solve (a nightly job reads millions)
    unknown = changes.keys() - SolveFacts.__dataclass_fields__.keys()
    if unknown:
        raise TypeError(f"SolveFacts has no field {', '.join(sorted(unknown))}")
    out = object.__new__(SolveFacts)
    out.__dict__.update(facts.__dict__)
    out.__dict__.update(changes)
    return out


def _slope_sums(t_ms, stall) -> tuple[float, float] | None:
    """(Σ xy, Σ xx) of log delay (y) on whether the placement was made at a stall (x: no
    single on offer, so a technique had to be found), both centred within the solve:
    the solve's share of the player's pooled slope. None for a solve without a stall
    (or nothing but): it says nothing of how the player slows down."""
    gaps = placement_gaps(t_ms)
    if gaps is None:
        return None
    y = np.log(gaps)
    x = np.asarray(stall, dtype=float)[1:]
    x, y = x - x.mean(), y - y.mean()
    sxx = float(x @ x)
    return (float(x @ y), sxx) if sxx > 1e-9 else None


# ----------------------------------------------------------------------------- the null

@dataclass(frozen=True)
class KindNull:
    weak: float       # share of honest solves weakly odd by this kind
    strong: float     # ... odd
    cv2: float        # squared coefficient of variation of one person's own weak rate
    # ... of their own rate of odd solves (None: as ``cv2``). A kind that one style of
    # player (note-takers, say) is odd in far more often than the rest is more dispersed
    # at the odd level than at the weak one: one dispersion for both would call the
    # season of such a person a tail no honest player reaches.
    cv2_strong: float | None = None

    def to_json(self) -> dict:
        doc = {"weak": self.weak, "strong": self.strong, "cv2": self.cv2}
        if self.cv2_strong is not None:
            doc["cv2_strong"] = self.cv2_strong
        return doc

    def dispersion(self, level: int) -> float:
        """The squared coefficient of variation at ``level`` (1 weak, 2 odd)."""
        return self.cv2 if level == 1 or self.cv2_strong is None else self.cv2_strong

    def rho(self, q: float, level: int) -> float:
        """The beta-binomial's intra-person correlation at rate ``q`` with ``level``'s
        dispersion."""
        x = self.dispersion(level) * q / (1.0 - q)
        return x / (1.0 + x)


@dataclass(frozen=True)
class PlayerNull:
    kinds: Mapping[str, KindNull]
    # the population's tempo: per population (one a portal; one per honest model at cold
    # start) the normal its players' slow-downs at a stall follow on the lower side
    # (centre, between-person sd); None: not measured, and no tempo case is made
    tempo: tuple[tuple[float, float], ...] | None
    source: str                         # whom it comes from, in words
    players: int = 0
    solves: int = 0
    # per likelihood-ratio kind (:data:`HINTS`), the log of an upper bound of its mean
    # ratio over honest solves where that exceeds one: taken off every solve's
    # log-ratio, so the season's product stays a test martingale for those models
    llr_offset: Mapping[str, float] = field(default_factory=dict)

    def kind(self, name: str) -> KindNull:
        """A kind's null; one nobody measured gets the guard's floors at twice."""
        got = self.kinds.get(name)
        if got is None:
            return KindNull(2 * RATE_FLOOR["weak"], 2 * RATE_FLOOR["strong"], 2 * CV2_FLOOR)
        return got

    def to_json(self) -> dict:
        return {"kinds": {k: v.to_json() for k, v in sorted(self.kinds.items())},
                "stall_tempo": None if self.tempo is None else [list(t) for t in self.tempo],
                "source": self.source,
                "players": self.players, "solves": self.solves,
                "llr_offset": dict(sorted(self.llr_offset.items()))}

    @classmethod
    def from_json(cls, doc: Mapping) -> PlayerNull:
        return guard(cls({k: KindNull(v["weak"], v["strong"], v["cv2"], v.get("cv2_strong"))
                          for k, v in doc["kinds"].items()},
                         # "slope" (a slope on another difficulty) is not read
                         None if not doc.get("stall_tempo") else
                         tuple(tuple(float(v) for v in t) for t in doc["stall_tempo"]),
                         doc.get("source", ""), doc.get("players", 0),
                         doc.get("solves", 0), doc.get("llr_offset") or {}))


def guard(null: PlayerNull) -> PlayerNull:
    """The null with every rate, dispersion and spread at least at its floor."""
    kinds = {k: _guard_kind(v) for k, v in null.kinds.items()}
    # a population whose tempo is no number was not measured
    tempo = tuple((min(centre, SLOPE_Q10_LIMIT + Z10 * max(between, SLOPE_SD_FLOOR)),
                   max(between, SLOPE_SD_FLOOR)) for centre, between in null.tempo or ()
                  if math.isfinite(centre) and math.isfinite(between)) or None
    return PlayerNull(kinds, tempo, null.source, null.players, null.solves,
                      {k: _offset(v) for k, v in null.llr_offset.items()})


def _guard_kind(v: KindNull) -> KindNull:
    """A kind's null with its rates and dispersions at least at their floors."""
    return KindNull(_within(v.weak, RATE_FLOOR["weak"], RATE_CAP),
                    _within(v.strong, RATE_FLOOR["strong"], RATE_CAP),
                    _within(v.cv2, CV2_FLOOR, CV2_CAP),
                    None if v.cv2_strong is None else
                    max(_within(v.cv2_strong, CV2_FLOOR, CV2_CAP),
                        _within(v.cv2, CV2_FLOOR, CV2_CAP)))


def _within(v, lo: float, hi: float) -> float:
    """``v`` clipped to [lo, hi]; a value that is no number takes the lenient end, hi
    (rates and dispersions: the higher, the fewer flagged)."""
    v = finite_or_none(v)
    return hi if v is None else min(max(v, lo), hi)


def _offset(v) -> float:
    v = float(v)
    return float(np.clip(v, 0.0, OFFSET_CAP)) if math.isfinite(v) else OFFSET_CAP


@lru_cache(maxsize=1)
def shipped_null() -> PlayerNull:
    """The cold-start null (``data/player_null.json``)."""
    text = resources.files(__package__).joinpath("data/player_null.json").read_text()
    return PlayerNull.from_json(json.loads(text))


def odd_levels(s: SolveFacts) -> dict[str, int]:
    """Per kind the solve speaks to: 2 odd, 1 weakly odd, 0 ordinary."""
    out = {f: 2 if p < STRONG_P else 1 if p < WEAK_P else 0 for f, p in s.family_p.items()}
    for k, (v, p) in s.counted.items():
        out[k] = 2 if p < STRONG_P else 1 if v >= MIN_BITS else 0
    out[FLAGGED] = 2 if s.flagged else 0
    if s.p_value is not None:
        out[COMBINED] = 2 if s.p_value < STRONG_P else 1 if s.p_value < WEAK_P else 0
    return out


def _own_pace(season: Sequence[SolveFacts]) -> list[int | None]:
    """Per solve, how far quicker it was than the player's other finished solves of its
    ``pace_group`` (the median pace of the :data:`PACE_NEIGHBOURS` nearest in the order
    played, each against its puzzle's expected time): 2 odd (:data:`PACE_STRONG`), 1
    weakly odd (:data:`PACE_WEAK`; odd when it also met a stall without slowing down there,
    :data:`PACE_FLAT`), 0 ordinary; None where the group has too few.
    A type's skill is its own, and expected times from the calibration and from the
    nightly job's fit differ by the fit's offset: solves are compared within a group.
    A person's speed is their own (the ``speed`` family is a style); a copy typed at a
    few times the player's own pace on some puzzles is not."""
    out: list[int | None] = [None] * len(season)
    groups: dict[str, list[tuple[int, float]]] = {}
    for i, s in enumerate(season):
        if s.pace is not None and s.pace_group is not None:
            groups.setdefault(s.pace_group, []).append((i, s.pace))
    for at in groups.values():
        if len(at) <= MIN_PACE_OTHERS:
            continue
        paces = [v for _, v in at]
        for k, (i, v) in enumerate(at):
            lo = min(max(0, k - PACE_NEIGHBOURS // 2),
                     max(0, len(at) - PACE_NEIGHBOURS - 1))
            # a list's median (numpy's per solve cost more than the rest of a judgement)
            gap = statistics.median(paces[lo:k] + paces[k + 1:lo + PACE_NEIGHBOURS + 1]) - v
            out[i] = (2 if gap >= PACE_STRONG or (gap >= PACE_WEAK and _flat(season[i]))
                      else 1 if gap >= PACE_WEAK else 0)
    return out


def _flat(s: SolveFacts) -> bool:
    """The solve met a stall and its placements there took no longer than the rest
    (:data:`PACE_FLAT`)."""
    # at or below, with room for rounding: an evenly typed copy's slope is 0 give or take
    # the last bits of its sums
    return s.slope is not None and s.slope[1] > 0 and \
        s.slope[0] <= (PACE_FLAT + 1e-9) * s.slope[1]


def season_levels(season: Sequence[SolveFacts]) -> list[dict[str, int]]:
    """Per solve of a season, per kind the solve speaks to: 2 odd, 1 weakly odd, 0
    ordinary (:func:`odd_levels`, and the kinds that compare a player's solves with each
    other)."""
    levels = [odd_levels(s) for s in season]
    for lv, own in zip(levels, _own_pace(season)):
        if own is not None:
            lv[OWN_PACE] = own
    return levels


def learn_null(seasons: Iterable[Sequence[SolveFacts]], source: str,
               llr_offset: Mapping[str, float] | None = None,
               screen: PlayerNull | None = None) -> PlayerNull:
    """A null from honest players' seasons: per kind the share of solves weakly odd and
    odd, the correlation between one person's solves (moment estimate over players with
    at least 5 solves), the population's tempo (:func:`tempo_fit`); guarded. The
    likelihood-ratio offsets are learnt too unless ``llr_offset`` is given: a portal's
    players include the very cheaters the ratios exist for, so a portal keeps the
    shipped null's.

    With ``screen`` (for a portal, whose players include copiers nobody has flagged yet,
    the daemon gives the shipped null) the :data:`SCREENED` kinds are learnt only from
    the players whose season that kind does not already put below :data:`SCREEN_P`:
    judged against ``screen`` first, then :data:`SCREEN_ROUNDS` times against the kind's
    null learnt so, every player tested again each round; where no player is left, the
    kind keeps the null it was last judged against. The copies of unflagged copiers
    would otherwise teach the portal that copying is normal."""
    return learn_null_from((season_part(season, llr_offset is None, screen is not None)
                            for season in seasons), source, llr_offset, screen)


class SeasonPart(NamedTuple):
    """What :func:`learn_null` reads of one player's season (:func:`season_part`), so that
    seasons can be read apart (in other processes) and the null learnt from their parts."""

    solves: int
    counts: dict[str, tuple[int, int, int]]      # per kind: solves, weakly odd, odd
    screened: dict[str, list[int]] | None        # the SCREENED kinds' levels, per solve
    ratios: dict[str, list[float]]               # per ratio kind, each solve's capped ratio
    slope: tuple[float, float] | None            # pooled slope and its noise (enough solves)


def season_part(season: Sequence[SolveFacts], ratios: bool = True,
                screen: bool = False) -> SeasonPart | None:
    """One season's part of a null (None for an empty season): its ``ratios`` only when
    the null learns its offsets, its screened kinds' levels only for a ``screen``."""
    if not season:
        return None
    levels = season_levels(season)
    counts: dict[str, list[int]] = {}
    for lv in levels:
        for k, lvl in lv.items():
            c = counts.setdefault(k, [0, 0, 0])
            c[0] += 1
            c[1] += lvl >= 1
            c[2] += lvl >= 2
    kept: dict[str, list[float]] = {}
    for s in season if ratios else ():
        for k in RATIO_KINDS:
            v = capped_ratio(s, k)
            if v is not None:
                kept.setdefault(k, []).append(v)
    b = pooled_slope(season)
    slope = None
    if b is not None and b[1] >= MIN_NULL_TEMPO_SOLVES:
        slope = (b[0], float(np.std(_own_slopes(season), ddof=1)) / math.sqrt(b[1]))
    # what the screen reads again: its kinds' levels alone (a dict a solve for every
    # kind of a million solves would hold half a gigabyte until the null is learnt)
    return SeasonPart(len(season), {k: tuple(c) for k, c in counts.items()},
                      {k: [lv[k] for lv in levels if k in lv] for k in SCREENED}
                      if screen else None, kept, slope)


def learn_null_from(parts: Iterable[SeasonPart | None], source: str,
                    llr_offset: Mapping[str, float] | None = None,
                    screen: PlayerNull | None = None) -> PlayerNull:
    """:func:`learn_null` from the seasons' parts (:func:`season_part`, each made with
    ``ratios`` when ``llr_offset`` is None and ``screen`` when a screen is given)."""
    per_kind: dict[str, list[tuple[int, int, int, int]]] = {}
    ratios: dict[str, list[float]] = {}
    slopes, noise = [], []
    players = solves = 0
    all_levels = []
    for part in parts:
        if part is None:
            continue
        players += 1
        solves += part.solves
        all_levels.append(part.screened)
        for k, c in part.counts.items():
            per_kind.setdefault(k, []).append((len(all_levels) - 1, *c))
        for k, v in part.ratios.items():
            ratios.setdefault(k, []).extend(v)
        if part.slope is not None:
            slopes.append(part.slope[0])
            noise.append(part.slope[1])
    kinds = {k: _kind_null(k, rows) for k, rows in per_kind.items()}
    for k in sorted(SCREENED & kinds.keys()) if screen is not None else []:
        current = screen.kind(k)
        for _ in range(SCREEN_ROUNDS + 1):
            keep = [r for r in per_kind[k]
                    if _count_test(k, all_levels[r[0]][k], current)[0] >= SCREEN_P]
            current = kinds[k] = _guard_kind(_kind_null(k, keep)) if keep else current
    fit = tempo_fit(slopes, noise)
    if llr_offset is None:
        # an upper bound (mean + 2 standard errors) of the honest mean: a few thousand
        # solves measure it to a few thousandths, about the size of the offset itself
        llr_offset = {k: max(0.0, math.log(float(np.mean(v)
                                                 + 2 * np.std(v) / math.sqrt(len(v)))))
                      for k, v in ratios.items()}
    return guard(PlayerNull(kinds, None if fit is None else (fit,), source, players, solves,
                            dict(llr_offset)))


def _kind_null(kind: str, rows: Sequence[tuple[int, int, int, int]]) -> KindNull:
    """A kind's rates and dispersions from players' (season, solves, weakly odd, odd)
    counts."""
    n = np.array([r[1] for r in rows], float)
    return KindNull(float(sum(r[2] for r in rows) / n.sum()),
                    float(sum(r[3] for r in rows) / n.sum()),
                    _cv2([r[2] for r in rows], n),
                    None if kind in ONE_DISPERSION else _cv2([r[3] for r in rows], n))


def tempo_fit(slopes: Sequence[float], noise: Sequence[float] = ()
              ) -> tuple[float, float] | None:
    """(centre, between-person sd) of a population's slow-downs at a stall (their
    pooled slopes; ``noise``: how far each pooled slope may be off, its solves' sd over
    √n): the normal through their 10th and 25th percentile, not their median and sd.
    What matters is the lower tail, where a copier's delays (no slow-down) fall; a
    mixture of people who slow down a little and a lot widens the sd without saying
    anything about that tail. The spread is at least the typical noise (the pooled
    slopes of people who all slow down alike still differ by that much; a tail placed
    by a few players can come out narrower). None with fewer than
    :data:`MIN_TEMPO_PLAYERS` players: no tempo case."""
    if len(slopes) < MIN_TEMPO_PLAYERS:
        return None
    q10, q25 = (float(q) for q in np.quantile(slopes, [0.1, 0.25]))
    between = max((q25 - q10) / (Z10 - Z25), float(np.median(noise)) if len(noise) else 0.0)
    return q25 + Z25 * between, between


def lenient(nulls: Sequence[PlayerNull], source: str) -> PlayerNull:
    """The most lenient of several nulls, kind by kind: the highest rates and
    dispersion, every null's tempo kept (a season's tempo p is the largest under any):
    the cold-start null over every honest model, so whoever solves like any of them is
    safe."""
    names = sorted({k for n in nulls for k in n.kinds})
    kinds = {k: KindNull(max(n.kinds[k].weak for n in nulls if k in n.kinds),
                         max(n.kinds[k].strong for n in nulls if k in n.kinds),
                         max(n.kinds[k].cv2 for n in nulls if k in n.kinds),
                         max(n.kinds[k].dispersion(2) for n in nulls if k in n.kinds))
             for k in names}
    tempo = (tuple(t for n in nulls for t in n.tempo)
             if nulls and all(n.tempo for n in nulls) else None)
    offsets = {k: max(n.llr_offset.get(k, 0.0) for n in nulls)
               for k in sorted({k for n in nulls for k in n.llr_offset})}
    return guard(PlayerNull(kinds, tempo, source, sum(n.players for n in nulls),
                            sum(n.solves for n in nulls), offsets))


def _cv2(k, n) -> float:
    """How much people's own rates vary (squared coefficient of variation), from their
    counts of solves odd at one level (moment estimate of a beta-binomial)."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    use = n >= 5
    if use.sum() < 5 or k.sum() == 0:
        return CV2_FLOOR
    k, n = k[use], n[use]
    q = k.sum() / n.sum()
    if q <= 0 or q >= 1:
        return CV2_FLOOR
    # E[(k - nq)^2] = n q (1-q) (1 + (n-1) rho), and cv2 = rho/(1-rho) (1-q)/q
    rho = float(np.clip(np.sum((k - n * q) ** 2 / (n * q * (1 - q)) - 1)
                        / np.sum(n - 1), 0.0, 0.99))
    return float(np.clip(rho / (1 - rho) * (1 - q) / q, CV2_FLOOR, CV2_CAP))


def _own_slopes(season: Sequence[SolveFacts]) -> list[float]:
    """Each solve's own slow-down at a stall (the solves with a stall)."""
    return [s.slope[0] / s.slope[1] for s in season if s.slope]


def pooled_slope(season: Sequence[SolveFacts]) -> tuple[float, int] | None:
    """(the player's own slow-down at a stall, in log delay, and the solves it rests
    on)."""
    parts = [s.slope for s in season if s.slope]
    if not parts:
        return None
    sxx = sum(p[1] for p in parts)
    return sum(p[0] for p in parts) / sxx, len(parts)


# --------------------------------------------------------------------------- the tests

def bb_tail(k: int, n: int, q: float, rho: float) -> float:
    """P(X ≥ k) for X beta-binomial with n trials, mean rate q, intra-class correlation
    rho."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    a = q * (1 - rho) / rho
    b = (1 - q) * (1 - rho) / rho
    x = np.arange(k, n + 1)
    logp = (gammaln(n + 1) - gammaln(x + 1) - gammaln(n - x + 1)
            + betaln(x + a, n - x + b) - betaln(a, b))
    return float(min(1.0, np.exp(logp).sum()))


@dataclass(frozen=True)
class Finding:
    """One kind's evidence over the season: its strongest test."""

    kind: str
    p: float                   # the kind's p (its tests Bonferroni-corrected)
    odd: int                   # solves odd by the test (the slope: solves it rests on)
    of: int                    # solves the test looked at
    honest_rate: float         # share of honest solves as odd (0 for the slope)
    solves: tuple[str, ...]    # the solves behind it
    sentence: str

    def to_json(self) -> dict:
        return {"kind": self.kind, "p": self.p, "odd": self.odd, "of": self.of,
                "honest_rate": self.honest_rate, "solves": list(self.solves),
                "sentence": self.sentence}

    @classmethod
    def from_json(cls, doc: Mapping) -> Finding:
        return cls(doc["kind"], doc["p"], doc["odd"], doc["of"], doc["honest_rate"],
                   tuple(doc["solves"]), doc["sentence"])


def _one_in(rate: float) -> str:
    return f"about 1 such solve in {max(1, round(1 / rate)):,}" if rate > 0 else "none"


def _count_test(kind: str, values: Sequence[int], null: KindNull) -> tuple | None:
    """The beta-binomial tests of one count kind over ``values``, the levels (0 ordinary,
    1 weakly odd, 2 odd) of the solves that speak to it, in order: weak and strong, over
    the season and over its windows. (p: the smallest test's times the tests, level,
    span number, (a, b) of the span, the odd solves' places in ``values``, the rate) of
    the smallest; None where no solve speaks to the kind."""
    if not values:
        return None
    spans = _spans(len(values))
    best = None
    tests = 0
    for level, rate in ((1, null.weak), (2, null.strong)):
        if kind == FLAGGED and level == 1:
            continue
        for span_no, (a, b) in enumerate(spans):
            tests += 1
            odd = [i for i in range(a, b) if values[i] >= level]
            p = bb_tail(len(odd), b - a, rate, null.rho(rate, level))
            if best is None or p < best[0]:
                best = (p, level, span_no, (a, b), odd, rate)
    return (min(1.0, best[0] * tests),) + best[1:]


def _count_kind(kind: str, season: Sequence[SolveFacts], levels: list[dict],
                null: KindNull) -> Finding | None:
    """One count kind's finding (:func:`_count_test`), in words."""
    idx = [i for i, lv in enumerate(levels) if kind in lv]
    got = _count_test(kind, [levels[i][kind] for i in idx], null)
    if got is None:
        return None
    p, level, span_no, (a, b), odd, rate = got
    odd = [idx[i] for i in odd]
    n = len(idx)
    names = tuple(season[i].submission_id for i in odd)
    how = "" if kind in (FLAGGED, OWN_PACE) else (" strongly" if level == 2 else "")
    usual = ("quicker than the player's usual pace (the median of their nearest finished "
             "solves, each against its puzzle's expected time)")
    what = (words(kind) if kind != OWN_PACE else
            f"were {math.exp(PACE_WEAK):.2g}× or more {usual}" if level == 1 else
            f"were {math.exp(PACE_STRONG):.2g}× or more {usual}, or "
            f"{math.exp(PACE_WEAK):.2g}× and no slower at a stall than elsewhere")
    where = (f"Over {n} solves" if span_no == 0 else
             f"In {b - a} consecutive solves (from {season[idx[a]].submission_id} to "
             f"{season[idx[b - 1]].submission_id})")
    sentence = (f"{where}, {len(odd)}{how} {what} (honest players: "
                f"{_one_in(rate)}); as many by chance: {_chance(p)}.")
    return Finding(kind, p, len(odd), b - a, rate, names, sentence)


def _spans(n: int) -> list[tuple[int, int]]:
    """The whole season and, beyond :data:`WINDOW` solves, every window of it."""
    spans = [(0, n)]
    if n > WINDOW:
        starts = sorted(set(range(0, n - WINDOW + 1, WINDOW_STEP)) | {n - WINDOW})
        spans += [(a, a + WINDOW) for a in starts]
    return spans


def kind_ratio(s: SolveFacts, kind: str) -> float | None:
    """A solve's log-likelihood ratio for a ratio kind (:data:`RATIO_KINDS`): its
    members together; None where the solve has none of them."""
    got = [s.llr[k] for k in RATIO_KINDS[kind] if k in s.llr]
    return float(sum(got)) if got else None


def capped_ratio(s: SolveFacts, kind: str) -> float | None:
    """A solve's likelihood ratio for a ratio kind as a season counts it (its log at
    most :data:`STRONG_LLR`), not its log: what a null measures the honest mean of."""
    v = kind_ratio(s, kind)
    return None if v is None else math.exp(min(v, STRONG_LLR))


def _llr_kind(kind: str, season: Sequence[SolveFacts], offset: float = 0.0
              ) -> Finding | None:
    """The sum test of a ratio kind's solve ratios (:func:`kind_ratio`) over the season
    and its windows.

    Each of a solve's ratios is built so that its mean over honest play is at most one
    (``analytics.deduction``, ``signals.stall_pace_llr``); the hints' sum reads some
    placements twice, and one person's stalls are alike, so the mean is
    measured (the shipped null's offset, ``player_seasons.py`` prints it per honest
    model). With a mean at most one the product over solves is a test martingale, and
    an honest player's season reaches a sum of log-ratios S with probability at most
    e^-S (Markov), whatever the number of solves. Each solve counts at most
    :data:`STRONG_LLR` (one odd solve does not dominate: capping a ratio only lowers its
    mean) and less the null's ``offset`` (the log of the honest mean where that exceeds
    one); the smallest p times the spans tested."""
    ratio = [kind_ratio(s, kind) for s in season]
    idx = [i for i, r in enumerate(ratio) if r is not None]
    if not idx:
        return None
    v = np.minimum([ratio[i] for i in idx], STRONG_LLR) - offset
    spans = _spans(len(idx))
    best = max(((float(v[a:b].sum()), a, b, no) for no, (a, b) in enumerate(spans)),
               key=lambda t: t[0])
    total, a, b, span_no = best
    p = float(min(1.0, math.exp(-total) * len(spans))) if total > 0 else 1.0
    towards = [idx[i] for i in range(a, b) if v[i] > 0]
    names = tuple(season[i].submission_id for i in towards)
    where = (f"Over {len(idx)} solves" if span_no == 0 else
             f"In {b - a} consecutive solves (from {season[idx[a]].submission_id} to "
             f"{season[idx[b - 1]].submission_id})")
    parts = [(sum(season[i].llr.get(k, 0.0) > 0 for i in towards), w)
             for k, w in RATIO_WORDS.items()] if kind == HINTS else []
    held = "; ".join(f"{n} held {w}" for n, w in parts if n)
    what = f"{len(towards)} {words(kind)}" + (f" ({held})" if held else "")
    odds = ("over a million" if total > math.log(1e6) else
            f"{math.exp(total):,.0f}" if total > 0 else "")
    sentence = (f"{where}, {what}; all the solves together weigh {odds} to 1 for "
                f"{RATIO_FOR[kind]} over honest play (the likelihood ratio: "
                f"{RATIO_AGAINST[kind]}); "
                f"by chance: {_chance(p)}.") if total > 0 else (
        f"{where}, {what}; all the solves together weigh for honest play.")
    return Finding(kind, p, len(towards), b - a, 0.0, names, sentence)


def _tempo(season: Sequence[SolveFacts], null: PlayerNull) -> Finding | None:
    got = pooled_slope(season)
    if got is None or not null.tempo:
        return None
    slope, n = got
    if n < MIN_TEMPO_SOLVES:
        return None
    # how well the season measures the player's own slow-down: their solves' spread
    within2 = max(SOLVE_SLOPE_SD_FLOOR, float(np.std(_own_slopes(season), ddof=1))) ** 2 / n
    # the population the player is least odd in (whoever slows down like any is safe);
    # the spread of n solves is itself an estimate, so the tail is Student's t with
    # Welch-Satterthwaite's degrees of freedom, not the normal's (which five solves that
    # happen to agree would make far too sure)
    p, centre, between = max(
        (_t_tail((c - slope) / math.sqrt(b ** 2 + within2),
                 (b ** 2 + within2) ** 2 * (n - 1) / within2 ** 2), c, b)
        for c, b in null.tempo)
    # Welch-Satterthwaite's t is still too sure for a few noisy solves: what it leaves
    p = min(1.0, p * (1.0 + TEMPO_FEW_SOLVES / n ** 2))
    names = tuple(s.submission_id for s in season if s.slope)
    most = math.exp(centre - Z10 * between)
    sentence = (f"Over {n} solves with a stall, a placement made at a stall (nothing simple "
                f"on offer: a harder step had to be found) typically took "
                f"{math.exp(slope):.1f}x as long as the rest; the null for honest players "
                f"has 9 in 10 take {most:.1f}x as long or more; by chance: {_chance(p)}.")
    return Finding(TEMPO, p, n, n, 0.0, names, sentence)


def _t_tail(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom, in (0, 1]."""
    return float(min(1.0, max(stdtr(df, -t), 1e-300)))


def _chance(p: float) -> str:
    if p >= 0.5:
        return "common"
    if p < 1e-6:
        return "below 1 in a million honest players"
    n = 1 / p
    digits = max(0, len(str(int(n))) - 2)
    return f"about 1 in {int(round(n, -digits)):,} honest players"


# ------------------------------------------------------------------------- the verdict

@dataclass(frozen=True)
class PlayerVerdict:
    flagged: bool
    p_value: float
    solves: int
    alpha: float
    findings: tuple[Finding, ...]   # every kind judged, strongest first
    summary: str                    # the verdict in one sentence
    rests_on: str                   # how much the verdict rests on
    null_source: str
    kinds: int                      # kinds judged (alpha is shared among them)

    @property
    def odd_solves(self) -> tuple[str, ...]:
        """The solves behind the findings below 0.05, in order of first mention."""
        return tuple(dict.fromkeys(s for f in self.findings if f.p < 0.05 for s in f.solves))

    def to_json(self) -> dict:
        return {"flagged": self.flagged, "p_value": self.p_value, "solves": self.solves,
                "alpha": self.alpha, "findings": [f.to_json() for f in self.findings],
                "summary": self.summary, "rests_on": self.rests_on,
                "null_source": self.null_source, "kinds": self.kinds}

    @classmethod
    def from_json(cls, doc: Mapping) -> PlayerVerdict:
        return cls(bool(doc["flagged"]), doc["p_value"], doc["solves"], doc["alpha"],
                   tuple(Finding.from_json(f) for f in doc["findings"]), doc["summary"],
                   doc["rests_on"], doc.get("null_source", ""), doc.get("kinds", 0))


def judge(season: Sequence[SolveFacts], null: PlayerNull | None = None, *,
          alpha: float = ALPHA, reviewed: int = 0) -> PlayerVerdict:
    """A player's verdict over ``season`` (their scored solves, oldest first);
    ``reviewed``: the earlier solves left out because a person cleared the player on them
    (the verdict says so)."""
    null = null or shipped_null()
    levels = season_levels(season)
    kinds = sorted({k for lv in levels for k in lv} - STYLE_KINDS - SOLVE_KINDS)
    found = [f for f in (_count_kind(k, season, levels, null.kind(k)) for k in kinds) if f]
    found += [f for f in (_llr_kind(k, season, null.llr_offset.get(k, 0.0))
                          for k in RATIO_KINDS) if f]   # None where no solve has one
    tempo = _tempo(season, null)
    if tempo is not None:
        found.append(tempo)
    share = _shares(found)
    found.sort(key=lambda f: (f.p / share[f.kind], f.kind))
    k = max(1, len(found))
    p = float(min(1.0, found[0].p / share[found[0].kind])) if found else 1.0
    flagged = p < alpha
    n = len(season)
    if flagged:
        summary = f"Flagged for review. {found[0].sentence}"
    elif found and found[0].p < 0.05:
        # the kind's own line, which its odds are weighed against: its share of alpha
        line = alpha * share[found[0].kind]
        summary = (f"Not flagged: the most unusual kind is weaker than its line (1 in "
                   f"{1 / line:,.0f} honest players: its share of the 1 in {1 / alpha:,.0f} "
                   f"kept over {k} kind{'s' if k != 1 else ''}). {found[0].sentence}")
    else:
        summary = f"Not flagged: nothing unusual over {n} solve{'s' if n != 1 else ''}."
    factor = max((1.0 / share[f.kind] for f in found if f.kind not in RATIO_KINDS),
                 default=k)
    ratio_factor = max((1.0 / share[f.kind] for f in found if f.kind in RATIO_KINDS),
                       default=None)
    return PlayerVerdict(flagged, p, n, alpha, tuple(found), summary,
                         _rests_on(n, null, alpha, factor, ratio_factor, reviewed),
                         null.source, k)


def _shares(found: Sequence[Finding]) -> dict[str, float]:
    """Each kind's share of ``alpha`` (a weighted Bonferroni: the shares sum to one, so
    an honest player is flagged with probability at most ``alpha``). The kinds that add
    up evidence weak in every solve have fixed shares (:data:`FIXED_SHARES`): the
    hints' likelihood ratios :data:`RATIO_SHARE`, the stall pace's
    :data:`STALL_PACE_SHARE`, the tempo :data:`TEMPO_SHARE`; the count kinds, whose odd
    solves are each strong evidence, share what is left. A sort absent from the season
    gives its share to the others."""
    fixed = {f.kind: FIXED_SHARES[f.kind] for f in found if f.kind in FIXED_SHARES}
    others = [f.kind for f in found if f.kind not in fixed]
    if not others:
        total = sum(fixed.values())
        return {k: v / total for k, v in fixed.items()}
    left = 1.0 - sum(fixed.values())
    return {**fixed, **{k: left / len(others) for k in others}}


def _rests_on(n: int, null: PlayerNull, alpha: float, kinds: float,
              ratio_kinds: float | None = None, reviewed: int = 0) -> str:
    """How much a verdict over ``n`` solves can say: the least number of solves, all
    odd in one family (or each at a ratio kind's cap), that would reach ``alpha``
    (``kinds``, ``ratio_kinds``: the corrections of a family and of a ratio kind)."""
    if n == 0:
        return "No scored solves yet: nothing to judge."
    fam = min((null.kind(f) for f in FAMILIES), key=lambda v: v.strong)
    need = next((m for m in range(1, 200)
                 if bb_tail(m, m, fam.strong, fam.rho(fam.strong, 2))
                 * 2 * max(kinds, 1)
                 < alpha), None)
    if ratio_kinds is not None:
        by_ratio = math.floor(math.log(ratio_kinds / alpha) / STRONG_LLR) + 1
        need = by_ratio if need is None else min(need, by_ratio)
    since = (f", leaving out the {reviewed} a person cleared the player on"
             if reviewed else "")
    base = f"Rests on {n} scored solve{'s' if n != 1 else ''}{since} ({null.source})"
    if need is not None and n < need:
        return (f"{base}: too few for a verdict on its own; it would take {need} solves "
                f"odd in one way to flag, so it says only that nothing was seen yet.")
    return f"{base}."
