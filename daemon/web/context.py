"""What the request handlers share: one typed AppKey holding the daemon's parts."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
import threading
import unicodedata
import urllib.parse
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

RELOAD_S = 1.0  # how often the portals' and tokens' files are looked at

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
    # each file the portals and tokens may come from -> its (mtime, size, inode) or None
    secret_stamps: dict | None = None
    _reloading: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    def reload_portals(self) -> bool:
        """Re-read the portals and the service tokens when a file they come from changed
        since the last look (a stat of each: cheap beside the HMACs a bad signature
        already cost), so ``fairgrid portal add`` and a new or withdrawn token take
        effect without a restart. True when they changed. The first call, at start-up,
        only notes the files as they are."""
        from ..settings import SettingsError, load_secrets, secret_files

        with self._reloading:
            stamps = {path: _stamp(path) for path in secret_files(self.settings)}
            if self.secret_stamps is None or stamps == self.secret_stamps:
                self.secret_stamps = stamps
                return False
            self.secret_stamps = stamps
            try:
                portals, organiser, admin = load_secrets(self.settings)
            except (SettingsError, OSError) as exc:
                log.error("portals and tokens not reloaded: %s", exc)
                return False
            if not portals:  # most likely a file caught half-written: keep what works
                log.error("portals and tokens not reloaded: no portal found")
                return False
            s = self.settings
            if (portals, organiser, admin) == (s.portals, s.organiser_tokens, s.admin_tokens):
                return False
            if portals != s.portals:
                self.verifier = Verifier.from_portals(portals, s.webhooks_tolerance_s)
            self.settings = dataclasses.replace(s, portals=portals, organiser_tokens=organiser,
                                                admin_tokens=admin)
            log.info("portals and tokens reloaded: portals %s; %d organiser and %d admin "
                     "tokens", ", ".join(sorted(portals)), len(organiser), len(admin))
            return True


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """What tells a file's change: its modification time, size and inode."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


async def watch_secrets(ctx: Context, every_s: float = RELOAD_S) -> None:
    """Look at the portals' and tokens' files every ``every_s``, so a removed secret or
    token stops working within that time (a new one works at once: a request that
    names one unknown looks first)."""
    while True:
        await asyncio.sleep(every_s)
        try:
            await asyncio.to_thread(ctx.reload_portals)
        except Exception:  # noqa: BLE001 - the watch must live on
            log.exception("looking for changed portals and tokens failed")


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


def attachment(stem: str, suffix: str) -> str:
    """The ``Content-Disposition`` of a download named after ``stem`` (a tournament's
    name, say): letters and digits of any script kept, anything else '_'; the exact
    name as RFC 6266 ``filename*=UTF-8''…``, which browsers prefer, and an ASCII
    ``filename=`` for the others (accents dropped, other letters '_')."""
    name = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in stem) + suffix
    ascii_ = "".join(unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
                     or "_" for ch in name)
    return (f'attachment; filename="{ascii_}"; '
            f"filename*=UTF-8''{urllib.parse.quote(name, safe='')}")


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
    settings = ctx.settings
    who = ctx.accounts.from_token(token.strip(), settings) if ctx.accounts else None
    if who is None and ctx.accounts:  # a token added since the last look?
        ctx.reload_portals()
        if ctx.settings is not settings:
            who = ctx.accounts.from_token(token.strip(), ctx.settings)
    if who is None:
        raise AuthError("unknown token")
    if admin and who.role != "admin":
        raise AuthError("this route needs an admin; an organiser is not enough", 403)
    return who
