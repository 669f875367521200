"""The console in a real browser (Debian's headless Chromium), against a real daemon
(`fairgrid serve` on 127.0.0.1) fed by `fairgrid simulate`: a reviewer signs in, finds a
simulated cheater in the queue, reads the evidence, replays the solve, decides, and sees
the history name them; a reviewer of another portal cannot see it; forms without the
CSRF token are refused; nothing overflows at desktop or phone width; every control has a
label and the sign-in works from the keyboard."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fairgrid.daemon.testing import free_port, start

from ..daemon.helpers import ADMIN, OTHER_SECRET, SECRET_A
from ..fixtures import EASY
from .browser import DESKTOP, PHONE, overflows_horizontally, set_width, unlabelled_controls

pytestmark = pytest.mark.slow

FAIRGRID = shutil.which("fairgrid")
CMD = [FAIRGRID] if FAIRGRID else [sys.executable, "-m", "fairgrid.daemon.cli"]
PASSWORDS = {"alice": "alice-password-1", "bob": "bob-password-22", "root": "root-password-333"}


def _cli(*args, stdin: str | None = None, base: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, FAIRGRID_URL=base, FAIRGRID_TOKEN=ADMIN)
    return subprocess.run([*CMD, *args], input=stdin, capture_output=True, text=True,
                          timeout=600, env=env)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, browser):
    tmp = tmp_path_factory.mktemp("console")
    port = free_port()
    cfg = tmp / "fairgrid.toml"
    cfg.write_text(f'[server]\nhost = "127.0.0.1"\nport = {port}\n'
                   f'[storage]\npath = "{tmp / "fg.duckdb"}"\n'
                   '[analysis]\nworkers = 1\norder_runs = 8\norder_budget_s = 2.0\n'
                   f'[portals.demo]\nsecrets = ["{SECRET_A}"]\n'
                   f'[portals.other]\nsecrets = ["{OTHER_SECRET}"]\n'
                   f'[auth]\nadmin_tokens = ["{ADMIN}"]\n')
    base = f"http://127.0.0.1:{port}"
    proc = start(cfg, base, timeout=120)
    try:
        for name, role, portals in (("alice", "organiser", ["demo"]),
                                    ("bob", "organiser", ["other"]), ("root", "admin", [])):
            extra = [a for p in portals for a in ("--portal", p)]
            out = _cli("user", "add", name, "--role", role, *extra, "--password-stdin",
                       stdin=PASSWORDS[name] + "\n", base=base)
            assert out.returncode == 0, out.stderr
        out = _cli("simulate", EASY, "--url", base, "--secret", SECRET_A, "--players", "4",
                   "--cheaters", "3", "--tournament", "spring-cup", "--wait", "300", base=base)
        assert out.returncode == 0, out.stderr
        # a queue to work through: blatant copiers of every kind, most of them flagged
        out = _cli("simulate", EASY, "--url", base, "--secret", SECRET_A, "--players", "0",
                   "--cheaters", "98", "--tournament", "desk-cup", "--prefix", "desk",
                   "--seed", "1", "--wait", "300", base=base)
        assert out.returncode == 0, out.stderr
        yield base
    finally:
        proc.terminate()
        proc.wait(60)


def sign_in(browser, base: str, name: str) -> None:
    """From the keyboard only: type, Tab, type, Enter."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser.delete_all_cookies()
    browser.get(base + "/ui/")
    assert "/ui/login" in browser.current_url
    field = browser.find_element(By.ID, "name")
    assert browser.switch_to.active_element == field  # focused on arrival
    field.send_keys(name, Keys.TAB)
    browser.switch_to.active_element.send_keys(PASSWORDS[name], Keys.ENTER)
    _wait(lambda: browser.find_element(By.TAG_NAME, "h1").text == "Overview")


def _wait(predicate, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            if predicate():
                return
        except Exception:  # noqa: BLE001 - the page is still loading
            pass
        assert time.monotonic() < deadline, "timed out waiting for the page"
        time.sleep(0.05)


def _get_as(browser, url: str) -> str:
    """A download with the browser's session cookie (the page's CSP allows no fetch)."""
    import urllib.request

    cookie = "; ".join(f"{c['name']}={c['value']}" for c in browser.get_cookies())
    with urllib.request.urlopen(urllib.request.Request(url, headers={"Cookie": cookie}),
                                timeout=30) as resp:
        assert resp.headers["Content-Type"].startswith("text/csv")
        return resp.read().decode()


def _check_layout(browser, label: str) -> None:
    for width, height in (DESKTOP, PHONE):
        set_width(browser, width, height)
        assert not overflows_horizontally(browser), f"{label} overflows at {width}px"
    set_width(browser, *DESKTOP)
    assert unlabelled_controls(browser) == [], label


def test_a_reviewer_finds_reads_replays_and_decides(browser, daemon, tmp_path):
    from selenium.webdriver.common.by import By

    sign_in(browser, daemon, "alice")
    _check_layout(browser, "overview")
    assert "spring-cup" in browser.find_element(By.TAG_NAME, "table").text

    browser.get(daemon + "/ui/flags?tournament=spring-cup&state=open")
    _check_layout(browser, "flag queue")
    links = browser.find_elements(By.CSS_SELECTOR, "a.flaglink")
    assert len(links) >= 2, browser.page_source[:2000]
    first = links[0].get_attribute("href")
    second = links[1].get_attribute("href")
    browser.get(first)
    _check_layout(browser, "flag page")
    verdict = browser.find_element(By.CSS_SELECTOR, ".verdict").text
    assert verdict.startswith("Flagged for review")
    reasons = browser.find_elements(By.CSS_SELECTOR, "table.signals tr.reason")
    assert reasons, "the signals that flagged it are marked"
    assert len(browser.find_elements(By.CSS_SELECTOR, ".boards svg")) == 2
    assert browser.find_elements(By.CSS_SELECTOR, "figure.chart svg rect.easy, "
                                                  "figure.chart svg rect.hard")
    # the replay: back to the start, one move forward
    status = browser.find_element(By.ID, "rp-status")
    assert status.text.startswith("Move ")  # it opens on the last move
    browser.find_element(By.ID, "rp-first").click()
    _wait(lambda: status.text.startswith("Start"))
    filled = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "#replay-board div")]
    browser.find_element(By.ID, "rp-next").click()
    _wait(lambda: status.text.startswith("Move 1 of"))
    after = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "#replay-board div")]
    assert sum(a != b for a, b in zip(filled, after)) == 1
    # for a screen reader: a group of named cells (no grid without rows), and playing
    # does not read out every move
    board = browser.find_element(By.ID, "replay-board")
    assert board.get_attribute("role") == "group"
    corner = board.find_elements(By.CSS_SELECTOR, "div")[0]
    assert corner.get_attribute("aria-label") == "row 1, column 1"
    assert corner.get_attribute("role") is None
    browser.find_element(By.ID, "rp-play").click()
    _wait(lambda: status.get_attribute("aria-live") == "off")
    browser.find_element(By.ID, "rp-play").click()
    _wait(lambda: status.get_attribute("aria-live") == "polite")
    # the picture in the README: the top of the flag page
    shots = os.environ.get("FAIRGRID_SCREENSHOT_DIR")
    set_width(browser, 1100, 1500)
    browser.execute_script("window.scrollTo(0, 0)")
    browser.save_screenshot(str(Path(shots or tmp_path) / "console-flag.png"))
    set_width(browser, *DESKTOP)

    # decide: clear the first, confirm the second; the next flag of the queue opens,
    # and the decided flag's history names alice
    from selenium.webdriver.common.keys import Keys

    for url, choice, note in ((first, "cleared", "known fast solver"),
                              (second, "confirmed", "pasted from a solver")):
        browser.get(url)
        if choice == "cleared":  # with the mouse
            browser.find_element(By.ID, f"d-{choice}").click()
            browser.find_element(By.ID, "note").send_keys(note)
            browser.find_element(By.CSS_SELECTOR, "form.review button").click()
        else:  # from the keyboard: space picks the option, Tab moves on, Enter sends
            browser.find_element(By.ID, f"d-{choice}").send_keys(Keys.SPACE)
            assert browser.find_element(By.ID, f"d-{choice}").is_selected()
            for _ in range(5):
                browser.switch_to.active_element.send_keys(Keys.TAB)
                if browser.switch_to.active_element.get_attribute("id") == "note":
                    break
            browser.switch_to.active_element.send_keys(note, Keys.TAB)
            button = browser.switch_to.active_element
            assert button.get_attribute("type") == "submit"
            button.send_keys(Keys.ENTER)
        flag_id = url.split("/")[-1].split("?")[0]
        _wait(lambda: f"Flag {flag_id} is {choice}." in browser.find_element(
            By.CSS_SELECTOR, "main").text)
        browser.get(url)
        _wait(lambda: f"{choice} alice {note}" in browser.find_element(
            By.CSS_SELECTOR, "#history table").text)
        assert choice in browser.find_element(By.CSS_SELECTOR, "h1 .tag").text

    # the queue of open flags no longer lists them; the CSV export has both decisions
    browser.get(daemon + "/ui/flags?tournament=spring-cup&state=open")
    hrefs = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "a.flaglink")]
    assert first not in hrefs and second not in hrefs
    csv_text = _get_as(browser, daemon + "/ui/tournaments/spring-cup/flags.csv")
    assert "cleared,alice,known fast solver" in csv_text
    assert "confirmed,alice,pasted from a solver" in csv_text

    # the player's page, the puzzle's page and the search
    browser.get(first)
    browser.find_element(By.CSS_SELECTOR, ".facts a").click()
    _wait(lambda: browser.find_element(By.TAG_NAME, "h1").text.startswith("Player"))
    _check_layout(browser, "player page")
    browser.get(daemon + "/ui/search?q=sim")
    _check_layout(browser, "search")
    assert browser.find_elements(By.CSS_SELECTOR, "tbody tr")

    # another portal's reviewer sees none of it
    sign_in(browser, daemon, "bob")
    browser.get(first)
    assert browser.find_element(By.TAG_NAME, "h1").text == "Not found"
    browser.get(daemon + "/ui/flags?state=any")
    assert browser.find_elements(By.CSS_SELECTOR, "a.flaglink") == []


def test_forms_without_the_csrf_token_are_refused(browser, daemon):
    from selenium.webdriver.common.by import By

    sign_in(browser, daemon, "root")
    browser.get(daemon + "/ui/flags?state=open")
    url = browser.find_element(By.CSS_SELECTOR, "a.flaglink").get_attribute("href")
    browser.get(url)
    browser.execute_script("document.querySelector('form.review input[name=csrf]').remove()")
    browser.find_element(By.CSS_SELECTOR, "form.review input[type=radio]").click()
    browser.find_element(By.CSS_SELECTOR, "form.review button").click()
    _wait(lambda: "CSRF" in browser.find_element(By.TAG_NAME, "main").text)
    browser.get(url)
    assert browser.find_elements(By.CSS_SELECTOR, "td.actor") == [] or \
        "root" not in browser.find_element(By.CSS_SELECTOR, "#history").text
    # the sign-in page itself passes the checks too
    browser.delete_all_cookies()
    browser.get(daemon + "/ui/login")
    _check_layout(browser, "sign-in page")


def _shot(browser, tmp_path, name: str, width: int, height: int) -> None:
    """A screenshot for the docs (FAIRGRID_SCREENSHOT_DIR) or the test's own folder."""
    set_width(browser, width, height)
    browser.execute_script("window.scrollTo(0, 0)")
    browser.save_screenshot(str(Path(os.environ.get("FAIRGRID_SCREENSHOT_DIR") or tmp_path)
                                / name))


def _keys(browser, *keys, ctrl: bool = False) -> None:
    """Keys to whatever has the focus, as a person types them."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    chain = ActionChains(browser)
    if ctrl:
        chain.key_down(Keys.CONTROL)
    chain.send_keys(*keys)
    if ctrl:
        chain.key_up(Keys.CONTROL)
    chain.perform()


def _h1(browser) -> str:
    from selenium.webdriver.common.by import By
    return browser.find_element(By.TAG_NAME, "h1").text


# words of the evidence table that a line break cuts in two (at a phone's width)
BROKEN_WORDS_JS = r"""
const broken = [];
for (const cell of document.querySelectorAll('table.signals td, table.signals th')) {
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const re = /\S+/g;
    let m;
    while ((m = re.exec(node.textContent))) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top)));
      if (tops.size > 1) broken.push(m[0]);
    }
  }
}
return broken;
"""

SQUARE_JS = """
const cells = Array.from(document.querySelectorAll('#replay-board div'));
return cells.map(c => { const r = c.getBoundingClientRect(); return [r.width, r.height]; });
"""


def test_the_replay_marks_the_evidence_and_keeps_square_cells(browser, daemon, tmp_path):
    from selenium.webdriver.common.by import By

    sign_in(browser, daemon, "alice")
    browser.get(daemon + "/ui/flags?tournament=desk-cup&reason=unforced")
    browser.find_element(By.CSS_SELECTOR, "a.flaglink").click()
    _wait(lambda: _h1(browser).startswith("Flag "))
    data = browser.execute_script(
        "return JSON.parse(document.getElementById('replay-data').textContent)")
    marked = [i for i, m in enumerate(data["moves"]) if "unforced" in m[4]]
    assert marked, "a solve flagged for digits nothing forced has them marked"
    # the pace chart labels its marks for what they are
    legend = browser.find_element(By.CSS_SELECTOR, "figure.chart svg").text
    assert "nothing forced it" in legend and "hard step" in legend
    assert len(browser.find_elements(By.CSS_SELECTOR, "figure.chart .evidence-mark")) >= 1
    # the first marked move, from the start: the board shows it marked, the status says so
    browser.find_element(By.ID, "rp-first").click()
    browser.find_element(By.ID, "rp-mark").click()
    status = browser.find_element(By.ID, "rp-status")
    first = next(i for i, m in enumerate(data["moves"])
                 if set(m[4]) & {"unforced", "unproven", "pace", "wrong", "erase"})
    _wait(lambda: status.text.startswith(f"Move {first + 1} of"))
    cell = data["moves"][first][1]
    classes = browser.find_elements(By.CSS_SELECTOR, "#replay-board div")[cell] \
        .get_attribute("class").split()
    assert "last" in classes and {f"mark-{k}" for k in data["moves"][first][4]} <= set(classes)
    if first in marked:
        assert "nothing forced it" in status.text
    # at a phone's width the evidence table breaks lines between words, not inside them
    set_width(browser, *PHONE)
    assert browser.execute_script(BROKEN_WORDS_JS) == []
    # square cells at every width, with an empty board and a full one
    for width, height in (DESKTOP, PHONE):
        set_width(browser, width, height)
        for button in ("rp-first", "rp-last"):
            browser.find_element(By.ID, button).click()
            sizes = browser.execute_script(SQUARE_JS)
            assert len(sizes) == 81
            assert all(abs(w - h) <= 1.0 and w > 5 for w, h in sizes), (width, button,
                                                                          sizes[:9])
    # the pictures in docs/console.md: the replay at a marked move, on a laptop and a phone
    browser.find_element(By.ID, "rp-first").click()
    browser.find_element(By.ID, "rp-mark").click()
    for name, size in (("console-replay.png", (1100, 1300)),
                       ("console-replay-phone.png", PHONE)):
        set_width(browser, *size)
        browser.execute_script("document.getElementById('replay-h').scrollIntoView()")
        browser.find_element(By.ID, "replay").screenshot(
            str(Path(os.environ.get("FAIRGRID_SCREENSHOT_DIR") or tmp_path) / name))
    set_width(browser, *DESKTOP)


def test_fifty_flags_by_keyboard_alone(browser, daemon, tmp_path):
    """Open the queue, move to the first card, open it; then fifty times: pick a
    decision, write a note, record; the next flag of the queue opens."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    sign_in(browser, daemon, "alice")
    queue = daemon + "/ui/flags?tournament=desk-cup&sort=oldest"
    browser.get(queue)
    _check_layout(browser, "flag queue")
    _shot(browser, tmp_path, "console-queue.png", 1100, 1300)
    set_width(browser, *DESKTOP)
    ids = [int(a.get_attribute("href").split("/ui/flags/")[1].split("?")[0])
           for a in browser.find_elements(By.CSS_SELECTOR, "a.flaglink")]
    assert len(ids) >= 50, f"only {len(ids)} flags to work through"
    _keys(browser, "?")
    assert browser.find_element(By.ID, "keys").is_displayed()
    _keys(browser, Keys.ESCAPE)
    assert not browser.find_element(By.ID, "keys").is_displayed()
    _keys(browser, "j")
    assert f"/ui/flags/{ids[0]}?" in browser.switch_to.active_element.get_attribute("href")
    _keys(browser, Keys.ENTER)
    for n, flag_id in enumerate(ids[:50]):
        _wait(lambda: _h1(browser).startswith(f"Flag {flag_id}"))
        if n == 1:  # j and k move between the queue's open flags (the first is decided)
            assert not browser.find_elements(By.ID, "prev-flag")
            _keys(browser, "j")
            _wait(lambda: _h1(browser).startswith(f"Flag {ids[2]}"))
            _keys(browser, "k")
            _wait(lambda: _h1(browser).startswith(f"Flag {flag_id}"))
        if n % 10 == 3:  # confirming needs a note: the form will not send without one
            _keys(browser, "x")
            _keys(browser, Keys.ENTER, ctrl=True)
            assert _h1(browser).startswith(f"Flag {flag_id}")
            assert browser.switch_to.active_element.get_attribute("id") == "note"
            _keys(browser, f"copied #{n};")
        else:
            _keys(browser, "c")
            _keys(browser, Keys.ESCAPE)  # out of the note; n puts the cursor back in
            _keys(browser, "n")
            assert browser.switch_to.active_element.get_attribute("id") == "note"
            _keys(browser, f"honest #{n};")
        _keys(browser, Keys.ENTER, ctrl=True)
        _wait(lambda: f"Flag {flag_id} is " in browser.find_element(By.TAG_NAME, "main").text)
    # every decision is recorded, once, with its note and alice's name
    csv_text = _get_as(browser, daemon + "/ui/tournaments/desk-cup/flags.csv")
    for n in range(50):
        words = f"copied #{n};" if n % 10 == 3 else f"honest #{n};"
        assert csv_text.count(words) == 1, words
    assert csv_text.count(",alice,") == 50
