"""The daemon's application: the HTTP API (:mod:`.web`) with the console's pages
(:mod:`.console`) mounted on it, one process and one port.

The dependency runs one way: the console builds on the web package's parts (the
context, authentication, responses), and the web package knows nothing of the console.
"""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CollectorRegistry

from . import console
from .settings import Settings
from .web.app import create_api


def create_app(settings: Settings, registry: CollectorRegistry | None = None) -> web.Application:
    """The fairgrid daemon's application (resources open when the app starts)."""
    app = create_api(settings, registry)
    console.setup(app)
    return app
