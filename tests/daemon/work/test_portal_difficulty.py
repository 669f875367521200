"""Each portal's own difficulty of a shared puzzle (puzzle_portal_ratings) against what
other portals' players do: faster or slower portals, a handful of hostile players, a
leaked solution. Real DuckDB file, real nightly job, scoring's own read."""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from fairgrid.analytics.puzzle_model import time_in_force
from fairgrid.daemon.store.repository.scores import puzzle_for_scoring, rating_run
from fairgrid.daemon.work.scoring import rating_run_of
from fairgrid.daemon.work.nightly import run_nightly
from fairgrid.daemon.work.nightly_db import direct_db

from ..helpers import COLUMNS, MOVE_COLUMNS, build, insert_rows, make_settings


def _add_solves(con, portal, rows, now=None):
    """Insert scored, complete solves (player, puzzle index, log seconds) of ``portal``."""
    now = now or datetime.now(timezone.utc)
    key = con.execute("SELECT max(sub_key) + 1 FROM submissions").fetchall()[0][0]
    subs = []
    for player, j, log_s in rows:
        subs.append((key, portal, f"{portal}-s{key}", f"{portal}-w{key}", "t", player,
                     f"p{j:02d}", now, now, now - timedelta(days=1), 1,
                     int(1000 * math.exp(log_s)), True, "scored", "{}"))
        key += 1
    insert_rows(con, "submissions", COLUMNS, subs)


def _add_slow_portal(con, truth, portal, pace, prefix):
    """``portal``'s 200 players, each about ``pace`` times slower than the puzzles take
    (their skill drawn around -log pace), 12 solves each of the 24 shared puzzles."""
    rng = np.random.default_rng(7)
    rows = []
    for b in range(200):
        s = rng.normal(-math.log(pace), 0.3)
        for j in rng.choice(24, 12, replace=False):
            rows.append((f"{prefix}{b:03d}", int(j),
                         truth["true_d"][j] - s + rng.normal(0, 0.15)))
    _add_solves(con, portal, rows)


def _skills(con, run_id, portal):
    return dict(con.execute("SELECT player_id, skill FROM player_ratings WHERE run_id = ? "
                            "AND portal = ?", [run_id, portal]).fetchall())


def test_a_faster_portals_speed_is_its_players_skill_not_its_own_difficulty(tmp_path):
    """A second portal whose honest players are all about twice as fast (a club of strong
    solvers) solves the same shared puzzles: the difference is skill, and stays there,
    so a puzzle the club has no row of (a new round's) prices its players right."""
    con, truth = build(tmp_path / "n.duckdb", few_solves_puzzle=False)
    settings = make_settings(tmp_path, nightly_min_solves=20)
    rng = np.random.default_rng(11)
    club_skill = rng.normal(math.log(2.0), 0.3, 40)        # twice as fast on average
    rows = []
    for b, s in enumerate(club_skill):
        for j in rng.choice(24, 12, replace=False):
            rows.append((f"c{b:03d}", int(j), truth["true_d"][j] - s + rng.normal(0, 0.15)))
    _add_solves(con, "club", rows)
    run_id = run_nightly(direct_db(con), settings)["run_id"]

    demo = _skills(con, run_id, "demo")
    club = _skills(con, run_id, "club")
    # a player's pace over the fit's centre: their skill over their portal's offset
    fitted_gap = (np.mean([club[f"c{b:03d}"] for b in range(40)])
                  - _run_for(con, run_id, "club").shift
                  - np.mean([demo[f"u{i:03d}"] for i in range(60)])
                  + _run_for(con, run_id, "demo").shift)
    true_gap = club_skill.mean() - truth["skill"].mean()
    own = {(p, q): d for p, q, d in con.execute(
        "SELECT puzzle_id, portal, difficulty FROM puzzle_portal_ratings WHERE run_id = ?",
        [run_id]).fetchall()}
    shifted = np.mean([own[(p, "club")] - own[(p, "demo")]
                       for p, q in own if q == "club"])
    # the puzzles are no easier for the club: its own difficulties should agree with demo's
    assert abs(shifted) < math.log(1.15), \
        f"the club's own difficulties are {math.exp(-shifted):.2f}x lower than demo's"
    # and the club's players should keep (most of) their pace, as one pooled fit does
    assert fitted_gap > 0.75 * true_gap, \
        f"club skill gap fitted {fitted_gap:.2f} of a true {true_gap:.2f}"


def test_five_slow_players_barely_move_what_a_newcomer_portal_is_priced_on(tmp_path):
    """``demo`` (60 honest players, every puzzle) and a hostile portal ``rogue`` of five
    players ten times slower on p01-p03 (ordinary on six others). A third, honest portal
    ``newbie`` has one player with one solve of p01, at demo's pace: priced on p01's
    shared difficulty, in which five solves weigh as five of 65."""
    con, truth = build(tmp_path / "n.duckdb", few_solves_puzzle=False)
    settings = make_settings(tmp_path, nightly_min_solves=20)
    rng = np.random.default_rng(3)
    rows = []
    for b in range(5):
        for j in [1, 2, 3] + list(rng.choice(np.arange(4, 24), 6, replace=False)):
            slow = math.log(10) if j <= 3 else 0.0
            rows.append((f"r{b}", int(j), truth["true_d"][j] + slow + rng.normal(0, 0.15)))
    _add_solves(con, "rogue", rows)
    # the newcomer: one player, one solve of p01 and two of puzzles rogue never touched
    _add_solves(con, "newbie", [("n0", 1, truth["true_d"][1]),
                                ("n0", 4, truth["true_d"][4]),
                                ("n0", 5, truth["true_d"][5])])
    run_id = run_nightly(direct_db(con), settings)["run_id"]
    cur = con.cursor()
    demo = puzzle_for_scoring(cur, "p01", run_id, "demo")["difficulty"]
    newbie = puzzle_for_scoring(cur, "p01", run_id, "newbie")["difficulty"]
    elsewhere = puzzle_for_scoring(cur, "p01", run_id, "never-solved-it")["difficulty"]
    assert newbie - demo < math.log(1.2), \
        f"newbie's honest player is priced on {math.exp(newbie - demo):.2f}x demo's time"


def test_a_solution_leaked_on_one_portal_does_not_lower_its_own_yardstick(tmp_path):
    """An organiser's case: the solutions of p01-p03 leak in one portal's chat, and 30 of
    its players (ordinary on the other puzzles) type them in five times faster than the
    puzzle takes. Their portal's own difficulty would follow them down and price the
    copies at their own pace; held no lower than the shared difficulty (and what the
    metrics predict), the leaked solves keep the speed evidence the pooled fit gives."""
    con, truth = build(tmp_path / "n.duckdb", few_solves_puzzle=False)
    settings = make_settings(tmp_path, nightly_min_solves=20)
    rng = np.random.default_rng(5)
    rows = []
    for b in range(30):
        s = rng.normal(0, 0.4)
        for j in [1, 2, 3] + list(rng.choice(np.arange(4, 24), 8, replace=False)):
            fast = math.log(5) if j <= 3 else 0.0
            rows.append((f"l{b:02d}", int(j),
                         truth["true_d"][j] - s - fast + rng.normal(0, 0.15)))
    _add_solves(con, "leaky", rows)
    run_id = run_nightly(direct_db(con), settings)["run_id"]
    cur = con.cursor()
    gap = np.mean([puzzle_for_scoring(cur, p, run_id, "demo")["difficulty"]
                   - puzzle_for_scoring(cur, p, run_id, "leaky")["difficulty"]
                   for p in ("p01", "p02", "p03")])
    # the leak portal's players are priced on the shared difficulty, where their 30
    # solves weigh against demo's 60: near the honest time, as a pooled fit prices them
    shared = dict(con.execute("SELECT puzzle_id, difficulty FROM puzzle_ratings WHERE "
                              "run_id = ?", [run_id]).fetchall())
    for p in ("p01", "p02", "p03"):
        assert puzzle_for_scoring(cur, p, run_id, "leaky")["difficulty"] == shared[p]
    assert gap < math.log(1.25), f"the leaked puzzles are {math.exp(gap):.2f}x easier on leaky"


def _run_for(con, run_id, portal):
    """The run as scoring reads it for a Sudoku solve of ``portal``."""
    return rating_run_of(rating_run(con.cursor(), run_id)).for_type("sudoku", portal)


def _new_puzzle_expected(con, run_id, portal, players):
    """What a run prices an average ``players`` of ``portal`` at on a puzzle it did not
    fit (a new round's, until the next run), less the puzzle's prior: the expected
    log-time scoring reads (time_in_force) less the mean skill."""
    skills = _skills(con, run_id, portal)
    return (time_in_force(0.0, 1.0, _run_for(con, run_id, portal)).log_s
            - np.mean([skills[p] for p in players]))


def _demo_price(con, run_id, players):
    """What scoring prices ``demo``'s rated players at on the shared puzzles p00-p23, on
    average: the expected log-time of each on demo (``puzzle_for_scoring``'s difficulty
    through time_in_force, as the scorer reads it) less the player's fitted skill."""
    cur = con.cursor()
    skills = _skills(con, run_id, "demo")
    run = _run_for(con, run_id, "demo")
    price = np.mean([time_in_force(0.0, 1.0, run, puzzle_for_scoring(
        cur, f"p{j:02d}", run_id, "demo")["difficulty"]).log_s for j in range(24)])
    return price - np.mean([skills[p] for p in players])


def test_a_slow_portal_does_not_make_another_portals_players_look_quick_on_new_puzzles(
        tmp_path):
    """``demo``'s 60 honest players are rated alone first. Then a second portal's 200
    players, about twice as slow (a beginners' portal, or a hostile portal's sock
    puppets), solve 12 of the same shared puzzles each: their slowness is their skill,
    and the time demo's players are expected to take on a puzzle the run did not fit
    (every puzzle of the next round, until the next nightly run) barely moves."""
    con, truth = build(tmp_path / "n.duckdb", few_solves_puzzle=False)
    # no puzzle reaches min_solves: no recalibration, so every run's mu is the offset
    # from the shipped calibration and runs compare (the type's fit is still in force:
    # it has more solves than that in all)
    settings = make_settings(tmp_path, nightly_min_solves=1000)
    demo_players = [f"u{i:03d}" for i in range(60)]
    alone = _new_puzzle_expected(con, run_nightly(direct_db(con), settings)["run_id"],
                                 "demo", demo_players)
    _add_slow_portal(con, truth, "beginners", 2.0, "b")
    per_portal = _new_puzzle_expected(con, run_nightly(direct_db(con), settings)["run_id"],
                                      "demo", demo_players)

    shift = per_portal - alone
    assert shift < math.log(1.10), \
        f"demo's honest players are expected to take {math.exp(shift):.2f}x as long"


def test_one_portals_many_solves_do_not_set_the_order_everyone_is_compared_with(tmp_path):
    """demo's 60 players fill p00 row by row; a second portal sends 150 solves of it in
    the reverse order. A portal counts at most as many solves of a puzzle as every other
    portal together, so the consensus order is not the second portal's."""
    from scipy.stats import spearmanr

    from ..helpers import EASY_SOLUTION, EMPTY

    con, _ = build(tmp_path / "n.duckdb", few_solves_puzzle=False)
    settings = make_settings(tmp_path, nightly_min_solves=20)
    _add_solves(con, "rogue", [(f"r{b:03d}", 0, 5.0) for b in range(150)])
    keys = [k for (k,) in con.execute("SELECT sub_key FROM submissions WHERE portal = "
                                      "'rogue' ORDER BY sub_key").fetchall()]
    order = list(reversed(EMPTY))
    insert_rows(con, "moves", MOVE_COLUMNS,
                [(k, seq, 1000 * (seq + 1), c, int(EASY_SOLUTION[c]), False)
                 for k in keys for seq, c in enumerate(order)])
    con.execute("UPDATE moves_through SET through = (SELECT max(sub_key) FROM submissions)")
    run_id = run_nightly(direct_db(con), settings)["run_id"]
    ranks, spread = con.execute("SELECT consensus_fill_rank, consensus_fill_spread FROM "
                                "puzzle_ratings WHERE run_id = ? AND puzzle_id = 'p00'",
                                [run_id]).fetchone()
    consensus = [json.loads(ranks)[c] for c in EMPTY]
    # one pooled median would be rogue's reverse order exactly (rho -1 with row order),
    # with a null scoring would judge demo's players by; capped, the two orders weigh
    # alike and the consensus has no order to judge by (scoring leaves it out)
    if len(set(consensus)) == 1:
        assert json.loads(spread)["null"] is None
    else:
        assert spearmanr(consensus, range(len(EMPTY)))[0] > -0.5


@pytest.mark.parametrize("pace", [10.0, 0.2], ids=["ten-times-slower", "five-times-faster"])
def test_a_hostile_portals_sock_puppets_do_not_move_what_demos_players_are_priced_on(
        tmp_path, pace):
    """The case of the test above, with the hostile portal's 200 sock puppets (12 solves
    each of the shared puzzles) ten times slower, or five times faster, than the
    puzzles take: every solve legal, signed by that portal. Their common pace is their
    portal's offset, not a shift of every skill's centre: what demo's honest players are
    expected to take, on the puzzles they share (their portal's own difficulty less
    their skill) and on a puzzle the run did not fit, barely moves."""
    con, truth = build(tmp_path / "n.duckdb", few_solves_puzzle=False)
    settings = make_settings(tmp_path, nightly_min_solves=1000)
    demo_players = [f"u{i:03d}" for i in range(60)]
    first = run_nightly(direct_db(con), settings)["run_id"]
    shared_alone = _demo_price(con, first, demo_players)
    new_alone = _new_puzzle_expected(con, first, "demo", demo_players)
    _add_slow_portal(con, truth, "hostile", pace, "h")
    second = run_nightly(direct_db(con), settings)["run_id"]
    shared_shift = _demo_price(con, second, demo_players) - shared_alone
    new_shift = _new_puzzle_expected(con, second, "demo", demo_players) - new_alone
    assert abs(shared_shift) < math.log(1.10), \
        f"demo's honest players are priced at {math.exp(shared_shift):.2f}x their time " \
        f"on the shared puzzles"
    assert abs(new_shift) < math.log(1.10), \
        f"demo's honest players are expected to take {math.exp(new_shift):.2f}x as long " \
        f"on a new puzzle"


def _speed_z(con, run_id, portal, rows, lambda_player=3.0):
    """The mean ``speed`` signal scoring gives ``rows`` (player, puzzle index, log
    seconds) of ``portal`` under the run: (log t - expected + skill) / sd, the expected
    time and its sd as ``scoring_inputs`` takes them (``time_in_force`` of the run for
    the portal, on the portal's difficulty), the player's fitted skill and its
    uncertainty as ``Scorer._job`` and ``signals.compute`` read them."""
    from fairgrid.analytics.calibration import skill_uncertainty

    cur = con.cursor()
    run = _run_for(con, run_id, portal)
    skills = _skills(con, run_id, portal)
    solves = dict(con.execute("SELECT player_id, count(*) FROM submissions WHERE portal = ? "
                              "GROUP BY 1", [portal]).fetchall())
    out = []
    for player, j, log_s in rows:
        expected = time_in_force(0.0, 1.0, run, puzzle_for_scoring(
            cur, f"p{j:02d}", run_id, portal)["difficulty"])
        sd = math.hypot(expected.sd, skill_uncertainty(solves[player], lambda_player))
        out.append((log_s - expected.log_s + skills[player]) / sd)
    return float(np.mean(out))


@pytest.mark.parametrize("players, most", [(1, -0.8), (20, -0.35)],
                         ids=["one-player-portal", "all-cheaters-portal"])
def test_a_small_portals_own_offset_does_not_price_its_cheaters_at_their_own_pace(
        tmp_path, players, most):
    """A portal of one player (or of 20, every one of them), who solves every puzzle
    five times quicker than it takes (a solver's output typed in). Unshrunk, the
    portal's offset took its whole pace and the cheaters were priced at the pace they
    cheat at (mean speed z 0.0). Shrunk as 50 players' skills are, a handful of players
    keep their pace in their skills, as one fit for all does (mean z -1.0 with one
    player, -0.6 with 20; with the ridge about -0.95 and -0.4: a portal of 20 players
    who all solve alike is a third of the way to a portal of its own)."""
    con, truth = build(tmp_path / "n.duckdb", few_solves_puzzle=False)
    settings = make_settings(tmp_path, nightly_min_solves=20)
    rng = np.random.default_rng(1)
    rows = []
    for b in range(players):
        s = rng.normal(0, 0.4)
        for j in rng.choice(24, 12, replace=False):
            rows.append((f"x{b:02d}", int(j),
                         truth["true_d"][j] - s - math.log(5) + rng.normal(0, 0.15)))
    _add_solves(con, "tiny", rows)
    run_id = run_nightly(direct_db(con), settings)["run_id"]
    z = _speed_z(con, run_id, "tiny", rows)
    assert z < most, f"five-times-quicker solves read as speed z {z:.2f} on their portal"


def test_another_portals_one_solve_does_not_take_a_puzzles_consensus_order_away(tmp_path):
    """demo's 60 players solve p01; a second portal sends one solve of it. A portal
    counts at most as many solves as all the others together, but never fewer than a
    consensus needs (``nightly.min_solves``): p01 keeps its consensus order."""
    con, _ = build(tmp_path / "n.duckdb", few_solves_puzzle=False)
    settings = make_settings(tmp_path, nightly_min_solves=20)
    key, = con.execute("SELECT min(sub_key) FROM submissions WHERE puzzle_id = 'p01'"
                       ).fetchone()
    con.execute("UPDATE submissions SET portal = 'rogue' WHERE sub_key = ?", [key])
    run_id = run_nightly(direct_db(con), settings)["run_id"]
    ranks, = con.execute("SELECT consensus_fill_rank FROM puzzle_ratings WHERE run_id = ? "
                         "AND puzzle_id = 'p01'", [run_id]).fetchone()
    assert ranks is not None


def test_a_hostile_portals_many_solves_do_not_set_what_a_new_portal_is_priced_on(tmp_path):
    """demo's 60 honest players are split over three honest portals (a, b, c), and a
    hostile portal's 200 sock puppets solve 12 shared puzzles each ten times slower than
    they take. A portal the run has not seen (a new one, or one renamed) is priced on
    the median portal's own pace, one vote a portal: not on ``mu``, whose weighted
    centre 2,400 hostile solves against 1,440 honest ones would set (a new portal's
    honest players then read 4.5 times quicker than expected; 6.0 with one fit for
    all)."""
    con, truth = build(tmp_path / "n.duckdb", few_solves_puzzle=False)
    for q, players in (("a", range(0, 20)), ("b", range(20, 40)), ("c", range(40, 60))):
        con.execute("UPDATE submissions SET portal = ? WHERE list_contains(?, player_id)",
                    [q, [f"u{i:03d}" for i in players]])
    settings = make_settings(tmp_path, nightly_min_solves=1000)

    def fresh_price(run_id):
        cur = con.cursor()
        run = _run_for(con, run_id, "fresh")
        return np.mean([time_in_force(0.0, 1.0, run, puzzle_for_scoring(
            cur, f"p{j:02d}", run_id, "fresh")["difficulty"]).log_s for j in range(24)])

    alone = fresh_price(run_nightly(direct_db(con), settings)["run_id"])
    _add_slow_portal(con, truth, "hostile", 10.0, "h")
    shift = fresh_price(run_nightly(direct_db(con), settings)["run_id"]) - alone
    assert abs(shift) < math.log(1.25), \
        f"a new portal's honest players are expected to take {math.exp(shift):.2f}x as long"
