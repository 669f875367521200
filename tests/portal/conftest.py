"""The portal kit's browser tests reuse the console's headless Chromium."""

from ..console.conftest import browser  # noqa: F401
