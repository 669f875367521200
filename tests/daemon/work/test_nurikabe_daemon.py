"""A Nurikabe tournament in the daemon, end to end: registration, analysis, signed solves
scored and a copy flagged with evidence, the console's pages, and the nightly job fitting
Nurikabe apart from Sudoku."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from fairgrid.analytics.nurikabe import simulate_nurikabe
from fairgrid.daemon.web.context import CTX
from fairgrid.solvers.puzzle_types import puzzle_type

from ...fixtures import EASY, NURIKABE_8
from ..helpers import (ADMIN, ORGANISER, add_user, bearer, nightly_run, query, sign_in, signed,
                       solve_body, wait_ready, wait_scored)

KIND = puzzle_type("nurikabe")
PUZZLE = KIND.parse(NURIKABE_8)
GIVENS = KIND.givens(PUZZLE)
SOLUTION = KIND.solution(PUZZLE)
FREE = np.flatnonzero(GIVENS == 0)


async def _register(client, pid="nk", text=NURIKABE_8, **extra):
    return await client.post("/v1/puzzles", headers=bearer(ADMIN),
                             json={"id": pid, "givens": text, "puzzle_type": "nurikabe",
                                   **extra})


def _moves(sim) -> list[dict]:
    return [{"t_ms": int(t), "cell": int(c), "digit": int(d)}
            for t, c, d in zip(sim.t_ms, sim.cell, sim.digit)]


async def _post(client, sid, moves, player="p-1", pid="nk", **puzzle):
    body = solve_body(submission_id=sid, puzzle_id=pid, givens=None, moves=moves,
                      player_id=player)
    body["puzzle"].update(puzzle)
    raw, headers = signed(body, msg_id=sid)
    return await client.post("/v1/webhooks/solves", data=raw, headers=headers)


async def _verdict(client, player, timeout=120.0) -> dict:
    """The player's season verdict, once judged (in the background after scoring)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        doc = await (await client.get(f"/v1/players/demo/{player}",
                                      headers=bearer(ORGANISER))).json()
        if doc["verdict"] is not None:
            return doc["verdict"]
        assert asyncio.get_running_loop().time() < deadline, f"{player} not judged"
        await asyncio.sleep(0.2)


async def test_registration_checks_the_type_and_the_text(client):
    bad = await client.post("/v1/puzzles", headers=bearer(ADMIN),
                            json={"id": "x", "givens": NURIKABE_8, "puzzle_type": "kakuro"})
    doc = await bad.json()
    assert bad.status == 422 and doc["field"] == "puzzle_type" and "nurikabe" in doc["error"]
    # Nurikabe text registered as the default type: the error says what to set
    bad = await client.post("/v1/puzzles", headers=bearer(ADMIN),
                            json={"id": "x", "givens": NURIKABE_8})
    doc = await bad.json()
    assert bad.status == 422 and doc["field"] == "givens" and "puzzle_type" in doc["error"]
    two = await _register(client, "x", "3x3:2.......2")
    assert two.status == 422 and "more than one solution" in (await two.json())["error"]
    bad = await _register(client, "x", "3x3:2.......")
    assert bad.status == 422 and (await bad.json())["field"] == "givens"
    assert (await _register(client)).status == 201
    assert (await (await _register(client)).json())["status"] == "known"
    # the same id as Sudoku is another puzzle
    clash = await client.post("/v1/puzzles", headers=bearer(ADMIN),
                              json={"id": "nk", "givens": EASY})
    assert clash.status == 409
    # the first solve of an unknown puzzle registers it, with its type
    half = [{"t_ms": 1000 * (k + 1), "cell": int(c), "digit": int(SOLUTION[c])}
            for k, c in enumerate(FREE[:10])]
    resp = await _post(client, "first", half, pid="nk-2", givens=NURIKABE_8,
                       puzzle_type="nurikabe")
    assert resp.status == 202, await resp.text()
    doc = await wait_ready(client, "nk-2")
    assert doc["puzzle_type"] == "nurikabe" and doc["status"] == "ready"
    scored = await wait_scored(client, "first")
    assert scored["score"]["outcome"] == "unfinished"


async def test_a_nurikabe_tournament_end_to_end(client, tmp_path, capsys):
    assert (await _register(client)).status == 201
    doc = await wait_ready(client, "nk")
    assert doc["status"] == "ready" and doc["puzzle_type"] == "nurikabe"
    assert (doc["rows"], doc["cols"], doc["box_size"], doc["order"]) == (8, 8, None, None)
    assert doc["solution"] == "".join(str(v) for v in SOLUTION)
    ratings = doc["ratings"]
    assert 1 <= ratings["level"] <= 5 and ratings["sd_log"] == 1.0
    assert {"order_sa", "unforced", "pace_variation", "speed"} <= set(ratings["null"])
    assert {"sa_steps", "hs_cost", "n_islands", "prop_hints"} <= set(ratings["metrics"])
    ranks = [r for row in doc["predicted_order"] for r in row]
    assert sorted(r for r in ranks if r) == list(range(1, FREE.size + 1))
    assert all(ranks[c] == 0 for c in np.flatnonzero(GIVENS))

    # moves are checked against the type: values 0..2, no move on a clue
    bad = await _post(client, "bad", [{"t_ms": 1000, "cell": int(FREE[0]), "digit": 3}])
    doc = await bad.json()
    assert bad.status == 422 and doc["field"] == "moves[0].digit" and "0..2" in doc["error"]
    clue = int(np.flatnonzero(GIVENS)[0])
    bad = await _post(client, "bad", [{"t_ms": 1000, "cell": clue, "digit": 2}])
    assert bad.status == 422 and "given" in (await bad.json())["error"]
    bad = await _post(client, "bad", [{"t_ms": 1000, "cell": int(FREE[0]), "digit": 1}],
                      puzzle_type="sudoku")
    doc = await bad.json()
    assert bad.status == 422 and doc["field"] == "puzzle.puzzle_type"

    # honest players, simulated by the Nurikabe model at the expected pace, pass
    rng = np.random.default_rng(11)
    sims = [simulate_nurikabe(GIVENS, KIND.shape(PUZZLE), SOLUTION, "honest", rng=rng,
                              expected_log_s=ratings["expected_log_s"], sd_log=0.3,
                              skill=0.0) for _ in range(6)]
    for k, sim in enumerate(sims):
        resp = await _post(client, f"h{k}", _moves(sim), player=f"p-{k}",
                           puzzle_type="nurikabe")
        assert resp.status == 202, await resp.text()
    for k in range(len(sims)):
        scored = await wait_scored(client, f"h{k}")
        assert scored["score"]["outcome"] == "finished"
        assert not scored["score"]["flagged"], scored["score"]["reasons"]

    # most apps take a grid whose river is shaded right as solved: dots are optional (a
    # log of its own: one of the players' above would repeat their timing)
    rest = simulate_nurikabe(GIVENS, KIND.shape(PUZZLE), SOLUTION, "honest", rng=rng,
                             expected_log_s=ratings["expected_log_s"], sd_log=0.3, skill=0.0)
    river_only = [m for m in _moves(rest) if m["digit"] == 1]
    assert (await _post(client, "river", river_only, player="p-r")).status == 202
    river = (await wait_scored(client, "river"))["score"]
    assert river["outcome"] == "finished" and not river["flagged"], river["reasons"]
    assert river["counts"]["filled"] == len(river_only)

    # a copy: the solution typed in row order at an even, quick pace
    total = np.exp(ratings["expected_log_s"]) * 1000 * 0.3
    copy = [{"t_ms": int(3000 + total * k / FREE.size), "cell": int(c),
             "digit": int(SOLUTION[c])} for k, c in enumerate(FREE)]
    assert (await _post(client, "copy", copy, player="p-copy")).status == 202
    copy_doc = await wait_scored(client, "copy")
    score = copy_doc["score"]
    # at cold start the order null is wide (no human Nurikabe orders are known): the
    # even pace gives the copy away, with the order as supporting evidence
    assert score["flagged"] and "pace_variation" in score["reasons"]
    order = next(s for s in score["signals"] if s["name"] == "order_sa")
    assert order["p"] < 0.2
    assert score["puzzle_type"] == "nurikabe"
    assert len(score["actual_order"]) == 8 and len(score["actual_order"][0]) == 8
    assert score["actual_order"][0][0] == 1  # r1c1 first
    assert len(score["timeline"]) == FREE.size and score["flag"]["state"] == "open"
    # in Nurikabe's words, not Sudoku's
    assert {t["technique"] for t in score["timeline"]} <= {"forced by a rule", "not deducible"}
    assert "propagation model" in score["order_note"] and "digit" not in score["verdict"]
    fid = score["flag"]["id"]
    # the same season verdict judges Nurikabe players
    for player, state in (("p-copy", None), ("p-0", "clear")):
        verdict = await _verdict(client, player)
        assert verdict["solves"] == 1 and "too few" in verdict["rests_on"]
        assert state is None or verdict["state"] == state

    # the CLI's report: the orders as 8 text rows without Sudoku's blocks, and a picture
    from fairgrid.daemon.cli.render import print_report
    capsys.readouterr()
    print_report(copy_doc, str(tmp_path / "copy.png"))
    out = capsys.readouterr().out
    assert "predicted order (propagation model)" in out and "|" not in out.split("1 = first")[1]
    assert (tmp_path / "copy.png").stat().st_size > 10_000

    # the reviewer's pages draw the Nurikabe grid
    await add_user(client, "rev")
    assert (await sign_in(client, "rev")).status == 303
    page = await client.get(f"/ui/flags/{fid}")
    html = await page.text()
    assert page.status == 200 and "8 by 8 grid" in html and "clue cells" in html
    assert '"rows": 8' in html and '"values": ["", "\\u25a0", "\\u00b7"]' in html
    page = await client.get("/ui/puzzles/nk")
    html = await page.text()
    assert page.status == 200 and "Nurikabe" in html and "8×8" in html


async def test_the_nightly_job_fits_each_type_apart(aiohttp_client, tmp_path):
    """Sudoku and Nurikabe solves by the same players: each type gets its own fit, offset
    and player skills, and scoring reads the skill of the solve's type (a type's fit is
    in force from nightly.min_solves solves, 8 here, each player's first of the puzzle)."""
    from fairgrid.daemon.app import create_app

    from ..helpers import make_settings

    client = await aiohttp_client(create_app(make_settings(tmp_path, nightly_min_solves=8)))
    assert (await _register(client)).status == 201
    await wait_ready(client, "nk")
    nk = (await (await client.get("/v1/puzzles/nk", headers=bearer(ORGANISER))).json())
    rng = np.random.default_rng(3)
    for k in range(8):
        sim = simulate_nurikabe(GIVENS, KIND.shape(PUZZLE), SOLUTION, "honest", rng=rng,
                                expected_log_s=nk["ratings"]["expected_log_s"] - 1.0,
                                sd_log=0.2, skill=0.0)
        assert (await _post(client, f"n{k}", _moves(sim), player=f"p-{k}")).status == 202
    for k in range(8):
        await wait_scored(client, f"n{k}")
    doc = await nightly_run(client)
    by_type = doc["rows"]["by_type"]
    assert set(by_type) == {"nurikabe"} and by_type["nurikabe"]["solves"] == 8
    # the solves were e times faster than the prior: the fit's offset says so
    assert by_type["nurikabe"]["mu"] == pytest.approx(-1.0, abs=0.3)
    store = client.app[CTX].store
    types = query(store, "SELECT DISTINCT puzzle_type FROM player_ratings")
    assert types == [("nurikabe",)]
    level = query(store, "SELECT level FROM puzzle_ratings WHERE puzzle_id = 'nk'")[0][0]
    assert 1 <= level <= 5
    # re-scored against the fitted difficulty (the run queues the re-scoring)
    async def speed_population():
        doc = await (await client.get("/v1/submissions/demo/n0",
                                      headers=bearer(ORGANISER))).json()
        return [s["population"] for s in doc["score"]["signals"] if s["name"] == "speed"]

    deadline = asyncio.get_running_loop().time() + 60
    while "fitted" not in " ".join(await speed_population()):
        assert asyncio.get_running_loop().time() < deadline, await speed_population()
        await asyncio.sleep(0.2)
