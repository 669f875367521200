"""Rows stored before ingestion refused what they hold (a start before year 1 in UTC, ids
with a right-to-left override) are shown by the API, the console and the command line:
never a 500, and the ids isolated so they reorder nothing around them."""

from __future__ import annotations

import asyncio
import urllib.parse


from fairgrid.daemon.testing import EASY_ROW_COPY as ROW_COPY
from fairgrid.daemon.web.context import CTX

from ..daemon.helpers import ADMIN, bearer, sign_in_as_admin, signed, solve_body

PLAYER = "p-\u202e24"  # shows as "p-42" reversed around it, in a browser or a terminal
TOURNAMENT = "t-\u202e1"


async def _page(client, path: str) -> str:
    resp = await client.get(path)
    assert resp.status == 200, (path, resp.status)
    return await resp.text()


async def test_rows_stored_before_the_rules_are_shown_and_isolated(client, capsys):
    raw, headers = signed(solve_body(moves=ROW_COPY))
    assert (await client.post("/v1/webhooks/solves", data=raw, headers=headers)).status == 202
    deadline = asyncio.get_running_loop().time() + 300
    while True:
        doc = await (await client.get("/v1/submissions/demo/s-1", headers=bearer(ADMIN))
                     ).json()
        if doc["status"] == "scored" or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.2)
    assert doc["score"]["flag"] is not None
    flag_id = doc["score"]["flag"]["id"]

    def as_stored_before(con):
        con.execute("UPDATE submissions SET started_at = '0001-01-01 00:30:00+01', "
                    "player_id = ?, tournament_id = ?", [PLAYER, TOURNAMENT])
    await asyncio.wrap_future(client.app[CTX].store.writer.call(as_stored_before))
    await client.app[CTX].scorer.verdicts.judge([("demo", PLAYER)])  # a case page to show

    player = urllib.parse.quote(PLAYER, safe="")
    for path in ("/v1/submissions/demo/s-1", f"/v1/players/demo/{player}",
                 "/v1/flags"):
        resp = await client.get(path, headers=bearer(ADMIN))
        assert resp.status == 200, (path, await resp.text())
    doc = await (await client.get("/v1/submissions/demo/s-1", headers=bearer(ADMIN))).json()
    assert "BC" in doc["started_at"] and doc["player_id"] == PLAYER

    await sign_in_as_admin(client)
    pages = {path: await _page(client, path) for path in (
        "/ui/", "/ui/flags", f"/ui/flags/{flag_id}", f"/ui/players/demo/{player}",
        f"/ui/players/demo/{player}/case", "/ui/players?state=any",
        "/ui/search?q=s-1", "/ui/flags?state=any&tournament="
        + urllib.parse.quote(TOURNAMENT, safe=""))}
    for path, html in pages.items():
        # wherever the ids appear as text, each is isolated in its own <bdi>
        bare = html.replace(f"<bdi>{PLAYER}</bdi>", "").replace(f"<bdi>{TOURNAMENT}</bdi>", "")
        assert PLAYER not in bare and TOURNAMENT not in bare.replace(
            f'value="{TOURNAMENT}"', ""), path
    assert "BC" in pages[f"/ui/players/demo/{player}"]  # the start, as stored
    assert "BC" in pages[f"/ui/players/demo/{player}/case"]
    # a page's title cannot hold markup: the override is shown escaped there
    assert "<title>Player p-\\u202e24 · fairgrid</title>" in pages[f"/ui/players/demo/{player}"]
    # the filter's options cannot either
    assert ">t-\\u202e1</option>" in pages["/ui/flags"]

    from fairgrid.daemon.cli.render import print_report
    print_report(doc)
    out = capsys.readouterr().out
    assert "\u202e" not in out and "p-\\u202e24" in out and "t-\\u202e1" in out
