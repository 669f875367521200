"""One submission → its score and the evidence an organiser reads (pure).

:func:`score_solve` runs the whole chain: fill order → replay → signals → calibration →
verdict, and returns an :class:`Evidence`: ``anomaly``, ``p_value``, ``flagged``,
``reasons``, ``rule`` and a one-line ``verdict``; per signal its value, how unusual it is
among honest solves in words (``unusual``), whom it is compared with (``population``)
and a plain sentence; the predicted and actual fill orders as 2-D grids of 1-based
ranks; where the pace steadied part-way (``switch_from``); the per-placement timeline;
the mistake counts. For a flagged solve, the quickest placements of cells that were no
single at that moment carry what each needed then (``timeline[].needed``: the rung of
the deduction ladder, in words), and ``hardest_needed`` names the hardest of those made
while a single was on offer elsewhere (the unforced ones). Where the technique ladder
judges (9×9 Sudoku), every placement carries the easiest proof found for it
(``timeline[].proof``, in words) and whether nothing allowed proved it although it was
right first time (``timeline[].unproven``); ``llr`` holds, per kind of evidence, the solve's natural-log
likelihood ratio of cheating against honest play, for a player's season to add up: the
deduction's (``right_first_time``, ``hint_run``, ``stall_look``) and ``stall_pace``
(how soon each stall's first cell came).

:meth:`Evidence.to_json` is the stored form (``scores.evidence``, the API's ``score``),
versioned by :data:`EVIDENCE_VERSION`; :meth:`Evidence.from_json` reads every stored
version back, so scoring, the documents, the console and the command line share one
reading of it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
from scipy.special import ndtri

from fairgrid.solvers.propagation import NOT_DEDUCIBLE
from fairgrid.solvers.puzzle_types import DEFAULT_TYPE, puzzle_type
from fairgrid.solvers.techniques import SINGLES, WEIGHT

from .calibration import judge
from .client_signals import away_words
from .deduction import BEYOND_WORDS, RUNG_WORDS
from .fill_order import fill_order
from .log_match import HONEST_SD, Earlier, LogMatch, compare
from .puzzle_model import SIMULATED
from .signals import (FAMILY, LOG_MATCH_JUDGED, NOTES_SWITCH, PuzzleFacts, change_point,
                      compute, notes_carried, null_for, pace_allowance, replay_solve,
                      solve_pace, stall_pace_llr, techniques_needed, unforced_placements)

# 6: log_match (the earlier solve of the puzzle whose timing is most like this log's).
# 5: pace and pace_basis (a finished solve's log time against the puzzle's expected time,
# no skill, and what that rests on).
# 4: what a quick placement needed (timeline[].needed, hardest_needed.technique) in the
# deduction ladder's words, no longer the technique model's names (needed_phrase reads
# both).
# 3: each placement's proof and whether it was unproven, per-kind log-likelihood ratios.
# 2: guarded nulls, plain words, 1-based orders. Documents without a version are older:
# 0-based actual order, SA median ranks as predicted order.
EVIDENCE_VERSION = 6
RULES = {"two": "two independent kinds of evidence agree, one below 1 in 100 and another "
                "below 1 in 20, together below the false-positive target",
         "alone": "one kind of evidence beyond anything people do (below 1 in a million)"}
# each signal's name, and what a solve flagged for it did ("unforced" is in the puzzle
# type's words: solvers.puzzle_types.TypeWords)
NAMES = {"order_sa": "order against how people solve this puzzle",
         "order_consensus": "order against other players'",
         "speed": "speed",
         "pace_variation": "evenness of pace",
         "pacing_difficulty": "slowing on hard steps",
         "switch": "change of pace part-way",
         "paste": "paste events",
         "away": "cells nothing proved, placed on coming back to the page",
         "unproven": "cells nothing proved, right first time",
         "log_match": "timing against earlier solves of this puzzle"}
WHAT = {"order_sa": "cells filled in an order unlike how people solve this puzzle",
        "order_consensus": "cells filled in an order unlike other players'",
        "speed": "faster than people solve this puzzle",
        "pace_variation": "an even pace no person keeps",
        "pacing_difficulty": "no slowing down on the hard steps",
        "switch": "the pace turned machine-like part-way",
        "paste": "paste events reported by the portal's client",
        "away": "left the page, came back and placed cells nothing on the board proved",
        "unproven": "digits right at the first try where no technique proved them",
        "log_match": "the time before each placement repeats an earlier solve of this "
                     "puzzle"}
LOG_MATCH_SOURCE = ("the most alike two people's logs of one puzzle are (seven honest "
                    "models, with a guard)")


Grid = tuple[tuple[int | None, ...], ...]  # per-cell values, one tuple a row


@dataclass(frozen=True)
class SignalEvidence:
    """One signal of a solve: its value, how unusual that is and what it means."""

    name: str
    what: str               # the signal's name in words
    family: str
    value: float
    z: float
    percentile: float
    p: float
    unusual: str            # how often honest solves are as unusual, in words
    population: str         # whom the null comes from
    contribution: float     # share of the combined evidence
    explanation: str        # one sentence an organiser reads

    def to_json(self) -> dict:
        return {"name": self.name, "what": self.what, "family": self.family,
                "value": self.value, "z": self.z, "percentile": self.percentile,
                "p": self.p, "unusual": self.unusual, "population": self.population,
                "contribution": self.contribution, "explanation": self.explanation}

    @classmethod
    def from_json(cls, doc: Mapping) -> SignalEvidence:
        return cls(doc["name"], doc.get("what", doc["name"]),
                   doc.get("family", FAMILY.get(doc["name"], doc["name"])), doc["value"],
                   doc.get("z", 0.0), doc.get("percentile", 0.0), doc["p"],
                   doc.get("unusual", ""), doc.get("population", SIMULATED),
                   doc.get("contribution", 0.0), doc.get("explanation", ""))


@dataclass(frozen=True)
class Placement:
    """One placement of the solve's timeline, in fill order."""

    t_ms: int
    cell: int
    technique: str          # what placed it at that moment (a single, or not deducible)
    singles_on_offer: int
    difficulty: float       # the step difficulty the pacing signal reads
    needed: str | None      # for a flagged solve's quick non-singles: what it needed
    #                         (:func:`needed_phrase` reads it, in words)
    # nothing on the deduction ladder up to the rung allowed then, nor the player's own
    # notes, proved this digit at that moment, and it was right first time
    unproven: bool = False
    proof: str | None = None  # the easiest technique that proved it, in words
    # made at a stall: what proves it from the board as it stood ("one look at the board
    # proves it", ..., "no number of rounds of eliminations up to ... proves it; it had 2
    # candidates more than the fewest any empty cell had (...)"), or that the first digit
    # tried there was wrong
    stall_look: str | None = None

    def to_json(self) -> dict:
        return {"t_ms": self.t_ms, "cell": self.cell, "technique": self.technique,
                "singles_on_offer": self.singles_on_offer, "difficulty": self.difficulty,
                "needed": self.needed, "unproven": self.unproven, "proof": self.proof,
                "stall_look": self.stall_look}

    @classmethod
    def from_json(cls, doc: Mapping) -> Placement:
        return cls(doc["t_ms"], doc["cell"], doc.get("technique", ""),
                   doc.get("singles_on_offer", 0), doc.get("difficulty", 0.0),
                   doc.get("needed"), bool(doc.get("unproven", False)), doc.get("proof"),
                   doc.get("stall_look"))


def needed_phrase(needed: str | None) -> str | None:
    """What a placement needed, as the evidence stores it, in words: "locked
    candidates", "a fish (…)", or from documents before version 4, which stored the
    technique model's names, "an x-wing"; None for a single or nothing."""
    if not needed or needed in SINGLES or needed == RUNG_WORDS[0]:
        return None
    if needed in ("forcing", "guess"):
        return BEYOND_WORDS
    if needed in WEIGHT:
        return f"{'an' if needed[0] in 'aeiox' else 'a'} {needed}"
    return needed


@dataclass(frozen=True)
class HardestNeeded:
    """Of the placements made while a single was on offer elsewhere, the one that needed
    the highest rung (1-based placement number), with its delay; ``technique`` is what
    it needed, in the words :func:`needed_phrase` reads."""

    placement: int
    cell: int
    technique: str
    seconds: float

    def to_json(self) -> dict:
        return {"placement": self.placement, "cell": self.cell, "technique": self.technique,
                "seconds": self.seconds}


@dataclass(frozen=True)
class Counts:
    """What the log holds beyond its order: cells right and wrong, slips, notes."""

    filled: int
    right: int
    wrong: int
    cells: int
    mistakes: int
    erasures: int
    overwrites: int
    notes: int
    complete: bool

    def to_json(self) -> dict:
        return {"filled": self.filled, "right": self.right, "wrong": self.wrong,
                "cells": self.cells, "mistakes": self.mistakes, "erasures": self.erasures,
                "overwrites": self.overwrites, "notes": self.notes,
                "complete": self.complete}


def _rows(grid) -> Grid:
    return tuple(tuple(row) for row in grid)


@dataclass(frozen=True)
class Evidence:
    """A scored solve: the verdict and everything behind it (see the module doc)."""

    anomaly: float
    p_value: float
    flagged: bool
    reasons: tuple[str, ...]     # the signals behind a flag, strongest first
    rule: str                    # which flag rule held ("" when not flagged)
    verdict: str                 # the verdict in one sentence
    unusual: str                 # how often honest solves are as unusual, in words
    outcome: str                 # finished | unfinished | wrong
    reported_outcome: str | None  # what the portal said of how it ended
    history: bool                # the player has a fitted skill
    signals: tuple[SignalEvidence, ...]
    switch_from: int | None      # 1-based placement the pace steadied from (when odd)
    hardest_needed: HardestNeeded | None
    counts: Counts
    givens: tuple[int, ...]
    puzzle_type: str
    predicted_order: Grid        # 1-based fill ranks, None for givens
    actual_order: Grid
    order_note: str
    timeline: tuple[Placement, ...]
    # per kind of evidence, ln P(solve | cheating) / P(solve | honest), 0 when the kind
    # says nothing (``right_first_time``, ``hint_run``): a season adds them up
    llr: Mapping[str, float] = field(default_factory=dict)
    version: int = EVIDENCE_VERSION
    # a finished solve's ln(time / the puzzle's expected time for an average player),
    # skill left out, and what that expected time rests on (``PuzzleFacts.time_basis``):
    # a season compares a player's solves of one type and basis with each other by it
    pace: float | None = None
    pace_basis: str | None = None
    # the earlier solve of this puzzle whose timing is most like this log's (None: none
    # compared)
    log_match: LogMatch | None = None

    def signal(self, name: str) -> SignalEvidence | None:
        """The signal called ``name``, or None when the solve has none."""
        return next((x for x in self.signals if x.name == name), None)

    @property
    def summary(self) -> dict[str, Any]:
        """What the scores and flags rows hold beside the whole document."""
        return {"anomaly": self.anomaly, "p_value": self.p_value, "flagged": self.flagged,
                "reasons": list(self.reasons)}

    def to_json(self) -> dict:
        """The stored form: a JSON object with ``"version"``."""
        return {
            "version": self.version, "anomaly": self.anomaly, "p_value": self.p_value,
            "flagged": self.flagged, "reasons": list(self.reasons), "rule": self.rule,
            "verdict": self.verdict, "unusual": self.unusual, "outcome": self.outcome,
            "reported_outcome": self.reported_outcome, "history": self.history,
            "signals": [x.to_json() for x in self.signals],
            "switch": None if self.switch_from is None else {
                "from_placement": self.switch_from},
            "hardest_needed": None if self.hardest_needed is None else
            self.hardest_needed.to_json(),
            "counts": self.counts.to_json(), "givens": list(self.givens),
            "puzzle_type": self.puzzle_type,
            "predicted_order": [list(r) for r in self.predicted_order],
            "actual_order": [list(r) for r in self.actual_order],
            "order_note": self.order_note,
            "timeline": [x.to_json() for x in self.timeline],
            "llr": dict(self.llr), "pace": self.pace, "pace_basis": self.pace_basis,
            "log_match": None if self.log_match is None else self.log_match.to_json()}

    @classmethod
    def from_json(cls, doc: Mapping) -> Evidence:
        """A stored document of any version. Before version 2 (no ``"version"``) both
        orders were 0-based (the predicted one the SA median ranks): they are read as
        1-based ranks."""
        pred, actual = doc["predicted_order"], doc["actual_order"]
        if "version" not in doc:
            pred = [[None if v is None else int(v) + 1 for v in row] for row in pred]
            actual = [[None if v is None else int(v) + 1 for v in row] for row in actual]
        counts = doc.get("counts") or {}
        filled = counts.get("filled", len(doc.get("timeline") or ()))
        hard = doc.get("hardest_needed")
        switch = doc.get("switch") or {}
        return cls(
            doc["anomaly"], doc["p_value"], bool(doc["flagged"]),
            tuple(doc.get("reasons") or ()), doc.get("rule") or "",
            doc.get("verdict") or "", doc.get("unusual") or "",
            doc.get("outcome", "finished"), doc.get("reported_outcome"),
            bool(doc.get("history", False)),
            tuple(SignalEvidence.from_json(x) for x in doc.get("signals") or ()),
            switch.get("from_placement"),
            None if not hard else HardestNeeded(hard["placement"], hard["cell"],
                                                hard["technique"], hard["seconds"]),
            Counts(filled, counts.get("right", filled), counts.get("wrong", 0),
                   counts.get("cells", filled), counts.get("mistakes", 0),
                   counts.get("erasures", 0), counts.get("overwrites", 0),
                   counts.get("notes", 0), bool(counts.get("complete", True))),
            tuple(doc.get("givens") or ()), doc.get("puzzle_type", DEFAULT_TYPE),
            _rows(pred), _rows(actual), doc.get("order_note") or "",
            tuple(Placement.from_json(x) for x in doc.get("timeline") or ()),
            {str(k): float(v) for k, v in (doc.get("llr") or {}).items()},
            doc.get("version", 2), finite_or_none(doc.get("pace")),
            basis if isinstance(basis := doc.get("pace_basis"), str) else None,
            LogMatch.from_json(doc["log_match"]) if doc.get("log_match") else None)


def finite_or_none(value) -> float | None:
    """A stored number as a finite float; None for anything else (text, a boolean, NaN,
    10**400): what a reader of stored evidence takes a number to be."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        value = float(value)
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def _name(name: str, type_name: str) -> str:
    """A signal's name in words, in the puzzle type's terms."""
    return puzzle_type(type_name).words.unforced_name if name == "unforced" else NAMES[name]


def _what(name: str, type_name: str) -> str:
    """What a solve flagged for a signal did, in the puzzle type's terms."""
    return puzzle_type(type_name).words.unforced_what if name == "unforced" else WHAT[name]


def rarity(p: float) -> str:
    """How often honest solves are at least this unusual, at the precision the nulls
    support: two significant figures down to 1 in 10,000, bounds beyond."""
    if p < 1e-6:
        return "below 1 in a million honest solves"
    if p < 1e-4:
        return "below 1 in 10,000 honest solves"
    if p >= 0.5:
        return "common among honest solves"
    n = 1.0 / p
    digits = max(0, len(str(int(n))) - 2)
    n = int(round(n, -digits))
    return f"about 1 in {n:,} honest solves"


def _mmss(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m}:{s:02d}"


def explain(name: str, value: float, centre: float, facts: PuzzleFacts, extra: dict) -> str:
    """A one-sentence reading of one signal, in an organiser's words."""
    if name == "order_sa":  # a null's centre can lie past the scale's end (Nurikabe's)
        return (f"the order of the {extra['filled']} placements agrees with how people "
                f"are predicted to solve this puzzle at {value:.2f} (1 = the same order, "
                f"0 = unrelated); a typical honest solve agrees at {min(centre, 1.0):.2f}")
    if name == "order_consensus":
        return (f"the order agrees with the order other players used at "
                f"{value:.2f}; a typical honest solve agrees at {min(centre, 1.0):.2f}")
    if name == "unproven":
        return _unproven_words(value, centre, extra)
    if name == "unforced":
        n = extra["unforced"]
        if n == 0:
            return ("every placement was forced by the board at that moment, or made "
                    "where nothing was")
        if not puzzle_type(facts.puzzle_type).technique_ladder:
            return (f"{n} cell{'s' if n != 1 else ''} decided before the rules forced "
                    f"{'them' if n != 1 else 'it'} while a forced cell was on offer "
                    f"elsewhere (honest solves are allowed about {centre:.0f} on average)")
        found = extra.get("deduction")
        if found is not None and found.worked:
            return (f"{n} placement{'s' if n != 1 else ''} needed a fish or harder at "
                    f"that moment while a single was on offer elsewhere, which people "
                    f"take first ({value:.1f} bits the board did not give; honest "
                    f"solves are allowed about {centre:.0f} on average)")
        hard = extra.get("hardest_needed")
        phrase = needed_phrase(hard.technique) if hard else None
        note = ""
        if phrase:
            note = (f"; the hardest, placement {hard.placement}, needed "
                    f"{phrase} at that moment and came "
                    f"{hard.seconds:.1f} s after the one before")
        return (f"{n} placement{'s' if n != 1 else ''} put a digit where the board still "
                f"allowed others while an obvious single was on offer elsewhere "
                f"({value:.1f} bits of information the board did not give; honest "
                f"solves are allowed about {centre:.0f} on average){note}")
    if name == "speed":
        actual = extra["duration_s"]
        expected = math.exp(facts.expected_log_s - extra["skill"])
        ratio = expected / actual if actual > 0 else None
        word = ("in no time at all, not" if ratio is None  # every move at one instant
                else f"{ratio:.1f}x faster than" if ratio >= 1
                else f"{1 / ratio:.1f}x slower than")
        who = ("this player's usual pace" if extra["history"] else
               "an average player (no history for this player: players up to 10x faster "
               "than average are allowed for)")
        return f"solved in {_mmss(actual)}, {word} the expected {_mmss(expected)} for {who}"
    if name == "pace_variation":
        spread = math.exp(value)
        return (f"the time between placements varied by a typical factor of {spread:.1f} "
                f"(honest players vary by about {math.exp(centre):.1f} or more; 1.0 would "
                f"be a metronome)")
    if name == "pacing_difficulty":
        return (f"delays correlate with how hard each step was at {value:.2f} (people "
                f"usually slow down on hard steps, above 0; a copier's delays are "
                f"unrelated, near 0)")
    if name == "switch":
        k = extra["switch_at"]
        if k < 0:
            return "the pace did not change character along the solve"
        return (f"from placement {k} on, the pace was {math.exp(value):.1f}x steadier "
                f"than before" + (" (compared with solves whose notes carried the "
                                  "thinking: placing what the notes show is quick)"
                                  if extra.get("notes_carried") else ""))
    if name == "paste":
        return f"the portal's client reported {int(value)} paste events"
    if name == "log_match":
        return log_match_words(extra["log_match"], extra["filled"])
    if name == "away":
        return away_words(value, centre, extra["client"], extra["replayed"])
    return f"{name} = {value:.3g}"


def log_match_source(submission_id: str | None) -> str:
    """The earlier solve a log repeats, in the evidence's words."""
    return (f"submission {submission_id!r} of this portal" if submission_id
            else "a solve another portal sent")


ERASED_SOURCE = "a solve since erased"


def forget_log_source(doc: dict) -> dict:
    """A stored evidence document whose ``log_match`` named a solve since erased: the
    same, naming none (its owner's erasure leaves nothing of them in others' evidence)."""
    found = doc.get("log_match") or {}
    sid = found.get("submission_id")
    if not sid:
        return doc
    out = {**doc, "log_match": {**found, "submission_id": None, "erased": True}}
    out["signals"] = [
        {**x, "explanation": x["explanation"].replace(log_match_source(sid), ERASED_SOURCE)}
        if x.get("name") == "log_match" and isinstance(x.get("explanation"), str) else x
        for x in doc.get("signals") or ()]
    return out


def log_match_words(found: LogMatch, filled: int) -> str:
    """How alike this log is to the earlier solve most like it, in words."""
    who = log_match_source(found.submission_id)
    return (f"the time before each placement follows an earlier solve of this puzzle "
            f"({who}, the closest of {found.compared:,} compared): "
            f"{found.same_gaps} of the {found.cells} gaps both timed within 5 % of "
            f"theirs once the pace as a whole is matched"
            + (f", nine in ten a typical {math.exp(found.spread):.2f}x apart"
               if found.spread is not None else "")
            + f", and {found.same_order} of {filled} "
            f"placements at the same place in the order; two people's logs of one "
            f"puzzle are a typical {math.exp(HONEST_SD):.2f}x apart or more")


def cell_name(cell: int, cols: int = 9) -> str:
    """``r5c7``: a cell by its 1-based row and column."""
    return f"r{cell // cols + 1}c{cell % cols + 1}"


def _digits_words(mask: int) -> str:
    digits = [str(d) for d in range(1, 10) if mask >> d & 1]
    return ", ".join(digits[:-1]) + " and " + digits[-1] if len(digits) > 1 else "".join(
        digits)


def _unproven_words(value: float, centre: float, extra: dict) -> str:
    """The ``unproven`` signal in words, with its first placements spelt out."""
    found, rep = extra["deduction"], extra["replayed"]
    which = np.flatnonzero(found.unproven)
    if which.size == 0:
        return ("every placement right at the first try was proved by a technique the "
                "player had shown a use for by then, or by the player's notes")
    n = which.size
    shown = "; ".join(placement_words(found, rep, int(k), extra["solution"])
                      for k in which[:UNPROVEN_SPELT])
    more = f"; and {n - UNPROVEN_SPELT} more" if n > UNPROVEN_SPELT else ""
    return (f"{n} placement{'s' if n != 1 else ''} right at the first try that nothing "
            f"the player had shown proved at that moment ({value:.1f} bits the board did "
            f"not give; honest solves are allowed about {centre:.0f} on average): "
            f"{shown}{more}")


UNPROVEN_SPELT = 2  # unproven placements the signal's sentence spells out


def placement_words(found, rep, k: int, solution) -> str:
    """What a person did at placement ``k`` (0-based) and what proved it, e.g.
    "placement 41 (r5c7 = 3) came 4 s after placement 40; nothing up to a wing (xy-,
    xyz-, w-wing), colouring or a uniqueness argument proves it, and the player's notes
    still allowed 3, 6 and 8 there"."""
    c = int(rep.cells[k])
    when = (f"{rep.intervals_ms[k] / 1000:.0f} s after placement {k}" if k else
            f"{rep.intervals_ms[k] / 1000:.0f} s after the start")
    head = f"placement {k + 1} ({cell_name(c)} = {int(solution[c])}) came {when}"
    proof = found.proof_words(k)
    if proof is not None:
        return f"{head}; {proof} proves it"
    words = f"{head}; nothing up to {RUNG_WORDS[int(found.allowed[k])]} proves it"
    if found.notes is not None and not found.notes.auto and found.notes.masks[k, c]:
        words += (f", and the player's notes still allowed "
                  f"{_digits_words(int(found.notes.masks[k, c]))} there")
    first, last = found.run_of(k)
    if last > first:
        gaps = " and ".join(f"{rep.intervals_ms[i] / 1000:.0f} s"
                            for i in range(first + 1, last + 1))
        words += (f"; placements {first + 1} to {last + 1}, none of which anything proved, "
                  f"came {gaps} apart after a pause of "
                  f"{rep.intervals_ms[first] / 1000:.0f} s")
    return words


def outcome_of(facts: PuzzleFacts, cell, digit, note) -> tuple[str, int, int]:
    """(outcome, cells filled right, cells wrong) of a log: ``finished`` when the final
    board is the solution (a cell left empty counting as ``facts.blank``: Nurikabe's
    undotted cells are island), ``wrong`` when every empty cell holds a value but some
    differ, ``unfinished`` otherwise."""
    board = np.asarray(facts.givens, dtype=np.int64).copy()
    cell, digit = np.asarray(cell, dtype=np.int64), np.asarray(digit, dtype=np.int64)
    ok = ~np.asarray(note, dtype=bool) & (cell >= 0) & (cell < board.size)
    ok[ok] = np.asarray(facts.givens)[cell[ok]] == 0
    last = np.flatnonzero(ok)[::-1]      # each cell's last move, latest first
    cells, first = np.unique(cell[last], return_index=True)
    board[cells] = digit[last[first]]
    empty = np.asarray(facts.givens) == 0
    right = int(np.sum(empty & (board == facts.solution)))
    wrong = int(np.sum(empty & (board != 0) & (board != facts.solution)))
    final = np.where(board == 0, facts.blank, board)
    if np.all(final[empty] == np.asarray(facts.solution)[empty]):
        return "finished", right, 0
    return ("wrong" if right + wrong == int(empty.sum()) else "unfinished"), right, wrong


def _outcome_words(outcome: str, right: int, wrong: int, total: int) -> str:
    if outcome == "wrong":
        return (f"Wrong: {wrong} cell{'s' if wrong != 1 else ''} "
                f"differ{'s' if wrong == 1 else ''} from the solution. ")
    if outcome == "unfinished":
        return f"Unfinished: {right} of {total} cells filled. "
    return ""


def verdict_line(verdict, extra: dict, type_name: str = DEFAULT_TYPE) -> str:
    """The verdict in one sentence (after the outcome, when the solve did not finish)."""
    return extra.get("outcome_words", "") + _verdict(verdict, type_name)


def _verdict(verdict, type_name: str = DEFAULT_TYPE) -> str:
    if verdict.flagged:
        what = "; ".join(dict.fromkeys(_what(r, type_name) for r in verdict.reasons))
        return f"Flagged for review: {what} ({RULES[verdict.rule]})."
    if not verdict.signals:
        return "Not scored: too few placements to judge."
    strongest = min(verdict.signals, key=lambda s: s.p)
    if strongest.p >= 0.01:
        return "Not flagged: nothing unusual for an honest solve."
    if verdict.pacing_at_speed is not None and FAMILY[strongest.name] == "pacing":
        return (f"Not flagged: the most unusual sign is {_what(strongest.name, type_name)} "
                f"({rarity(strongest.p)}) against people at the expected pace, but people "
                f"solving as fast keep paces that even (writing digits is most of their "
                f"time; {rarity(verdict.pacing_at_speed)} at this speed), and a second kind "
                f"of evidence would have to agree.")
    return (f"Not flagged: the most unusual sign is {_what(strongest.name, type_name)} "
            f"({rarity(strongest.p)}), but this kind of evidence alone does not flag a "
            f"solve.")


def _ranks_1(values) -> list:
    """1-based ranks of the non-NaN values, ties sharing the lowest (None for NaN)."""
    v = np.asarray(values, dtype=float)
    ok = np.isfinite(v)
    ranks = (np.searchsorted(np.sort(v[ok]), v, side="left") + 1).tolist()
    return [r if good else None for r, good in zip(ranks, ok.tolist())]


def _grid(values, shape):
    rows, cols = shape
    return [values[r * cols:(r + 1) * cols] for r in range(rows)]


def score_solve(facts: PuzzleFacts, null: dict, t_ms, cell, digit, note, *,
                skill: float = 0.0, client: dict | None = None, fpr: float = 1e-3,
                sources: dict | None = None, history: bool = False,
                skill_sd: float = 0.0, reported: str | None = None,
                earlier: Earlier | None = None) -> Evidence:
    """Score one solve and assemble its evidence (see the module docstring);
    ``earlier``: the solves of the puzzle to compare the log with (:mod:`.log_match`)."""
    fill = fill_order(t_ms, cell, digit, note, facts.givens, facts.solution, facts.blank)
    rep = replay_solve(facts, fill, (t_ms, cell, digit,
                                     np.zeros(len(t_ms), bool) if note is None else note))
    t_ms = np.asarray(t_ms)
    duration_ms = int(t_ms[-1]) if t_ms.size else 0
    values = compute(facts, fill, duration_ms, skill=skill, skill_sd=skill_sd, client=client,
                     replayed=rep)
    sources = dict(sources or {})
    carried = notes_carried(rep)
    null = null_for(null, carried)  # switch against solves whose notes carried the thinking
    if carried:
        sources["switch"] = sources.get(NOTES_SWITCH, "solves whose notes carried the "
                                                      "thinking")
    match = compare(t_ms, cell, digit, note, earlier, len(facts.givens))
    if match is not None and match.p < LOG_MATCH_JUDGED:
        values["log_match"] = float(np.clip(-ndtri(max(match.p, 1e-300)), -12.0, 12.0))
        null = {**null, "log_match": (0.0, 1.0)}
        sources["log_match"] = LOG_MATCH_SOURCE
    # an unfinished solve's time says nothing of its pace over the whole grid
    verdict = judge(values, null, fpr=fpr,
                    pace_allowance=pace_allowance(facts.expected_log_s, duration_ms)
                    if fill.complete else 1.0)
    split = -1  # where the pace steadied is only news when it steadied unusually
    if any(x.name == "switch" and x.p < 0.05 for x in verdict.signals):
        split = change_point(rep.intervals_ms[1:])[1]
    outcome, right, wrong = outcome_of(facts, cell, digit,
                                       np.zeros(len(t_ms), bool) if note is None else note)
    total = int(np.sum(np.asarray(facts.givens) == 0))
    # worked out for flagged solves only: the evidence a person reads, which most
    # solves need not pay for; the verdict does not depend on it
    needed = techniques_needed(facts, rep) if verdict.flagged else {}
    extra = {"hardest_needed": _hardest_needed(needed, rep),
             "outcome_words": _outcome_words(outcome, right, wrong, total),
             "filled": fill.filled,
             "unforced": int(np.count_nonzero(unforced_placements(rep))),
             "duration_s": duration_ms / 1000.0, "skill": skill, "history": history,
             "deduction": rep.deduction, "replayed": rep, "solution": facts.solution,
             "client": client, "notes_carried": carried, "log_match": match,
             "switch_at": split + 2 if split >= 0 else -1}  # 1-based placement number
    shape = facts.grid_shape
    words = puzzle_type(facts.puzzle_type).words
    return Evidence(
        anomaly=round(verdict.anomaly, 4), p_value=verdict.p_value,
        flagged=verdict.flagged, reasons=tuple(verdict.reasons), rule=verdict.rule,
        verdict=verdict_line(verdict, extra, facts.puzzle_type),
        unusual=rarity(verdict.p_value), outcome=outcome, reported_outcome=reported,
        history=history,
        signals=tuple(SignalEvidence(
            s.name, _name(s.name, facts.puzzle_type), FAMILY[s.name], round(s.value, 4),
            round(s.z, 3), round(100 * (1 - s.p), 2), s.p, rarity(s.p),
            sources.get(s.name, SIMULATED), round(s.contribution, 4),
            explain(s.name, s.value, s.centre, facts, extra)) for s in verdict.signals),
        switch_from=extra["switch_at"] if extra["switch_at"] > 0 else None,
        # the technique the hardest placement made without a single needed then
        hardest_needed=extra["hardest_needed"],
        counts=Counts(fill.filled, right, wrong, total, fill.mistakes, fill.erasures,
                      fill.overwrites, fill.notes, fill.complete),
        givens=tuple(int(g) for g in facts.givens), puzzle_type=facts.puzzle_type,
        # both orders as 1-based ranks over the empty cells; predicted ranks come from
        # the median over SA runs, so cells with equal medians share the lowest rank
        predicted_order=_rows(_grid(_ranks_1(facts.predicted_rank), shape)),
        actual_order=_rows(_grid([None if r < 0 else int(r) + 1 for r in fill.rank],
                                 shape)),
        order_note=words.order_note,
        timeline=_timeline(rep, needed, words),
        llr=_ratios(rep),
        pace=solve_pace(duration_ms, facts.expected_log_s)
        if fill.complete and facts.time_basis else None,
        pace_basis=facts.time_basis if fill.complete and facts.time_basis else None,
        log_match=match)


def _ratios(rep) -> dict[str, float]:
    """The solve's log-likelihood ratios for the player verdict, where the deduction
    ladder judges (9×9 Sudoku: the stall pace's rates are measured on Sudoku players
    only): the deduction's (hints) and the stall pace (``signals.stall_pace_llr``; a
    stall start the player's own marks proved is not weighed)."""
    found = rep.deduction
    if found is None:
        return {}
    out = found.llr()
    pace = stall_pace_llr(rep.times_ms, rep.options == 0, found.by_marks)
    if pace is not None:
        out["stall_pace"] = round(pace, 4)
    return out


def _timeline(rep, needed: dict, words) -> tuple[Placement, ...]:
    """Each placement with what proved it: the ladder's easiest rung or the player's
    notes where the ladder judges, else the replay's single (None: nothing did)."""
    found = rep.deduction
    techniques = [words.techniques[k] for k in rep.technique.tolist()]
    n = len(techniques)
    if found is not None:
        unproven = found.unproven.tolist()
        proofs = [found.proof_words(i) for i in range(n)]
        looks = [None] * n
        for i in np.flatnonzero(found.looks >= 0).tolist():
            looks[i] = found.look_words(i)
    else:
        unproven, looks = [False] * n, [None] * n
        proofs = [None if k == NOT_DEDUCIBLE else t
                  for k, t in zip(rep.technique.tolist(), techniques)]
    return tuple(
        Placement(t, c, technique, o, round(d, 3), needed[i][0] if i in needed else None,
                  u, proof, look)
        for i, (t, c, technique, o, d, u, proof, look) in enumerate(zip(
            rep.times_ms.tolist(), rep.cells.tolist(), techniques, rep.options.tolist(),
            np.asarray(rep.difficulty, dtype=float).tolist(), unproven, proofs, looks)))


def _hardest_needed(needed: dict, rep) -> HardestNeeded | None:
    """Of the placements made while a single was on offer elsewhere (the unforced ones),
    the one that needed the highest rung, with its delay."""
    unforced = [k for k in needed if rep.options[k] > 0]
    if not unforced:
        return None
    k = max(unforced, key=lambda i: (needed[i][1], -i))
    return HardestNeeded(k + 1, int(rep.cells[k]), needed[k][0],
                         float(rep.intervals_ms[k]) / 1000.0)


def signal_name(name: str, kind: str = DEFAULT_TYPE) -> str:
    """A signal's name in words, in the puzzle type's terms (a name this version does
    not know is shown as it is)."""
    return _name(name, kind) if name == "unforced" or name in NAMES else name
