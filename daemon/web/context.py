"""What the request handlers share: one typed AppKey holding the daemon's parts."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from aiohttp import web

from ..ingest import ValidationError
from ..ingest.signatures import Verifier
from ..metrics import Metrics
from ..settings import Settings
from ..store import Store
from .auth import Accounts, AuthError, Principal  # noqa: F401 - AuthError re-exported

if TYPE_CHECKING:
    from ..work.analysis import PuzzleRegistry
    from ..work.scheduler import NightlyRunner
    from ..work.notify import Notifier
    from ..work.scoring import Scorer


@dataclass
class Context:
    settings: Settings
    metrics: Metrics
    verifier: Verifier
    store: Store | None = None
    puzzles: "PuzzleRegistry | None" = None
    scorer: "Scorer | None" = None
    jobs: "NightlyRunner | None" = None
    accounts: Accounts | None = None
    notifier: "Notifier | None" = None
    secrets_file: Path | None = None   # where the portals come from (found at start-up)
    secrets_mtime: int | None = None   # its modification time when last read

    def _portals_file(self) -> Path:
        """Where the portals' secrets live: the config file when it names portals or
        tokens, else the embedded secrets file next to the database."""
        import tomllib

        from ..settings import SECRETS_FILE
        if self.settings.source != "defaults":
            config = Path(self.settings.source)
            try:
                table = tomllib.loads(config.read_text())
            except (OSError, ValueError):
                table = {"portals": {}}
            if "portals" in table or "auth" in table:
                return config
        return Path(self.settings.storage_path).resolve().parent / SECRETS_FILE

    def reload_portals(self) -> bool:
        """Re-read the portals when their file changed since the last look (one stat:
        cheap beside the HMACs a bad signature already cost): ``fairgrid portal add``
        takes effect without a restart. True when the verifier changed. The first call,
        at start-up, only notes the file and its time."""
        def mtime(path: Path) -> int | None:
            return path.stat().st_mtime_ns if path.exists() else None

        if self.secrets_file is None:
            self.secrets_file = self._portals_file()
            self.secrets_mtime = mtime(self.secrets_file)
            return False
        now = mtime(self.secrets_file)
        if now == self.secrets_mtime:
            return False
        self.secrets_mtime = now
        from ..settings import SettingsError, read_portals
        try:
            portals = read_portals(self.secrets_file)
        except (SettingsError, OSError) as exc:
            log.error("portals not reloaded: %s", exc)
            return False
        if not portals or portals == self.settings.portals:
            return False
        self.settings = dataclasses.replace(self.settings, portals=portals)
        self.verifier = Verifier.from_portals(portals, self.settings.webhooks_tolerance_s)
        log.info("portals reloaded from %s: %s", self.secrets_file, ", ".join(sorted(portals)))
        return True


CTX = web.AppKey("fairgrid_context", Context)
log = logging.getLogger("fairgrid.web")


def _finite(value):
    """``value`` with every NaN or infinity replaced by None (JSON has neither)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def dumps(value) -> str:
    """JSON for a response: no NaN or Infinity ever (browsers and node refuse them); the
    encoder would raise on one the replacement missed."""
    return json.dumps(_finite(value), allow_nan=False)


def json_response(value, **kwargs) -> web.Response:
    return web.json_response(value, dumps=dumps, **kwargs)


def error(status: int, message: str, field: str | None = None,
          headers: dict[str, str] | None = None) -> web.Response:
    """The JSON error every failure becomes: ``{"error": ..., "field": ...}``."""
    body = {"error": message}
    if field is not None:
        body["field"] = field
    return json_response(body, status=status, headers=headers)


async def read(request: web.Request, fn, *args, **kwargs):
    """A repository read on a worker thread (the event loop never waits on DuckDB)."""
    return await asyncio.to_thread(request.app[CTX].store.read, fn, *args, **kwargs)


async def write(request: web.Request, fn, *args):
    """A repository write in one transaction of the single writer."""
    return await asyncio.wrap_future(request.app[CTX].store.write(fn, *args))


def known_query(request: web.Request, known: frozenset = frozenset()) -> None:
    """400 naming query parameters the route does not know (a typo filters nothing)."""
    unknown = sorted(set(request.query) - known)
    if unknown:
        takes = (f"known: {', '.join(sorted(known))}" if known
                 else "this route takes no query parameters")
        raise ValidationError(unknown[0], f"unknown query parameter ({takes})", 400)


def require_token(request: web.Request, *, admin: bool) -> Principal:
    """Who calls, from ``Authorization: Bearer <token>`` (a service token from the config
    or a person's API token): 401 without a known token, 403 for an organiser on an admin
    route."""
    ctx = request.app[CTX]
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthError("missing bearer token")
    who = ctx.accounts.from_token(token.strip(), ctx.settings) if ctx.accounts else None
    if who is None:
        raise AuthError("unknown token")
    if admin and who.role != "admin":
        raise AuthError("this route needs an admin; an organiser is not enough", 403)
    return who
