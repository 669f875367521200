"""Shared test set-up: hypothesis profiles and the fixtures every test may take (the
daemon's app through a test client, a real daemon in a subprocess); shared helpers are
in ``tests/daemon/helpers.py``, puzzles in ``tests/fixtures.py``."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", deadline=None, max_examples=60,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", deadline=None, max_examples=40, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture
async def client(aiohttp_client, tmp_path):
    """The daemon's app with the tests' settings (``helpers.make_settings``) on a tmp
    DuckDB file, through aiohttp's test client."""
    from fairgrid.daemon.app import create_app

    from .daemon.helpers import make_settings

    return await aiohttp_client(create_app(make_settings(tmp_path)))


@pytest.fixture
def daemon(tmp_path):
    """A real ``fairgrid serve`` subprocess: (process, base URL, database, tmp_path)."""
    from .daemon.helpers import start_daemon

    yield from start_daemon(tmp_path)
