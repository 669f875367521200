"""Each portal's own per-level nulls: a portal's solves are judged against its own
players' where it has enough of them, whatever another portal sends."""

from __future__ import annotations

import json

import numpy as np

from fairgrid.daemon.store.repository.scores import rating_run
from fairgrid.daemon.work.nightly import run_nightly
from fairgrid.daemon.work.nightly_db import direct_db
from fairgrid.daemon.work.scoring import rating_run_of

from ..helpers import build, make_settings


def _nulls(con, run_id):
    pooled, own = con.execute("SELECT level_nulls, portal_level_nulls FROM rating_runs "
                              "WHERE run_id = ?", [run_id]).fetchone()
    return json.loads(pooled), json.loads(own)


def _erratic(con, players, seed):
    """Rewrite the placements' times of ``players``' solves: intervals drawn log-normal
    (sd ``seed``-dependent), the last move where it was (the solve's duration, which the
    fit reads, is unchanged)."""
    rng = np.random.default_rng(seed)
    subs = [k for (k,) in con.execute(
        "SELECT sub_key FROM submissions WHERE list_contains(?, player_id)",
        [players]).fetchall()]
    new = {"sub_key": [], "seq": [], "t_ms": []}
    for key in subs:
        seqs, ts = zip(*con.execute("SELECT seq, t_ms FROM moves WHERE sub_key = ? "
                                    "ORDER BY seq", [key]).fetchall())
        gaps = rng.lognormal(0.0, 0.5 + seed, len(seqs))
        t = np.maximum(1, (np.cumsum(gaps) / gaps.sum() * ts[-1]).astype(int))
        t[-1] = ts[-1]
        new["sub_key"] += [key] * len(seqs)
        new["seq"] += list(seqs)
        new["t_ms"] += [int(x) for x in t]
    # one update from columns, not a statement a move
    con.register("new_t", {k: np.array(v, dtype=np.int64) for k, v in new.items()})
    con.execute("UPDATE moves SET t_ms = new_t.t_ms FROM new_t "
                "WHERE moves.sub_key = new_t.sub_key AND moves.seq = new_t.seq")
    con.unregister("new_t")


def test_a_portals_own_level_nulls_are_what_its_solves_say_whatever_another_sends(tmp_path):
    con, _ = build(tmp_path / "n.duckdb")
    club = [f"u{i:03d}" for i in range(30, 60)]
    con.execute("UPDATE submissions SET portal = 'club' WHERE list_contains(?, player_id)",
                [club])
    settings = make_settings(tmp_path, nightly_min_solves=20)
    first = run_nightly(direct_db(con), settings)
    pooled_1, own_1 = _nulls(con, first["run_id"])
    assert sorted(own_1) == ["club", "demo"] and own_1["demo"] and own_1["club"]
    assert first["portal_null_levels"] == {q: sorted(n) for q, n in own_1.items()}
    # the club's players now type at a pace of their own (a style, or a hostile portal's
    # machine-made logs): the same solves, the same durations, other intervals
    _erratic(con, club, 1)
    second = run_nightly(direct_db(con), settings)
    pooled_2, own_2 = _nulls(con, second["run_id"])
    assert own_2["club"] != own_1["club"]          # the club's own nulls learnt it
    assert own_2["demo"] == own_1["demo"]          # demo's did not move
    assert pooled_2 != pooled_1                    # every portal's together did
    # a demo solve is judged by demo's own, a portal the run did not see by everyone's
    run = rating_run_of(rating_run(con.cursor(), second["run_id"]))
    for level, nulls in own_2["demo"].items():
        mine = run.for_type("sudoku", "demo").nulls_of(level)
        other = run.for_type("sudoku", "new").nulls_of(level)
        assert {k: v for k, (v, own) in mine.items() if own} == \
            {k: tuple(v) for k, v in nulls.items()}
        assert not any(own for _, own in other.values())
        assert {k: v for k, (v, _) in other.items()} == \
            {k: tuple(v) for k, v in pooled_2.get(level, {}).items()}


def test_one_solve_of_another_portal_does_not_take_away_every_portals_level_nulls(tmp_path):
    """demo's ~1,400 solves make the learnt nulls of their levels. A second portal sends
    one solve of a puzzle of demo's commonest level (here: one of demo's solves moved to
    it). Every portal's nulls, which a portal without its own (a new or a small one)
    is judged by, should still be learnt from demo's solves: capping demo at as many
    values as every other portal together leaves two values of the level, fewer than
    LEVEL_NULL_MIN, and the level's learnt nulls are gone."""
    con, _ = build(tmp_path / "n.duckdb")
    settings = make_settings(tmp_path, nightly_min_solves=20)
    first = run_nightly(direct_db(con), settings)
    pooled_1, _ = _nulls(con, first["run_id"])
    level, = con.execute("SELECT level FROM puzzle_ratings WHERE run_id = ? GROUP BY level "
                         "ORDER BY count(*) DESC, level LIMIT 1",
                         [first["run_id"]]).fetchone()
    assert pooled_1[str(level)]
    key, = con.execute("SELECT min(s.sub_key) FROM submissions s JOIN puzzle_ratings r ON "
                       "r.puzzle_id = s.puzzle_id AND r.run_id = ? WHERE r.level = ?",
                       [first["run_id"], level]).fetchone()
    con.execute("UPDATE submissions SET portal = 'rogue' WHERE sub_key = ?", [key])
    second = run_nightly(direct_db(con), settings)
    pooled_2, _ = _nulls(con, second["run_id"])
    assert sorted(pooled_2.get(str(level), {})) == sorted(pooled_1[str(level)]), \
        f"level {level}'s learnt nulls of every portal: {pooled_2.get(str(level))}"
    run = rating_run_of(rating_run(con.cursor(), second["run_id"]))
    assert run.for_type("sudoku", "new").nulls_of(str(level)), \
        "a portal the run did not see is judged on simulated nulls"


def test_a_portal_with_fewer_solves_than_its_share_leaves_the_rest_of_the_sample_to_others(
        tmp_path):
    """The level sample is ``sample`` solves shared by the portals, at least ``least`` of
    each. A second portal with a single eligible solve cannot use its half: demo, which
    has far more than the whole sample, should get the rest of it, not half of it (one
    solve of another portal must not halve what demo's own and everyone's nulls are
    learnt from). Here at a quarter of the nightly job's scale (1,000 shared, 250 each)
    since the database holds ~1,400 solves."""
    from fairgrid.daemon.store.repository.nightly import sample_moves

    con, _ = build(tmp_path / "n.duckdb")
    key, = con.execute("SELECT min(sub_key) FROM submissions").fetchone()
    con.execute("UPDATE submissions SET portal = 'rogue' WHERE sub_key = ?", [key])
    drawn = sample_moves(con.cursor(), 1000, 7, 250)
    solves = dict(zip(drawn["sub_key"].tolist(), drawn["portal"].tolist()))
    by_portal = {q: sum(1 for p in solves.values() if p == q) for q in set(solves.values())}
    assert by_portal.get("rogue") == 1
    assert by_portal["demo"] == 999, f"demo's part of a 1,000-solve sample: {by_portal}"


def test_a_capped_portal_counts_the_first_of_its_random_sample_not_its_oldest_solves(
        tmp_path, monkeypatch):
    """Every portal's nulls count a portal no more than all the others (beyond a floor):
    "its first" values, which detection.md and ``pool_level_values`` say are taken in its
    sample's random (seeded hash) order, ``sample_moves``' ``place``. Each portal's values
    should reach ``pool_level_values`` in that order; they come in ``sub_key`` order
    (the moves' read's), so a capped portal's part of everyone's null is its oldest
    sampled solves."""
    from fairgrid.daemon.store.repository import nightly as sql
    from fairgrid.daemon.work import nightly

    con, _ = build(tmp_path / "n.duckdb")
    club = [f"u{i:03d}" for i in range(50, 60)]
    con.execute("UPDATE submissions SET portal = 'club' WHERE list_contains(?, player_id)",
                [club])
    db = direct_db(con)
    drawn = db.read(sql.sample_moves, nightly.LEVEL_SAMPLE, nightly.LEVEL_SAMPLE_SEED,
                    nightly.LEVEL_PORTAL_SAMPLE)
    # each sampled solve, known by (portal, its cells in order, its last move's time),
    # -> its place in its portal's sample
    place_of = {}
    keys = drawn["sub_key"]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]).tolist() + [len(keys)]
    for a, b in zip(starts, starts[1:]):
        place_of[(drawn["portal"][a], tuple(drawn["cell"][a:b].tolist()),
                  int(drawn["t_ms"][b - 1]))] = int(drawn["place"][a])
    assert len(place_of) == len(starts) - 1         # every solve told apart

    def one_value_per_solve(solves):                # a solve's value: its place
        out = {}
        for (q, level), _, _, t_ms, cell, *_ in solves:
            out.setdefault((q, level), {}).setdefault("unforced", []).append(
                place_of[(q, tuple(cell.tolist()), int(t_ms[-1]))])
        return out

    seen = {}

    def pool(by_portal, *args, **kwargs):
        seen.update(by_portal)
        return {}
    monkeypatch.setattr(nightly.recalibration, "level_values", one_value_per_solve)
    monkeypatch.setattr(nightly.recalibration, "pool_level_values", pool)
    level_of = {f"p{j:02d}": "3" for j in range(24)}
    nightly._level_nulls(db, level_of, None)
    assert sorted(seen) == ["club", "demo"]
    for q, levels in seen.items():
        places = levels["3"]["unforced"]
        assert places == sorted(places), \
            f"{q}'s values reach the pool in place order {places[:12]}..."


def test_the_sample_is_shared_as_the_portals_can_fill_it():
    from fairgrid.daemon.store.repository.nightly import share

    assert share([1, 1400], 1000) == 999          # the rest goes to the portal with more
    assert share([3000, 3000], 4000) == 2000      # evenly where both have enough
    assert share([100, 700, 5000], 4000) == 3200  # the small ones give all theirs
    assert share([10, 20], 4000) == 20            # fewer in all than the sample: all
    assert share([], 4000) == 0


def test_solves_whose_move_logs_expired_take_no_place_in_the_samples(tmp_path):
    """Retention drops old solves' move logs but keeps the solves (their times still
    rate puzzles and players). The level sample and the consensus orders read moves:
    an expired solve drawn into the sample gives nothing, so a portal that keeps two
    years of solves and a month of logs would learn its nulls from a handful. The
    sample should hold as many solves as there are logs to fill it, and a puzzle's
    consensus should count only solves whose order can be read."""
    from datetime import datetime, timedelta, timezone

    from fairgrid.daemon.store.repository import nightly as sql
    from fairgrid.daemon.store.repository.lifecycle import apply_retention

    con, _ = build(tmp_path / "n.duckdb")
    total, = con.execute("SELECT count(*) FROM submissions").fetchone()
    old = datetime.now(timezone.utc) - timedelta(days=400)
    con.execute("UPDATE submissions SET committed_at = ? WHERE sub_key % 3 <> 0", [old])
    con.execute("""UPDATE submissions SET raw = '{"moves": []}'""")  # as a webhook's
    dropped = apply_retention(con, old + timedelta(days=1))
    logged, = con.execute("SELECT count(DISTINCT sub_key) FROM moves").fetchone()
    assert dropped > total // 2 and 0 < logged < total - dropped + 1
    drawn = sql.sample_moves(con.cursor(), 1000, 7, 250)
    sampled = len(set(drawn["sub_key"].tolist()))
    assert sampled == min(1000, logged), (sampled, logged)
    # consensus: a puzzle is a candidate on the solves whose order can be read
    logged_of = dict(con.execute(
        f"SELECT puzzle_id, count(*) FROM ({sql.ELIGIBLE}) e WHERE EXISTS "
        "(SELECT 1 FROM moves m WHERE m.sub_key = e.sub_key) GROUP BY puzzle_id").fetchall())
    least = max(logged_of.values())
    candidates = sql.consensus_candidates(con.cursor(), least)
    assert [c.puzzle_id for c in candidates] == sorted(
        p for p, n in logged_of.items() if n >= least)
    assert all(c.solves == logged_of[c.puzzle_id] for c in candidates)


def test_a_puzzle_solved_again_teaches_the_ratings_nothing(tmp_path):
    """A player who solves a puzzle again remembers it: the replay is quicker, its hard
    steps found at once. The player verdict leaves replays out of a season; the nightly
    fit read them, rating the player too skilled and the puzzle too easy. Only a
    player's first finished solve of a puzzle is eligible (a given-up attempt before
    it is no finished solve)."""
    from datetime import timedelta

    from fairgrid.daemon.store.repository import nightly as sql

    con, _ = build(tmp_path / "n.duckdb")
    n = len(sql.eligible_solves(con.cursor())["j"])
    key, = con.execute("SELECT max(sub_key) FROM submissions").fetchone()
    first = con.execute("SELECT sub_key, started_at FROM submissions "
                        "ORDER BY sub_key LIMIT 1").fetchone()
    # the same player and puzzle again, a day later, in a tenth of the time
    con.execute("CREATE TEMP TABLE again AS SELECT * FROM submissions WHERE sub_key = ?",
                [first[0]])
    con.execute("UPDATE again SET sub_key = ?, submission_id = 'again', webhook_id = 'again', "
                "started_at = started_at + INTERVAL 1 DAY, duration_ms = duration_ms // 10",
                [key + 1])
    con.execute("INSERT INTO submissions SELECT * FROM again")
    solves = sql.eligible_solves(con.cursor())
    assert len(solves["j"]) == n, "the replay was fitted"
    # an attempt given up the day before is no finished solve: the first one still counts
    con.execute("UPDATE again SET sub_key = ?, submission_id = 'before', "
                "webhook_id = 'before', complete = false, started_at = ?",
                [key + 2, first[1] - timedelta(days=1)])
    con.execute("INSERT INTO submissions SELECT * FROM again")
    assert len(sql.eligible_solves(con.cursor())["j"]) == n
