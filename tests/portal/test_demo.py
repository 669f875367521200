"""``fairgrid demo`` as a newcomer runs it, driven by a real headless Chromium: a puzzle
solved on the site by keyboard and pointer arrives signed, is scored and shows in the
console; a pasted solution is ``paste`` evidence; a tab switch is a hidden interval in
the stored solve."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
import json

import pytest
from selenium.webdriver.common.by import By

from fairgrid.daemon.cli.demo import PUZZLES
from fairgrid.daemon.testing import free_port
from fairgrid.solvers import parse
from fairgrid.solvers.propagation import solution_of

pytestmark = pytest.mark.slow

GIVENS = PUZZLES["warm-up"][1]


def _solution() -> str:
    sol = solution_of(parse(GIVENS))
    return "".join(str(int(d)) for d in sol)


class Demo:
    def __init__(self, proc, site, daemon, password, token):
        self.proc, self.site, self.daemon = proc, site, daemon
        self.password, self.token = password, token

    def api(self, path: str) -> dict:
        req = urllib.request.Request(self.daemon + path,
                                     headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.load(resp)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("demo")
    port, site_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRGRID_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "fairgrid.daemon.cli", "demo", "--port", str(port),
         "--site-port", str(site_port), "--players", "4", "--cheaters", "2"],
        cwd=folder, env=env, stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        deadline = time.monotonic() + 300
        while not any("ready" in line for line in lines):
            line = proc.stderr.readline()
            assert line or proc.poll() is None, "".join(lines)
            assert time.monotonic() < deadline, "".join(lines)
            lines.append(line)
        text = "".join(lines)
        password = re.search(r"with password (\S+), made for this run", text).group(1)
        token = tomllib.loads((folder / "fairgrid.secrets.toml").read_text())["auth"][
            "admin_tokens"][0]
        yield Demo(proc, f"http://127.0.0.1:{site_port}", f"http://127.0.0.1:{port}",
                   password, token)
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _until(check, timeout=600.0):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.25)


def _start(browser, demo, player: str):
    browser.get(demo.site + "/")
    name = browser.find_element(By.ID, "player")
    name.clear()
    name.send_keys(player)
    browser.find_element(By.CSS_SELECTOR, "input[value='warm-up']").click()
    browser.find_element(By.ID, "start").click()
    _until(lambda: browser.find_elements(By.CSS_SELECTOR, "#grid .cell"))
    return browser.find_elements(By.CSS_SELECTOR, "#grid .cell")


def _submit(browser) -> str:
    browser.find_element(By.ID, "submit").click()
    _until(lambda: "/verdict/" in browser.current_url, 60)
    return browser.current_url.rsplit("/", 1)[1]


def _verdict(browser):
    """Wait for the verdict page to show the score (it refreshes itself)."""
    _until(lambda: browser.find_elements(By.ID, "flagged"))
    return {row.get_attribute("data-signal"): row.text
            for row in browser.find_elements(By.CSS_SELECTOR, "#signals tbody tr")}


def test_a_solve_by_keyboard_and_pointer_arrives_signed_is_scored_and_in_the_console(
        browser, demo):
    cells = _start(browser, demo, "alice")
    solution = _solution()
    empty = [c for c, g in enumerate(GIVENS) if g == "0"]
    for k, c in enumerate(empty):
        cells[c].click()
        if k % 2:
            cells[c].send_keys(solution[c])
        else:
            browser.find_element(By.CSS_SELECTOR, f".pad [data-digit='{solution[c]}']").click()
    sid = _submit(browser)
    signals = _verdict(browser)
    assert browser.find_element(By.ID, "sid").text == sid and "speed" in signals
    doc = demo.api(f"/v1/submissions/demo/{sid}")
    assert doc["status"] == "scored" and doc["complete"] and doc["player_id"] == "alice"
    assert [m["cell"] for m in doc["moves"]] == empty
    assert [m["digit"] for m in doc["moves"]] == [int(solution[c]) for c in empty]
    times = [m["t_ms"] for m in doc["moves"]]
    assert times == sorted(times) and times[-1] > 0
    client = doc["client"]
    assert client["version"] == 1 and client["paste_count"] == 0
    assert client["input"] == {"keyboard": len(empty) // 2, "pointer": len(empty) - len(empty) // 2}
    # the console: sign in, follow the verdict page's link, find the solve
    console = browser.find_element(By.ID, "console").get_attribute("href")
    browser.get(demo.daemon + "/ui/login")
    browser.find_element(By.NAME, "name").send_keys("demo")
    browser.find_element(By.NAME, "password").send_keys(demo.password)
    browser.find_element(By.CSS_SELECTOR, "form button, form input[type=submit]").click()
    _until(lambda: "/ui/login" not in browser.current_url, 30)
    browser.get(console)
    assert sid in browser.page_source
    # the simulated players filled the tournament: the console has a queue
    _until(lambda: any(f["player_id"].startswith("sim-")
                       for f in demo.api("/v1/flags?tournament=demo-cup")["flags"]))


def test_a_pasted_solution_is_paste_evidence(browser, demo):
    cells = _start(browser, demo, "paula")
    first = next(c for c, g in enumerate(GIVENS) if g == "0")
    cells[first].click()
    browser.execute_script(
        "const data = new DataTransfer(); data.setData('text', arguments[1]);"
        "arguments[0].dispatchEvent(new ClipboardEvent('paste', {clipboardData: data,"
        " bubbles: true, cancelable: true}));", cells[first], _solution())
    assert all(cell.get_attribute("value") for cell in cells)
    sid = _submit(browser)
    signals = _verdict(browser)
    assert "paste" in signals and "1 paste" in signals["paste"], signals
    client = demo.api(f"/v1/submissions/demo/{sid}")["client"]
    assert client["paste_count"] == 1 and client["pastes"][0]["cell"] == first


def test_leaving_for_another_tab_is_a_hidden_interval_in_the_stored_solve(browser, demo):
    cells = _start(browser, demo, "hana")
    solution = _solution()
    empty = [c for c, g in enumerate(GIVENS) if g == "0"]
    for c in empty[:5]:
        cells[c].click()
        cells[c].send_keys(solution[c])
    game = browser.current_window_handle
    browser.switch_to.new_window("tab")
    browser.get("about:blank")
    time.sleep(1.5)  # away this long at least: the interval's length is measured, not raced
    browser.close()
    browser.switch_to.window(game)
    for c in empty[5:]:
        cells[c].click()
        cells[c].send_keys(solution[c])
    sid = _submit(browser)
    doc = demo.api(f"/v1/submissions/demo/{sid}")
    [hidden] = doc["client"]["hidden"]
    fifth, sixth = doc["moves"][4]["t_ms"], doc["moves"][5]["t_ms"]
    assert hidden["ms"] >= 1400 and fifth <= hidden["t_ms"] <= sixth - hidden["ms"]
    assert doc["client"]["blur"] and doc["client"]["blur"][0]["ms"] >= 1400


def _post_site(demo, body: bytes) -> tuple[int, dict]:
    req = urllib.request.Request(demo.site + "/solves", data=body, method="POST",
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def test_the_site_takes_a_solve_once_and_refuses_what_is_no_solve(demo):
    solution = _solution()
    moves = [{"t_ms": 1000 * (k + 1), "cell": c, "digit": int(solution[c])}
             for k, c in enumerate(c for c, g in enumerate(GIVENS) if g == "0")]
    log = {"started_at": "2026-11-29T10:00:00Z", "moves": moves}
    body = json.dumps({"puzzle_id": "warm-up", "player": "twice", "log": log}).encode()
    # sent twice (a double click, a retry): one submission
    (s1, a1), (s2, a2) = _post_site(demo, body), _post_site(demo, body)
    assert (s1, s2) == (200, 200) and a1["submission_id"] == a2["submission_id"], (a1, a2)
    subs = demo.api("/v1/players/demo/twice")["submissions"]
    assert [s["submission_id"] for s in subs] == [a1["submission_id"]]
    for bad in (b"[" * 100_000, body.replace(b'"t_ms": 1000,', b'"t_ms": NaN,'),
                json.dumps({"puzzle_id": "warm-up", "player": {"x": 1}, "log": log}).encode()):
        status, answer = _post_site(demo, bad)
        assert status == 400 and "expected" in answer["error"], (bad[:40], status)
    # a verdict page reads that one solve of this portal, never another route
    for sid in ("..%2F..%2Fflags", "..%2Fother%2Fx", "..%2F..%2Fusers"):
        with urllib.request.urlopen(f"{demo.site}/verdict/{sid}", timeout=60) as resp:
            assert resp.status == 200 and "No such solve" in resp.read().decode(), sid
