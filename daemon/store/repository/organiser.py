"""What organisers read (the API, and ``fairgrid flags``/``report`` on a file) and their
one write, a flag review."""

from __future__ import annotations

from datetime import datetime

from ...errors import Conflict
from ...states import STANDING, sql_list
from . import needs_moves, outbox
from .rows import dicts, first, portal_clause


def submission(cur, portal: str, submission_id: str) -> dict | None:
    cur.execute("SELECT * FROM submissions WHERE portal = ? AND submission_id = ?",
                [portal, submission_id])
    return first(cur)


@needs_moves
def moves(cur, sub_key: int) -> list[tuple]:
    """(t_ms, cell, digit, note) of one submission, in order."""
    return cur.execute("SELECT t_ms, cell, digit, note FROM moves WHERE sub_key = ? "
                       "ORDER BY seq", [sub_key]).fetchall()


def score_with_flag(cur, portal: str, submission_id: str) -> dict | None:
    """A submission's score (scored_at, evidence JSON) and its flag (flag_id, state)."""
    cur.execute(
        "SELECT sc.scored_at, sc.evidence, f.id AS flag_id, f.state "
        "FROM scores sc LEFT JOIN flags f ON f.portal = sc.portal AND "
        "f.submission_id = sc.submission_id WHERE sc.portal = ? AND sc.submission_id = ?",
        [portal, submission_id])
    return first(cur)


FLAG_COLUMNS = ("f.id, f.portal, f.submission_id, f.created_at, f.state, f.reasons, "
                "s.tournament_id, s.player_id, s.puzzle_id, sc.anomaly, sc.p_value")


def flags(cur, *, tournament=None, player=None, since=None, min_anomaly=None, state=None,
          cursor=None, limit=50, portals=None) -> list[dict]:
    """Flags, newest first, filtered; keyset pagination after ``cursor`` (created_at, id);
    only of ``portals`` when given."""
    clause, params = portal_clause("f.portal", portals)
    where = [clause]
    for clause, value in (("s.tournament_id = ?", tournament), ("s.player_id = ?", player),
                          ("f.created_at >= ?", since), ("sc.anomaly >= ?", min_anomaly),
                          ("f.state = ?", state)):
        if value is not None:
            where.append(clause)
            params.append(value)
    if cursor is not None:
        at, fid = cursor
        where.append("(f.created_at < ? OR (f.created_at = ? AND f.id < ?))")
        params += [at, at, fid]
    cur.execute(f"SELECT {FLAG_COLUMNS} FROM flags f JOIN submissions s ON s.portal = f.portal "
                "AND s.submission_id = f.submission_id LEFT JOIN scores sc ON "
                "sc.portal = f.portal AND sc.submission_id = f.submission_id"
                + (" WHERE " + " AND ".join(where) if where else "")
                + " ORDER BY f.created_at DESC, f.id DESC LIMIT ?", params + [limit])
    return dicts(cur)


def tournament_p_values(cur, tournament: str, portals=None) -> list[tuple[str, str, float]]:
    """(portal, submission_id, p_value) of a tournament's scored solves, ascending p."""
    clause, params = portal_clause("s.portal", portals)
    return cur.execute(
        "SELECT s.portal, s.submission_id, sc.p_value FROM submissions s JOIN scores sc ON "
        "sc.portal = s.portal AND sc.submission_id = s.submission_id WHERE "
        f"s.tournament_id = ? AND sc.p_value IS NOT NULL AND {clause} ORDER BY sc.p_value",
        [tournament] + params).fetchall()


def player_submissions(cur, portal: str, player_id: str) -> list[dict]:
    """A player's submissions, newest first, with score and whether a flag stands (open
    or confirmed: not cleared by a person, not withdrawn by a re-score)."""
    cur.execute(
        "SELECT s.submission_id, s.tournament_id, s.puzzle_id, s.started_at, s.duration_ms, "
        "s.n_moves, s.complete, s.status, s.score_error, sc.anomaly, sc.p_value, "
        "EXISTS (SELECT 1 FROM flags f WHERE f.portal = s.portal AND "
        f"f.submission_id = s.submission_id AND f.state IN {sql_list(STANDING)}) AS flagged "
        "FROM submissions s LEFT JOIN scores sc ON sc.portal = s.portal AND "
        "sc.submission_id = s.submission_id WHERE s.portal = ? AND s.player_id = ? "
        "ORDER BY s.started_at DESC", [portal, player_id])
    return dicts(cur)


def review(con, flag_id: int, state: str, note: str | None, actor: str,
           now: datetime, portals=None, seen: str | None = None,
           changed: list[int] | None = None,
           dismissed: list[int] | None = None) -> list[tuple] | None:
    """Record a review decision; the flag's whole history, or None for no such flag (of
    ``portals``, when given). The state a flag already has changes nothing: no history
    row, no notification; a decision that changes it adds the flag to ``changed``, and
    to ``dismissed`` when it clears a flag that stood (open or confirmed: evidence
    against the player, where a withdrawn flag was none any more). With
    ``seen`` (the state the reviewer read), Conflict when the flag is in another state by
    now: a second reviewer's stale page must not overturn the first one's decision
    unseen."""
    was = _flag_state(con, flag_id, portals)
    if was is None:
        return None
    stale = _stale(con, flag_id, seen, was, state, actor)
    if stale is not None:
        raise Conflict("seen", stale)
    _reopens_withdrawn(flag_id, was, state)
    if was != state:
        con.execute("UPDATE flags SET state = ? WHERE id = ?", [state, flag_id])
        con.execute("INSERT INTO flag_history VALUES (?, ?, ?, ?, ?)",
                    [flag_id, now, state, note, actor])
        outbox.enqueue_review(con, flag_id, state, note, actor, now)
        if changed is not None:
            changed.append(flag_id)
        if dismissed is not None and state == "cleared" and was in STANDING:
            dismissed.append(flag_id)
    return con.execute("SELECT changed_at, state, note, actor FROM flag_history "
                       "WHERE flag_id = ? ORDER BY changed_at", [flag_id]).fetchall()


def review_many(con, seen: dict[int, str | None], state: str, note: str | None,
                actor: str, now: datetime, portals=None,
                changed: list[int] | None = None,
                dismissed: list[int] | None = None) -> int | None:
    """One decision on many flags (``seen``: each flag id and the state the reviewer
    read, or None), all or none, in the writer's one transaction: the id of one that is
    no flag (of ``portals``), or None once every one is decided (those it changed added
    to ``changed``, and to ``dismissed`` as :func:`review` says); Conflict naming those
    another decision changed since, with nothing recorded. Checked where it is written,
    so that no decision made while the others are written is overturned unseen."""
    was = {}
    for flag_id in sorted(seen):
        was[flag_id] = _flag_state(con, flag_id, portals)
        if was[flag_id] is None:
            return flag_id
    stale = [s for s in (_stale(con, f, seen[f], w, state, actor) for f, w in was.items())
             if s is not None]
    if stale:
        raise Conflict("seen", "; ".join(stale[:5]) + ("; …" if len(stale) > 5 else ""))
    for flag_id, state_was in was.items():
        _reopens_withdrawn(flag_id, state_was, state)
    for flag_id in was:
        review(con, flag_id, state, note, actor, now, portals, changed=changed,
               dismissed=dismissed)
    return None


def _flag_state(con, flag_id: int, portals=None) -> str | None:
    """The flag's state; None for no such flag (of ``portals``, when given)."""
    row = con.execute("SELECT portal, state FROM flags WHERE id = ?", [flag_id]).fetchone()
    return None if row is None or (portals is not None and row[0] not in portals) else row[1]


def _reopens_withdrawn(flag_id: int, was: str, state: str) -> None:
    """Conflict for ``open`` on a withdrawn flag: the state machine reopens only a
    decided flag (an appeal). A person's ``open`` is never withdrawn again by scoring, so
    a solve scoring no longer flags would stand against the player undecided."""
    if was == "withdrawn" and state == "open":
        raise Conflict("state", f"flag {flag_id} is withdrawn (a re-score no longer flags "
                                "its solve): only a cleared or confirmed flag is reopened; "
                                "clear or confirm it instead")


def _stale(con, flag_id: int, seen: str | None, was: str, state: str,
           actor: str) -> str | None:
    """Why a decision on a flag the reviewer read as ``seen`` is stale now that it is
    ``was`` (:func:`stale_since`); None when it is not."""
    if seen is None or was == seen:
        return None
    last = con.execute("SELECT actor, changed_at, state FROM flag_history "
                       "WHERE flag_id = ? ORDER BY changed_at DESC LIMIT 1",
                       [flag_id]).fetchone()
    since = stale_since(seen, was, state, actor, last)
    return None if since is None else f"flag {flag_id} {since}"


def stale_since(seen: str, was: str, target: str, actor: str, last) -> str | None:
    """A decision read on state ``seen`` of what is ``was`` now (``last``: the newest
    history row, (actor, changed_at, state), or None), as "was ... and is ... now, by
    whom, when"; None when it is the reviewer's own decision again (a retry whose answer
    was lost). The same decision by another reviewer is stale too: it would record
    nothing, the note with it lost unseen. For flags and players alike."""
    decided_by = last[0] if last and last[2] == was else None
    if was == target and decided_by == actor:
        return None
    by = (f", by {decided_by} at {last[1].isoformat(timespec='minutes')}"
          if decided_by else "")
    return f"was {seen} and is {was} now{by}"


def job_run(cur, run_id: str) -> dict | None:
    cur.execute("SELECT * FROM job_runs WHERE id = ?", [run_id])
    return first(cur)


def report_row(cur, portal: str, submission_id: str) -> dict | None:
    """What ``fairgrid report`` shows of a submission read from the file."""
    cur.execute(
        "SELECT s.status, s.player_id, s.puzzle_id, s.tournament_id, s.duration_ms, "
        "sc.evidence FROM submissions s LEFT JOIN scores sc ON sc.portal = s.portal AND "
        "sc.submission_id = s.submission_id WHERE s.portal = ? AND s.submission_id = ?",
        [portal, submission_id])
    return first(cur)


def flag_counts(cur) -> dict[str, int]:
    """Flags by review state."""
    return dict(cur.execute("SELECT state, count(*) FROM flags GROUP BY state").fetchall())
