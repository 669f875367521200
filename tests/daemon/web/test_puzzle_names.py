"""A webhook's puzzle.id is the sending portal's own name: another portal's puzzle of
that id is never used, and cannot be taken over (real app, real DuckDB file)."""

from __future__ import annotations



from ...fixtures import EASY, MEDIUM
from ..helpers import (ADMIN, ORGANISER, OTHER_SECRET, URL, bearer, query, signed, solve_body,
                       solve_moves, store)

PASSWORD = "correct horse battery"


async def post(client, body, secret=None, msg_id="m"):
    raw, headers = signed(body, msg_id=msg_id, **({"secret": secret} if secret else {}))
    resp = await client.post(URL, data=raw, headers=headers)
    return resp.status, await resp.json()


def other_body(sid, givens=None, **kw):
    return solve_body(submission_id=sid, portal="other", givens=givens, **kw)


async def test_a_portal_never_resolves_another_portals_puzzle(client):
    assert (await post(client, solve_body()))[0] == 202  # demo registers "easy"
    # the same name from another portal, without givens: not theirs to use
    status, doc = await post(client, other_body("o-1"), secret=OTHER_SECRET)
    assert (status, doc["field"]) == (422, "puzzle.givens")
    assert "unknown puzzle" in doc["error"]


async def test_an_id_another_portal_took_is_registered_apart(client):
    from fairgrid.solvers import parse
    from fairgrid.solvers.backtracking import unique_solution

    assert (await post(client, solve_body()))[0] == 202
    # "other" calls a different puzzle "easy": it gets its own, under another id
    solution = "".join(map(str, unique_solution(parse(MEDIUM)).tolist()))
    moves = solve_moves(MEDIUM, solution)
    status, _ = await post(client, other_body("o-1", MEDIUM, moves=moves),
                           secret=OTHER_SECRET, msg_id="o1")
    assert status == 202
    got = query(store(client), "SELECT portal, puzzle_id FROM submissions ORDER BY portal")
    assert got == [("demo", "easy"), ("other", "easy@other")]
    owners = dict(query(store(client), "SELECT id, owner FROM puzzles"))
    assert owners == {"easy": "demo", "easy@other": "other"}
    # later solves of either portal find their own puzzle by its name alone
    status, _ = await post(client, other_body("o-2", moves=moves), secret=OTHER_SECRET,
                           msg_id="o2")
    assert status == 202
    assert (await post(client, solve_body("s-2", givens=None), msg_id="d2"))[0] == 202
    got = query(store(client), "SELECT submission_id, puzzle_id FROM submissions "
                               "ORDER BY submission_id")
    assert got == [("o-1", "easy@other"), ("o-2", "easy@other"), ("s-1", "easy"),
                   ("s-2", "easy")]
    # each portal's puzzle is its organisers' to see
    token = await _organiser_of(client, "demo")
    assert (await client.get("/v1/puzzles/easy@other", headers=bearer(token))).status == 404
    assert (await client.get("/v1/puzzles/easy", headers=bearer(token))).status == 200
    resp = await client.get("/v1/puzzles/easy@other", headers=bearer(ORGANISER))
    assert (await resp.json())["owner"] == "other"


async def test_a_puzzle_registered_through_the_api_is_every_portals(client):
    resp = await client.post("/v1/puzzles", headers=bearer(ADMIN),
                             json={"id": "shared", "givens": EASY})
    assert resp.status == 201
    assert (await post(client, solve_body("s-1", puzzle_id="shared", givens=None)))[0] == 202
    status, _ = await post(client, other_body("o-1", puzzle_id="shared"),
                           secret=OTHER_SECRET, msg_id="o1")
    assert status == 202
    assert {p for (p,) in query(store(client), "SELECT puzzle_id FROM submissions")} == \
        {"shared"}
    resp = await client.get("/v1/puzzles/shared", headers=bearer(ORGANISER))
    doc = await resp.json()
    # a 9x9 Sudoku's blocks are 3 by 3; ``order`` repeats it for clients from before
    assert doc["owner"] is None and doc["box_size"] == doc["order"] == 3


async def _organiser_of(client, portal: str) -> str:
    resp = await client.post("/v1/users", headers=bearer(ADMIN), json={
        "name": "org", "role": "organiser", "portals": [portal], "password": PASSWORD})
    assert resp.status == 201, await resp.text()
    tok = await client.post("/v1/users/org/tokens", headers=bearer(ADMIN), json={})
    return (await tok.json())["token"]


async def test_two_first_solves_of_one_name_with_other_givens_keep_the_first(client):
    """The writer claims names in its transaction: the loser of the race is refused, not
    stored against a puzzle its moves were never checked on."""
    import asyncio
    import json
    from datetime import datetime, timezone

    from fairgrid.daemon.ingest import parse_body
    from fairgrid.daemon.ingest.puzzles import check_puzzle
    from fairgrid.daemon.store import SubmissionRecord

    writer = store(client).writer
    loop = asyncio.get_running_loop()
    futures = []
    for k, givens in enumerate((EASY, MEDIUM)):
        raw = json.dumps(solve_body(f"r-{k}", puzzle_id="race", givens=givens, moves=[]))
        event = parse_body(raw.encode())
        new = (*check_puzzle(givens), "sudoku")
        record = SubmissionRecord.of(event, "race", f"h-{k}", datetime.now(timezone.utc),
                                     False, raw, new)
        futures.append(writer.submit(record, loop))
    first, second = [await f for f in futures]
    assert (first.outcome, first.puzzle_id) == ("accepted", "race")
    assert second.outcome == "puzzle_conflict"
    assert query(store(client), "SELECT submission_id FROM submissions") == [("r-0",)]


async def test_a_puzzle_the_organiser_registers_for_everyone_is_shared_whoever_sent_it_first(
        client):
    """A portal's first solve carried the givens of a round's puzzle before the organiser
    registered it through the API: the registration shares that puzzle with every
    portal (a portal's webhook cannot keep it to itself), and another portal's solves
    naming it by id alone are taken. Registering other givens under that id stays a
    conflict."""
    status, _ = await post(client, other_body("o-1", EASY, puzzle_id="gp7-3"),
                           secret=OTHER_SECRET, msg_id="o1")
    assert status == 202
    assert query(store(client), "SELECT owner FROM puzzles WHERE id = 'gp7-3'") == [
        ("other",)]
    resp = await client.post("/v1/puzzles", headers=bearer(ADMIN),
                             json={"id": "gp7-3", "givens": EASY})
    assert resp.status == 200, await resp.text()
    assert query(store(client), "SELECT owner FROM puzzles WHERE id = 'gp7-3'") == [(None,)]
    status, doc = await post(client, solve_body("d-1", puzzle_id="gp7-3", givens=None),
                             msg_id="d1")
    assert status == 202, doc
    assert query(store(client), "SELECT portal, puzzle_id FROM submissions ORDER BY 1") == [
        ("demo", "gp7-3"), ("other", "gp7-3")]
    resp = await client.post("/v1/puzzles", headers=bearer(ADMIN),
                             json={"id": "gp7-3", "givens": MEDIUM})
    assert resp.status == 409
