"""Player verdicts (``player_verdicts``, ``player_verdict_history``, ``player_nulls``):
the seasons the verdict reads, the verdicts and their reviews, and each portal's null.

States: ``clear`` and ``flagged`` are set by fairgrid (the actor :data:`MACHINE`):
``flagged`` when the evidence flags the player, and it stays until a person decides
(``flagged`` the column is what the evidence says now, ``flagging_verdict`` the verdict
that flagged them); ``cleared`` and ``confirmed`` are a person's decisions, which a
re-judgement does not undo (only new solves can flag a cleared player again)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import NamedTuple

from ...errors import Conflict
from ...states import STANDING, sql_list
from . import outbox
from .organiser import stale_since
from .rows import dicts, first, portal_clause
from .scores import MACHINE, rating_run

STATES = ("clear", "flagged", "cleared", "confirmed")


class SeasonSolve(NamedTuple):
    """One scored solve of a player's season, with what re-prices its pace against the
    rating run in force (``analytics.puzzle_model.time_in_force``)."""

    submission_id: str
    scored_at: datetime
    facts: str | None        # scores.season_facts (JSON: SolveFacts.to_json)
    evidence: str | None     # the evidence, read only where the facts are not stored
    standing: bool           # a flag stands on it: open or confirmed
    duration_ms: int
    puzzle_type: str | None  # None: its puzzle row is gone
    model_log_s: float | None  # the analysis's calibrated expected log-time, its sd
    model_sd: float | None
    difficulty: float | None   # the puzzle's fitted difficulty under the run in force
    puzzle_id: str | None = None
    started_at: datetime | None = None  # with duration_ms, when the solve ended


class Seasons(NamedTuple):
    """Players' seasons and the rating run their puzzles' difficulties are of."""

    solves: dict[tuple[str, str], list[SeasonSolve]]
    run: tuple | None   # that run as ``scores.rating_run`` reads it; None before any


def _of_players(alias: str) -> str:
    """A join keeping the rows of table ``alias`` that are of the players whose portals
    and player ids :func:`_player_lists` gives as the query's next two parameters."""
    return (f"JOIN (SELECT unnest(?) AS portal, unnest(?) AS player_id) w ON "
            f"w.portal = {alias}.portal AND w.player_id = {alias}.player_id")


def _player_lists(players: list[tuple[str, str]]) -> list[list[str]]:
    """The parameters of :func:`_of_players`: the players' portals, their ids."""
    return [[p for p, _ in players], [q for _, q in players]]


def seasons(cur, players: list[tuple[str, str]]) -> Seasons:
    """Per (portal, player): their scored solves oldest first. A solve's evidence is read
    only where its season facts are not stored (a score written before them): the
    evidence is some 30 times their size. A puzzle's stored analysis that is not JSON
    gives its solves no expected time (their stored pace stands)."""
    row = cur.execute("SELECT run_id FROM current_rating WHERE id = 1").fetchone()
    run_id = None if row is None else row[0]
    if not players:
        return Seasons({}, None)
    rows = cur.execute(
        f"WITH mine AS (SELECT s.* FROM submissions s {_of_players('s')}), "
        # once per puzzle, not per solve; only a valid document is read
        "pz AS (SELECT id, puzzle_type, CASE WHEN json_valid(ratings) THEN "
        "TRY_CAST(json_extract(ratings, '$.expected_log_s') AS DOUBLE) END AS log_s, "
        "CASE WHEN json_valid(ratings) THEN TRY_CAST(json_extract(ratings, '$.sd_log') "
        "AS DOUBLE) END AS sd FROM puzzles WHERE id IN (SELECT puzzle_id FROM mine)) "
        "SELECT s.portal, s.player_id, s.submission_id, sc.scored_at, sc.season_facts, "
        "EXISTS (SELECT 1 FROM flags f WHERE f.portal = s.portal AND "
        f"f.submission_id = s.submission_id AND f.state IN {sql_list(STANDING)}), "
        "s.duration_ms, pz.puzzle_type, pz.log_s, pz.sd, "
        "coalesce(pp.difficulty, pr.difficulty), s.puzzle_id, s.started_at "
        "FROM mine s "
        "JOIN scores sc ON sc.portal = s.portal AND sc.submission_id = s.submission_id "
        "LEFT JOIN pz ON pz.id = s.puzzle_id "
        "LEFT JOIN puzzle_ratings pr ON pr.run_id = ? AND pr.puzzle_id = s.puzzle_id "
        # a shared puzzle's own difficulty on the player's portal, where fitted
        "LEFT JOIN puzzle_portal_ratings pp ON pp.run_id = pr.run_id "
        "AND pp.puzzle_id = s.puzzle_id AND pp.portal = s.portal "
        "ORDER BY s.started_at, s.sub_key",
        [*_player_lists(players), run_id]).fetchall()
    missing = [(portal, sid) for portal, _, sid, _, facts, *_ in rows if facts is None]
    evidence = {}
    if missing:
        evidence = {(portal, sid): ev for portal, sid, ev in cur.execute(
            "SELECT sc.portal, sc.submission_id, sc.evidence FROM scores sc JOIN "
            "(SELECT unnest(?) AS portal, unnest(?) AS submission_id) m ON "
            "m.portal = sc.portal AND m.submission_id = sc.submission_id",
            [[p for p, _ in missing], [q for _, q in missing]]).fetchall()}
    out: dict[tuple[str, str], list[SeasonSolve]] = {tuple(p): [] for p in players}
    for portal, player, sid, at, facts, flag, *rest in rows:
        ev = None if facts is not None else evidence.get((portal, sid))
        if facts is not None or ev is not None:   # a score without evidence says nothing
            out[(portal, player)].append(SeasonSolve(sid, at, facts, ev, bool(flag), *rest))
    return Seasons(out, None if run_id is None else rating_run(cur, run_id))


def scored_solves(cur, portal: str, player: str, by: datetime) -> list[str]:
    """The submission ids of a player's solves scored ``by`` then, oldest first: what a
    verdict judged then, before ``judged_solves`` was kept."""
    return [sid for (sid,) in cur.execute(
        "SELECT s.submission_id FROM submissions s JOIN scores sc ON sc.portal = s.portal "
        "AND sc.submission_id = s.submission_id WHERE s.portal = ? AND s.player_id = ? "
        "AND sc.evidence IS NOT NULL AND sc.scored_at <= ? ORDER BY s.started_at, s.sub_key",
        [portal, player, by]).fetchall()]


def left_to_judge(cur, portals: list[str] | None = None) -> list[tuple[str, str]]:
    """Every player (of ``portals``; None: of every portal) with a solve scored since
    their verdict was judged, or without one."""
    clause, params = portal_clause("s.portal", portals)
    return [tuple(r) for r in cur.execute(
        "SELECT DISTINCT s.portal, s.player_id FROM submissions s JOIN scores sc ON "
        "sc.portal = s.portal AND sc.submission_id = s.submission_id LEFT JOIN "
        "player_verdicts v ON v.portal = s.portal AND v.player_id = s.player_id "
        f"WHERE {clause} AND (v.judged_at IS NULL OR sc.scored_at > v.judged_at)",
        params).fetchall()]


def save_season_facts(con, rows: list[tuple[str, str, datetime, str]]) -> None:
    """Store the season facts read from the evidence of scores written before them, each
    (portal, submission_id, scored_at, facts JSON): only where that score still stands
    unchanged (a re-score meanwhile wrote its own)."""
    if rows:
        con.execute(
            "UPDATE scores SET season_facts = f.facts FROM (SELECT unnest(?) AS portal, "
            "unnest(?) AS submission_id, unnest(?) AS scored_at, unnest(?) AS facts) f "
            "WHERE scores.portal = f.portal AND scores.submission_id = f.submission_id "
            "AND scores.scored_at = f.scored_at AND scores.season_facts IS NULL",
            [list(c) for c in zip(*rows)])


def players_of(cur, sub_keys: list[int]) -> list[tuple[str, str]]:
    """The (portal, player_id) of submissions."""
    return [tuple(r) for r in cur.execute(
        "SELECT DISTINCT portal, player_id FROM submissions WHERE list_contains(?, sub_key)",
        [list(sub_keys)]).fetchall()]


def players_of_flags(cur, flag_ids: list[int]) -> list[tuple[str, str]]:
    """The (portal, player_id) of the flags' solves, each player once."""
    return [tuple(r) for r in cur.execute(
        "SELECT DISTINCT s.portal, s.player_id FROM flags f JOIN submissions s ON "
        "s.portal = f.portal AND s.submission_id = f.submission_id "
        "WHERE list_contains(?, f.id) ORDER BY 1, 2", [list(flag_ids)]).fetchall()]


def judged_players(cur, portal: str | None = None) -> list[tuple[str, str]]:
    """Every player with a scored solve (of ``portal``, when given)."""
    clause, params = portal_clause("s.portal", None if portal is None else [portal])
    return [tuple(r) for r in cur.execute(
        "SELECT DISTINCT s.portal, s.player_id FROM submissions s JOIN scores sc ON "
        f"sc.portal = s.portal AND sc.submission_id = s.submission_id WHERE {clause} "
        "ORDER BY 1, 2", params).fetchall()]


def current(cur, players: list[tuple[str, str]]) -> dict[tuple[str, str], dict]:
    """The stored verdict rows of ``players`` (state, reviewed_solves, ...)."""
    if not players:
        return {}
    cur.execute(f"SELECT v.* FROM player_verdicts v {_of_players('v')}",
                _player_lists(players))
    return {(r["portal"], r["player_id"]): r for r in dicts(cur)}


def save(con, rows: list[dict], now: datetime
         ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Store judged verdicts (each: portal, player_id, state, flagged, p_value, solves,
    verdict JSON, reviewed_solves, judged_solves: JSON of the solve ids judged, and
    read: the stored (state, reviewed_solves) the judgement started from); a history
    row for each state change and ``player.flagged`` for each player who became flagged
    (one transaction). A player whose row a person's decision changed meanwhile is left
    as the decision made it, and one judged by a judgement that started after this one
    (``now``; the nightly job judges beside the daemon) as that one stored it. Returns
    the players newly flagged, and those left as they were (to be judged again).

    Each statement covers every row (a player once in ``rows``): the nightly job
    stores verdicts for every player, and a statement a row costs DuckDB milliseconds."""
    keys = [(r["portal"], r["player_id"]) for r in rows]
    if len(set(keys)) != len(keys):
        raise ValueError("a player is judged twice in one save")
    if not rows:
        return [], []
    stored = {(r[0], r[1]): r[2:] for r in con.execute(
        "SELECT v.portal, v.player_id, v.state, v.flagged_at, v.reviewed_solves, "
        "v.flagging_verdict, v.flagging_p, v.judged_at FROM player_verdicts v "
        + _of_players("v"), _player_lists(keys)).fetchall()}
    new = [k for k in keys if k not in stored]
    present = set()
    if new:
        present = {tuple(r) for r in con.execute(
            "SELECT DISTINCT s.portal, s.player_id FROM submissions s " + _of_players("s"),
            _player_lists(new)).fetchall()}
    flagged, skipped, written, changed, became_rows = [], [], [], [], []
    for r, key in zip(rows, keys):
        was = stored.get(key)
        if _decided_meanwhile(r.get("read"), None if was is None else (was[0], was[2])):
            skipped.append(key)
            continue  # the row changed meanwhile: the next judgement starts from it
        if was is not None and was[5] is not None and was[5] > now:
            skipped.append(key)
            continue  # a judgement that started later, and read more, was stored first
        if was is None and key not in present:
            continue  # erased meanwhile
        became = r["state"] == "flagged" and (was is None or was[0] != "flagged")
        flagged_at = now if became else (was[1] if was else None)
        flagging = ((r["verdict"], r["p_value"]) if became
                    else (was[3], was[4]) if was else (None, None))
        written.append([*key, r["state"], r["flagged"], r["p_value"], r["solves"],
                        r["verdict"], now, flagged_at, r["reviewed_solves"],
                        r.get("judged_solves"), *flagging])
        if was is None and r["state"] == "clear":
            continue  # a first verdict that finds nothing is no news
        if was is None or was[0] != r["state"]:
            changed.append((key, r["state"], r.get("note")))
        if became:
            flagged.append(key)
            became_rows.append(r)
    if written:
        columns = list(zip(*written))
        con.execute("INSERT OR REPLACE INTO player_verdicts (portal, player_id, state, "
                    "flagged, p_value, solves, verdict, judged_at, flagged_at, "
                    "reviewed_solves, judged_solves, flagging_verdict, flagging_p) SELECT "
                    + ", ".join(f"unnest(${i + 1}::{t}[])" for i, t in enumerate(_COLUMNS)),
                    [list(c) for c in columns])
    if changed:
        after = _after_history(con, [k for k, _, _ in changed], now)
        con.executemany("INSERT INTO player_verdict_history VALUES (?, ?, ?, ?, ?, ?)",
                        [[*k, at, state, note, MACHINE]
                         for (k, state, note), at in zip(changed, after)])
    for r in became_rows:
        outbox.enqueue_player_flagged(con, r["portal"], r["player_id"], r["p_value"],
                                      r["summary"], now)
    return flagged, skipped


# the types of player_verdicts' columns in the order save writes them
_COLUMNS = ("VARCHAR", "VARCHAR", "VARCHAR", "BOOLEAN", "DOUBLE", "INTEGER", "VARCHAR",
            "TIMESTAMPTZ", "TIMESTAMPTZ", "VARCHAR", "VARCHAR", "VARCHAR", "DOUBLE")


def _after_history(con, keys: list[tuple[str, str]], at: datetime) -> list[datetime]:
    """Per player, ``at``, or just after their last history row when that is later: a
    judgement's time is taken before it reads, and a decision it read may be dated
    between; the history reads in the order things happened."""
    last = dict(((p, q), t) for p, q, t in con.execute(
        "SELECT h.portal, h.player_id, max(h.changed_at) FROM player_verdict_history h "
        f"{_of_players('h')} GROUP BY 1, 2", _player_lists(keys)).fetchall())
    return [at if last.get(k) is None or last[k] < at else last[k] + timedelta(microseconds=1)
            for k in keys]


def _decided_meanwhile(read: tuple | None, now: tuple | None) -> bool:
    """Whether the player's row changed between the judgement's read of it (state,
    reviewed_solves) and its write: a person's decision, or another judgement that
    flagged the player or ended the case. The judgement's state was worked out from a
    row that is no longer there, so the row stays as it is now (the next judgement
    starts from it): a flagged state is never written over a case a person just ended,
    nor a second ``player.flagged`` sent. Another judgement that left the state as it
    was is no reason to keep the older verdict."""
    return read != now


def review(con, portal: str, player: str, state: str, note: str | None, actor: str,
           now: datetime, judged_at: datetime | None = None, seen: str | None = None
           ) -> list[tuple] | None:
    """A person's decision on a player: ``cleared`` (remembering the solves the verdict
    judged), ``confirmed``, or ``open`` (reopened: the case waits for a decision again,
    as a flagged player; when it was not flagged before, the verdict it was reopened on
    becomes the one that flagged it if that verdict flags). With ``judged_at``, the
    verdict the decision was made on: Conflict when it has been judged again since; with
    ``seen``, the state the reviewer read: Conflict when another decision changed it. The
    state a player already has changes nothing, as a flag's, unless it changes which
    solves are set aside (clearing again remembers solves the reviewer had not cleared;
    reopening or confirming a case raised after a clearing brings the cleared solves
    back). The player's whole history, or None when the player has no verdict."""
    row = con.execute("SELECT flagged, judged_at, judged_solves, state, verdict, p_value, "
                      "reviewed_solves, flagging_verdict IS NOT NULL FROM player_verdicts "
                      "WHERE portal = ? AND player_id = ?", [portal, player]).fetchone()
    if row is None:
        return None
    flagged, at, judged, was, verdict_now, p_now, reviewed_before, raised = row
    if judged_at is not None and at != judged_at:
        raise Conflict("judged_at", f"the verdict in force was judged at {at.isoformat()}, "
                       f"not at {judged_at.isoformat()}: it has been judged again since the "
                       f"one this decision was made on (or that time is none of its); read "
                       f"it and decide again")
    target = "flagged" if state == "open" else state
    if state == "open" and was != "flagged" and not (raised or flagged):
        # a case nobody raised (a player cleared or confirmed before any verdict flagged
        # them, too): the player would stand in the flagged queue with no verdict that
        # flagged them, and no judgement takes a flagged player out of it
        raise Conflict("state", f"player {player!r} is {was} and no verdict ever flagged "
                                "them: there is no case to reopen; confirm or clear them "
                                "instead")
    if seen is not None and was != seen:
        last = history(con, portal, player)     # (changed_at, state, note, actor)
        since = stale_since(seen, was, target, actor,
                            (last[-1][3], last[-1][0], last[-1][1]) if last else None)
        if since is not None:
            raise Conflict("seen", f"the case {since}")
    reviewed = json.loads(judged) if judged else scored_solves(con, portal, player, at)
    keep = reviewed if state == "cleared" else None
    if target == was and json.loads(reviewed_before or "null") == keep:
        return history(con, portal, player)   # the same decision again changes nothing
    con.execute("UPDATE player_verdicts SET state = ?, reviewed_solves = ? WHERE "
                "portal = ? AND player_id = ?",
                [target, None if keep is None else json.dumps(keep), portal, player])
    if state == "open" and was != "flagged" and flagged:
        con.execute("UPDATE player_verdicts SET flagged_at = ?, flagging_verdict = ?, "
                    "flagging_p = ? WHERE portal = ? AND player_id = ?",
                    [now, verdict_now, p_now, portal, player])
    con.execute("INSERT INTO player_verdict_history VALUES (?, ?, ?, ?, ?, ?)",
                [portal, player, now, target, note, actor])
    return history(con, portal, player)


def history(cur, portal: str, player: str) -> list[tuple]:
    return cur.execute("SELECT changed_at, state, note, actor FROM player_verdict_history "
                       "WHERE portal = ? AND player_id = ? ORDER BY changed_at",
                       [portal, player]).fetchall()


def verdict(cur, portal: str, player: str) -> dict | None:
    cur.execute("SELECT * FROM player_verdicts WHERE portal = ? AND player_id = ?",
                [portal, player])
    return first(cur)


# a flagged player's case ranks by the stronger of the evidence now and the verdict that
# flagged them: later solves that dilute it do not send the case to the queue's end
RANK_P = ("CASE WHEN state = 'flagged' THEN least(p_value, coalesce(flagging_p, p_value)) "
          "ELSE p_value END")


def listing(cur, *, state=None, portals=None, cursor=None, limit=50, offset=0
            ) -> list[dict]:
    """Verdicts, strongest evidence first (``rank_p``: :data:`RANK_P`, then portal and
    player_id), filtered by ``state``; keyset pagination after ``cursor``, or numbered
    pages by skipping ``offset`` rows; only of ``portals`` when given."""
    clause, params = portal_clause("portal", portals)
    where = [clause]
    if state is not None:
        where.append("state = ?")
        params.append(state)
    if cursor is not None:
        p, portal, player = cursor
        where.append("(rank_p, portal, player_id) > (?, ?, ?)")
        params += [p, portal, player]
    cur.execute(f"SELECT * FROM (SELECT portal, player_id, state, flagged, p_value, "
                f"{RANK_P} AS rank_p, solves, verdict, judged_at, flagged_at, "
                f"flagging_verdict FROM player_verdicts) WHERE " + " AND ".join(where)
                + " ORDER BY rank_p, portal, player_id LIMIT ? OFFSET ?",
                params + [limit, offset])
    return dicts(cur)


def case_solves(cur, portal: str, player: str) -> list[dict]:
    """A player's scored solves for the case page, oldest first: the solve (finished or
    not), its verdict line, its combined p and its flag (id and state) when one was
    raised."""
    cur.execute(
        "SELECT s.submission_id, s.puzzle_id, s.tournament_id, s.started_at, s.duration_ms, "
        "s.complete, sc.p_value, json_extract_string(sc.evidence, '$.verdict') AS verdict, "
        "f.id AS flag_id, f.state AS flag_state FROM submissions s JOIN scores sc ON "
        "sc.portal = s.portal AND sc.submission_id = s.submission_id LEFT JOIN flags f ON "
        "f.portal = s.portal AND f.submission_id = s.submission_id WHERE s.portal = ? AND "
        "s.player_id = ? ORDER BY s.started_at, s.sub_key", [portal, player])
    return dicts(cur)


def flagged_count(cur) -> dict[str, int]:
    """Players by verdict state."""
    return dict(cur.execute("SELECT state, count(*) FROM player_verdicts GROUP BY state")
                .fetchall())


def nulls(cur) -> dict[str, str]:
    """portal -> its learnt null (JSON)."""
    return dict(cur.execute("SELECT portal, null_json FROM player_nulls").fetchall())


def save_nulls(con, learnt: dict[str, str], now: datetime) -> None:
    for portal, text in learnt.items():
        con.execute("INSERT OR REPLACE INTO player_nulls VALUES (?, ?, ?)",
                    [portal, now, text])


def honest_players(cur, portal: str) -> list[tuple[str, str]]:
    """A portal's players the nightly job learns the null from: with a scored solve, and
    neither flagged nor confirmed as a player."""
    return [tuple(r) for r in cur.execute(
        "SELECT DISTINCT s.portal, s.player_id FROM submissions s JOIN scores sc ON "
        "sc.portal = s.portal AND sc.submission_id = s.submission_id LEFT JOIN "
        "player_verdicts v ON v.portal = s.portal AND v.player_id = s.player_id WHERE "
        "s.portal = ? AND coalesce(v.state, 'clear') IN ('clear', 'cleared') ORDER BY 2",
        [portal]).fetchall()]


def portals_judged(cur) -> list[str]:
    return [p for (p,) in cur.execute(
        "SELECT DISTINCT portal FROM scores ORDER BY 1").fetchall()]
