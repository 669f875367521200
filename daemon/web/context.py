"""What the request handlers share: one typed AppKey holding the daemon's parts, and the
two ways a handler reaches the database."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from aiohttp import web

from ..metrics import Metrics
from ..settings import Settings
from .secrets import Secrets

if TYPE_CHECKING:
    from ..ingest.catalog import PuzzleCatalog
    from ..ingest.signatures import Verifier
    from ..store import Store
    from ..work.analysis import PuzzleAnalysis
    from ..work.notify import Notifier
    from ..work.nightly_runner import NightlyRunner
    from ..work.scoring import Scorer
    from .auth import Accounts


@dataclass(frozen=True, eq=False)
class Parts:
    """The resources the daemon opens at start (``app._resources``) and closes at stop."""

    store: Store
    accounts: Accounts
    catalog: PuzzleCatalog
    analysis: PuzzleAnalysis
    scorer: Scorer
    nightly: NightlyRunner
    notifier: Notifier


class Context:
    """The settings in force (portals and tokens reloaded on change), the metrics, and,
    once the daemon has started, its parts; a handler never runs before that, so it
    never meets a part that is missing."""

    def __init__(self, settings: Settings, metrics: Metrics):
        self.secrets = Secrets(settings)
        self.metrics = metrics
        self._parts: Parts | None = None
        # called with a person's name when they are disabled or get a new password: what
        # keeps sessions (the console) ends theirs; the API keeps none of its own
        self.on_sign_out: list[Callable[[str], None]] = []

    def started(self, parts: Parts | None) -> None:
        """Hand over the parts once open (None again once closed)."""
        self._parts = parts

    @property
    def parts(self) -> Parts:
        if self._parts is None:
            raise RuntimeError("the daemon's resources are not open")
        return self._parts

    @property
    def settings(self) -> Settings:
        return self.secrets.settings

    @property
    def verifier(self) -> Verifier:
        return self.secrets.verifier

    store = property(lambda self: self.parts.store)
    accounts = property(lambda self: self.parts.accounts)
    catalog = property(lambda self: self.parts.catalog)
    analysis = property(lambda self: self.parts.analysis)
    scorer = property(lambda self: self.parts.scorer)
    nightly = property(lambda self: self.parts.nightly)
    notifier = property(lambda self: self.parts.notifier)


CTX = web.AppKey("fairgrid_context", Context)


async def read(request: web.Request, fn, *args, **kwargs):
    """A repository read on a worker thread (the event loop never waits on DuckDB)."""
    return await asyncio.to_thread(request.app[CTX].store.read, fn, *args, **kwargs)


async def write(request: web.Request, fn, *args):
    """A repository write in one transaction of the single writer."""
    return await asyncio.wrap_future(request.app[CTX].store.write(fn, *args))
