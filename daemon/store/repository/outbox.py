"""The outbox of outgoing notifications (``notify_endpoints``, ``outbox``).

Events are inserted by the statements that make them happen, in the same transaction
(``enqueue_*`` are called from the scoring, review and nightly writes); the deliverer
reads what is due and records each attempt's outcome."""

from __future__ import annotations

import json
from datetime import datetime

from .lifecycle import player_subject
from .rows import dicts, portal_clause

EVENT_ID = "'evt_' || replace(CAST(gen_random_uuid() AS VARCHAR), '-', '')"


def endpoints(cur) -> dict[str, tuple[str, str]]:
    """portal -> (url, secret)."""
    return {p: (u, s) for p, u, s in cur.execute(
        "SELECT portal, url, secret FROM notify_endpoints").fetchall()}


def set_endpoint(con, portal: str, url: str | None, secret: str | None,
                 now: datetime) -> None:
    con.execute("DELETE FROM notify_endpoints WHERE portal = ?", [portal])
    if url is not None:
        con.execute("INSERT INTO notify_endpoints VALUES (?, ?, ?, ?)",
                    [portal, url, secret, now])


def enqueue_flags_raised(con, flag_ids: list[int], now: datetime) -> None:
    """``flag.raised`` for new flags of portals that have an endpoint (one statement)."""
    con.execute(
        f"INSERT INTO outbox SELECT {EVENT_ID}, f.portal, 'flag.raised', "
        "json_object('type', 'flag.raised', 'created_at', ?, "
        "'data', json_object('flag_id', f.id, 'portal', f.portal, 'submission_id', "
        "f.submission_id, 'tournament_id', s.tournament_id, 'player_id', s.player_id, "
        "'puzzle_id', s.puzzle_id, 'reasons', json(f.reasons), 'state', f.state)), "
        "f.submission_id, ?, 'pending', 0, ?, ?, NULL, NULL, NULL "
        "FROM flags f JOIN notify_endpoints e ON e.portal = f.portal "
        "JOIN submissions s ON s.portal = f.portal AND s.submission_id = f.submission_id "
        "WHERE list_contains(?, f.id)", [now.isoformat(), now, now, now, flag_ids])


def enqueue_review(con, flag_id: int, state: str, note: str | None, actor: str,
                   now: datetime) -> None:
    con.execute(
        f"INSERT INTO outbox SELECT {EVENT_ID}, f.portal, 'flag.reviewed', "
        "json_object('type', 'flag.reviewed', 'created_at', ?, "
        "'data', json_object('flag_id', f.id, 'portal', f.portal, 'submission_id', "
        "f.submission_id, 'player_id', s.player_id, 'state', ?, 'note', ?, 'by', ?)), "
        "f.submission_id, ?, 'pending', 0, ?, ?, NULL, NULL, NULL "
        "FROM flags f JOIN notify_endpoints e ON e.portal = f.portal "
        "JOIN submissions s ON s.portal = f.portal AND s.submission_id = f.submission_id "
        "WHERE f.id = ?", [now.isoformat(), state, note, actor, now, now, now, flag_id])


def enqueue_player_flagged(con, portal: str, player: str, p_value: float, summary: str,
                           now: datetime) -> None:
    """``player.flagged`` when a player's season verdict becomes flagged, to the
    portal's endpoint (if it has one)."""
    con.execute(
        f"INSERT INTO outbox SELECT {EVENT_ID}, e.portal, 'player.flagged', "
        "json_object('type', 'player.flagged', 'created_at', ?, "
        "'data', json_object('portal', e.portal, 'player_id', ?, 'p_value', ?, "
        "'summary', ?)), ?, ?, 'pending', 0, ?, ?, NULL, NULL, NULL "
        "FROM notify_endpoints e WHERE e.portal = ?",
        [now.isoformat(), player, p_value, summary, player_subject(player), now, now, now,
         portal])


def enqueue_ratings(con, run_id: str, now: datetime) -> None:
    """``ratings.updated`` to every portal with an endpoint, counting what the run rated
    of that portal's: the puzzles it may use (shared, or its own) and its players (one
    portal learns nothing of another's numbers)."""
    con.execute(
        f"INSERT INTO outbox SELECT {EVENT_ID}, e.portal, 'ratings.updated', "
        "json_object('type', 'ratings.updated', 'created_at', ?, "
        "'data', json_object('run_id', ?, 'puzzles', (SELECT count(*) FROM puzzle_ratings "
        "r JOIN puzzles p ON p.id = r.puzzle_id WHERE r.run_id = ? AND (p.owner IS NULL "
        "OR p.owner = e.portal)), 'players', (SELECT count(*) FROM player_ratings r WHERE "
        "r.run_id = ? AND r.portal = e.portal))), "
        "NULL, ?, 'pending', 0, ?, ?, NULL, NULL, NULL FROM notify_endpoints e",
        [now.isoformat(), run_id, run_id, run_id, now, now, now])


def due(cur, now: datetime, per_portal: int, skip: list[str] = ()) -> list[dict]:
    """Pending events whose next attempt is due, with their endpoint: up to
    ``per_portal`` of each portal (its oldest first), none of the portals in ``skip``."""
    rows = cur.execute(
        "SELECT id, portal, type, payload, retry_from, attempts, url, secret FROM ("
        "SELECT o.id, o.portal, o.type, o.payload, o.retry_from, o.attempts, e.url, "
        "e.secret, row_number() OVER (PARTITION BY o.portal ORDER BY o.next_at, o.id) AS k "
        "FROM outbox o LEFT JOIN notify_endpoints e ON e.portal = o.portal "
        "WHERE o.state = 'pending' AND o.next_at <= ? AND NOT list_contains(?, o.portal)) "
        "WHERE k <= ? ORDER BY portal, k", [now, list(skip), per_portal]).fetchall()
    names = ("id", "portal", "type", "payload", "retry_from", "attempts", "url", "secret")
    return [dict(zip(names, r)) for r in rows]


def record_attempts(con, results: list[tuple]) -> None:
    """Each attempt's outcome: (id, state, attempts, next_at, delivered_at, status, error,
    the retry_from the attempt was made under). A redelivery asked for while the attempt
    was in flight moved retry_from: it wins, and the event stays due now."""
    for eid, state, attempts, next_at, delivered_at, status, err, retry_from in results:
        con.execute("UPDATE outbox SET state = ?, attempts = ?, next_at = ?, "
                    "delivered_at = ?, last_status = ?, last_error = ? "
                    "WHERE id = ? AND retry_from = ?",
                    [state, attempts, next_at, delivered_at, status, err, eid, retry_from])


def listing(cur, *, state=None, portals=None, limit=100) -> list[dict]:
    clause, params = portal_clause("portal", portals)
    if state is not None:
        clause += " AND state = ?"
        params.append(state)
    cur.execute("SELECT id, portal, type, subject, created_at, state, attempts, next_at, "
                f"delivered_at, last_status, last_error FROM outbox WHERE {clause} "
                "ORDER BY created_at DESC LIMIT ?", params + [limit])
    return dicts(cur)


def portal_of(cur, event_id: str) -> str | None:
    row = cur.execute("SELECT portal FROM outbox WHERE id = ?", [event_id]).fetchone()
    return None if row is None else row[0]


def redeliver(con, event_id: str, now: datetime) -> bool:
    """Queue a failed (or delivered) event again, now; False for no such event."""
    row = con.execute("SELECT 1 FROM outbox WHERE id = ?", [event_id]).fetchone()
    if row is None:
        return False
    con.execute("UPDATE outbox SET state = 'pending', next_at = ?, retry_from = ?, "
                "last_error = NULL WHERE id = ?", [now, now, event_id])
    return True


def stats(cur, now: datetime) -> dict:
    pending, failed, delivered, oldest = cur.execute(
        "SELECT count(*) FILTER (WHERE state = 'pending'), "
        "count(*) FILTER (WHERE state = 'failed'), "
        "count(*) FILTER (WHERE state = 'delivered'), "
        # what waits for an endpoint that is still there: events of a portal whose
        # notifications were turned off will never go, and nobody is waiting for them
        "min(created_at) FILTER (WHERE state <> 'delivered' AND portal IN (SELECT portal "
        "FROM notify_endpoints)) FROM outbox").fetchone()
    age = 0.0 if oldest is None else max(0.0, (now - oldest).total_seconds())
    return {"pending": pending, "failed": failed, "delivered": delivered,
            "oldest_undelivered_s": age}
