"""The player verdict (analytics.player_verdict): a season adds up each kind of evidence
on its own; weak but consistent evidence flags, one odd solve does not, and many
ordinary solves do not hide a run of odd ones."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace

import numpy as np
import pytest

from fairgrid.analytics.player_verdict import (ALPHA, RATIO_SHARE, STALL_PACE_SHARE,
                                               TEMPO_SHARE, KindNull, PlayerNull,
                                               PlayerVerdict, SolveFacts, _shares, _tempo,
                                               bb_tail, guard, judge, learn_null,
                                               lenient, pooled_slope, season_levels, shipped_null,
                                               solve_facts, solved_again, tempo_fit,
                                               time_spent)
from fairgrid.analytics.signals import (QUICK_HONEST, STALL_BANDS, STALL_START_LR,
                                        stall_pace_llr, stall_starts)

FAMILIES = ("order", "deduction", "speed", "pacing", "switch")


def _null() -> PlayerNull:
    """Honest solves weakly odd by any family 15 % of the time, odd 1 %; one in twenty
    has a cell no technique proved."""
    return guard(PlayerNull({**{f: KindNull(0.15, 0.01, 1.0) for f in FAMILIES},
                             "unproven": KindNull(0.05, 0.004, 1.0),
                             "unforced": KindNull(0.15, 0.01, 1.0)},
                            ((0.3, 0.3),), "a test population"))


def _solve(i: int, rng, **odd) -> SolveFacts:
    """An honest solve (every family p uniform), with the families in ``odd`` set."""
    fam = {f: float(rng.uniform(0, 1)) for f in FAMILIES}
    fam.update(odd)
    return SolveFacts(f"s{i:03d}", fam, False)


def test_beta_binomial_tail_by_hand():
    # rho -> 0 is the binomial: P(X >= 2 | 3, 0.5) = 4/8
    assert bb_tail(2, 3, 0.5, 1e-9) == pytest.approx(0.5, rel=1e-5)
    assert bb_tail(0, 5, 0.1, 0.2) == 1.0 and bb_tail(6, 5, 0.1, 0.2) == 0.0
    # correlation between one person's solves makes a run more likely
    assert bb_tail(8, 20, 0.15, 0.2) > bb_tail(8, 20, 0.15, 0.01)


def test_a_season_of_weak_but_consistent_solves_flags():
    rng = np.random.default_rng(1)
    # each solve alone is ordinary enough (p = 0.1 is 1 honest solve in 10)...
    season = [_solve(i, rng, deduction=0.1) for i in range(20)]
    assert not any(s.family_p["deduction"] < 0.01 for s in season)
    verdict = judge(season, _null())
    # ...but twenty of them in a row are not
    assert verdict.flagged and verdict.p_value < ALPHA
    top = verdict.findings[0]
    assert top.kind == "deduction" and top.odd == 20 and len(top.solves) == 20
    assert "Over 20 solves, 20 placed digits the board did not give" in top.sentence
    assert verdict.summary.startswith("Flagged for review.")
    # and it grows with the season: five such solves are not yet a case
    assert not judge(season[:5], _null()).flagged


def test_a_season_of_one_persons_style_is_not_a_case():
    """A person can solve fast, in an order of their own, at an even pace in every solve:
    a season of that is who they are, not evidence (each solve's own verdict still
    weighs it), while the same season of cells the board did not give is a case."""
    rng = np.random.default_rng(6)
    style = [_solve(i, rng, speed=0.001, order=0.005, pacing=0.008, switch=0.005)
             for i in range(20)]
    verdict = judge(style, _null())
    assert not verdict.flagged and verdict.p_value == 1.0
    assert not {f.kind for f in verdict.findings} & {"speed", "order", "pacing", "switch"}
    assert judge([_solve(i, rng, speed=0.001, deduction=0.005) for i in range(20)],
                 _null()).findings[0].kind == "deduction"


def test_an_honest_season_with_one_odd_solve_is_not_flagged():
    rng = np.random.default_rng(2)
    season = [_solve(i, rng) for i in range(20)]
    season[7] = SolveFacts("s007", {**season[7].family_p, "deduction": 1e-12}, True)
    verdict = judge(season, _null())
    assert not verdict.flagged
    assert verdict.summary.startswith("Not flagged")


def test_honest_seasons_are_flagged_at_most_at_the_target():
    rng = np.random.default_rng(3)
    flagged = sum(judge([_solve(i, rng) for i in range(20)], _null()).flagged
                  for _ in range(400))
    assert flagged <= 2   # alpha = 1e-3: 0.4 expected at most


def test_many_ordinary_solves_do_not_hide_a_run_of_odd_ones():
    rng = np.random.default_rng(4)
    season = [_solve(i, rng, deduction=float(rng.uniform(0.2, 1))) for i in range(100)]
    run = list(range(60, 80, 5)) + list(range(62, 80, 5))  # eight of twenty in a row
    for i in run:
        season[i] = _solve(i, rng, deduction=0.005)
    verdict = judge(season, _null())
    top = verdict.findings[0]
    assert verdict.flagged and top.kind == "deduction" and top.of == 20
    assert top.sentence.startswith("In 20 consecutive solves (from s060 to s079), 8 "
                                   "strongly placed digits")
    assert set(top.solves) == {f"s{i:03d}" for i in run}
    # as many such solves spread over the hundred are an honest player's bad days
    spread = [_solve(i, rng, deduction=float(rng.uniform(0.2, 1))) for i in range(100)]
    for i in range(0, 100, 13):
        spread[i] = _solve(i, rng, deduction=0.005)
    assert not judge(spread, _null()).flagged


def test_a_copiers_tempo_follows_nothing():
    rng = np.random.default_rng(5)

    def season(slope):
        out = []
        for i in range(20):
            x = rng.uniform(0.1, 2.0, 40)
            y = slope * x + rng.normal(0, 0.6, 40)
            x, y = x - x.mean(), y - y.mean()
            out.append(SolveFacts(f"s{i}", {}, False, {}, (float(x @ y), float(x @ x))))
        return out

    null = guard(PlayerNull({}, ((1.2, 0.3),), "a test population"))
    copier, person = judge(season(0.0), null), judge(season(1.2), null)
    assert copier.flagged and copier.findings[0].kind == "tempo"
    assert copier.findings[0].sentence.startswith(
        "Over 20 solves with a stall, a placement made at a stall (nothing simple on offer: "
        "a harder step had to be found) typically took 1.0x as long as the rest; the null "
        "for honest players has 9 in 10 take 2.3x as long or more; by chance: about 1 in")
    assert not person.flagged


def test_one_solve_makes_no_tempo_case():
    """One solve's slope is heavy-tailed (a break at an easy step), and a spread from a
    few solves is unsure: tempo needs eight solves with a stall."""
    rng = np.random.default_rng(15)
    x = rng.uniform(0.1, 2.0, 40)
    y = -2.0 * x + rng.normal(0, 0.6, 40)   # slower at the easy steps: a long break
    x, y = x - x.mean(), y - y.mean()
    one = SolveFacts("s0", {}, False, {}, (float(x @ y), float(x @ x)))
    null = guard(PlayerNull({}, ((1.2, 0.3),), "a test population"))
    assert all(f.kind != "tempo" for f in judge([one] * 7, null).findings)
    assert judge([one] * 8, null).findings[0].kind == "tempo"


def _timeline(rng, stall_s: float, other_s: float = 4.0, n: int = 40) -> list[dict]:
    """A stored timeline whose placements 10 and 25 were made at a stall (no single on
    offer), each taking ``stall_s`` on average, the rest ``other_s``."""
    t, out = 0.0, []
    for k in range(n):
        stall = k in (10, 25)
        t += float(rng.lognormal(math.log(stall_s if stall else other_s), 0.4))
        out.append({"t_ms": int(t * 1000), "singles_on_offer": 0 if stall else 3,
                    "difficulty": 2.0 if stall else 0.3})
    return out


def test_tempo_reads_how_much_longer_a_stall_took():
    """The tempo is log delay on "made at a stall" (no single on offer), from any
    stored timeline; a solve without a stall says nothing of it."""
    rng = np.random.default_rng(21)
    person = [solve_facts(f"p{i}", {"timeline": _timeline(rng, 60.0)}) for i in range(8)]
    copier = [solve_facts(f"c{i}", {"timeline": _timeline(rng, 4.0)}) for i in range(8)]
    assert math.exp(pooled_slope(person)[0]) == pytest.approx(15.0, rel=0.4)
    assert abs(pooled_slope(copier)[0]) < 0.5
    flat = [{"t_ms": 1000 * k, "singles_on_offer": 2} for k in range(1, 30)]
    assert solve_facts("g", {"timeline": flat}).slope is None
    null = guard(PlayerNull({}, ((2.0, 0.3),), "a test population"))
    assert judge(copier, null).flagged and not judge(person, null).flagged
    assert "typically took 1.0x as long as the rest" in judge(copier, null).findings[0].sentence
    took = f"typically took {math.exp(pooled_slope(person)[0]):.1f}x as long as the rest"
    tempo = next(f for f in judge(person, null).findings if f.kind == "tempo")
    assert took in tempo.sentence


def _paced_facts(name: str, timeline: list[dict]) -> SolveFacts:
    """A solve's facts with the stall pace scoring reads from its timeline."""
    t = [p["t_ms"] for p in timeline]
    llr = stall_pace_llr(t, [p["singles_on_offer"] == 0 for p in timeline])
    return SolveFacts(name, {}, False, {} if llr is None else {"stall_pace": llr})


def test_a_stall_start_weighs_by_how_soon_it_came_and_a_person_keeps_the_bound():
    """A stall's first cell at the solve's usual pace weighs more for a copy than one at
    twice it, and a long think weighs more against one than a start just past twice
    it; whoever's starts come within each band's end no more often than
    :data:`QUICK_HONEST` says has a mean ratio of at most one (the season's sum test
    needs it), and exactly one at those shares."""
    stalls = [k == 14 for k in range(29)]

    def weight(times_median: float) -> float:
        t = np.cumsum([1000.0] * 29)
        t[14:] += 1000.0 * (times_median - 1.0)
        return stall_pace_llr(t, stalls)

    w = [weight(x) for x in (0.9, 1.8, 3.0, 10.0)]
    assert w == pytest.approx(list(STALL_START_LR))
    assert w[0] > w[1] > 0 > w[2] > w[3]
    share = np.diff([0.0, *QUICK_HONEST, 1.0])
    assert float(share @ np.exp(STALL_START_LR)) == pytest.approx(1.0)
    rng = np.random.default_rng(5)
    for _ in range(500):
        # a person no quicker than the bands allow: each band's cumulative share at most
        # QUICK_HONEST's (drawn under it), the rest of the starts slower
        cum = np.maximum.accumulate(rng.uniform(0, 1, len(QUICK_HONEST)) * QUICK_HONEST)
        person = np.diff([0.0, *cum, 1.0])
        assert float(person @ np.exp(STALL_START_LR)) <= 1.0 + 1e-12
    assert len(STALL_START_LR) == len(STALL_BANDS) + 1


def test_a_stall_whose_first_cell_comes_like_a_single_weighs_for_a_copy():
    """Each stall's first cell is weighed by how soon it came (within 1x, 2x, 4x the
    solve's median interval, or later); a copier's quick stalls add up over a season to
    a flag of their own, and a person who slows down at them weighs for honest play."""
    rng = np.random.default_rng(23)
    person = [_paced_facts(f"p{i}", _timeline(rng, 60.0)) for i in range(10)]
    copier = [_paced_facts(f"c{i}", _timeline(rng, 4.0)) for i in range(10)]
    quickest, slowest = STALL_START_LR[0], STALL_START_LR[-1]
    assert quickest > 0 > slowest
    assert all(s.llr == {"stall_pace": pytest.approx(2 * slowest)} for s in person)
    assert sum(s.llr["stall_pace"] for s in copier) > 8 * quickest
    # no tempo in the null: the stall pace alone flags the copier, at its share of alpha
    null = guard(PlayerNull({}, None, "a test population"))
    found = judge(copier, null)
    top = found.findings[0]
    assert found.flagged and top.kind == "stall_pace"
    assert found.p_value == pytest.approx(top.p / STALL_PACE_SHARE)
    assert "first cell came as soon as an ordinary step" in top.sentence
    assert "for a copy over honest play" in top.sentence
    assert not judge(person, null).flagged
    # the hints' kind does not read the stall pace
    assert all(f.kind != "hints" for f in found.findings)
    # a stall start needs a stall after a single: a solve that starts stuck and stays
    # so has none, and one too short to place a median has none either
    t = [1000 * k for k in range(1, 30)]
    stalls = [k % 7 == 3 for k in range(29)]
    assert stall_starts(t, [True] * 29) is None
    assert stall_starts(t[:5], [False, True] * 2 + [False]) is None
    assert stall_starts(t, stalls) == (4, 0, 0, 0)
    t[10] += 1500       # the stall start at 10 takes 2.5x the median interval
    assert stall_starts(t, stalls) == (3, 0, 1, 0)
    # times that do not tell one placement from the next say nothing (a portal that
    # stamps moves in batches), nor times that are not numbers
    assert stall_starts([1000] * 29, stalls) is None
    assert stall_starts([1000 * (k // 3) for k in range(29)], stalls) is None
    assert stall_starts(t[:20] + [math.nan] + t[21:], stalls) is None
    # a start the player's own marks proved then is not weighed: found in the notes
    assert stall_starts(t, stalls, [k == 3 for k in range(29)]) == (2, 0, 1, 0)
    assert stall_starts(t, stalls, stalls) is None
    # the null learns the ratio's offset where an honest model's mean is above one
    learnt = learn_null([copier], "copiers")
    assert learnt.llr_offset["stall_pace"] > 0 and "hints" not in learnt.llr_offset


def test_the_tempo_null_is_fitted_on_the_lower_tail_and_kept_per_model():
    """A population's tempo is the normal through its 10th and 25th percentile; at cold
    start each honest model's is kept, and a season is judged by the one it is least odd
    in: a player who slows down like the model that slows down least is safe."""
    rng = np.random.default_rng(22)
    little = rng.normal(1.5, 0.2, 40)        # slow down about 4.5x at a stall
    much = rng.normal(3.0, 0.2, 40)          # about 20x
    fit = tempo_fit(little)
    q10, q25 = np.quantile(little, [0.1, 0.25])
    assert fit[0] - 0.6745 * fit[1] == pytest.approx(q25, abs=1e-3)
    assert fit[0] - 1.2816 * fit[1] == pytest.approx(q10, abs=1e-3)
    assert tempo_fit(little[:29]) is None   # too few to place a tail
    # the spread is at least what the pooled slopes' own noise makes of alike people
    assert tempo_fit(little, [0.9] * 40)[1] == pytest.approx(0.9)
    # the guard: a null never claims that fewer than 1 in 10 slow down less than 5x
    wide, narrow = guard(PlayerNull({}, ((4.0, 0.5), (3.0, 0.1)), "")).tempo
    assert math.exp(wide[0] - 1.2816 * wide[1]) == pytest.approx(5.0, rel=1e-3)
    assert narrow[1] == 0.3
    assert math.exp(narrow[0] - 1.2816 * 0.3) == pytest.approx(5.0, rel=1e-3)
    assert guard(PlayerNull({}, ((1.0, 0.4),), "")).tempo == ((1.0, 0.4),)
    nulls = [guard(PlayerNull({}, (tempo_fit(x),), m)) for x, m in
             ((little, "little"), (much, "much"))]
    assert nulls[0].tempo[0][0] == pytest.approx(1.5, abs=0.15)      # as fitted
    assert nulls[1].tempo[0][0] < 2.0                                # capped
    both = lenient(nulls, "both")
    assert both.tempo == nulls[0].tempo + nulls[1].tempo
    assert lenient([nulls[0], PlayerNull({}, None, "none")], "x").tempo is None

    def season(slow):   # 20 solves whose pooled slow-down is ``slow`` (log)
        return [SolveFacts(f"s{i}", {}, False, {}, (slow * 4.0, 4.0)) for i in range(20)]

    assert judge(season(0.6), nulls[1]).flagged           # odd among the "much" alone
    assert not judge(season(0.6), both).flagged           # not among the "little"
    assert judge(season(0.0), both).flagged               # no slow-down at all
    # the season measures the player's own slow-down only as well as their solves agree
    wild = [SolveFacts(f"s{i}", {}, False, {}, ((4.0 if i % 2 else -4.0) * 4.0, 4.0))
            for i in range(20)]
    assert pooled_slope(wild)[0] == pytest.approx(0.0) and not judge(wild, both).flagged


def test_a_portal_learns_one_tempo_from_players_with_stalls():
    """The nightly job's null holds one normal, from the players with five or more
    solves with a stall; with fewer than 30 such players it holds none."""
    rng = np.random.default_rng(23)

    def season(j, with_stall):
        slow = rng.normal(2.5, 0.4)
        return [SolveFacts(f"p{j}s{i}", {}, False, {},
                           (float(rng.normal(slow, 0.8)) * 2.0, 2.0) if with_stall(i)
                           else None) for i in range(10)]

    seasons = [season(j, lambda i: i < 6) for j in range(30)]
    null = learn_null(seasons, "a portal")
    assert len(null.tempo) == 1 and 1.5 < null.tempo[0][0] <= 2.5
    assert learn_null(seasons[:29], "a portal").tempo is None
    few = [season(j, lambda i: i < 4) for j in range(40)]   # four solves with a stall
    assert learn_null(few, "a portal").tempo is None


def test_a_null_holding_a_slope_on_another_measure_reads_no_tempo():
    """A null stored with a slope on another measure of difficulty is not read as a
    slow-down at a stall (the daemon judges such a portal on the shipped tempo until the
    next nightly run learns its own)."""
    doc = shipped_null().to_json()
    assert doc["stall_tempo"]
    old = {**{k: v for k, v in doc.items() if k != "stall_tempo"}, "slope": [0.5, 0.25, 1.0]}
    assert PlayerNull.from_json(old).tempo is None
    assert PlayerNull.from_json(doc).tempo == shipped_null().tempo


def test_a_style_odd_far_more_often_is_dispersed_at_the_odd_level():
    """A fifth of the portal are a style odd far more often than the rest (at the odd
    level of ``deduction`` here; any counted kind learns the same way): the odd level's
    dispersion is learnt apart, and such a person's season is not a tail."""
    rng = np.random.default_rng(16)

    def season(j, strong_rate):
        return [SolveFacts(f"p{j}-{i}", {"deduction": float(
            rng.uniform(0, 0.01) if rng.random() < strong_rate else rng.uniform(0.01, 1))},
            False) for i in range(20)]

    seasons = [season(j, 0.08 if j % 5 == 0 else 0.002) for j in range(400)]
    null = learn_null(seasons, "a mixed portal")
    kind = null.kind("deduction")
    assert kind.dispersion(2) > 2 * kind.dispersion(1)
    assert PlayerNull.from_json(null.to_json()) == null
    marker = [SolveFacts(f"m{i}", {"deduction": 0.005 if i % 3 == 0 else 0.5}, False)
              for i in range(20)]   # 7 of 20 strongly odd
    assert not judge(marker, null).flagged
    one = PlayerNull({"deduction": KindNull(kind.weak, kind.strong, kind.cv2)}, None, "")
    assert judge(marker, one).flagged   # what a single dispersion would have said


def test_the_kinds_that_add_up_weak_evidence_have_fixed_shares_of_alpha():
    """A weighted Bonferroni: the ratio kind and the tempo (each solve weak evidence)
    have fixed shares of alpha, the count kinds share the rest; a sort the season does
    not hold gives its share to the others."""
    season = _llr_season([0.4] * 20)          # 8 nats for hints over honest play
    verdict = judge(season, _null())
    top = verdict.findings[0]
    assert top.kind == "hints" and top.p == pytest.approx(math.exp(-8.0))
    # the ratio kind's share, not an equal one: an equal share would not flag
    assert verdict.p_value == pytest.approx(math.exp(-8.0) / RATIO_SHARE)
    assert verdict.flagged and math.exp(-8.0) * verdict.kinds > ALPHA
    # no ratio kind and no tempo: the count kinds share all of alpha
    plain = judge([_solve(i, np.random.default_rng(17), deduction=0.1) for i in range(20)],
                  _null())
    assert plain.p_value == pytest.approx(plain.findings[0].p * plain.kinds)
    # a copier's tempo (nothing slower at a stall) has its own share, whatever the
    # number of count kinds beside it
    rng = np.random.default_rng(19)
    copier = [replace(s, slope=solve_facts("t", {"timeline": _timeline(rng, 4.0)}).slope)
              for s in season]
    both = judge(copier, guard(PlayerNull(_null().kinds, ((1.5, 0.3),), "a test")))
    tempo = next(f for f in both.findings if f.kind == "tempo")
    count = [f for f in both.findings if f.kind not in ("tempo", "hints")]
    assert tempo.p < math.exp(-8.0) and len(count) >= 2
    assert both.p_value == pytest.approx(min(math.exp(-8.0) / RATIO_SHARE,
                                             tempo.p / TEMPO_SHARE))
    # the count kinds share what the two leave; the shares sum to one
    shares = _shares(both.findings)
    assert shares["hints"] == RATIO_SHARE and shares["tempo"] == TEMPO_SHARE
    left = (1 - RATIO_SHARE - TEMPO_SHARE) / len(count)
    assert all(shares[f.kind] == pytest.approx(left) for f in count)
    assert sum(shares.values()) == pytest.approx(1.0)


def test_an_honest_ratio_mean_above_one_is_taken_off_each_solve():
    """A model the ratio's construction fell short for (its honest mean 1.05): the null
    learns an upper bound of it, every solve's log-ratio loses its log, and a portal
    keeps the shipped offset rather than learn it from players who may take hints."""
    rng = np.random.default_rng(18)

    def season(j):
        return [SolveFacts(f"p{j}-{i}", {"order": 0.5}, False,
                           {"stall_look": math.log(1.5) if rng.random() < 0.1 else 0.0})
                for i in range(20)]

    null = learn_null([season(j) for j in range(300)], "a model")
    offset = null.llr_offset["hints"]
    assert math.log(1.05) - 0.01 < offset < math.log(1.05) + 0.02
    assert PlayerNull.from_json(null.to_json()) == null
    # a lucky honest season: nine of twenty at 1.5 to 1 sums 3.6 nats, less the offset
    lucky = _llr_season([math.log(1.5)] * 9 + [0.0] * 11)
    top = next(f for f in judge(lucky, null).findings if f.kind == "hints")
    assert top.p == pytest.approx(math.exp(-(9 * math.log(1.5) - 20 * offset)))
    # a null that measured ratios below one on average never adds to a player's sum
    calm = learn_null([_llr_season([-0.5] * 20)], "calm")
    assert calm.llr_offset["hints"] == 0.0
    portal = learn_null([season(j) for j in range(40)], "a portal", {"hints": 0.02})
    assert portal.llr_offset == {"hints": 0.02}
    # a stored offset cannot switch the ratio kind off
    doc = {**null.to_json(), "llr_offset": {"hints": 1e9, "stall_look": float("nan")}}
    assert set(PlayerNull.from_json(doc).llr_offset.values()) == {math.log(1.1)}


def test_a_ratio_kind_can_flag_in_three_solves():
    """Three solves each at the cap (30 to 1) reach alpha with half of it for the
    ratios; the verdict of two says it rests on too few."""
    two = judge(_llr_season([10.0] * 2), _null())
    assert not two.flagged and "it would take 3 solves" in two.rests_on
    assert judge(_llr_season([10.0] * 3), _null()).flagged


def test_few_solves_say_how_little_they_rest_on():
    rng = np.random.default_rng(6)
    verdict = judge([_solve(0, rng, deduction=1e-3)], _null())
    assert not verdict.flagged and "too few" in verdict.rests_on
    assert "Rests on 1 scored solve" in verdict.rests_on
    assert "too few" not in judge([_solve(i, rng) for i in range(30)], _null()).rests_on


def test_how_much_a_season_rests_on_counts_only_the_kinds_it_adds_up():
    """A family a season does not add up (a style) cannot shorten what it would take:
    odd orders in every solve flag no one, however rare they are among honest solves."""
    rng = np.random.default_rng(8)
    common = KindNull(0.3, 0.2, 1.0)   # odd in one honest solve in five
    null = PlayerNull({"deduction": common, "client": common, "speed": common,
                       "pacing": common, "switch": common,
                       "order": KindNull(0.05, 0.004, 1.0)}, None, "a portal")
    got = judge([_solve(i, rng) for i in range(3)], null).rests_on
    assert "too few for a verdict on its own" in got
    assert int(got.split("it would take ")[1].split()[0]) > 3


def test_likelihood_ratios_and_flags_are_kinds_of_their_own():
    rng = np.random.default_rng(7)
    season = [SolveFacts(f"s{i}", {f: float(rng.uniform(0.2, 1)) for f in FAMILIES}, False,
                         {"hint_run": math.log(5.0)}) for i in range(20)]
    verdict = judge(season, _null())
    assert verdict.flagged and verdict.findings[0].kind == "hints"
    assert ("20 weighed towards hints (20 held cells nothing proved, typed in a run seconds "
            "apart)") in verdict.summary
    assert PlayerVerdict.from_json(verdict.to_json()) == verdict


def test_a_null_is_learnt_and_guarded():
    rng = np.random.default_rng(8)
    seasons = [[_solve(20 * j + i, rng) for i in range(20)] for j in range(40)]
    null = learn_null(seasons, "this portal's players")
    assert null.players == 40 and null.solves == 800
    assert null.kind("order").weak == pytest.approx(0.15, abs=0.03)
    assert null.kind("order").strong >= 0.004 and null.kind("order").cv2 >= 1.0
    assert PlayerNull.from_json(null.to_json()) == null
    # a population of perfectly regular people never makes a null stricter than the floor
    calm = learn_null([[SolveFacts(f"c{j}{i}", {"order": 0.9}, False) for i in range(20)]
                       for j in range(40)], "calm")
    assert calm.kind("order").weak == 0.05 and calm.kind("order").strong == 0.004


def test_the_shipped_null_reads():
    null = shipped_null()
    assert null.players > 0 and "simulated" in null.source
    for family in ("order", "deduction", "pacing"):
        assert null.kind(family).weak >= 0.05


def test_facts_read_a_stored_evidence_document():
    doc = {"flagged": False, "p_value": 0.03, "signals": [
        {"name": "order_sa", "family": "order", "p": 0.02},
        {"name": "order_consensus", "family": "order", "p": 0.3},
        {"name": "unproven", "value": 2.0, "p": 0.4}],
        "timeline": [{"t_ms": 1000 * k * k, "singles_on_offer": k % 3} for k in range(1, 20)],
        "llr": {"hint_run": 1.5, "bad": float("nan")}}
    facts = solve_facts("a", doc)
    assert facts.family_p == {"order": 0.04, "deduction": 0.4}
    assert facts.llr == {"hint_run": 1.5} and facts.slope is not None
    assert facts.counted == {"unproven": (2.0, 0.4)} and facts.p_value == 0.03
    # an old document: no llr, no timeline
    assert solve_facts("b", {"flagged": True, "signals": []}) == SolveFacts("b", {}, True)


def _paced(paces) -> list[SolveFacts]:
    """Solves with each pace (ln of time over the puzzle's expected time)."""
    return [SolveFacts(f"s{i:03d}", {}, False, pace=float(v), pace_group="sudoku/calibration")
            for i, v in enumerate(paces)]


def _pace_null() -> PlayerNull:
    """Solves 2x quicker than the player's own usual one in 20 of honest solves, 2.7x
    quicker 1 in 250 (the guard's floors)."""
    return guard(PlayerNull({"own_pace": KindNull(0.05, 0.004, 1.0)}, None, "a test"))


def test_a_season_with_copies_far_quicker_than_the_players_own_pace_flags():
    """A person's speed is their own, but a third of their solves at three to four times
    their own pace is not: the season compares the player's solves with each other."""
    rng = np.random.default_rng(11)
    skill = 1.3                              # a fast player: the speed family's business
    honest = rng.normal(0, 0.35, 20) - skill
    copied = honest.copy()
    copied[::3] -= np.log(rng.uniform(3.0, 4.5, copied[::3].size))
    verdict = judge(_paced(copied), _pace_null())
    top = verdict.findings[0]
    assert verdict.flagged and top.kind == "own_pace"
    assert set(top.solves) <= {f"s{i:03d}" for i in range(0, 20, 3)} and top.odd >= 4
    assert "were 2.7× or more quicker than the player's usual pace" in top.sentence
    # the same player's honest season, and one in which a single solve is ten times
    # quicker than the rest, are not cases
    assert not judge(_paced(honest), _pace_null()).flagged
    once = honest.copy()
    once[5] -= np.log(10.0)
    verdict = judge(_paced(once), _pace_null())
    own = next(f for f in verdict.findings if f.kind == "own_pace")
    assert not verdict.flagged and own.odd == 1 and own.solves == ("s005",)


def test_a_copy_twice_as_quick_counts_as_odd_when_it_did_not_slow_down_at_a_stall():
    """A solve 2.2x quicker than the player's own pace is weakly odd; the same solve whose
    placements at a stall took no longer than the rest (a copy's) is odd, and a season
    of such copies flags, where the same season slowing down at its stalls does not."""
    def season(slope_at_copies):
        out = []
        for i in range(20):
            copy = i % 3 == 0
            out.append(SolveFacts(f"s{i:03d}", {}, False,
                                  pace=-math.log(2.2) if copy else 0.0,
                                  pace_group="sudoku/calibration",
                                  # (Σxy, Σxx): slope Σxy/Σxx in log delay at a stall
                                  slope=(slope_at_copies if copy else 2.3, 1.0)))
        return out
    flat, slowed = season(-0.2), season(2.3)
    levels = [lv["own_pace"] for lv in season_levels(flat)]
    assert levels == [2 if i % 3 == 0 else 0 for i in range(20)]
    assert {lv["own_pace"] for lv in season_levels(slowed)} == {0, 1}
    verdict = judge(flat, _pace_null())
    top = verdict.findings[0]
    assert verdict.flagged and top.kind == "own_pace" and top.odd == 7
    assert "or 2× and no slower at a stall than elsewhere" in top.sentence
    assert not judge(slowed, _pace_null()).flagged
    # a quick solve with no stall is judged by its pace alone
    bare = [SolveFacts(f.submission_id, {}, False, pace=f.pace, pace_group=f.pace_group)
            for f in flat]
    assert {lv["own_pace"] for lv in season_levels(bare)} == {0, 1}
    # an evenly typed copy's slope is zero, give or take rounding: flat; sums over no
    # delay at all (Σxx 0, as stored by hand) are no stall
    for slope, level in (((0.0, 1.0), 2), ((1e-14, 1.0), 2), ((0.3, 0.0), 1)):
        one = [replace(f, slope=slope) if f.submission_id == "s000" else f for f in flat]
        assert season_levels(one)[0]["own_pace"] == level, slope


def test_own_pace_needs_enough_finished_solves_and_reads_the_evidence():
    seven = _paced([0.0] * 6 + [-3.0])
    assert not any(f.kind == "own_pace" for f in judge(seven, _pace_null()).findings)
    eight = _paced([0.0] * 7 + [-3.0])
    found = {f.kind: f for f in judge(eight, _pace_null()).findings}
    assert found["own_pace"].odd == 1 and found["own_pace"].solves == ("s007",)
    # an unfinished solve (no pace) is not compared, and does not count as a solve
    read = solve_facts("a", {"pace": -0.5, "pace_basis": "portal fit",
                             "puzzle_type": "nurikabe"})
    assert read.pace == -0.5 and read.pace_group == "nurikabe/portal fit"
    assert solve_facts("a", {"pace": -0.5, "pace_basis": "calibration"}).pace_group == \
        "sudoku/calibration"
    assert solve_facts("b", {"pace": None, "pace_basis": "calibration"}).pace is None
    assert solve_facts("c", {"pace": 10 ** 400, "pace_basis": "calibration"}).pace is None
    assert solve_facts("d", {"pace": -0.5}).pace is None          # no basis: not compared
    assert solve_facts("e", {"pace": True, "pace_basis": "calibration"}).pace is None
    mixed = _paced([0.0] * 7 + [-3.0]) + [SolveFacts("u", {}, False)]
    assert {f.kind: f for f in judge(mixed, _pace_null()).findings}["own_pace"].of == 8


def test_a_pace_is_measured_against_the_expected_time_in_force():
    """Given the puzzle's expected time in force now, a finished solve's pace is read
    from its duration against it, whatever the stored evidence says (the stored pace was
    priced under the run in force when it was scored); an unfinished solve, or a time
    too unsure to compare by, has none."""
    from fairgrid.analytics.player_verdict import priced
    from fairgrid.analytics.puzzle_model import (CALIBRATION, PORTAL_FIT, RatingRun,
                                                 time_in_force)

    stored = solve_facts("a", {"pace": -1.2, "pace_basis": "portal fit",
                               "puzzle_type": "nurikabe", "counts": {"complete": True}})
    assert stored.pace == -1.2 and stored.finished and stored.puzzle_type == "nurikabe"
    run = RatingRun(mu=0.3, residual_sd=0.4, skill_sd=0.5, level_nulls={})
    now = time_in_force(6.0, 0.16, run, difficulty=6.5)
    assert (now.log_s, now.sd, now.basis) == (6.5, 0.4, PORTAL_FIT)
    read = priced(stored, now, duration_ms=1000 * math.exp(6.5))
    assert read.pace == pytest.approx(0.0, abs=1e-4) and read.pace_group == "nurikabe/portal fit"
    # a puzzle the run did not fit: the calibration's time shifted by the portal's offset
    assert time_in_force(6.0, 0.16, run).log_s == pytest.approx(6.3)
    before = time_in_force(6.0, 0.16, None, difficulty=6.5)      # no run: the calibration
    assert (before.log_s, before.basis) == (6.0, CALIBRATION)
    assert priced(stored, before, 1000 * math.exp(5.0)).pace == pytest.approx(-1.0)
    unsure = time_in_force(6.0, 1.0, None)                       # a Nurikabe prior
    assert unsure.basis is None and priced(stored, unsure, 9e5).pace is None
    unfinished = replace(stored, finished=False)
    assert priced(unfinished, now, 9e5).pace is None
    # as scoring prices it: a log whose moves all came at once took a millisecond
    assert priced(stored, now, 0).pace == pytest.approx(math.log(0.001) - 6.5, abs=1e-4)


def test_season_facts_are_stored_compactly_and_read_back_the_same():
    """What a season reads of a solve is stored beside its evidence in a compact form,
    read back to the same facts; a form that is not one raises (the daemon logs it and
    leaves that solve out)."""
    docs = [{"signals": [{"name": "unforced", "family": "deduction", "p": 0.004,
                          "value": 3.5}, {"name": "order_sa", "p": 0.3},
                         {"name": "speed", "p": float("nan")}],
             "flagged": True, "p_value": 0.003, "llr": {"hint_run": 1.16},
             "timeline": _timeline(np.random.default_rng(3), 4.0), "pace": -0.4,
             "pace_basis": "calibration", "counts": {"complete": True}},
            {"flagged": False, "signals": []}]
    for doc in docs:
        facts = solve_facts("s", doc)
        stored = json.dumps(facts.to_json())
        assert len(stored) < 600
        assert SolveFacts.from_json("s", json.loads(stored)) == facts
    assert solve_facts("s", docs[0]).slope is not None
    for bad in ({}, {**facts.to_json(), "facts": 99}, {**facts.to_json(), "llr": {"x": "1"}},
                {**facts.to_json(), "slope": [1.0]}):
        with pytest.raises((KeyError, TypeError, ValueError, IndexError)):
            SolveFacts.from_json("s", bad)


def test_own_pace_compares_solves_of_one_type_and_basis():
    """A player's Nurikabe is not their Sudoku, and a portal's fitted expected times
    differ from the calibration's by the portal's offset: each group apart."""
    sudoku = _paced([0.0] * 10)
    quicker = [replace(s, submission_id=f"n{i}", pace=-1.5, pace_group="nurikabe/portal fit")
               for i, s in enumerate(_paced([0.0] * 10))]
    levels = season_levels(sudoku + quicker)
    assert all(lv["own_pace"] == 0 for lv in levels)
    # the same solves in one group: the quicker ones are odd
    one = sudoku + [replace(s, pace_group="sudoku/calibration") for s in quicker]
    assert sum(lv["own_pace"] == 2 for lv in season_levels(one)) == 10
    # a group of too few solves is not judged, whatever the others
    few = sudoku + quicker[:5]
    assert [lv.get("own_pace") for lv in season_levels(few)][10:] == [None] * 5


def test_own_pace_compares_each_solve_with_its_nearest_others():
    """The window: every other solve up to 21 in the group, else the 20 nearest in the
    order played (10 each side where the season allows), never the solve itself."""
    from fairgrid.analytics import player_verdict as pv
    for n, k, quick in ((8, 0, [0]), (21, 20, [20]), (40, 0, [0]), (40, 20, [20])):
        paces = [0.0] * n
        for q in quick:
            paces[q] = -1.2
        own = pv._own_pace(_paced(paces))
        assert own[k] == 2 and sum(v == 2 for v in own) == 1, (n, k)
    # a solve 40 places away is not among the 20 nearest: a quick first half of a long
    # season does not make the last solves' usual pace
    paces = [-1.2] * 20 + [0.0] * 20
    own = pv._own_pace(_paced(paces))
    assert own[39] == 0 and own[0] == 0
    # a solve compared with itself would never be odd: the one quick solve of eight is
    assert pv._own_pace(_paced([0.0] * 7 + [-1.2]))[7] == 2


def test_a_player_who_gets_quicker_over_a_long_season_is_measured_at_the_time(
        monkeypatch):
    """A novice eight times quicker after 120 solves than at first: each solve against
    the player's nearest solves, not the season's first weeks."""
    from fairgrid.analytics import player_verdict as pv
    rng = np.random.default_rng(8)
    learning = _paced(np.linspace(0, -np.log(8.0), 120) + rng.normal(0, 0.35, 120))
    assert not judge(learning, shipped_null()).flagged
    monkeypatch.setattr(pv, "PACE_NEIGHBOURS", 1000)   # the season's median instead
    assert judge(learning, shipped_null()).flagged


def test_a_portal_learns_own_pace_with_one_dispersion():
    """A portal's few unflagged copiers, each with several solves far quicker than their
    own, must not set the odd level's dispersion (which would let every copier's season
    pass as a person's): own_pace is learnt with the weak level's."""
    rng = np.random.default_rng(5)
    honest = [_paced(rng.normal(0, 0.35, 20)) for _ in range(300)]
    copiers = []
    for _ in range(6):
        v = rng.normal(0, 0.35, 20)
        v[::3] -= np.log(3.5)
        copiers.append(_paced(v))
    null = learn_null(honest + copiers, "a portal")
    own = null.kind("own_pace")
    assert own.cv2_strong is None and own.dispersion(2) == own.dispersion(1)
    assert own.strong > 0.004            # the copiers' copies do count in the rate
    assert judge(copiers[0], null).findings[0].kind == "own_pace"


def _selective_copier(rng, sd: float = 0.35) -> list[SolveFacts]:
    """An honest spread of paces, a third of them copies 2.5-4.5x quicker."""
    v = rng.normal(0, sd, 20)
    at = rng.choice(20, size=7, replace=False)
    v[at] -= np.log(rng.uniform(2.5, 4.5, at.size))
    return _paced(v)


def test_a_portal_full_of_copiers_does_not_learn_that_copying_is_normal():
    """One player in ten copies a third of their puzzles and nobody has flagged them
    yet: a null learnt from everyone takes their copies for people's pace, and a new
    copier passes. Screened from the shipped null on, own_pace is learnt from the players
    it does not already find odd, and the new copier is a case again."""
    rng = np.random.default_rng(7)
    honest = [_paced(rng.normal(0, 0.35, 20)) for _ in range(300)]
    copiers = [_selective_copier(rng) for _ in range(30)]
    plain = learn_null(honest + copiers, "a portal")
    screened = learn_null(honest + copiers, "a portal", screen=_pace_null())
    alone = learn_null(honest, "a portal").kind("own_pace")
    assert plain.kind("own_pace").strong > 3 * alone.strong
    assert screened.kind("own_pace").strong < 1.5 * alone.strong
    # the other kinds are learnt as before
    assert {k: v for k, v in screened.kinds.items() if k != "own_pace"} == {
        k: v for k, v in plain.kinds.items() if k != "own_pace"}
    new = [_selective_copier(rng) for _ in range(20)]
    caught = sum(judge(s, screened).flagged for s in new)
    assert caught >= 5 and sum(judge(s, plain).flagged for s in new) < caught


def test_a_portal_whose_people_swing_more_still_learns_their_rate():
    """Screening keeps out players odd against the null in force, not a population whose
    paces all swing more than the shipped null's people: its rate is learnt (the
    screen's rounds test every player again against what they learn), and its honest
    players are not flagged."""
    rng = np.random.default_rng(8)
    wide = [_paced(rng.normal(0, float(rng.uniform(0.25, 0.65)), 20)) for _ in range(300)]
    plain = learn_null(wide, "a portal").kind("own_pace")
    screened = learn_null(wide, "a portal", screen=_pace_null())
    assert screened.kind("own_pace").strong >= 0.8 * plain.strong > 2 * 0.004
    fresh = [_paced(rng.normal(0, float(rng.uniform(0.25, 0.65)), 20)) for _ in range(200)]
    assert not any(judge(s, screened).flagged for s in fresh)


@pytest.fixture(scope="module")
def xwing():
    """The x-wing puzzle analysed as the daemon does, and its technique model's order."""
    from fairgrid.solvers import deduction as engine
    from fairgrid.solvers.techniques import solve_with_techniques

    from ..fixtures import DEDUCTION_HARD, analysed

    puzzle, solution, inputs = analysed(DEDUCTION_HARD[6], 0, runs=8, budget_s=3)
    givens = puzzle.givens.astype(np.int64)
    cells = [c for c, _, _ in solve_with_techniques(puzzle, solution).placements()]
    trace = engine.trace_placements(givens, solution, cells)
    x = int(np.flatnonzero(trace.offer == engine.FISH)[0])
    hints = [c for c in cells[x:] if engine.trace_placements(
        givens, solution, cells[:x] + [c]).rung[-1] == engine.UNPROVEN][:2]
    return inputs, solution, cells, x, hints


def test_a_player_right_at_every_unproven_cell_accumulates_evidence(xwing):
    from fairgrid.analytics.evidence import score_solve

    inputs, solution, cells, x, hints = xwing
    order = cells[:x] + hints + [c for c in cells if c not in hints and
                                 cells.index(c) >= x]
    rng = np.random.default_rng(9)
    season = []
    for i in range(12):
        # a person's pace, but at the stall half a minute's think and then two cells of
        # the solution that nothing up to the puzzle's hardest step proves
        gaps = rng.lognormal(np.log(12_000), 0.6, len(order))
        gaps[x] += 30_000
        t = np.cumsum(gaps).astype(np.int64)
        ev = score_solve(inputs.facts_without_skill, inputs.null, t,
                         np.array(order), solution[np.array(order)].astype(np.int64),
                         np.zeros(len(order), bool))
        assert ev.signal("unproven").value > 0
        season.append(solve_facts(f"s{i}", ev.to_json()))
    null = _null()
    # each solve alone is ordinary: one bit is what people guess now and then
    assert all(s.family_p["deduction"] > 0.15 for s in season)
    p = [next(f.p for f in judge(season[:n], null).findings if f.kind == "unproven")
         for n in (2, 4, 8, 12)]
    # every solve adds to the same kind of evidence, and the season becomes a case
    assert p == sorted(p, reverse=True) and p[-1] < p[0] / 100
    verdict = judge(season, null)
    unproven = next(f for f in verdict.findings if f.kind == "unproven")
    # a count kind's share of alpha is at least 1 / (2 x the kinds judged)
    assert verdict.flagged and unproven.p * 2 * verdict.kinds < ALPHA
    assert "12 had cells no technique proved, right at the first try" in unproven.sentence
    assert "honest players: about 1 such solve in 20" in unproven.sentence
    assert set(unproven.solves) == {s.submission_id for s in season}


def _llr_season(values, kind="stall_look"):
    rng = np.random.default_rng(len(values))
    return [SolveFacts(f"s{i:03d}", {f: float(rng.uniform(0.2, 1)) for f in FAMILIES},
                       False, {kind: float(v)}) for i, v in enumerate(values)]


def test_likelihood_ratios_add_up_over_a_season_and_one_solve_does_not_dominate():
    # twenty solves each 1.9 to 1 for a hint-taker: weak alone, strong together
    verdict = judge(_llr_season([0.65] * 20), _null())
    top = verdict.findings[0]
    assert verdict.flagged and top.kind == "hints" and top.odd == 20
    assert ("20 weighed towards hints (20 held cells placed at a stall that one look at "
            "the board does not prove)") in top.sentence
    assert f"weigh {math.exp(13.0):,.0f} to 1 for hints over honest play" in top.sentence
    assert "weigh over a million to 1" in judge(_llr_season([1.0] * 20), _null()).summary
    assert not judge(_llr_season([0.65] * 5), _null()).flagged
    # one solve beyond anything, the rest ordinary: it counts at most 30 to 1
    one = judge(_llr_season([-0.2] * 9 + [60.0] + [-0.2] * 10), _null())
    assert not one.flagged and one.findings[0].p > 1e-2
    # an honest start does not hide a run at the end: the window holds it
    run = judge(_llr_season([-1.0] * 30 + [0.0] * 10 + [1.5] * 10), _null())
    top = run.findings[0]
    assert run.flagged and top.of == 20 and top.sentence.startswith("In 20 consecutive")


def test_the_stall_look_ratio_has_an_honest_mean_of_at_most_one():
    """The sum test's bound holds for players whose outcomes at a stall are those the
    ratios were set against (and for any mix nearer the player's side)."""
    from fairgrid.analytics.deduction import STALL_LOOK_LR, STALL_NONE_LR, STALL_WRONG_LR

    # looks 1, 2, more; no number of looks, at +0, +1, +2 candidates beyond the fewest
    # (0.13 of the 0.15 the ratios allow, the farthest the guard's); a wrong first digit
    lr = {1: STALL_LOOK_LR[1], 2: STALL_LOOK_LR[2], 3: STALL_LOOK_LR[3],
          "none+0": STALL_NONE_LR[0], "none+1": STALL_NONE_LR[1],
          "none+2": STALL_NONE_LR[2], "wrong": STALL_WRONG_LR}
    honest = {1: 0.51, 2: 0.14, 3: 0.09, "none+0": 0.08, "none+1": 0.04, "none+2": 0.01,
              "wrong": 0.13}
    mean = sum(p * math.exp(lr[b]) for b, p in honest.items())
    assert sum(honest.values()) == pytest.approx(1.0) and mean <= 1.0
    # honest seasons drawn from it reach the player threshold no more than alpha says
    rng = np.random.default_rng(9)
    buckets, probs = list(honest), np.array(list(honest.values()))
    flagged = 0
    for _ in range(300):
        season = []
        for _ in range(20):
            picks = rng.choice(len(buckets), size=int(rng.integers(0, 5)), p=probs)
            season.append(sum(lr[buckets[i]] for i in picks))
        flagged += judge(_llr_season(season), _null(), alpha=0.01).flagged
    assert flagged <= 3


def test_a_solves_likelihood_ratios_add_up_as_one_kind():
    """Stall looks and right first time read the same placements: one ratio per solve,
    their sum, tested once. Neither alone reaches alpha over this season; together they
    do, and the sentence says what each solve held."""
    rng = np.random.default_rng(21)
    season = [SolveFacts(f"s{i:02d}", {f: float(rng.uniform(0.2, 1)) for f in FAMILIES},
                         False, {"stall_look": 0.3, "right_first_time": 0.25 if i % 2 else -0.05,
                                 "hint_run": 0.0})
              for i in range(20)]
    verdict = judge(season, _null())
    top = verdict.findings[0]
    assert top.kind == "hints" and top.p == pytest.approx(math.exp(-8.0))
    assert verdict.flagged
    assert ("20 weighed towards hints (20 held cells placed at a stall that one look at the "
            "board does not prove; 10 held cells no technique proved, right at the first "
            "try)") in top.sentence
    for kind in ("stall_look", "right_first_time"):
        alone = [SolveFacts(s.submission_id, s.family_p, False, {kind: s.llr[kind]})
                 for s in season]
        assert not judge(alone, _null()).flagged
    # the null's offset is learnt on the solves' sums: two kinds each 1.025 on average
    # (1.5 to 1 in one solve in twenty), independent, are 1.05 together
    gen = np.random.default_rng(22)
    seasons = [[SolveFacts(f"p{j}-{i}", {"order": 0.5}, False,
                           {k: math.log(1.5) if gen.random() < 0.05 else 0.0
                            for k in ("stall_look", "right_first_time")})
                for i in range(20)] for j in range(300)]
    offset = learn_null(seasons, "two kinds").llr_offset["hints"]
    assert math.log(1.05) - 0.01 < offset < math.log(1.05) + 0.02


def test_stored_values_that_are_no_numbers_say_nothing():
    """Evidence read back from storage may hold what no scoring wrote (a damaged row, an
    older release): a p, time or ratio that is no finite number is left out, never read
    as ordinary or odd, and a null that learnt one stays usable."""
    nan = float("nan")
    one = [{"name": "order", "family": "order", "p": p} for p in (nan, 1e-9)]
    assert solve_facts("a", {"signals": one}).family_p["order"] == pytest.approx(1e-9)
    assert solve_facts("b", {"signals": one[::-1]}).family_p["order"] == pytest.approx(1e-9)
    rng = np.random.default_rng(23)
    timeline = _timeline(rng, 4.0)
    assert solve_facts("c", {"timeline": timeline}).slope is not None
    timeline[5]["t_ms"] = nan
    odd = solve_facts("d", {"timeline": timeline, "p_value": 10 ** 400,
                            "llr": {"stall_look": float("inf"), "hint_run": 0.5}})
    assert odd.slope is None and odd.p_value is None and odd.llr == {"hint_run": 0.5}
    # a portal where every solve of every player was weakly odd by a kind, and whose
    # tempo is no number: the kind says nothing, the tempo was not measured
    weak = [[solve_facts(f"p{i}-{j}", {"signals": [
        {"name": "unforced", "p": 0.5, "value": 1.0}]}) for j in range(5)] for i in range(30)]
    null = learn_null(weak, "a portal")
    assert null.kind("unforced").weak <= 0.99
    assert guard(PlayerNull(null.kinds, ((nan, nan), (2.0, 0.4)), "x")).tempo == ((2.0, 0.4),)
    assert guard(PlayerNull(null.kinds, ((nan, 0.5),), "x")).tempo is None
    # a dispersion that is no number is the most lenient, and never lower at the odd level
    kind = guard(PlayerNull({"k": KindNull(0.1, 0.01, nan, 2.0)}, None, "x")).kind("k")
    assert kind.cv2 == 20.0 and kind.cv2_strong >= kind.cv2
    verdict = judge(weak[0] * 10, null)
    assert not verdict.flagged and math.isfinite(verdict.p_value)


def test_the_tempo_is_no_surer_than_it_says_for_a_few_noisy_solves():
    """Honest players drawn from a null at its guard, eight solves each with a noisy
    slow-down (sd 2): no more of them fall below a line than the line says (the t alone
    puts a third more there; the correction for few solves takes that back)."""
    rng = np.random.default_rng(29)
    null = PlayerNull({}, ((1.99, 0.3),), "at the guard")
    assert guard(null).tempo == null.tempo
    line, players = 0.003, 30_000
    own = rng.normal(1.99, 0.3, players)
    below = 0
    for mu in own:
        season = [SolveFacts(f"s{k}", {}, False, slope=(float(v), 1.0))
                  for k, v in enumerate(rng.normal(mu, 2.0, 8))]
        below += _tempo(season, null).p < line
    assert below <= line * players


def first_solves(season, puzzles, ends=None):
    """The season as the daemon judges it: without the solves ``solved_again`` marks."""
    again = solved_again(puzzles, [s.finished for s in season], ends)
    return [s for s, repeat in zip(season, again) if not repeat]


def test_a_puzzle_solved_again_is_no_new_evidence():
    """A person who replays puzzles they have finished is quicker the second time (they
    remember it): such solves leave the season, and a season of them is no case. An
    attempt given up before the finished solve stays."""
    rng = np.random.default_rng(5)
    honest = list(rng.normal(0, 0.35, 20))
    replays = [honest[i] - math.log(3.5) for i in range(0, 18, 3)]   # 6, 3.5x quicker
    season = _paced(honest + replays)
    puzzles = [f"p{i}" for i in range(20)] + [f"p{i}" for i in range(0, 18, 3)]
    season = [replace(f, finished=True) for f in season]
    assert judge(season, _pace_null()).flagged        # each replay read as a new solve
    kept = first_solves(season, puzzles)
    assert [f.submission_id for f in kept] == [f"s{i:03d}" for i in range(20)]
    assert not judge(kept, _pace_null()).flagged
    # an attempt given up before the puzzle's first finish is part of it; unknown
    # puzzles all stay
    given_up = [replace(season[0], finished=False, submission_id="a"), season[0], season[20]]
    assert [f.submission_id for f in first_solves(given_up, ["p0", "p0", "p0"])] == \
        ["s000"]
    assert len(first_solves(season, [None] * len(season))) == len(season)


def test_each_puzzle_counts_once_as_the_first_solve_to_finish_it():
    """A puzzle counts as the solve that finished it first, by when it ended: a slow
    decoy started first and finished last no longer puts the quick copy out of the
    season as a replay. A puzzle nobody finished counts as its first attempt; attempts
    given up before the finish are part of it, their time added to it."""
    puzzles = ["p0", "p0", "p1", "x", "x", "x"]
    finished = [True, True, True, False, False, False]
    ends = [30.0, 8.0, 50.0, 60.0, 70.0, 80.0]   # the decoy ends after the copy
    assert solved_again(puzzles, finished, ends) == [True, False, False, False, True, True]
    assert solved_again(puzzles, finished) == [False, True, False, False, True, True]
    assert solved_again(["p", "p", "p", "p"], [False, False, True, False]) == \
        [True, True, False, True]
    assert time_spent(["p", "p", "p", "q", None], [False, False, True, True, True],
                      [60, 120, 300, 200, 10]) == [60, 120, 480, 200, 10]


def test_attempts_of_one_puzzle_given_up_again_and_again_do_not_dilute_a_season():
    """Twelve solves, four of them flagged copies: a case. The same player opened one
    puzzle 36 times and left it at once: every attempt counted as an ordinary solve,
    and the season was no case. The puzzle counts once."""
    def copy(i):
        return SolveFacts(f"c{i}", {}, True, p_value=1e-6, finished=True)

    def fair(i):
        return SolveFacts(f"h{i}", {}, False, p_value=0.5, finished=True)
    season = [copy(i) if i % 3 == 0 else fair(i) for i in range(12)]
    puzzles = [f"p{i}" for i in range(12)]
    assert judge(first_solves(season, puzzles)).flagged
    padded, pz = [], []
    for i, f in enumerate(season):
        padded.append(f)
        pz.append(puzzles[i])
        for k in range(3):
            padded.append(SolveFacts(f"a{i}-{k}", {}, False, finished=False))
            pz.append("x")
    assert judge(first_solves(padded, pz)).flagged


def test_a_not_flagged_summary_does_not_quote_odds_rarer_than_its_threshold():
    """Ten solves of hint ratios summing to 7.3 nats: the hints' p is 6.8e-4, below
    alpha, but their share of it is 0.4, so the player is not flagged. The summary said
    the kind was "weaker than the threshold (1 in 1,000 honest players)" and in the same
    breath "by chance: about 1 in 1,500": odds rarer than the line it had not reached.
    It names the kind's own line."""
    season = [SolveFacts(f"s{i}", {f: 0.5 for f in FAMILIES}, False, {"stall_look": 0.73})
              for i in range(10)]
    verdict = judge(season, _null())
    assert not verdict.flagged
    quoted = [int(n.replace(",", "")) for n in
              re.findall(r"by chance: about 1 in ([\d,]+)", verdict.summary)]
    said = re.search(r"its line \(1 in ([\d,]+)", verdict.summary)
    assert said, verdict.summary
    threshold = int(said.group(1).replace(",", ""))
    assert all(n <= threshold for n in quoted), verdict.summary
