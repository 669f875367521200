"""Helpers for the console's browser tests (plain functions; the fixtures live in conftest.py).

Import them in a test module with ``from .browser import set_width, ...``.
"""

from __future__ import annotations

import os
import shutil

import pytest

INSTALL = "apt-get install -y --no-install-recommends chromium chromium-driver"

DESKTOP = (1280, 900)
PHONE = (375, 812)


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def chromedriver_path() -> str | None:
    return shutil.which("chromedriver")


def need_chromium() -> tuple[str, str]:
    """The chromium and chromedriver on PATH; skip without them, or fail in CI."""
    chromium, driver = chromium_path(), chromedriver_path()
    if chromium is None or driver is None:
        msg = f"Debian's chromium and chromium-driver packages are needed: {INSTALL}"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return chromium, driver


def set_width(browser, width: int, height: int = 900) -> None:
    """Resize the window (the viewport follows, headless)."""
    browser.set_window_size(width, height)


def overflows_horizontally(browser) -> bool:
    """Whether the page is wider than the viewport (a horizontal scrollbar)."""
    return bool(browser.execute_script(
        "const d = document.documentElement; return d.scrollWidth > d.clientWidth;"))


_UNLABELLED_JS = r"""
const out = [];
const controls = document.querySelectorAll('input, select, textarea, button');
for (const el of controls) {
  const tag = el.tagName.toLowerCase();
  const type = (el.getAttribute('type') || '').toLowerCase();
  if (tag === 'input' && type === 'hidden') continue;
  const style = getComputedStyle(el);
  const visible = el.getClientRects().length > 0 && style.visibility !== 'hidden'
                  && style.display !== 'none';
  if (!visible) continue;
  if ((el.getAttribute('aria-label') || '').trim()) continue;
  const by = (el.getAttribute('aria-labelledby') || '').trim();
  if (by && by.split(/\s+/).some(id => {
        const t = document.getElementById(id); return t && t.textContent.trim(); })) continue;
  if (el.id && Array.from(document.querySelectorAll('label')).some(
        l => l.htmlFor === el.id && l.textContent.trim())) continue;
  if (el.closest('label') && el.closest('label').textContent.trim()) continue;
  if (tag === 'button' && el.textContent.trim()) continue;
  if (tag === 'input' && ['submit', 'button', 'reset'].includes(type)
      && (el.value || '').trim()) continue;
  if (tag === 'input' && type === 'image' && (el.getAttribute('alt') || '').trim()) continue;
  out.push(`<${tag}${type ? ' type=' + type : ''} name=${el.getAttribute('name') || ''}`
           + ` id=${el.id || ''}>`);
}
return out;
"""


def unlabelled_controls(browser) -> list[str]:
    """Every visible form control with no accessible name, described as tag, name and id."""
    return list(browser.execute_script(_UNLABELLED_JS))
