"""Fixtures for the console's browser tests: Debian's headless Chromium via Selenium.

They need Debian's ``chromium`` and ``chromium-driver`` packages, which ``.ci/run``
installs. Outside CI, a machine without them skips with the install command; in CI
(``CI`` set) a missing browser is a failure, never a silent skip. The chromedriver on
PATH is used, so Selenium Manager never downloads anything.
"""

from __future__ import annotations

import pytest

from .browser import DESKTOP, need_chromium


@pytest.fixture(scope="session")
def browser():
    chromium, chromedriver = need_chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={DESKTOP[0]},{DESKTOP[1]}"):
        options.add_argument(arg)
    options.binary_location = chromium
    driver = webdriver.Chrome(options=options, service=Service(executable_path=chromedriver))
    try:
        driver.set_window_size(*DESKTOP)
        yield driver
    finally:
        driver.quit()
