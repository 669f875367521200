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


# control characters a note can carry (a terminal acts on them; a NUL ends a C string):
# ESC sequences clearing the screen, setting the window title and recolouring, a NUL, a
# C1 CSI (U+009B, which terminals read as ESC [), a backspace overwriting what precedes
TERMINAL = ["\x1b[2J\x1b[H", "\x1b]0;owned\x07", "ok\x00hidden", "\x9b31mred",
            "fine\x08\x08\x08\x08bad!"]


async def test_the_csv_export_holds_no_terminal_control_characters(aiohttp_client, tmp_path):
    """The reviewers' CSV is read in spreadsheets and, as often, with ``cat``, ``less -R``
    or ``column`` in a terminal: a note another person wrote (through the API or the
    console's form) must reach it without the control characters that drive a terminal
    (the command line shows the same history escaped, text.shown). Line breaks and tabs
    inside a quoted cell are text and may stay; a note refused at the door (4xx naming
    it) is as good."""
    import unicodedata

    client = await aiohttp_client(create_app(make_settings(tmp_path)))
    flag = await post_flagged(client, "demo", "esc", SECRET_A, tournament_id="T-esc")
    for i, note in enumerate(TERMINAL):
        resp = await client.post(f"/v1/flags/{flag}/review", headers=bearer(ADMIN),
                                 json={"state": ("cleared", "open")[i % 2], "note": note})
        assert resp.status == 200 or (resp.status == 422 and "note" in await resp.text()), \
            (resp.status, await resp.text())
    await add_user(client, "root", role="admin", portals=())
    assert (await sign_in(client, "root", PASSWORD)).status == 303
    # the console's own form
    page = await (await client.get(f"/ui/flags/{flag}")).text()
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    resp = await client.post(f"/ui/flags/{flag}/review", allow_redirects=False,
                             data={"csrf": csrf, "state": "confirmed",
                                   "note": "copied \x1b[8mconcealed"})
    assert resp.status in (303, 400), resp.status
    resp = await client.get("/ui/tournaments/T-esc/flags.csv")
    assert resp.status == 200
    text = await resp.text()
    raw = sorted({f"U+{ord(ch):04X}" for ch in text
                  if unicodedata.category(ch) == "Cc" and ch not in "\t\r\n"})
    assert raw == [], f"raw control characters in the CSV: {raw}"
