"""The nightly rating refresh on a real DuckDB file with known difficulties and skills."""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta, timezone

import duckdb
import numpy as np
import pytest

from fairgrid.analytics.expected_time import load_default
from fairgrid.analytics.puzzle_model import complete_metrics
from fairgrid.daemon.work.nightly import STAGES, run_nightly
from fairgrid.daemon.work.nightly_db import direct_db
from fairgrid.daemon.store import connect

from ...fixtures import EASY, NURIKABE_8
from ..helpers import (COLUMNS, EMPTY, METRICS, MOVE_COLUMNS, build, insert_rows,
                       make_settings)


def _ratings(con, run_id):
    d = dict(con.execute("SELECT puzzle_id, difficulty FROM puzzle_ratings WHERE run_id = ?",
                         [run_id]).fetchall())
    s = dict(con.execute("SELECT player_id, skill FROM player_ratings WHERE run_id = ?",
                         [run_id]).fetchall())
    return d, s


def test_fit_recovers_known_parameters_and_shrinks_sparse_puzzles(tmp_path):
    con, truth = build(tmp_path / "n.duckdb")
    settings = make_settings(tmp_path, nightly_min_solves=20)
    summary = run_nightly(direct_db(con), settings)
    assert summary["solves"] == truth["n"] and summary["players"] == 60
    # where the time went, stage by stage (retention only when move logs expire)
    assert list(summary["stage_seconds"]) == [s for s in STAGES if s != "retention"]
    assert all(v >= 0 for v in summary["stage_seconds"].values())
    assert sum(summary["stage_seconds"].values()) <= summary["seconds"]
    d, s = _ratings(con, summary["run_id"])
    ids = sorted(d)
    fitted = np.array([d[k] for k in ids])
    well = np.arange(len(ids) - 1)                      # the last puzzle has 2 solves
    assert np.corrcoef(fitted[well], truth["true_d"][well])[0, 1] > 0.95
    skills = np.array([s[f"u{i:03d}"] for i in range(60)])
    assert np.corrcoef(skills, truth["skill"])[0, 1] > 0.9
    assert summary["mu"] == pytest.approx(-1.0, abs=0.15)
    # the sparse puzzle stays near its prior (shrunk towards mu + prior)
    sparse = fitted[-1] - (summary["mu"] + truth["prior"])
    assert abs(sparse) < 0.6 * max(abs(truth["true_d"][-1] - truth["prior"] + 1.0), 0.2) + 0.1
    # consensus: puzzle p00 was always solved in row order
    cons = json.loads(con.execute("SELECT consensus_fill_rank FROM puzzle_ratings WHERE "
                                  "run_id = ? AND puzzle_id = 'p00'",
                                  [summary["run_id"]]).fetchone()[0])
    ranks = [cons[c] for c in EMPTY]
    assert ranks == sorted(ranks) and cons[2] is None     # cell 2 is a given
    assert con.execute("SELECT consensus_fill_rank FROM puzzle_ratings WHERE puzzle_id = ?",
                       [f"p{23:02d}"]).fetchone()[0] is None
    # recalibration and live correlations were stored; the run is current
    run = con.execute("SELECT calibration, correlations FROM rating_runs").fetchone()
    assert json.loads(run[0])["features"] and "fitted_difficulty" in json.loads(run[1])
    # honest nulls learnt from the real solves, per level (times are evenly spaced here)
    bands = json.loads(con.execute("SELECT level_nulls FROM rating_runs").fetchone()[0])
    assert bands and summary["null_levels"] == sorted(bands)
    for null in bands.values():
        # every null at least as wide as people differ, whatever these solves show
        assert null["unforced"][0] >= 2.0
        assert null["pace_variation"][0] <= math.log(0.6) and null["pace_variation"][1] >= 0.2
    assert con.execute("SELECT run_id FROM current_rating").fetchone()[0] == summary["run_id"]
    # the metrics the calibration reads were rated once and kept with the puzzles
    kept = json.loads(con.execute("SELECT ratings FROM puzzles WHERE id = 'p00'").fetchone()[0])
    assert set(load_default().metrics_needed) <= set(kept["metrics"])
    assert kept["metrics"]["serate"] == METRICS["serate"] and kept["level"] == 3
    assert con.execute("SELECT status FROM job_runs").fetchone()[0] == "success"
    assert len(summary["rescore"]) == truth["n"]


def _add_nurikabe(con, skill_of: dict[str, float], rng, puzzles=6, prior=6.0):
    """Ready Nurikabe puzzles (NURIKABE_8's grid) solved by ``skill_of``'s players, whose
    times follow log t = prior + 0.5 - skill; returns the solves added."""
    from fairgrid.solvers.puzzle_types import puzzle_type, values_text
    ptype = puzzle_type("nurikabe")
    p = ptype.parse(NURIKABE_8)
    solution = ptype.solution(p)
    free = np.flatnonzero(ptype.givens(p) == 0)
    now = datetime.now(timezone.utc)
    ratings = json.dumps({"metrics": {"cells": 64.0}, "expected_log_s": prior, "sd_log": 1.0,
                          "null": {}, "level": 3})
    key = con.execute("SELECT coalesce(max(sub_key) + 1, 0) FROM submissions"
                      ).fetchall()[0][0]
    n, subs, moves = 0, [], []
    for j in range(puzzles):
        con.execute("INSERT INTO puzzles (id, givens, box_size, solution, status, "
                    "registered_at, ratings, fill_rank_median, puzzle_type) VALUES "
                    "(?, ?, 0, ?, 'ready', ?, ?, ?, 'nurikabe')",
                    [f"nk{j}", NURIKABE_8, values_text(solution), now, ratings,
                     json.dumps([None] * 64)])
        for player, skill in skill_of.items():
            dur = int(1000 * np.exp(prior + 0.5 - skill + rng.normal(0, 0.1)))
            t = np.linspace(dur / free.size, dur, free.size).astype(int)
            subs.append((key, "demo", f"n{key}", f"wn{key}", "t", player, f"nk{j}", now, now,
                         now - timedelta(days=1), int(free.size), int(t[-1]), True, "scored",
                         "{}"))
            moves += [(key, q, int(t[q]), int(c), int(solution[c]), False)
                      for q, c in enumerate(free)]
            key += 1
            n += 1
    insert_rows(con, "submissions", COLUMNS, subs)
    insert_rows(con, "moves", MOVE_COLUMNS, moves)
    con.execute("UPDATE moves_through SET through = (SELECT max(sub_key) FROM submissions)")
    return n


@pytest.mark.slow  # two whole nightly runs: the longest of the quick loop
def test_each_puzzle_type_gets_its_own_fit_and_skills(tmp_path):
    """The same people solve Sudoku and Nurikabe: the fast Sudoku solvers are the slow
    Nurikabe ones here, and each type's skills say so; Sudoku's fit is what it is alone."""
    settings = make_settings(tmp_path, nightly_min_solves=20)
    con, truth = build(tmp_path / "alone.duckdb")
    alone = run_nightly(direct_db(con), settings)
    d_alone, s_alone = _ratings(con, alone["run_id"])
    con, truth = build(tmp_path / "both.duckdb")  # the same solves, and Nurikabe ones
    players = [f"u{i:03d}" for i in range(20)]
    added = _add_nurikabe(con, {u: -truth["skill"][i] for i, u in enumerate(players)},
                          np.random.default_rng(1))
    both = run_nightly(direct_db(con), settings)
    assert both["solves"] == truth["n"] + added
    assert both["by_type"]["nurikabe"]["solves"] == added
    assert both["by_type"]["nurikabe"]["mu"] == pytest.approx(0.5, abs=0.15)
    assert both["mu"] == pytest.approx(alone["mu"])  # the top-level figures are Sudoku's
    rows = con.execute("SELECT player_id, puzzle_type, skill FROM player_ratings WHERE "
                       "run_id = ?", [both["run_id"]]).fetchall()
    skill = {(u, k): v for u, k, v in rows}
    nk = np.array([skill[(u, "nurikabe")] for u in players])
    sd = np.array([skill[(u, "sudoku")] for u in players])
    assert np.corrcoef(nk, -truth["skill"][:20])[0, 1] > 0.9
    assert np.corrcoef(sd, nk)[0, 1] < -0.8
    assert all(skill[(u, "sudoku")] == pytest.approx(s_alone[u]) for u in s_alone)
    d_both = dict(con.execute("SELECT puzzle_id, difficulty FROM puzzle_ratings WHERE "
                              "run_id = ?", [both["run_id"]]).fetchall())
    assert all(d_both[p] == pytest.approx(d_alone[p]) for p in d_alone)
    # Nurikabe's levels have nulls of their own
    bands = json.loads(con.execute("SELECT level_nulls FROM rating_runs WHERE run_id = ?",
                                   [both["run_id"]]).fetchone()[0])
    assert any(k.startswith("nurikabe:") for k in bands)
    assert any(not k.startswith("nurikabe:") for k in bands)


def test_a_level_learns_its_order_null_as_an_offset_from_each_puzzles_own(tmp_path):
    from fairgrid.analytics.signals import ORDER_OFFSET

    ranks = [None] * 81
    for r, c in enumerate(EMPTY):  # the predicted order: reading order
        ranks[c] = float(r)
    offsets = []
    for centre in (0.2, 0.5):  # the same solves, their puzzles' simulated centre two ways
        con, _ = build(tmp_path / f"o{centre}.duckdb")
        for pid, ratings in con.execute("SELECT id, ratings FROM puzzles").fetchall():
            doc = {**json.loads(ratings), "null": {"order_sa": [centre, 0.2]}}
            con.execute("UPDATE puzzles SET ratings = ?, fill_rank_median = ? WHERE id = ?",
                        [json.dumps(doc), json.dumps(ranks), pid])
        run_nightly(direct_db(con), make_settings(tmp_path, nightly_min_solves=20))
        bands = json.loads(con.execute("SELECT level_nulls FROM rating_runs").fetchone()[0])
        assert bands and all("order_sa" not in null for null in bands.values())
        offsets.append([null[ORDER_OFFSET][0] for null in bands.values()])
    assert offsets[0] == pytest.approx([x + 0.3 for x in offsets[1]])


def test_flagged_and_unscored_solves_are_left_out(tmp_path):
    con, truth = build(tmp_path / "n.duckdb", puzzles=12, players=30)
    # a flagged 1-second solve by u000 must not make u000 look fast (a day after the
    # solve it repeats the puzzle of: started with it, it would have finished first)
    con.execute(f"INSERT INTO submissions {COLUMNS} SELECT 99999, portal, 'cheat', 'wc', "
                "tournament_id, 'u000', puzzle_id, started_at + INTERVAL 1 DAY, received_at, "
                "committed_at, n_moves, 1000, true, 'scored', '{}' FROM submissions LIMIT 1")
    con.execute("INSERT INTO flags (portal, submission_id, created_at, state, reasons) "
                "VALUES ('demo', 'cheat', now(), 'open', '[]')")
    # nor a 1-second solve scoring has not judged yet (no flag can keep it out)
    con.execute(f"INSERT INTO submissions {COLUMNS} SELECT 99998, portal, 'unscored', "
                "'wu', tournament_id, 'u000', puzzle_id, started_at + INTERVAL 1 DAY, "
                "received_at, committed_at, n_moves, 1000, true, 'pending', '{}' "
                "FROM submissions LIMIT 1")
    settings = make_settings(tmp_path)
    summary = run_nightly(direct_db(con), settings)
    assert summary["solves"] == truth["n"]
    solves = con.execute("SELECT solves FROM player_ratings WHERE player_id = 'u000'").fetchone()
    assert solves[0] == con.execute("SELECT count(*) FROM submissions WHERE player_id = 'u000' "
                                    "AND submission_id NOT IN ('cheat', 'unscored')"
                                    ).fetchone()[0]


def test_a_run_killed_mid_way_leaves_the_old_ratings_and_the_next_run_completes(tmp_path):
    con, _ = build(tmp_path / "n.duckdb", puzzles=12, players=30)
    settings = make_settings(tmp_path)
    first = run_nightly(direct_db(con), settings)
    before = _ratings(con, first["run_id"])

    class Killed(Exception):
        pass

    calls = []

    def kill_in_write(stage):
        calls.append(stage)
        if stage == "write":
            raise Killed()

    with pytest.raises(Killed):
        run_nightly(direct_db(con), settings, progress=kill_in_write)
    assert con.execute("SELECT run_id FROM current_rating").fetchone()[0] == first["run_id"]
    assert con.execute("SELECT count(DISTINCT run_id) FROM puzzle_ratings").fetchone()[0] == 1
    assert _ratings(con, first["run_id"]) == before
    assert [r[0] for r in con.execute("SELECT status FROM job_runs ORDER BY started_at")
            .fetchall()] == ["success", "failed"]
    second = run_nightly(direct_db(con), settings)
    assert con.execute("SELECT run_id FROM current_rating").fetchone()[0] == second["run_id"]
    # history: both runs' rows are kept
    assert con.execute("SELECT count(DISTINCT run_id) FROM puzzle_ratings").fetchone()[0] == 2


def test_write_failure_inside_the_transaction_rolls_back(tmp_path):
    con, _ = build(tmp_path / "n.duckdb", puzzles=12, players=30)
    settings = make_settings(tmp_path)
    first = run_nightly(direct_db(con), settings)
    db = direct_db(con)
    real_write = db.write
    state = {"n": 0}

    def flaky(fn, *args):
        def inner(c, *args):
            out = fn(c, *args)
            if c.execute("SELECT count(*) FROM rating_runs").fetchone()[0] > 1:
                raise duckdb.Error("disk full")  # after the rows went in, before COMMIT
            return out
        state["n"] += 1
        return real_write(inner if state["n"] == 2 else fn, *args)

    db.write = flaky
    with pytest.raises(duckdb.Error):
        run_nightly(db, settings)
    assert con.execute("SELECT count(*) FROM rating_runs").fetchone()[0] == 1
    assert con.execute("SELECT run_id FROM current_rating").fetchone()[0] == first["run_id"]


# ------------------------------------------------------------------- the stages, each alone

def test_priors_complete_sudoku_metrics_once_and_keep_other_types_own():
    from fairgrid.daemon.store.repository.nightly import RatedPuzzle
    from fairgrid.daemon.work.nightly import _priors

    cal = load_default()
    full = complete_metrics(EASY, METRICS, cal.metrics_needed)
    model = {"metrics": METRICS, "expected_log_s": 1.0, "sd_log": 0.17, "null": {},
             "level": 3}
    nurikabe = {"metrics": {"cells": 64.0}, "expected_log_s": 6.0, "sd_log": 1.0}
    priors = _priors(cal, [
        RatedPuzzle("a", json.dumps(model), EASY, "sudoku"),
        RatedPuzzle("b", json.dumps({**model, "metrics": full}), EASY, "sudoku"),
        RatedPuzzle("c", json.dumps(nurikabe), NURIKABE_8, "nurikabe")])
    assert priors.metrics == [full, full, {"cells": 64.0}]
    # Sudoku's prior is the calibration's, whatever the analysis stored; others' their own
    assert priors.prior.tolist() == [cal.expected_log_time(full)] * 2 + [6.0]
    assert priors.prior_sd.tolist() == [cal.residual_sd] * 2 + [1.0]
    # only the puzzle that lacked metrics is to be stored again, with the rest of its model
    assert [pid for _, pid in priors.completed] == ["a"]
    assert json.loads(priors.completed[0][0]) == {**model, "metrics": full}


def test_load_indexes_each_solve_by_its_puzzle_and_player(tmp_path):
    """The puzzles, the players and the solves are three reads: a solve's ``j`` and
    ``i`` point at its own puzzle and (player, type) in the other two."""
    from fairgrid.daemon.work.nightly import _load

    con, truth = build(tmp_path / "n.duckdb", puzzles=6, players=12)
    added = _add_nurikabe(con, {f"u{i:03d}": 0.1 * i for i in range(5)},
                          np.random.default_rng(1), puzzles=2)
    loaded = _load(direct_db(con))
    assert loaded.ids == sorted(loaded.ids) and len(loaded.ids) == 8
    assert loaded.types.tolist() == ["nurikabe"] * 2 + ["sudoku"] * 6  # nk* < p*
    assert loaded.log_t.size == truth["n"] + added
    got = sorted((loaded.ids[j], *loaded.players[i], round(float(np.exp(t)) * 1000))
                 for j, i, t in zip(loaded.j, loaded.i, loaded.log_t))
    want = sorted(con.execute(
        "SELECT s.puzzle_id, s.portal, s.player_id, p.puzzle_type, s.duration_ms FROM "
        "submissions s JOIN puzzles p ON p.id = s.puzzle_id").fetchall())
    assert got == want
    assert loaded.player_types.tolist() == [p.puzzle_type for p in loaded.players]
    # a log of more than a day measures an open page, not solving: not read
    con.execute("UPDATE submissions SET duration_ms = 24 * 3600 * 1000 + 1 "
                "WHERE sub_key = 0")
    assert _load(direct_db(con)).log_t.size == truth["n"] + added - 1


def test_the_fit_stage_fits_each_type_on_its_own_puzzles_and_players(tmp_path):
    from dataclasses import replace

    from fairgrid.daemon.work.nightly import _fit, _fit_by_type, _load, _portals

    con, _ = build(tmp_path / "n.duckdb", puzzles=8, players=20)
    _add_nurikabe(con, {f"u{i:03d}": 0.1 * i for i in range(10)}, np.random.default_rng(1),
                  puzzles=4)
    loaded = _load(direct_db(con))
    s = make_settings(tmp_path)
    fits = _fit(loaded, s.nightly_lambda_puzzle, s.nightly_lambda_player, None)
    assert list(fits.by_type) == ["sudoku", "nurikabe"]
    for type_name, fit in fits.by_type.items():
        puzzles, players = loaded.types == type_name, loaded.player_types == type_name
        assert fit.difficulty.size == puzzles.sum() and fit.skill.size == players.sum()
        assert fit.puzzle_solves.sum() == np.isin(loaded.j, np.flatnonzero(puzzles)).sum()
        assert fits.difficulty[puzzles].tolist() == fit.difficulty.tolist()
        assert fits.skill[players].tolist() == fit.skill.tolist()
    # Nurikabe's prior (sd 1.0) is far less sure than Sudoku's: its puzzles are shrunk
    # towards it far less than they would be were it as sure
    sure = replace(loaded, prior_sd=np.full(len(loaded.ids), loaded.shipped.residual_sd))
    as_sure = _fit_by_type(sure, s.nightly_lambda_puzzle, s.nightly_lambda_player, None,
                           _portals(sure)[1])
    wide = np.abs(fits.by_type["nurikabe"].delta).sum()
    assert wide > 1.2 * np.abs(as_sure["nurikabe"].delta).sum()
    assert as_sure["sudoku"].delta.tolist() == fits.sudoku.delta.tolist()


def test_a_portal_of_another_type_only_still_gets_sudokus_empty_fit(tmp_path):
    """The run's top-level figures are Sudoku's fit: there is one, empty, whatever the
    portal plays."""
    from fairgrid.daemon.work.nightly import _fit, _load

    con = connect(str(tmp_path / "n.duckdb"))
    added = _add_nurikabe(con, {f"u{i}": 0.1 * i for i in range(6)},
                          np.random.default_rng(2), puzzles=3)
    s = make_settings(tmp_path)
    fits = _fit(_load(direct_db(con)), s.nightly_lambda_puzzle, s.nightly_lambda_player,
                None)
    assert list(fits.by_type) == ["sudoku", "nurikabe"]
    assert fits.sudoku.puzzle_solves.size == 0 and fits.sudoku.mu == 0.0
    assert fits.by_type["nurikabe"].puzzle_solves.sum() == added


def _fit_with_mu(mu: float):
    from fairgrid.analytics.ratings import Fit

    empty = np.zeros(0)
    return Fit(mu, empty, empty, empty, 0.0, empty, empty, 0)


def test_levels_keep_their_meaning_whatever_the_players_speed():
    """Each type's level is read on its own cut points, shifted by its fitted offset:
    players twice as fast (every difficulty and the offset lower alike) leave every
    puzzle its level."""
    from fairgrid.analytics import nurikabe
    from fairgrid.daemon.work.nightly import _levels

    cal = load_default()

    def between(bounds):  # one expected log-time inside each level, 1 to 5
        cuts = np.log(np.asarray(bounds, dtype=float))
        return np.r_[cuts[0] - 1, (cuts[1:] + cuts[:-1]) / 2, cuts[-1] + 1]

    types = np.array(["sudoku"] * 5 + ["nurikabe"] * 5, dtype=object)
    difficulty = np.r_[between(cal.level_bounds_s), between(nurikabe.LEVEL_BOUNDS_S)]
    for mu in (0.0, -np.log(2), 0.4):
        fits = {"sudoku": _fit_with_mu(mu), "nurikabe": _fit_with_mu(mu)}
        assert _levels(cal, fits, types, difficulty + mu).tolist() == [1, 2, 3, 4, 5] * 2
    # Nurikabe's quicker times: its levels 1 to 4 would all be Sudoku's easiest
    as_sudoku = _levels(cal, {"sudoku": _fit_with_mu(0.0)}, np.array(["sudoku"] * 5),
                        difficulty[5:])
    assert as_sudoku[:4].tolist() == [1] * 4


def test_the_write_stage_stores_what_the_stages_computed(tmp_path):
    from fairgrid.daemon.work.nightly import _consensus, _fit, _load, _recalibrate, _write

    con, _ = build(tmp_path / "n.duckdb", puzzles=12, players=30)
    s = make_settings(tmp_path, nightly_min_solves=20)
    db = direct_db(con)
    loaded = _load(db)
    fits = _fit(loaded, s.nightly_lambda_puzzle, s.nightly_lambda_player, None)
    recal = _recalibrate(loaded, fits, s.nightly_min_solves, "r1")
    orders = _consensus(db, loaded, fits, s.nightly_min_solves, None)
    written = _write(db, "r1", loaded, fits, recal, orders, s.nightly_rescore_days)
    run = dict(zip(("run_id", "finished_at", "solves", "puzzles", "players", "mu",
                    "residual_sd", "calibration", "level_nulls", "by_type"),
                   con.execute("SELECT run_id, finished_at, solves, puzzles, players, mu, "
                               "residual_sd, calibration, level_nulls, by_type "
                               "FROM rating_runs").fetchone()))
    assert run["run_id"] == "r1" and run["finished_at"] == written.at
    assert (run["solves"], run["puzzles"], run["players"]) == (loaded.log_t.size, 12, 30)
    assert (run["mu"], run["residual_sd"]) == (fits.sudoku.mu, fits.sudoku.residual_sd)
    assert run["calibration"] == recal.recalibration.calibration.to_json()
    assert json.loads(run["level_nulls"]) == orders.level_nulls and orders.level_nulls
    assert json.loads(run["by_type"]) == written.by_type and list(written.by_type) == ["sudoku"]
    rows = con.execute("SELECT puzzle_id, difficulty, prior, level, solves, "
                       "consensus_fill_rank IS NOT NULL FROM puzzle_ratings "
                       "ORDER BY puzzle_id").fetchall()
    assert [r[0] for r in rows] == loaded.ids
    assert [r[1] for r in rows] == fits.difficulty.tolist()
    assert [r[2] for r in rows] == (loaded.prior + fits.sudoku.mu).tolist()
    assert [r[3] for r in rows] == orders.levels.tolist()
    assert [r[4] for r in rows] == recal.counts.tolist()
    assert [r[5] for r in rows] == [p in orders.consensus for p in loaded.ids]
    skills = con.execute("SELECT portal, player_id, puzzle_type, skill, solves FROM "
                         "player_ratings ORDER BY portal, player_id, puzzle_type").fetchall()
    assert [tuple(r[:3]) for r in skills] == loaded.players
    assert [r[3] for r in skills] == fits.skill.tolist()
    assert [r[4] for r in skills] == np.bincount(loaded.i).tolist()
    assert con.execute("SELECT run_id FROM current_rating").fetchone()[0] == "r1"


def test_a_rating_run_row_is_stored_by_column_name(tmp_path):
    from fairgrid.daemon.store.connection import in_transaction
    from fairgrid.daemon.store.repository.nightly import RatingRunRow, write_rating_run

    con = connect(str(tmp_path / "n.duckdb"))
    now = datetime.now(timezone.utc)
    row = RatingRunRow(run_id="r", finished_at=now, solves=11, puzzles=7, players=5,
                       mu=-0.5, residual_sd=0.25, calibration='{"c": 1}',
                       correlations='{"k": 2}', level_nulls='{"3": {}}',
                       by_type='{"sudoku": {}}')
    empty = {"puzzle_id": np.array([], dtype=object)}
    in_transaction(con, write_rating_run, row, empty, {"player_id": empty["puzzle_id"]})
    names = ", ".join(RatingRunRow._fields)
    assert con.execute(f"SELECT {names} FROM rating_runs").fetchone() == tuple(row)
    assert con.execute("SELECT run_id FROM current_rating").fetchone()[0] == "r"


def test_the_load_reads_puzzles_solves_and_players_in_one_snapshot(tmp_path, monkeypatch):
    """A solve committed while the job loads (a new player whose id sorts first) is in
    none of the three reads or in all: read apart, it shifted every player index, and
    players were fitted on each other's solves."""
    from fairgrid.daemon.store.repository import nightly as repo

    con, _ = build(tmp_path / "f.duckdb", puzzles=3, players=5, few_solves_puzzle=False)
    real = repo.eligible_players
    now = datetime.now(timezone.utc)

    def players_after_a_commit(cur):
        other = con.cursor()
        other.execute(f"INSERT INTO submissions {COLUMNS} VALUES (999, 'demo', 's-new', "
                      "'w-new', 't', '!new', 'p00', ?, ?, ?, 81, 5000, true, 'scored', '{}')",
                      [now, now, now])
        other.close()
        return real(cur)
    monkeypatch.setattr(repo, "eligible_players", players_after_a_commit)
    puzzles, solves, players = repo.snapshot(con.cursor())
    assert [p.player_id for p in players] == [f"u{i:03d}" for i in range(5)]
    assert int(solves["i"].max()) == len(players) - 1 and len(solves["i"]) == 15
    # the next load sees it, in all three reads
    monkeypatch.setattr(repo, "eligible_players", real)
    _, solves, players = repo.snapshot(con.cursor())
    assert players[0].player_id == "!new" and len(solves["i"]) == 16


def test_a_run_stopped_after_its_write_leaves_its_solves_to_re_score(tmp_path):
    """Once the write stage put a run in force, its solves are marked ``rescore`` in that
    transaction: a stop (or a kill) at a later stage leaves them for the daemon's sweep,
    and the run's row says its ratings are in force."""
    from fairgrid.daemon.work.nightly import NightlyCancelled

    con, truth = build(tmp_path / "f.duckdb", puzzles=4, players=8)

    def stop_at_rescore(stage):
        if stage == "rescore":
            raise NightlyCancelled("the daemon is shutting down")
    with pytest.raises(NightlyCancelled):
        run_nightly(direct_db(con), make_settings(tmp_path), progress=stop_at_rescore)
    status, rows = con.execute("SELECT status, rows FROM job_runs").fetchone()
    run = con.execute("SELECT id FROM job_runs").fetchone()[0]
    assert status == "abandoned" and json.loads(rows)["in_force"], rows
    assert "ratings are in force" in json.loads(rows)["error"]
    assert con.execute("SELECT run_id FROM current_rating").fetchone()[0] == run
    assert con.execute("SELECT count(*) FROM submissions WHERE status = 'rescore'"
                       ).fetchone()[0] == truth["n"]

    def stop_at_fit(stage):
        if stage == "fit":
            raise NightlyCancelled("the daemon is shutting down")
    con.execute("UPDATE submissions SET status = 'scored'")
    with pytest.raises(NightlyCancelled):
        run_nightly(direct_db(con), make_settings(tmp_path), progress=stop_at_fit)
    assert con.execute("SELECT count(*) FROM submissions WHERE status = 'rescore'"
                       ).fetchone()[0] == 0
    assert con.execute("SELECT run_id FROM current_rating").fetchone()[0] == run


def test_a_stop_ends_a_chunked_stage_at_its_next_chunk(tmp_path, monkeypatch):
    """The level nulls are computed in chunks of sampled solves, minutes on a big portal:
    a stop during them ends the run before the next chunk is handed out (the unit's
    grace is a minute), recorded ``abandoned``, nothing in force."""
    from concurrent.futures import ThreadPoolExecutor

    from fairgrid.analytics import recalibration
    from fairgrid.daemon.work import nightly
    from fairgrid.daemon.work.nightly import NightlyCancelled

    con, _ = build(tmp_path / "s.duckdb", puzzles=4, players=8)
    monkeypatch.setattr(nightly, "LEVEL_TASK", 5)   # a chunk of five sampled solves
    stage, chunks = [None], []

    class Counting(ThreadPoolExecutor):
        def submit(self, fn, *args, **kwargs):
            if fn is recalibration.level_values:
                chunks.append(args)
            return super().submit(fn, *args, **kwargs)

    with Counting(1) as pool:
        with pytest.raises(NightlyCancelled):
            run_nightly(direct_db(con), make_settings(tmp_path), executor=pool,
                        progress=lambda s: stage.__setitem__(0, s),
                        stopped=lambda: stage[0] == "consensus" and len(chunks) >= 1)
        assert stage[0] == "consensus" and len(chunks) == 1
        status, rows = con.execute("SELECT status, rows FROM job_runs").fetchone()
        assert status == "abandoned" and not json.loads(rows)["in_force"], rows
        # not stopped, the same run hands out several chunks
        run_nightly(direct_db(con), make_settings(tmp_path), executor=pool,
                    stopped=lambda: False)
    assert len(chunks) > 2


def test_a_stop_reads_no_further_block():
    """A stage's next item is a big read (a block of players' seasons): once the run is
    stopped, it is not made only to be refused."""
    from concurrent.futures import ThreadPoolExecutor

    from fairgrid.daemon.work.nightly import NightlyCancelled, Stopping
    from fairgrid.daemon.work.pool import in_tasks

    read, stop = [], []

    def reads():
        for k in range(5):
            read.append(k)
            yield k

    with ThreadPoolExecutor(1) as pool:
        done = in_tasks(Stopping(pool, lambda: bool(stop)), lambda x: x * 10, reads())
        with pytest.raises(NightlyCancelled):
            for got in done:
                stop.append(got)
    assert read == [0, 1] and stop == [0]   # the window's second was read before the stop


def test_the_daemon_s_stop_reaches_a_run_inside_its_stage(tmp_path, monkeypatch):
    """The runner hands its stop to the run: a stop that comes while the consensus stage
    works through its chunks ends the run there, not at the next stage."""
    from concurrent.futures import ThreadPoolExecutor

    from prometheus_client import CollectorRegistry

    from fairgrid.daemon.metrics import Metrics
    from fairgrid.daemon.store import Store
    from fairgrid.daemon.work import nightly
    from fairgrid.daemon.work.nightly import NightlyCancelled
    from fairgrid.daemon.work.nightly_runner import NightlyRunner

    con, _ = build(tmp_path / "r.duckdb", puzzles=4, players=8)
    con.close()
    monkeypatch.setattr(nightly, "LEVEL_TASK", 5)
    store = Store(str(tmp_path / "r.duckdb"))
    try:
        with ThreadPoolExecutor(1) as pool:
            runner = NightlyRunner(store, make_settings(tmp_path), Metrics(CollectorRegistry()),
                                   pool, None)
            seen, progress = [], runner._progress

            def stop_comes_in(stage):   # SIGTERM, just as the stage began
                seen.append(stage)
                progress(stage)
                if stage == "consensus":
                    runner._cancel = True
            monkeypatch.setattr(runner, "_progress", stop_comes_in)
            with pytest.raises(NightlyCancelled):
                runner._run_all_cores("r-stop")
        assert seen[-1] == "consensus"
    finally:
        store.close()


def test_a_type_fitted_on_too_few_solves_or_players_stays_on_its_prior(tmp_path):
    """A type's fit goes in force only on ``nightly.min_solves`` solves from three
    players: a few solves of one portal's puzzle must not set the residual every
    portal's solves of that type are judged by."""
    from fairgrid.analytics.puzzle_model import RatingRun

    con, _ = build(tmp_path / "n.duckdb", puzzles=4, players=10)
    added = _add_nurikabe(con, {"u000": 0.0, "u001": 0.3}, np.random.default_rng(2),
                          puzzles=6)
    assert added >= 10
    summary = run_nightly(direct_db(con), make_settings(tmp_path, nightly_min_solves=10))
    by_type = json.loads(con.execute("SELECT by_type FROM rating_runs WHERE run_id = ?",
                                     [summary["run_id"]]).fetchone()[0])
    assert list(by_type) == ["sudoku"]  # two Nurikabe players: not enough
    # nor a skill of that fit: a rated player would be judged beside an offset not in force
    assert con.execute("SELECT DISTINCT puzzle_type FROM player_ratings WHERE run_id = ?",
                       [summary["run_id"]]).fetchall() == [("sudoku",)]
    run = RatingRun(mu=0.0, residual_sd=0.3, skill_sd=0.4, level_nulls={},
                    by_type=by_type)
    assert run.for_type("nurikabe") is None
    # Sudoku's figures are the run's own; a puzzle it did not fit adds the stored offset
    sudoku = run.for_type("sudoku")
    assert (sudoku.mu, sudoku.residual_sd) == (run.mu, run.residual_sd)
    assert sudoku.new_offset == by_type["sudoku"]["offset"]
    again = run_nightly(direct_db(con), make_settings(tmp_path, nightly_min_solves=10_000))
    assert json.loads(con.execute("SELECT by_type FROM rating_runs WHERE run_id = ?",
                                  [again["run_id"]]).fetchone()[0]) == {}


def test_a_puzzle_whose_stored_analysis_is_damaged_is_left_out_of_the_fit(tmp_path, caplog):
    """One puzzle's stored analysis that is not JSON, lacks its metrics, or gives a prior
    that is no number is logged and left out with its solves; the run succeeds and every
    other puzzle is rated (one damaged row must not stop every portal's ratings)."""
    con, truth = build(tmp_path / "n.duckdb", puzzles=12, players=30)
    bad = {"p01": '{"metrics": {"serate": 1', "p02": '{"expected_log_s": 3}',
           "p03": json.dumps({"metrics": {**METRICS, "serate": float("nan")},
                              "expected_log_s": 5.0, "sd_log": 0.2})}
    for pid, text in bad.items():
        con.execute("UPDATE puzzles SET ratings = ? WHERE id = ?", [text, pid])
    summary = run_nightly(direct_db(con), make_settings(tmp_path))
    left_out = con.execute("SELECT count(*) FROM submissions WHERE list_contains(?, "
                           "puzzle_id)", [list(bad)]).fetchone()[0]
    assert summary["solves"] == truth["n"] - left_out
    rated = {r[0] for r in con.execute("SELECT puzzle_id FROM puzzle_ratings").fetchall()}
    assert rated == {f"p{j:02d}" for j in range(12)} - set(bad)
    for pid in bad:
        assert f"puzzle {pid}: its stored analysis cannot be read" in caplog.text


def test_a_run_killed_after_its_write_stage_is_said_to_be_in_force(tmp_path):
    """A process killed after a run's write stage committed leaves that run's ratings in
    force: the next start marks it abandoned *and in force* (rows, finished_at), counts it
    as the job's last refresh, and one killed before its write stage as not in force."""
    from fairgrid.daemon.store.repository import nightly as sql

    con, _ = build(tmp_path / "n.duckdb", puzzles=12, players=30)
    done = run_nightly(direct_db(con), make_settings(tmp_path))
    # as a kill right after the write stage leaves it, and one before that stage
    con.execute("UPDATE job_runs SET status = 'running', finished_at = NULL, rows = NULL "
                "WHERE id = ?", [done["run_id"]])
    con.execute("INSERT INTO job_runs VALUES ('early', 'nightly', now(), NULL, 'running', "
                "NULL)")
    last = sql.abandon_running(con, "nightly")
    rows = {r[0]: (r[1], r[2], json.loads(r[3])) for r in con.execute(
        "SELECT id, status, finished_at, rows FROM job_runs").fetchall()}
    status, finished, said = rows[done["run_id"]]
    assert status == "abandoned" and said["in_force"] is True and finished is not None
    assert "its ratings are in force" in said["error"] and last == finished
    status, finished, said = rows["early"]
    assert status == "abandoned" and said["in_force"] is False and finished is None


def test_the_correlation_gauges_are_the_last_runs_only():
    """A run that measured no correlations (too few solves a puzzle) leaves no gauge of
    an earlier run standing, and a coefficient that is no number is not shown."""
    from prometheus_client import CollectorRegistry, generate_latest

    from fairgrid.daemon.metrics import Metrics
    from fairgrid.daemon.work.nightly_runner import NightlyRunner

    registry = CollectorRegistry()
    runner = NightlyRunner(None, None, Metrics(registry), None, None)
    runner._set_correlations({"serate": {"pearson": 0.97, "spearman": float("nan")}})
    text = generate_latest(registry).decode()
    assert 'coefficient="pearson",metric="serate"} 0.97' in text
    assert 'coefficient="spearman"' not in text
    runner._set_correlations({})
    assert "fairgrid_metric_human_correlation{" not in generate_latest(registry).decode()


def test_levels_keep_their_meaning_night_after_night(tmp_path):
    """A level is a fifth of the dailies the shipped calibration was fitted on: a refit
    moves the shipped cut points to its own scale, so a bank of puzzles alike in every
    metric keeps its levels however many nights refit the calibration on it (cut points
    from its own predictions' quintiles spread it over every level)."""
    con, _ = build(tmp_path / "n.duckdb", puzzles=24, players=60)
    shipped = np.array(load_default().level_bounds_s)
    settings = make_settings(tmp_path, nightly_min_solves=20)
    seen = []
    for _ in range(3):
        run = run_nightly(direct_db(con), settings)
        bounds = np.array(json.loads(con.execute(
            "SELECT calibration FROM rating_runs WHERE run_id = ?",
            [run["run_id"]]).fetchone()[0])["level_bounds_s"])
        ratio = bounds / shipped
        assert ratio == pytest.approx(np.full(4, ratio[0]))
        seen.append(dict(con.execute("SELECT puzzle_id, level FROM puzzle_ratings WHERE "
                                     "run_id = ?", [run["run_id"]]).fetchall()))
    assert seen[0] == seen[1] == seen[2]
    assert len(set(seen[0].values())) <= 2, seen[0]


def test_ratings_updated_tells_each_portal_its_own_numbers(tmp_path):
    """The ``ratings.updated`` event a portal gets counts the run's puzzles that portal
    may use (shared, or its own) and its own players: never the other portals'."""
    from fairgrid.daemon.store.connection import in_transaction
    from fairgrid.daemon.store.repository.nightly import RatingRunRow, write_rating_run

    con = connect(str(tmp_path / "n.duckdb"))
    now = datetime.now(timezone.utc)
    for pid, owner in [("shared", None), ("mine", "a"), ("theirs", "b")]:
        con.execute("INSERT INTO puzzles (id, givens, box_size, solution, status, "
                    "registered_at, owner) VALUES (?, '', 3, '', 'ready', ?, ?)",
                    [pid, now, owner])
    players = [("a", "a1"), ("a", "a2"), ("b", "b1"), ("c", "c1")]
    for key, (portal, player) in enumerate(players):
        con.execute("INSERT INTO submissions (sub_key, portal, submission_id, webhook_id, "
                    "tournament_id, player_id, puzzle_id, started_at, received_at, "
                    "committed_at, n_moves, duration_ms, complete, status, raw) VALUES "
                    "(?, ?, ?, ?, 't', ?, 'shared', ?, ?, ?, 1, 1, true, 'scored', '{}')",
                    [key, portal, f"s{key}", f"w{key}", player, now, now, now])
    for portal in ("a", "b"):
        con.execute("INSERT INTO notify_endpoints VALUES (?, 'http://127.0.0.1:9/', 's', ?)",
                    [portal, now])
    row = RatingRunRow("r", now, 4, 3, 4, 0.0, 0.3, "{}", "{}", "{}", "{}")
    puzzle_rows = {"run_id": np.array(["r"] * 3, dtype=object),
                   "puzzle_id": np.array(["shared", "mine", "theirs"], dtype=object),
                   "difficulty": np.zeros(3), "prior": np.zeros(3),
                   "expected_time_s": np.ones(3), "level": np.ones(3, dtype=np.int64),
                   "solves": np.ones(3, dtype=np.int64)}
    player_rows = {"run_id": np.array(["r"] * 4, dtype=object),
                   "portal": np.array([p for p, _ in players], dtype=object),
                   "player_id": np.array([q for _, q in players], dtype=object),
                   "skill": np.zeros(4), "solves": np.ones(4, dtype=np.int64),
                   "puzzle_type": np.array(["sudoku"] * 4, dtype=object)}
    in_transaction(con, write_rating_run, row, puzzle_rows, player_rows)
    events = {portal: json.loads(payload)["data"] for portal, payload in con.execute(
        "SELECT portal, payload FROM outbox WHERE type = 'ratings.updated'").fetchall()}
    assert events == {"a": {"run_id": "r", "puzzles": 2, "players": 2},
                      "b": {"run_id": "r", "puzzles": 2, "players": 1}}


def test_each_portal_is_priced_on_its_own_players_times_of_a_shared_puzzle(tmp_path):
    """A second portal whose players are three times slower on three shared puzzles
    makes them harder for its own solves only: ``demo``'s solves of them (scoring's
    and the verdicts' expected time) keep the difficulty its own players' times give."""
    from fairgrid.daemon.store.repository.players import seasons
    from fairgrid.daemon.store.repository.scores import puzzle_for_scoring
    from ..helpers import INSERT_SCORE

    con, truth = build(tmp_path / "n.duckdb", few_solves_puzzle=False)
    settings = make_settings(tmp_path, nightly_min_solves=20)
    before, _ = _ratings(con, run_nightly(direct_db(con), settings)["run_id"])
    rng = np.random.default_rng(5)
    now = datetime.now(timezone.utc)
    key = con.execute("SELECT max(sub_key) + 1 FROM submissions").fetchall()[0][0]
    subs = []
    for b in range(120):               # outnumber demo's 60 solves of each puzzle
        for j in [1, 2, 3] + list(rng.choice(np.arange(4, 24), 6, replace=False)):
            slow = math.log(3) if j <= 3 else 0.0
            dur = int(1000 * np.exp(truth["true_d"][j] + slow + rng.normal(0, 0.15)))
            subs.append((key, "rogue", f"s{key}", f"w{key}", "t", f"r{b:03d}", f"p{j:02d}",
                         now, now, now - timedelta(days=1), 1, dur, True, "scored", "{}"))
            key += 1
    insert_rows(con, "submissions", COLUMNS, subs)
    run_id = run_nightly(direct_db(con), settings)["run_id"]
    shared, _ = _ratings(con, run_id)
    own = {(p, q): d for p, q, d in con.execute(
        "SELECT puzzle_id, portal, difficulty FROM puzzle_portal_ratings WHERE run_id = ?",
        [run_id]).fetchall()}
    # a row per portal for each puzzle both solved, none for demo's alone
    assert {p for p, _ in own} == set(con.execute(
        "SELECT puzzle_id FROM submissions WHERE portal = 'rogue'").fetchnumpy()["puzzle_id"])
    targets, others = ["p01", "p02", "p03"], [f"p{j:02d}" for j in range(4, 24)]

    def lift(of):   # how much harder the three came out, against the other puzzles
        return (np.mean([of(p) - before[p] for p in targets])
                - np.mean([of(p) - before[p] for p in others]))

    assert lift(shared.get) > math.log(1.6)     # the pooled fit moved: the attack is real
    # demo prices them on its own players' times (shrunk a little towards the fit's)
    assert lift(lambda p: own.get((p, "demo"), shared[p])) < math.log(1.15)
    assert lift(lambda p: own.get((p, "rogue"), shared[p])) > math.log(1.6)
    cur = con.cursor()
    for portal, want in [("demo", own[("p01", "demo")]), ("rogue", own[("p01", "rogue")]),
                         ("elsewhere", shared["p01"])]:
        assert puzzle_for_scoring(cur, "p01", run_id, portal)["difficulty"] == \
            pytest.approx(want)
    # a player's season prices each solve on its portal's own difficulty too
    sid, player = con.execute("SELECT submission_id, player_id FROM submissions WHERE "
                              "portal = 'demo' AND puzzle_id = 'p01' LIMIT 1").fetchone()
    con.execute(INSERT_SCORE + "(?, ?, ?, ?, ?, ?, ?)", ["demo", sid, now, 0.1, 0.9, False, "{}"])
    solve, = seasons(cur, [("demo", player)]).solves[("demo", player)]
    assert solve.difficulty == pytest.approx(own[("p01", "demo")])
