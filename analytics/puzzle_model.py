"""What scoring knows about a puzzle, and how a rating run refines it.

:func:`build` runs once per puzzle when it is analysed (in a pool process): the
human-like model's metrics, the expected time and level from the shipped calibration, and
the honest null of every signal from simulated honest solves of that puzzle. The result,
a :class:`PuzzleModel`, is stored as JSON with the puzzle.

:func:`scoring_inputs` combines it with the rating run in force (the nightly job's fitted
difficulty, residual sd, consensus order and per-level nulls learnt from real solves) into
the :class:`ScoringInputs` each solve of that puzzle is scored against.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from fairgrid.solvers.puzzle_types import DEFAULT_TYPE, puzzle_type

from .signals import NOTES_SWITCH, ORDER_OFFSET, PuzzleFacts
from .types import type_model

_type = puzzle_type  # for methods whose argument is called puzzle_type

NULL_SOLVES = 120  # simulated honest solves behind a puzzle's nulls
# below this split-half agreement of the SA runs, the predicted fill order is mostly
# noise (every run finds its own order) and scoring leaves order_sa out for the puzzle
ORDER_RELIABILITY_FLOOR = 0.5
# the most an expected time's own sd (log) may be for a player's solves to be compared
# by their pace against it: Sudoku's calibration is 0.161, a portal's fit its residual; a
# Nurikabe prior (1.0, no human times) would make one puzzle's error a player's "quick day"
PACE_MAX_SD = 0.5
CALIBRATION, PORTAL_FIT = "calibration", "portal fit"


def cells_of(text: str) -> np.ndarray:
    """A one-line grid (digits and letters in base 36, '.' or '0' empty) as an int array."""
    return np.array([0 if ch in ".0" else int(ch, 36) for ch in text], dtype=np.int64)


def per_cell(values: list) -> np.ndarray:
    """A per-cell JSON list (null where a cell has no value) as floats, NaN for null."""
    return np.array([np.nan if v is None else float(v) for v in values])


@dataclass(frozen=True)
class PuzzleModel:
    """A puzzle's ratings and honest nulls, as stored (``to_json`` / ``from_json``)."""

    metrics: Mapping[str, float]
    expected_time_s: float
    expected_log_s: float
    sd_log: float
    level: int
    level_name: str
    null: Mapping[str, tuple[float, float]]
    null_solves: int = NULL_SOLVES
    order_reliability: float | None = None  # split-half ρ of the SA runs (None: unknown)
    # the rung of its hardest step on the technique ladder (None: not on the ladder, or
    # analysed before the ladder judged placements: worked out when scoring reads it)
    hardest_rung: int | None = None

    @property
    def order_usable(self) -> bool:
        """Whether the predicted fill order is reproducible enough to score against."""
        return _order_usable(self.order_reliability)

    def to_json(self) -> dict:
        return {"metrics": dict(self.metrics), "expected_time_s": self.expected_time_s,
                "expected_log_s": self.expected_log_s, "sd_log": self.sd_log,
                "level": self.level, "level_name": self.level_name,
                "null": {k: list(v) for k, v in self.null.items()},
                "null_solves": self.null_solves,
                "order_reliability": self.order_reliability,
                "hardest_rung": self.hardest_rung}

    @classmethod
    def from_json(cls, doc: Mapping) -> PuzzleModel:
        return cls(dict(doc["metrics"]), doc["expected_time_s"], doc["expected_log_s"],
                   doc["sd_log"], doc["level"], doc["level_name"],
                   {k: tuple(v) for k, v in doc["null"].items()},
                   doc.get("null_solves", NULL_SOLVES), doc.get("order_reliability"),
                   doc.get("hardest_rung"))


def _order_usable(reliability: float | None) -> bool:
    r = reliability
    return r is None or (r == r and r >= ORDER_RELIABILITY_FLOOR)


def order_centre_of(doc: Mapping) -> float | None:
    """The centre of a stored model's simulated ``order_sa`` null (None: it has none, or
    its order is one scoring leaves out): what a level's learnt order offset moves
    (``signals.ORDER_OFFSET``)."""
    null = (doc.get("null") or {}).get("order_sa")
    usable = _order_usable(doc.get("order_reliability"))
    return float(null[0]) if null is not None and usable else None


def build(givens: str, solution: str, fill_rank_median: list, seed: int) -> PuzzleModel:
    """The model of one puzzle: one-line givens and solution, the SA median fill rank per
    cell (None for givens), seeded. Its metrics are the human-like model's and whatever
    else the shipped calibration reads (the technique model's)."""
    from fairgrid.solvers import parse
    from fairgrid.solvers.rate import families_for, rate

    from .calibration import honest_null
    from .expected_time import load_default

    puzzle = parse(givens)
    cal = load_default()
    ratings = rate(puzzle, rng=seed,
                   only=tuple(sorted({"human", *families_for(cal.metrics_needed)})))
    described = cal.describe(ratings.metrics)
    expected_log_s = float(np.log(described["expected_time_s"]))
    rung = hardest_rung_for(puzzle.givens, cells_of(solution), puzzle.box_size, DEFAULT_TYPE)
    facts = PuzzleFacts(puzzle.givens, puzzle.box_size, cells_of(solution),
                        per_cell(fill_rank_median), expected_log_s, cal.residual_sd,
                        hardest_rung=rung)
    null = honest_null(facts, rng=seed, n=NULL_SOLVES)
    return PuzzleModel(ratings.metrics, described["expected_time_s"], expected_log_s,
                       cal.residual_sd, described["level"], described["level_name"],
                       {k: tuple(v) for k, v in null.items()}, NULL_SOLVES,
                       hardest_rung=rung)


def hardest_rung_for(givens, solution, box_size: int, type_name: str) -> int | None:
    """The rung of a puzzle's hardest step where the technique ladder judges it."""
    if box_size != 3 or not puzzle_type(type_name).technique_ladder:
        return None
    from .deduction import hardest_rung
    return hardest_rung(givens, solution)


def type_level(type_name: str, expected_s: float, mu: float = 0.0) -> int:
    """The level 1-5 of an expected time of a type with levels of its own
    (``TypeModel.level``), its cut points shifted by a portal's fitted offset ``mu``."""
    level = type_model(type_name).level
    if level is None:
        raise ValueError(f"puzzle type {type_name!r} is levelled by the calibration")
    return level(expected_s, mu)


def grid_facts(type_name: str, givens: str) -> tuple[np.ndarray, tuple[int, int]]:
    """A stored puzzle's givens as move values, and its grid shape (rows, cols)."""
    t = puzzle_type(type_name)
    puzzle = t.parse(givens)
    return t.givens(puzzle), t.shape(puzzle)


def build_typed(type_name: str, givens: str, solution: str, seed: int, *,
                tasks=None, batch: int | None = None, cancel=None) -> tuple[PuzzleModel, list]:
    """The model of a puzzle of a type other than Sudoku, and its predicted fill rank
    per cell (1-based, None for fixed cells): the type's quick rating, the expected
    time from its prior (wide: the nightly job learns it from the portal's players), the
    level on the type's own cut points, the order the type's human-like model decides
    the cells in, and the nulls from that type's simulated honest solves.

    With ``tasks`` (an executor) it runs there: in one task, or with ``batch``, the
    rating in one and the simulated solves ``batch`` to a task, so that no task holds a
    process for long (a simulated solve of a 20x20 Nurikabe takes seconds). Each
    simulated solve has a seed of its own (``calibration.null_seeds``): the model is the
    same however it is split. ``cancel`` (a ``threading.Event``) set, the tasks not yet
    run are dropped and ``PredictionCancelled`` raised within a quarter of a second."""
    if tasks is None:
        return _typed_model(type_name, givens, solution, seed, None)
    if batch is None:
        return tasks.submit(_typed_model, type_name, givens, solution, seed, None).result()
    from .calibration import merge_samples
    facts, metrics, median = _waited([tasks.submit(_typed_facts, type_name, givens,
                                                   solution, seed)], cancel)[0]
    seeds = _null_seeds(seed)
    pieces = [tasks.submit(_typed_samples, facts, seeds[i:i + batch])
              for i in range(0, len(seeds), batch)]
    samples = merge_samples(_waited(pieces, cancel))
    return _typed_model(type_name, givens, solution, seed, (facts, metrics, median, samples))


def _waited(futures: list, cancel) -> list:
    """The futures' results in order; on a failure, or ``cancel`` set (then
    ``PredictionCancelled``), the rest are cancelled."""
    from fairgrid.solvers.fill_order import completed

    try:
        for f in completed(futures, cancel):
            f.result()          # a failure ends the wait at once
        return [f.result() for f in futures]
    finally:
        for f in futures:       # what is left is not wanted
            f.cancel()


def _null_seeds(seed: int) -> list:
    from .calibration import null_seeds
    return null_seeds(seed, NULL_SOLVES)


def _typed_facts(type_name: str, givens: str, solution: str, seed: int):
    """A typed puzzle's facts for its simulated solves, its metrics and fill rank."""
    t, analytics = puzzle_type(type_name), type_model(type_name)
    puzzle = t.parse(givens)
    sol = cells_of(solution)
    metrics = t.rate(puzzle, seed, solution=sol)
    expected_log_s, sd_log = analytics.prior(metrics)
    rank = t.model_ranks(puzzle, sol)
    median = [None if r < 0 else float(r) + 1 for r in rank.tolist()]
    facts = PuzzleFacts(t.givens(puzzle), 0, sol, per_cell(median), expected_log_s,
                        sd_log, None, type_name, t.shape(puzzle))
    return facts, metrics, median


def _typed_samples(facts, seeds) -> dict:
    from .calibration import honest_samples
    return honest_samples(facts, seeds)


def _typed_model(type_name: str, givens: str, solution: str, seed: int, parts):
    from .calibration import fit_null
    from .expected_time import LEVEL_NAMES

    if parts is None:
        facts, metrics, median = _typed_facts(type_name, givens, solution, seed)
        samples = _typed_samples(facts, _null_seeds(seed))
    else:
        facts, metrics, median, samples = parts
    null = fit_null(samples)
    cold_scale = type_model(type_name).cold_order_scale
    if cold_scale is not None:  # no human orders of the type are known
        centre, scale = null["order_sa"]
        null["order_sa"] = (centre, max(scale, cold_scale))
    expected_s = float(np.exp(facts.expected_log_s))
    level = type_level(type_name, expected_s)
    return PuzzleModel(metrics, expected_s, facts.expected_log_s, facts.sd_log, level,
                       LEVEL_NAMES[level - 1], {k: tuple(v) for k, v in null.items()},
                       NULL_SOLVES), median


def complete_metrics(givens: str, metrics: Mapping[str, float], needed) -> dict:
    """``metrics`` with every metric of ``needed`` present: a puzzle analysed before a
    calibration read a new metric family gets that family rated now (the technique
    model is deterministic and takes milliseconds; seeded families use seed 0)."""
    missing = [m for m in needed if m not in metrics]
    if not missing:
        return dict(metrics)
    from fairgrid.solvers import parse
    from fairgrid.solvers.rate import families_for, rate
    extra = rate(parse(givens), rng=0, only=families_for(missing)).metrics
    return {**extra, **metrics}


def level_key(puzzle_type: str, level) -> str:
    """The key of a level's nulls in a rating run: the level for Sudoku, ``type:level``
    for other types (their solves make nulls of their own)."""
    return str(level) if _type(puzzle_type).is_default else f"{puzzle_type}:{level}"


@dataclass(frozen=True)
class RatingRun:
    """What scoring reads of a nightly rating run. ``mu``, ``residual_sd`` and
    ``skill_sd`` are of its Sudoku fit; ``by_type`` holds each type's own fit
    (``{"mu", "residual_sd", "skill_sd", "solves"}``) of the types it had solves of, None
    for a run from before types (all Sudoku)."""

    # the players' offset from the calibration; the fit is of every portal's solves
    mu: float
    residual_sd: float        # of the fit, in log-seconds
    skill_sd: float           # spread of the players' fitted skills
    # level -> null key (a signal, signals.ORDER_OFFSET, signals.NOTES_SWITCH) -> null
    level_nulls: Mapping[str, Mapping[str, tuple[float, float]]]
    by_type: Mapping[str, Mapping[str, float]] | None = None
    # what a puzzle the run did not fit adds to its analysis's expected log-time (None:
    # ``mu``, as a run from before it was kept says)
    offset: float | None = None
    # what the solve's portal's players' common pace adds to every price (the fit's
    # g_q, ``analytics.ratings``; 0 with one portal; a portal the fit did not see: the
    # median portal's)
    shift: float = 0.0
    # portal -> level -> null key -> null: each portal's own level nulls, learnt from its
    # solves alone where the run saw several portals
    portal_level_nulls: Mapping[str, Mapping[str, Mapping[str, tuple[float, float]]]] = \
        dataclasses.field(default_factory=dict)
    portal: str | None = None   # the solve's portal, once :meth:`for_type` is told it

    def nulls_of(self, key: str) -> dict[str, tuple[tuple[float, float], bool]]:
        """The learnt nulls of level ``key`` for this run's portal: null key -> (null,
        whether it is the portal's own), the portal's own where it has one of that
        signal, else every portal's."""
        ours = self.portal_level_nulls.get(self.portal) if self.portal is not None else None
        mine = (ours or {}).get(key) or {}
        out = {name: (tuple(v), False) for name, v in (self.level_nulls.get(key) or {}).items()}
        out.update({name: (tuple(v), True) for name, v in mine.items()})
        return out

    def for_type(self, puzzle_type: str, portal: str | None = None) -> RatingRun | None:
        """This run as a ``puzzle_type`` solve of ``portal`` reads it; None when it
        fitted no solve of that type (a run from before types is all Sudoku's)."""
        if self.by_type is None:
            return (dataclasses.replace(self, portal=portal)
                    if _type(puzzle_type).is_default else None)
        fit = self.by_type.get(puzzle_type)
        if fit is None:
            return None
        shift = float((fit.get("portals") or {}).get(portal, fit.get("unseen", 0.0)))
        if _type(puzzle_type).is_default:  # the run's own figures are Sudoku's
            return dataclasses.replace(self, offset=fit.get("offset"), shift=shift,
                                       portal=portal)
        return dataclasses.replace(self, mu=fit["mu"], residual_sd=fit["residual_sd"],
                                   skill_sd=fit["skill_sd"], offset=fit.get("offset"),
                                   shift=shift, portal=portal)

    @property
    def new_offset(self) -> float:
        """What a puzzle this run did not fit adds to its analysis's expected log-time."""
        return self.mu if self.offset is None else self.offset


@dataclass(frozen=True)
class PuzzleRating:
    """One puzzle's row of a rating run."""

    difficulty: float | None
    level: int | None
    consensus_fill_rank: list | None  # per cell, None for givens
    consensus_null: tuple[float, float] | None


@dataclass(frozen=True, eq=False)
class ScoringInputs:
    """A ready puzzle's scoring inputs: its facts (for players with a fitted skill and for
    those without) and the null of every signal."""

    facts: PuzzleFacts
    facts_without_skill: PuzzleFacts
    null: Mapping[str, tuple[float, float]]
    sources: Mapping[str, str] = dataclasses.field(default_factory=dict)  # whom each null is of


SIMULATED = "simulated honest players"


@dataclass(frozen=True)
class ExpectedTime:
    """A puzzle's expected log-time for an average player, the sd of a solve's log-time
    around it, and what it rests on (``PuzzleFacts.time_basis``: None where the sd is
    above :data:`PACE_MAX_SD`, too unsure for a player's solves to be compared by it)."""

    log_s: float
    sd: float
    basis: str | None


def time_in_force(model_log_s: float, model_sd: float, run: RatingRun | None,
                  difficulty: float | None = None) -> ExpectedTime:
    """The expected time in force: the analysis's calibrated one before any rating run of
    the puzzle's type (``run`` already :meth:`RatingRun.for_type`, of the solve's
    portal); with one, the puzzle's fitted ``difficulty``, or the calibrated time
    shifted by the run's offset where the run did not fit the puzzle, plus the portal's
    offset, with the fit's residual sd. Scoring and the
    player verdict's pace (which re-prices every solve of a season against the run in
    force, so that solves scored under different runs compare) both read it here."""
    if run is None:
        log_s, sd = float(model_log_s), float(model_sd)
    else:
        log_s = (float(difficulty) if difficulty is not None
                 else model_log_s + run.new_offset) + run.shift
        sd = float(run.residual_sd)
    basis = None if not sd <= PACE_MAX_SD else PORTAL_FIT if run is not None else CALIBRATION
    return ExpectedTime(log_s, sd, basis)


def scoring_inputs(givens: str, box_size: int, solution: str, fill_rank_median: list,
                   model: PuzzleModel, run: RatingRun | None = None,
                   rating: PuzzleRating | None = None,
                   puzzle_type: str = DEFAULT_TYPE, portal: str | None = None
                   ) -> ScoringInputs:
    """Before any rating run: the calibrated expected time and the simulated nulls. With
    one: the fitted difficulty (or the prior shifted by the run's offset) on
    ``portal``, the fit's
    residual sd, the consensus order with its null when the puzzle has one, and the
    nulls learnt from real solves of puzzles of its level (the order's as an offset
    that moves this puzzle's simulated centre). Every null is guarded
    (:func:`.calibration.complete`); speed is N(0, 1) of a value standardised by the
    residual sd and, for a player without a fitted skill, the skill prior's spread."""
    from .calibration import SKILL_PRIOR_SD, complete

    if run is not None:  # the run's fit of this type (None: no solves of it were fitted)
        run = run.for_type(puzzle_type, portal)
    null = dict(model.null)
    sources = {name: SIMULATED for name in null}
    consensus = None
    rating = rating or PuzzleRating(None, None, None, None)
    expected = time_in_force(model.expected_log_s, model.sd_log, run, rating.difficulty)
    # without history, a player's skill is integrated over a prior as wide as people
    unrated_sd = float(np.hypot(model.sd_log, SKILL_PRIOR_SD))
    if run is not None:
        # a rated player's skill adds its own uncertainty
        unrated_sd = float(np.hypot(run.residual_sd, max(run.skill_sd, SKILL_PRIOR_SD)))
        key = level_key(puzzle_type, rating.level)
        for name, (value, own) in run.nulls_of(key).items():
            whose = "this portal's" if own else "every portal's"
            if name == "order_sa":
                continue  # a run's one centre for a whole level (signals.ORDER_OFFSET)
            if name == ORDER_OFFSET:
                if "order_sa" not in null:
                    continue
                name, value = "order_sa", (null["order_sa"][0] + value[0], value[1])
                sources[name] = (f"this puzzle's simulated solves, shifted by how far "
                                 f"{whose} level-{rating.level} solves differ from "
                                 f"their puzzles' simulations")
            else:
                sources[name] = (f"{whose} solves of level-{rating.level} puzzles"
                                 + (" whose notes carried the thinking"
                                    if name == NOTES_SWITCH else ""))
            null[name] = tuple(value)
        if rating.consensus_fill_rank is not None and rating.consensus_null:
            consensus = per_cell(rating.consensus_fill_rank)
            null["order_consensus"] = tuple(rating.consensus_null)
            sources["order_consensus"] = "every portal's solves of this puzzle"
    null = complete(null)
    for name in null:  # the guard's own bounds where no honest solve showed the signal
        sources.setdefault(name, "the fixed minimum spread between people (no data yet)")
    predicted = per_cell(fill_rank_median)
    if not model.order_usable:  # an order every SA run disagrees on says nothing
        predicted = np.full(predicted.size, np.nan)
        null.pop("order_sa", None)
        sources.pop("order_sa", None)
    cells, shape = grid_facts(puzzle_type, givens)
    rung = model.hardest_rung
    if rung is None:  # analysed before the ladder judged placements
        rung = hardest_rung_for(cells, cells_of(solution), box_size, puzzle_type)
    facts = PuzzleFacts(cells, box_size, cells_of(solution), predicted, expected.log_s,
                        expected.sd, consensus, puzzle_type, shape, rung, expected.basis)
    # for players the rating run has no skill for: the speed signal allows for the
    # spread of skills (one object per puzzle, so a batch pickles it once)
    without = dataclasses.replace(facts, sd_log=unrated_sd)
    sources["speed"] = ("the puzzle difficulty fitted on every portal's solves"
                        if run is not None
                        else "the calibrated expected time of an average player")
    return ScoringInputs(facts, without, null, sources)


@dataclass(frozen=True, eq=False)
class ScoreTask:
    """One submission to score: its puzzle's facts and nulls, its key among the batch's
    moves, its webhook body (the portal's optional ``client`` signals are read from it
    where the scoring runs, off the event loop), the player's skill, the target
    false-positive rate."""

    facts: PuzzleFacts
    null: Mapping[str, tuple[float, float]]
    sub_key: int
    raw: str
    skill: float
    fpr: float
    sources: Mapping[str, str] = dataclasses.field(default_factory=dict)
    history: bool = False     # the player has a fitted skill
    skill_sd: float = 0.0     # how uncertain that skill is (see calibration.skill_uncertainty)
    # whose solve of which puzzle (its type and givens: one puzzle whatever each portal
    # calls it): its log is compared with other players' solves of it (analytics.log_match)
    portal: str = ""
    submission_id: str = ""
    player_id: str = ""
    puzzle_key: str = ""
