"""A page that posts its solve again after losing the answer gets it taken as a
duplicate, though the player left the tab meanwhile: the page posts
``recorder.finish()``, which freezes the log, so the re-post (``recorder.log()``) is the
same body. A log that went on recording would be another body under the same
submission id: fairgrid's 409, which the relay passes on as a 502, and the page never
learns its solve was stored."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timedelta, timezone

import pytest

from fairgrid.daemon.app import create_app
from fairgrid.daemon.testing import EASY, EASY_SOLUTION

from ..daemon.helpers import ADMIN, SECRET_A, bearer, make_settings
from .node import PORTAL, need_node
from .test_relay import _relay_module

# the page: the solve typed in, the log posted; the answer lost, the player in another
# tab for 5 s, back; the log posted again
PAGE = """
import { Recorder } from "./src/recorder.js";
import { Clock, MemoryStorage, Page } from "./testing/helpers.mjs";
const clock = new Clock(), document = new Page(), window = new EventTarget();
const start = Number(process.env.START);
const r = new Recorder({ clock: clock.now, wallClock: () => start + clock.ms, storage: new MemoryStorage(),
                         document, window, givens: process.env.GIVENS });
const solution = process.env.SOLUTION;
for (let c = 0; c < 81; c++) {
  if (process.env.GIVENS[c] !== "0") continue;
  clock.tick(1500);
  r.place(c, Number(solution[c]));
}
const first = r.finish();
clock.tick(2000);
document.setHidden(true);
clock.tick(5000);
document.setHidden(false);
clock.tick(1000);
console.log(JSON.stringify([first, r.log()]));
"""


async def test_a_page_that_posts_its_solve_again_gets_it_taken_as_a_duplicate(
        aiohttp_client, tmp_path):
    node = need_node()
    start = datetime.now(timezone.utc) - timedelta(minutes=10)
    out = subprocess.run([node, "--input-type=module", "-e", PAGE], cwd=PORTAL / "recorder",
                         env={"START": str(int(start.timestamp() * 1000)), "GIVENS": EASY,
                              "SOLUTION": EASY_SOLUTION, "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, timeout=60, check=True).stdout
    first, again = json.loads(out)
    fairgrid = await aiohttp_client(create_app(make_settings(tmp_path)))
    resp = await fairgrid.post("/v1/puzzles", json={"puzzles": [{"id": "easy", "givens": EASY}]},
                               headers=bearer(ADMIN))
    assert resp.status in (200, 201, 202), await resp.text()
    relay = await aiohttp_client(_relay_module().make_app(
        str(fairgrid.make_url("")).rstrip("/"), "demo", SECRET_A))
    statuses = []
    for log in (first, again):
        resp = await relay.post("/solves", json={"puzzle_id": "easy", "log": log},
                                headers={"X-Player": "p-7"})
        statuses.append((resp.status, (await resp.json()).get("status")))
    assert statuses[0] == (200, 202), statuses
    assert statuses[1] == (200, 200), f"the re-post: {statuses[1]} (fairgrid's 409)"
