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
    for key in subs:
        seqs, ts = zip(*con.execute("SELECT seq, t_ms FROM moves WHERE sub_key = ? "
                                    "ORDER BY seq", [key]).fetchall())
        gaps = rng.lognormal(0.0, 0.5 + seed, len(seqs))
        t = np.maximum(1, (np.cumsum(gaps) / gaps.sum() * ts[-1]).astype(int))
        t[-1] = ts[-1]
        con.executemany("UPDATE moves SET t_ms = ? WHERE sub_key = ? AND seq = ?",
                        [(int(x), key, s) for x, s in zip(t, seqs)])


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
