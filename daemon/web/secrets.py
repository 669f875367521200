"""The portals' webhook secrets and the service tokens as the running daemon holds them,
taken up again whenever a file they come from changes (``fairgrid portal add``, a new or
withdrawn token: no restart)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
from pathlib import Path

from ..ingest.signatures import Verifier
from ..settings import Settings, SettingsError, load_secrets, load_tokens, secret_files

RELOAD_S = 1.0  # how often the portals' and tokens' files are looked at
log = logging.getLogger("fairgrid.web")


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """What tells a file's change: its modification time, size and inode."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


class Secrets:
    """The settings in force (their portals and tokens as last read) and the webhook
    verifier built from them."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.verifier = Verifier.from_portals(settings.portals, settings.webhooks_tolerance_s)
        self._lock = threading.Lock()
        # each file the portals and tokens may come from -> its (mtime, size, inode)
        self._stamps = {path: _stamp(path) for path in secret_files(settings)}

    def reload(self) -> bool:
        """Re-read the portals and the service tokens when a file they come from changed
        since the last look (a stat of each: cheap beside the HMACs a bad signature
        already cost). True when they changed."""
        with self._lock:
            stamps = {path: _stamp(path) for path in secret_files(self.settings)}
            if stamps == self._stamps:
                return False
            self._stamps = stamps
            try:
                portals, organiser, admin = load_secrets(self.settings)
            except (SettingsError, OSError) as exc:
                log.error("portals and tokens not reloaded: %s", exc)
                return self._withdraw()
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

    def _withdraw(self) -> bool:
        """After an edit in error: the tokens it took out stop working all the same
        (nothing is added, no portal changes). True when some did."""
        try:
            organiser, admin = load_tokens(self.settings)
        except (SettingsError, OSError):
            return False
        s = self.settings
        kept_o = tuple(t for t in s.organiser_tokens if t in organiser)
        kept_a = tuple(t for t in s.admin_tokens if t in admin)
        if (kept_o, kept_a) == (s.organiser_tokens, s.admin_tokens):
            return False
        self.settings = dataclasses.replace(s, organiser_tokens=kept_o, admin_tokens=kept_a)
        log.warning("tokens taken out of the edit withdrawn: %d organiser and %d admin "
                    "tokens remain", len(kept_o), len(kept_a))
        return True

    async def watch(self, every_s: float = RELOAD_S) -> None:
        """Look at the files every ``every_s``, so a removed secret or token stops working
        within that time (a new one works at once: a request that names one unknown
        looks first)."""
        while True:
            await asyncio.sleep(every_s)
            try:
                await asyncio.to_thread(self.reload)
            except Exception:  # noqa: BLE001 - the watch must live on
                log.exception("looking for changed portals and tokens failed")
