"""Helpers for the daemon tests: settings on a tmp DuckDB file, signed webhooks, solve logs."""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone

from standardwebhooks import Webhook

from fairgrid.daemon.settings import Settings
from fairgrid.daemon.testing import SECRET_A, solve_body, solve_moves  # noqa: F401 - shared

SECRET_B = "whsec_" + "dGVzdCBzZWNyZXQgbnVtYmVyIHR3byBmb3I="
OTHER_SECRET = "whsec_" + "b3RoZXIgcG9ydGFsIHNlY3JldCBrZXkgMTIz"
ORGANISER = "organiser-token"
ADMIN = "admin-token"


def make_settings(tmp_path, **overrides) -> Settings:
    values = dict(storage_path=str(tmp_path / "fairgrid.duckdb"),
                  portals={"demo": (SECRET_A, SECRET_B), "other": (OTHER_SECRET,)},
                  organiser_tokens=(ORGANISER,), admin_tokens=(ADMIN,),
                  analysis_workers=1, analysis_order_runs=4, analysis_order_budget_s=1.0,
                  storage_group_commit_ms=2.0)
    values.update(overrides)
    return Settings(**values)


def signed(body, secret: str = SECRET_A, msg_id: str = "msg-1", ts: float | None = None):
    """(raw bytes, headers) signed with the reference implementation."""
    raw = body if isinstance(body, (bytes, str)) else json.dumps(body)
    raw = raw.decode() if isinstance(raw, bytes) else raw
    when = datetime.fromtimestamp(time.time() if ts is None else ts, tz=timezone.utc)
    sig = Webhook(secret).sign(msg_id, when, raw)
    headers = {"webhook-id": msg_id, "webhook-timestamp": str(int(when.timestamp())),
               "webhook-signature": sig, "content-type": "application/json"}
    return raw.encode(), headers


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def count(db_path: str, sql: str) -> int:
    """Rows in the database, read through a fresh read-only connection after the app closed."""
    import duckdb

    con = duckdb.connect(db_path, read_only=True)
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()



def signed_bytes(raw: bytes, secret: str = SECRET_A, msg_id: str = "msg-1") -> dict:
    """Headers signing arbitrary bytes (the reference signer takes text only)."""
    import base64
    import hashlib
    import hmac

    ts = str(int(time.time()))
    key = base64.b64decode(secret.removeprefix("whsec_"))
    mac = hmac.new(key, f"{msg_id}.{ts}.".encode() + raw, hashlib.sha256).digest()
    return {"webhook-id": msg_id, "webhook-timestamp": ts,
            "webhook-signature": "v1," + base64.b64encode(mac).decode(),
            "content-type": "application/json"}


def query(store, sql: str, params=None, *, needs_moves: bool = False) -> list[tuple]:
    """Rows of an ad-hoc read through the store (as a repository read would run);
    ``needs_moves``: wait for every acknowledged solve's moves first."""
    def read(cur):
        return cur.execute(sql, params or []).fetchall()
    read.needs_moves = needs_moves
    return store.read(read)
