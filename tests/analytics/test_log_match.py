"""A log that repeats another player's solve of the same puzzle, and two people's logs."""

from __future__ import annotations

import numpy as np
import pytest

from fairgrid.analytics.evidence import Evidence, score_solve
from fairgrid.analytics.log_match import (FLOOR_S, Earlier, LogMatch, closest, compare,
                                          from_bytes, timing_print, to_bytes)
from fairgrid.analytics.calibration import STRONG_P
from fairgrid.analytics.player_verdict import FAMILIES, judge, solve_facts
from fairgrid.analytics.signals import LOG_MATCH_JUDGED
from fairgrid.analytics.simulate import simulate
from fairgrid.solvers import parse

from ..fixtures import EASY, EASY_SOLUTION, analysed

SOL = np.array([int(c) for c in EASY_SOLUTION])


def _people(n: int, seed: int = 0) -> list[tuple]:
    """``n`` honest solves of EASY by the service's two simulated kinds of player, each
    at a pace of their own."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        sim = simulate(parse(EASY), SOL, ("honest", "scanner")[k % 2], rng=rng,
                       expected_log_s=float(6.0 + rng.normal(0, 0.5)), skill=0.0)
        out.append((sim.t_ms, sim.cell, sim.digit, sim.note))
    return out


def _repeat(log, rng, scale: float = 0.8, jitter: float = 0.0, shift_ms: int = 2_500):
    """Another player's repeat of ``log``: placements only, slower or quicker as a whole,
    each gap jittered by exp(N(0, jitter))."""
    t, cell, digit, note = (np.asarray(a) for a in log)
    keep = ~np.asarray(note, bool)
    gaps = np.diff(np.concatenate([[0.0], t[keep].astype(float)]))
    gaps = gaps * np.exp(rng.normal(0, jitter, gaps.size)) if jitter else gaps
    t_new = (shift_ms + np.cumsum(gaps) * scale).round().astype(np.int64)
    return t_new, cell[keep], digit[keep], np.zeros(t_new.size, bool)


@pytest.fixture(scope="module")
def logs():
    return _people(24)


@pytest.fixture(scope="module")
def inputs():
    return analysed(EASY, 0, runs=8)[2]


def _prints(logs):
    return np.stack([timing_print(*log, 81) for log in logs])


def test_a_print_times_each_cells_final_digit():
    # r1c1 placed at 10 s, a wrong digit in r1c2 at 12 s, erased at 13 s, then r1c2 at
    # 20 s and r1c3 0.1 s later (one gesture); a note at 15 s counts for nothing
    t = [10_000, 12_000, 13_000, 15_000, 20_000, 20_100]
    cell = [0, 1, 1, 5, 1, 2]
    digit = [4, 7, 0, 3, 5, 8]
    note = [False, False, False, True, False, False]
    tp = timing_print(t, cell, digit, note, 81)
    assert tp.shape == (2, 81)
    assert tp[0, 0] == pytest.approx(np.log(10.0))
    assert tp[0, 1] == pytest.approx(np.log(8.0))   # since the wrong digit at 12 s
    assert np.isnan(tp[0, 2]) and 0.1 < FLOOR_S      # a gap under the floor is no thought
    assert list(tp[1, :3]) == [0, 2, 3] and np.isnan(tp[1, 5]) and np.isnan(tp[0, 40])
    back = from_bytes(to_bytes(tp), 81)
    assert np.array_equal(np.isnan(back), np.isnan(tp))
    assert np.allclose(back[np.isfinite(back)], tp[np.isfinite(tp)])
    assert from_bytes(to_bytes(tp), 64) is None and from_bytes(None, 81) is None


def test_two_peoples_logs_are_not_alike(logs):
    prints = _prints(logs)
    least = min(closest(prints[i], prints[j][None]).pair_p
                for i in range(len(logs)) for j in range(i))
    assert least > 0.01
    # each solve against every one before it, as scoring compares
    assert all(closest(prints[i], prints[:i]).p > 0.01 for i in range(1, len(logs)))


@pytest.mark.parametrize("jitter", [0.0, 0.1])
def test_a_repeated_log_is_found_among_many(logs, jitter):
    rng = np.random.default_rng(3)
    prints = _prints(logs)
    for source in (0, 7, 23):
        found = closest(timing_print(*_repeat(logs[source], rng, jitter=jitter), 81), prints)
        # noise on every gap costs power where a fast log has few cells beyond writing
        assert found.index == source and found.p < (1e-9 if jitter == 0 else 1e-3)
        assert found.compared == len(logs) and found.p == pytest.approx(
            min(1.0, found.pair_p * len(logs)))
        assert found.same_order == found.cells or found.same_order >= 40


def test_a_repeat_with_some_gaps_changed_is_found(logs):
    rng = np.random.default_rng(4)
    t, cell, digit, note = _repeat(logs[5], rng)
    gaps = np.diff(np.concatenate([[0], t]))
    changed = rng.random(gaps.size) < 1 / 3
    gaps[changed] = rng.choice(gaps, int(changed.sum()))
    found = closest(timing_print(np.cumsum(gaps), cell, digit, note, 81), _prints(logs))
    assert found.index == 5 and found.p < 1e-6


@pytest.mark.parametrize("breaks", [1, 3, 5])
def test_a_repeat_with_long_breaks_added_is_found(logs, breaks):
    # a few two-minute pauses move the mean difference, not the median
    rng = np.random.default_rng(7)
    t, cell, digit, note = _repeat(logs[9], rng)
    gaps = np.diff(np.concatenate([[0], t]))
    gaps[rng.choice(np.arange(1, gaps.size), breaks, replace=False)] += 120_000
    found = closest(timing_print(np.cumsum(gaps), cell, digit, note, 81), _prints(logs))
    assert found.index == 9 and found.p < 1e-6


def test_gaps_on_the_quick_threshold_are_counted_once():
    # a portal that logs in steps of 0.5 s: many gaps of exactly 1.5 s in both logs
    rng = np.random.default_rng(8)
    gaps = rng.choice([1000, 1500, 1500, 1500, 4000, 9000], 60)
    t = np.cumsum(gaps)
    cell, digit = np.arange(60), np.ones(60, int)
    tp = timing_print(t, cell, digit, None, 81)
    other = timing_print(np.cumsum(gaps[::-1]), cell, digit, None, 81)
    found = closest(tp, np.stack([other, tp]))
    assert found.index == 1 and found.same_gaps <= found.cells


def test_the_evidence_flags_a_repeat_and_names_its_source(logs, inputs):
    earlier = Earlier(_prints(logs[:6]), ("s-a", None, "s-c", "s-d", "s-e", "s-f"))
    rng = np.random.default_rng(5)
    repeat = _repeat(logs[2], rng, scale=1.3)
    ev = score_solve(inputs.facts_without_skill, inputs.null, *repeat, earlier=earlier)
    assert ev.flagged and ev.reasons[0] == "log_match" and ev.rule == "alone"
    assert ev.log_match.submission_id == "s-c" and ev.log_match.compared == 6
    signal = ev.signal("log_match")
    assert signal.p < 1e-6 and signal.family == "log_match"
    assert "submission 's-c' of this portal" in signal.explanation
    assert "repeats an earlier solve" in ev.verdict
    assert Evidence.from_json(ev.to_json()).log_match == ev.log_match
    # the same repeat of another portal's solve names no id
    elsewhere = score_solve(inputs.facts_without_skill, inputs.null,
                            *_repeat(logs[1], rng), earlier=earlier)
    assert elsewhere.flagged and elsewhere.log_match.submission_id is None
    assert "a solve another portal sent" in elsewhere.signal("log_match").explanation
    # an honest solve: compared, shown, and no signal of the verdict
    own = score_solve(inputs.facts_without_skill, inputs.null, *logs[10], earlier=earlier)
    assert own.log_match is not None and own.log_match.p > 0.05
    assert own.signal("log_match") is None and "log_match" not in own.reasons
    assert LOG_MATCH_JUDGED == STRONG_P  # it joins a verdict only where it flags alone
    assert compare(*logs[10], None, 81) is None
    assert LogMatch.from_json({"cells": "x"}) is None


def test_a_season_leaves_the_solves_verdict_to_flag_a_repeat(logs, inputs):
    earlier = Earlier(_prints(logs[:6]), tuple(f"s-{k}" for k in range(6)))
    ev = score_solve(inputs.facts_without_skill, inputs.null,
                     *_repeat(logs[0], np.random.default_rng(6)), earlier=earlier)
    facts = solve_facts("r", ev.to_json())
    assert facts.family_p["log_match"] < 1e-6 and "log_match" not in FAMILIES
    verdict = judge([facts])
    assert all(f.kind != "log_match" for f in verdict.findings)
