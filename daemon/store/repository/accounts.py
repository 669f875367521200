"""People and their API tokens (``users``, ``api_tokens``): read whole at start-up and
after each change (a few rows), written one change per transaction."""

from __future__ import annotations

import json
from datetime import datetime


def users(cur) -> list[dict]:
    rows = cur.execute("SELECT name, role, portals, all_portals, password_hash, disabled, "
                       "created_at, changed_at FROM users ORDER BY name").fetchall()
    return [{"name": n, "role": r, "portals": json.loads(p), "all_portals": a,
             "password_hash": h, "disabled": d, "created_at": c, "changed_at": ch}
            for n, r, p, a, h, d, c, ch in rows]


def tokens(cur) -> list[tuple[str, str, str | None]]:
    """(digest, user name, label) of every token not revoked."""
    return cur.execute("SELECT digest, user_name, label FROM api_tokens "
                       "WHERE revoked_at IS NULL").fetchall()


def add_user(con, name: str, role: str, portals: list[str], all_portals: bool,
             password_hash: str | None, now: datetime) -> bool:
    """False when the name is taken, in any letter case: 'ALICE' beside 'alice' would be
    two reviewers no history tells apart (and one sign-in throttle)."""
    if con.execute("SELECT 1 FROM users WHERE lower(name) = lower(?)", [name]).fetchone():
        return False
    con.execute("INSERT INTO users (name, role, portals, all_portals, password_hash, disabled, "
                "created_at, changed_at) VALUES (?, ?, ?, ?, ?, false, ?, ?)",
                [name, role, json.dumps(sorted(portals)), all_portals, password_hash, now, now])
    return True


def change_user(con, name: str, changes: dict, now: datetime) -> bool:
    """Apply ``changes`` (role, portals, all_portals, password_hash, disabled); False for
    no such user. Disabling a person also revokes their tokens."""
    if not con.execute("SELECT 1 FROM users WHERE name = ?", [name]).fetchone():
        return False
    for column in ("role", "all_portals", "password_hash", "disabled"):
        if column in changes:
            con.execute(f"UPDATE users SET {column} = ? WHERE name = ?", [changes[column], name])
    if "portals" in changes:
        con.execute("UPDATE users SET portals = ? WHERE name = ?",
                    [json.dumps(sorted(changes["portals"])), name])
    con.execute("UPDATE users SET changed_at = ? WHERE name = ?", [now, name])
    if changes.get("disabled"):
        con.execute("UPDATE api_tokens SET revoked_at = ? WHERE user_name = ? AND "
                    "revoked_at IS NULL", [now, name])
    return True


def add_token(con, digest: str, user: str, label: str | None, now: datetime) -> bool:
    if not con.execute("SELECT 1 FROM users WHERE name = ? AND NOT disabled", [user]).fetchone():
        return False
    con.execute("INSERT INTO api_tokens VALUES (?, ?, ?, ?, NULL)", [digest, user, label, now])
    return True
