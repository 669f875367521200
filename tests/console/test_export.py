"""The console's CSV export against a real app: cells a spreadsheet would run are
neutralised (OWASP's CSV injection guidance), and a tournament's name of any script
reaches the file name intact."""

from __future__ import annotations

import csv
import io
import re
import urllib.parse

from fairgrid.daemon.app import create_app
from fairgrid.daemon.text import file_stem

from ..daemon.helpers import (ADMIN, PASSWORD, SECRET_A, add_user, bearer, make_settings,
                              post_flagged, sign_in)

TOURNAMENT = "Grand Prix 数独 Ü"
# each would start a formula once the blanks before it are skipped
HOSTILE = [" =1+1", "\n=1+1", "\r\n+1", "\u00a0=1+1", "\u3000@SUM(A1)", "\u200b=1+1",
           "\uff1d1+1", "\uff0b1", "\uff0d1", "\uff20A1", "|calc", "\t-1", "-2+3", "@A1",
           "=HYPERLINK(\"http://x.example\")"]
HARMLESS = ["a fast solver", "a=b", "1+1", " spaced but plain"]


async def test_the_csv_export_neutralises_formulas_and_names_the_file(aiohttp_client,
                                                                    tmp_path):
    client = await aiohttp_client(create_app(make_settings(tmp_path)))
    flag = await post_flagged(client, "demo", "copy", SECRET_A, tournament_id=TOURNAMENT,
                          player_id="=cmd|' /C calc'!A0")
    for i, note in enumerate(HOSTILE + HARMLESS):  # each a change, so each a history row
        resp = await client.post(f"/v1/flags/{flag}/review", headers=bearer(ADMIN),
                                 json={"state": ("cleared", "open")[i % 2], "note": note})
        assert resp.status == 200, await resp.text()
    await add_user(client, "root", role="admin", portals=())
    assert (await sign_in(client, "root", PASSWORD)).status == 303
    resp = await client.get(f"/ui/tournaments/{urllib.parse.quote(TOURNAMENT)}/flags.csv")
    assert resp.status == 200
    rows = list(csv.DictReader(io.StringIO(await resp.text())))
    notes = [r["note"] for r in rows if r["actor"] == "service token 1 (admin)"]
    assert notes == ["'" + n for n in HOSTILE] + HARMLESS
    assert {r["player_id"] for r in rows} == {"'=cmd|' /C calc'!A0"}
    assert all(not r["p_value"].startswith("'") for r in rows)
    # the exact name for browsers that read filename*, an ASCII one for the others
    # (the spaces read as '_', so the name ends in a digest of the id: "a b" and "a_b"
    # are two tournaments)
    disposition = resp.headers["Content-Disposition"]
    stem = file_stem(f"flags-{TOURNAMENT}")
    assert re.fullmatch("flags-Grand_Prix_数独_Ü-[0-9a-f]{12}", stem)
    exact = urllib.parse.quote(f"{stem}.csv", safe="")
    ascii_ = "flags-Grand_Prix____U-" + stem.rsplit("-", 1)[1]
    assert disposition == (f'attachment; filename="{ascii_}.csv"; '
                           f"filename*=UTF-8''{exact}")
    disposition.encode("ascii")  # a header is ASCII: nothing garbled on the way
    # the API's export is data for programs: kept exactly as stored (docs/operations.md)
    resp = await client.get(f"/v1/tournaments/{urllib.parse.quote(TOURNAMENT)}/export/"
                            "reviews.csv", headers=bearer(ADMIN))
    assert resp.status == 200
    assert "filename*=UTF-8''" + urllib.parse.quote(f"{file_stem(TOURNAMENT)}-reviews.csv",
                                                    safe="") \
        in resp.headers["Content-Disposition"]
    stored = [r["note"] for r in csv.DictReader(io.StringIO(await resp.text()))]
    assert " =1+1" in stored and "'" + " =1+1" not in stored
