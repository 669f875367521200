"""Which submissions are already stored: the writer's dedupe screen.

Every webhook is checked against the stored submissions (a webhook-id seen within
``dedupe_days``, a submission id already stored). A :class:`KeyFilter` answers "certainly
new" for nearly every key, so the database is asked only about the few it may have seen.
The filter is built in the background at start-up (~4 s per million stored submissions);
until it is ready every key is checked in the database, and the keys written meanwhile
are added when the writer switches to it. Once in use only the writer thread touches it.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

import duckdb
import numpy as np
import orjson

from .keyfilter import KeyFilter
from .records import SubmissionRecord, utc_now
from .repository import ingest as sql
from .threads import name_os_thread


def same_content(stored: str, sent: str) -> bool:
    """Whether a webhook body ``sent`` carries the submission ``stored`` (raw, as stored):
    equal as canonical JSON (sorted keys, no white space, a whole number written ``4.0``
    as ``4``, which ingestion reads alike), which is what an identical resubmission
    means: a sender that serialises its retry anew is not told it sent another solve. A
    stored body whose moves retention dropped is compared without them: the rest (ids,
    player, puzzle, start, client) is the same solve resent late, not another one. Only
    resubmissions of a stored id ask this, so it is not on every webhook's path."""
    if stored == sent:
        return True
    try:
        a, b = _whole(orjson.loads(stored)), _whole(orjson.loads(sent))
    except orjson.JSONDecodeError:
        return False
    if isinstance(a, dict) and isinstance(b, dict) and "moves" not in a:
        b.pop("moves", None)
    return orjson.dumps(a, option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        b, option=orjson.OPT_SORT_KEYS)


def _whole(value):
    """``value`` with every float that is a whole number (exactly, below 2**53) an int."""
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 2 ** 53 else value
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return value


def sub_key(portal: str, submission_id: str) -> str:
    return f"s\x1f{portal}\x1f{submission_id}"


def hook_key(portal: str, webhook_id: str) -> str:
    return f"h\x1f{portal}\x1f{webhook_id}"


class Dedupe:
    def __init__(self, con, dedupe_days: int, below: int):
        self._con = con
        self._window = timedelta(days=dedupe_days)
        self._seen: KeyFilter | None = None
        self._loaded: KeyFilter | None = None
        self._written_meanwhile: list[str] = []
        self._loader = threading.Thread(target=self._load, args=(below,),
                                        name="fairgrid-keyfilter", daemon=True)

    def start(self) -> None:
        self._loader.start()

    def ready(self) -> bool:
        """Whether duplicates are screened by the in-memory filter yet."""
        return self._seen is not None

    def wait_loaded(self) -> None:
        """Return once the background load no longer holds a cursor."""
        if self._loader.is_alive():
            self._loader.join()

    def rebind(self, con) -> None:
        """Use ``con`` from now on (the database file was rewritten and reopened)."""
        self._con = con

    def hooks_since(self) -> datetime:
        return utc_now() - self._window

    def _load(self, below: int) -> None:
        """Build the filter over every stored submission id (sub_key < ``below``) and the
        webhook-ids of the last ``dedupe_days``, on its own cursor."""
        name_os_thread("fg-keyfilter")
        try:
            cur = self._con.cursor()
            try:
                cols = sql.stored_keys(cur, self.hooks_since(), below)
            finally:
                cur.close()
        except duckdb.Error:
            return  # the database path stays in use: slower, never wrong
        n = len(cols["portal"])
        seen = KeyFilter(capacity=max(1 << 20, 2 * n))
        for lo in range(0, n, 100_000):  # bounded temporaries for big tables
            part = {k: v[lo:lo + 100_000] for k, v in cols.items()}
            recent = np.asarray(part["recent"], dtype=bool)
            seen.add(sub_key(p, s) for p, s in zip(part["portal"], part["submission_id"]))
            seen.add(hook_key(p, h) for p, h, r in zip(part["portal"], part["webhook_id"],
                                                        recent) if r)
        self._loaded = seen

    def _screen(self, keys: list[str]) -> np.ndarray:
        """Per key: may it be stored already? (All True until the filter is ready.)"""
        if self._seen is None and self._loaded is not None:  # switch, on this thread
            self._loaded.add(self._written_meanwhile)
            self._seen, self._written_meanwhile = self._loaded, []
        if self._seen is None:
            return np.ones(len(keys), dtype=bool)
        return self._seen.maybe(keys)

    def stored(self, con, records: list[SubmissionRecord]
               ) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], str], list[tuple]]:
        """Of ``records``' keys, those already stored: {(portal, webhook_id): raw body}
        for the webhook-ids seen within the window, and {(portal, submission_id): raw
        body}; and each record's
        filter keys, for :meth:`remember`. The database is asked only about keys the
        filter may have seen (duplicates and rare false positives), in one statement per
        portal (DuckDB statements cost ~1 ms each)."""
        subs = [sub_key(r.portal, r.submission_id) for r in records]
        hooks = [hook_key(r.portal, r.webhook_id) for r in records]
        maybe = self._screen(subs + hooks)
        n = len(records)
        suspects = [r for i, r in enumerate(records) if maybe[i] or maybe[n + i]]
        seen_hooks: dict[tuple[str, str], str] = {}
        stored: dict[tuple[str, str], str] = {}
        for portal in {r.portal for r in suspects}:
            mine = [r for r in suspects if r.portal == portal]
            for what, key, raw in sql.already_stored(
                    con, portal, [r.webhook_id for r in mine], self.hooks_since(),
                    [r.submission_id for r in mine]):
                if what == "hook":
                    seen_hooks[(portal, key)] = raw
                else:
                    stored[(portal, key)] = raw
        return seen_hooks, stored, list(zip(subs, hooks))

    def remember(self, keys: list[str]) -> None:
        """The filter keys of records just committed."""
        if self._seen is None:
            self._written_meanwhile.extend(keys)
        else:
            self._seen.add(keys)
