"""Scoring's reads and its one write: scores, flags and the flag state machine.

A flag's states::

    open ──re-scored, no longer anomalous──▶ withdrawn ──re-scored, anomalous──▶ open
    open / withdrawn ──an organiser's review──▶ cleared | confirmed   (final for scoring)
    cleared / confirmed ──reopened by an organiser (an appeal)──▶ open (a person's: kept)

Scoring raises a flag ``open`` with the reasons it found; re-scoring moves it between
``open`` and ``withdrawn`` (never deleting it) and never overrides a human decision: a
flag whose last change was a person's (a reopened one) stays as it is. Every change is a
``flag_history`` row.

A submission's status: ``pending`` until scored, ``scored``, ``rescore`` while queued
again (after a nightly run, or found to repeat a log its score never saw),
``unscorable`` when scoring failed on it (``score_error`` says why; final: the sweep
leaves it, and a score it had before stays). ``repeat_marks`` counts the times another
batch found it repeats a log it was not compared with: a score from a batch that read
fewer marks leaves it ``rescore``, whatever status that batch read.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

from ...states import FlagState
from . import needs_moves, outbox
from .lifecycle import forget_erased_sources
from .rows import dicts

MACHINE = "fairgrid"  # the actor of the changes scoring makes


def rescored_state(state: str, flagged: bool, by_person: bool = False) -> str | None:
    """The state a flag moves to when its submission is scored again (None: it stays,
    because a person decided it: a review, or a reopening, was its last change)."""
    if by_person or state not in (FlagState.OPEN, FlagState.WITHDRAWN):
        return None
    return FlagState.OPEN.value if flagged else FlagState.WITHDRAWN.value


def these_keys(column: str, sub_keys) -> str:
    """SQL selecting rows whose ``column`` is one of ``sub_keys`` (integers, inlined).
    Keys arrive in commit order, so the range lets DuckDB skip every other row group."""
    keys = sorted({int(k) for k in sub_keys})
    return (f"{column} BETWEEN {keys[0]} AND {keys[-1]} AND {column} IN "
            f"({', '.join(map(str, keys))})")


def pending_of_puzzle(cur, puzzle_id: str) -> list[int]:
    return [k for (k,) in cur.execute(
        "SELECT sub_key FROM submissions WHERE puzzle_id = ? AND status = 'pending'",
        [puzzle_id]).fetchall()]


def pending_of_invalid(cur, limit: int = 10_000) -> list[dict]:
    """Submissions waiting on a puzzle whose analysis failed (``invalid``, never
    retried): none of them can be scored, so they end ``unscorable`` with the reason."""
    return [{"sub_key": k, "portal": portal, "submission_id": sid, "puzzle_id": pid,
             "error": error} for k, portal, sid, pid, error in cur.execute(
        "SELECT s.sub_key, s.portal, s.submission_id, s.puzzle_id, p.error FROM submissions s "
        "JOIN puzzles p ON p.id = s.puzzle_id "
        "WHERE s.status IN ('pending', 'rescore') AND p.status = 'invalid' "
        "ORDER BY s.sub_key LIMIT ?", [limit]).fetchall()]


def due(cur, limit: int = 10_000) -> list[int]:
    """Submissions waiting for a (re-)score whose puzzle is ready, oldest first."""
    return [k for (k,) in cur.execute(
        "SELECT s.sub_key FROM submissions s JOIN puzzles p ON p.id = s.puzzle_id "
        "WHERE s.status IN ('pending', 'rescore') AND p.status = 'ready' "
        "ORDER BY s.sub_key LIMIT ?", [limit]).fetchall()]


def sub_key_of(cur, portal: str, submission_id: str) -> int | None:
    row = cur.execute("SELECT sub_key FROM submissions WHERE portal = ? AND "
                      "submission_id = ?", [portal, submission_id]).fetchone()
    return None if row is None else row[0]


def submissions_to_score(cur, sub_keys) -> list[dict]:
    """Each submission's identity, player, raw body, status, its puzzle's ``puzzle_key``
    (type and givens: one puzzle whatever each portal calls it), the rating run in force
    and the player's skill in it at the puzzle's type with the solves it was fitted on."""
    cur.execute(
        "SELECT s.portal, s.submission_id, s.sub_key, s.puzzle_id, s.player_id, s.raw, "
        "s.status, s.repeat_marks, p.puzzle_type || ':' || p.givens AS puzzle_key, "
        "c.run_id, pl.skill, pl.solves AS skill_solves FROM submissions s "
        "LEFT JOIN puzzles p ON p.id = s.puzzle_id "
        "LEFT JOIN current_rating c ON c.id = 1 "
        "LEFT JOIN player_ratings pl ON pl.run_id = c.run_id AND pl.portal = s.portal "
        "AND pl.player_id = s.player_id AND pl.puzzle_type = p.puzzle_type "
        f"WHERE {these_keys('s.sub_key', sub_keys)}")
    return dicts(cur)


def nearby_prints(cur, want: list[tuple[str, int, int, int]]) -> dict[str, np.ndarray]:
    """The timing prints stored for solves of some puzzles, per ``(puzzle_key, lo, hi,
    most)``: of the solves of that puzzle (type and givens, as
    :func:`submissions_to_score` gives them: every portal's copy of it), the ``most``
    latest committed before ``hi`` and the ``most`` first committed after ``lo`` (a
    batch's solves lie between), those with a print; as columns sub_key, portal,
    submission_id, player_id, puzzle_key, timing_print (bytes)."""
    if not want:
        return {}
    keys, lo, hi, most = (list(c) for c in zip(*want))
    # the windows are taken on the submissions (a key each) before any print is read
    return cur.execute(
        "WITH want AS (SELECT unnest(?) AS puzzle_key, unnest(?) AS lo, unnest(?) AS hi, "
        "unnest(?) AS most), "
        "same AS (SELECT p.id, w.* FROM puzzles p JOIN want w ON w.puzzle_key = "
        "p.puzzle_type || ':' || p.givens), "
        "cand AS (SELECT s.sub_key, s.portal, s.submission_id, s.player_id, same.puzzle_key, "
        "same.lo, same.hi, same.most FROM same JOIN submissions s ON s.puzzle_id = same.id "
        "WHERE s.status IN ('scored', 'rescore')), "
        "near AS (SELECT * FROM cand WHERE sub_key < hi QUALIFY row_number() OVER ("
        "PARTITION BY puzzle_key ORDER BY sub_key DESC) <= most UNION SELECT * FROM cand "
        "WHERE sub_key > lo QUALIFY row_number() OVER (PARTITION BY puzzle_key ORDER BY "
        "sub_key) <= most) "
        "SELECT n.sub_key, n.portal, n.submission_id, n.player_id, n.puzzle_key, "
        "sc.timing_print FROM near n JOIN scores sc ON sc.portal = n.portal AND "
        "sc.submission_id = n.submission_id WHERE sc.timing_print IS NOT NULL "
        "ORDER BY n.sub_key", [keys, lo, hi, most]).fetchnumpy()


@needs_moves
def moves_of(cur, sub_keys) -> dict[str, np.ndarray]:
    """The moves of submissions as columns, sorted by sub_key, then seq."""
    return cur.execute(
        f"SELECT sub_key, t_ms, cell, digit, note FROM moves WHERE "
        f"{these_keys('sub_key', sub_keys)} ORDER BY sub_key, seq").fetchnumpy()


def puzzle_for_scoring(cur, puzzle_id: str, run_id: str | None, portal: str) -> dict | None:
    """A puzzle's stored analysis with its rating under ``run_id`` (None: none); its
    difficulty is ``portal``'s own where the run fitted one."""
    cur.execute(
        "SELECT p.status, p.givens, p.box_size, p.solution, p.puzzle_type, "
        "p.fill_rank_median, p.ratings, coalesce(pp.difficulty, pr.difficulty) AS difficulty, "
        "pr.level, pr.consensus_fill_rank, pr.consensus_fill_spread "
        "FROM puzzles p LEFT JOIN puzzle_ratings pr ON pr.run_id = ? AND pr.puzzle_id = p.id "
        "LEFT JOIN puzzle_portal_ratings pp ON pp.run_id = pr.run_id "
        "AND pp.puzzle_id = p.id AND pp.portal = ? "
        "WHERE p.id = ?", [run_id, portal, puzzle_id])
    rows = dicts(cur)
    return rows[0] if rows else None


def stored_evidence(cur, portal: str, submission_id: str) -> str | None:
    """The evidence stored for a submission (JSON text), None when it has no score."""
    row = cur.execute("SELECT evidence FROM scores WHERE portal = ? AND submission_id = ?",
                      [portal, submission_id]).fetchone()
    return None if row is None else row[0]


def rating_run(cur, run_id: str) -> tuple:
    """(mu, residual_sd, sd of Sudoku player skills, level_nulls JSON, by_type JSON,
    portal_level_nulls JSON) of a rating run."""
    return cur.execute(
        "SELECT r.mu, r.residual_sd, (SELECT coalesce(stddev(skill), 0) "
        "FROM player_ratings WHERE run_id = r.run_id AND puzzle_type = 'sudoku'), "
        "r.level_nulls, r.by_type, r.portal_level_nulls FROM rating_runs r "
        "WHERE r.run_id = ?",
        [run_id]).fetchone()


def write_scores(con, score_batch: dict[str, np.ndarray], now: datetime,
                 rescored: bool, copies: list[int] = ()) -> list[tuple[str, str]]:
    """Store a batch's scores, raise its new flags, move its existing flags through the
    state machine, mark its submissions ``scored``: a handful of set-based statements
    (DuckDB statements cost ~1 ms each whatever their size, and ingestion waits for the
    same writer). ``score_batch`` holds columns sub_key, portal, submission_id, anomaly,
    p_value, flagged, evidence, reasons (JSON), note, run_id (the rating run scored
    with; None before any) and, optionally, season_facts, timing_print and
    ``marks_read`` (the submission's ``repeat_marks`` when its batch read it). Old
    scores and flags exist only for submissions scored before, so a batch of first
    scores (not ``rescored``) skips looking for them. ``copies``: other players' solves
    whose log repeats one of the batch's, scored or being scored without it to compare
    with: each gains a repeat mark, and a scored one is marked ``rescore``.
    Returns the (portal, submission_id) of the flags raised."""
    for column in ("season_facts", "timing_print", "marks_read"):  # none known: NULL
        if column not in score_batch:
            score_batch = {**score_batch, column: np.full(len(score_batch["sub_key"]), None,
                                                          dtype=object)}
    # DuckDB reads the parameter score_batch by name (a replacement scan)
    existing = []
    if rescored:
        con.execute("DELETE FROM scores USING score_batch b WHERE scores.portal = "
                    "b.portal AND scores.submission_id = b.submission_id")
        existing = con.execute(
            "SELECT f.id, f.state, b.flagged, b.reasons, coalesce((SELECT h.actor FROM "
            "flag_history h WHERE h.flag_id = f.id ORDER BY h.changed_at DESC LIMIT 1), ?) "
            "<> ? AS by_person FROM flags f JOIN score_batch b ON b.portal = f.portal AND "
            "b.submission_id = f.submission_id", [MACHINE, MACHINE]).fetchall()
    # a submission erased while its batch was scored stays erased
    con.execute("INSERT INTO scores SELECT b.portal, b.submission_id, ?, b.anomaly, "
                "b.p_value, b.flagged, b.evidence, b.season_facts, b.timing_print "
                "FROM score_batch b "
                "WHERE EXISTS (SELECT 1 "
                "FROM submissions s WHERE s.portal = b.portal AND s.submission_id = "
                "b.submission_id)", [now])
    # a log compared with a solve erased while it was scored names it no longer
    missing = con.execute(
        "SELECT DISTINCT b.portal, json_extract_string(b.evidence, "
        "'$.log_match.submission_id') AS named FROM score_batch b WHERE named IS NOT NULL "
        "AND NOT EXISTS (SELECT 1 FROM submissions s WHERE s.portal = b.portal AND "
        "s.submission_id = named)").fetchall()
    for portal in sorted({p for p, _ in missing}):
        forget_erased_sources(con, portal, [n for p, n in missing if p == portal])
    created = []
    if score_batch["flagged"].any():
        created = con.execute(
            "INSERT INTO flags (portal, submission_id, created_at, state, reasons) "
            f"SELECT b.portal, b.submission_id, ?, '{FlagState.OPEN}', b.reasons FROM "
            "score_batch b WHERE b.flagged AND NOT EXISTS (SELECT 1 FROM flags f "
            "WHERE f.portal = b.portal AND f.submission_id = b.submission_id) "
            "AND EXISTS (SELECT 1 FROM submissions s WHERE s.portal = b.portal AND "
            "s.submission_id = b.submission_id) "
            "RETURNING id, portal, submission_id", [now]).fetchall()
    if created:
        con.execute(
            f"INSERT INTO flag_history SELECT f.id, ?, '{FlagState.OPEN}', b.note, ? "
            "FROM flags f JOIN score_batch b ON b.portal = f.portal AND "
            "b.submission_id = f.submission_id WHERE list_contains(?, f.id)",
            [now, MACHINE, [c[0] for c in created]])
        outbox.enqueue_flags_raised(con, [c[0] for c in created], now)
    for fid, state, flagged, reasons, by_person in existing:
        target = rescored_state(state, flagged, by_person)
        if target is None:
            continue
        if target != state:
            con.execute("INSERT INTO flag_history VALUES (?, ?, ?, 're-scored', ?)",
                        [fid, now, target, MACHINE])
        if flagged:
            con.execute("UPDATE flags SET state = ?, reasons = ? WHERE id = ?",
                        [target, reasons, fid])
        else:  # keep the reasons it was raised for
            con.execute("UPDATE flags SET state = ? WHERE id = ?", [target, fid])
    keys = score_batch["sub_key"]
    # a solve is left ``rescore`` for the sweep when the batch scored it with a run no
    # longer in force (a nightly run committed meanwhile: it marks only solves scored
    # by then, so a first score is caught here too), and when another batch found it
    # repeats a log this one did not see (a repeat mark since it read it)
    con.execute("UPDATE submissions SET score_error = NULL, status = CASE WHEN "
                "coalesce(submissions.repeat_marks, 0) <> coalesce(b.marks_read, "
                "submissions.repeat_marks, 0) OR (submissions.status IN ('rescore', "
                "'pending') AND "
                "b.run_id IS DISTINCT FROM (SELECT max(run_id) FROM current_rating)) "
                "THEN 'rescore' ELSE 'scored' END FROM score_batch b WHERE "
                "submissions.sub_key BETWEEN ? AND ? AND submissions.sub_key = b.sub_key",
                [int(keys.min()), int(keys.max())])
    if len(copies):
        # one being scored now (pending included) is left ``rescore`` by its own write
        # through the mark; one whose batch failed keeps ``pending`` and is scored anew
        con.execute("UPDATE submissions SET repeat_marks = coalesce(repeat_marks, 0) + 1, "
                    "status = CASE WHEN status = 'scored' THEN 'rescore' ELSE status END "
                    "WHERE list_contains(?, sub_key) AND status IN ('scored', 'rescore', "
                    "'pending')", [sorted({int(k) for k in copies})])
    return [(portal, sid) for _, portal, sid in created]


def mark_unscorable(con, sub_keys: list[int], reasons: list[str]) -> set[int]:
    """Give submissions scoring failed on the final status ``unscorable`` with the
    reason, those still waiting (``pending`` or ``rescore``: a submission erased, scored
    or marked by another batch meanwhile stays as it is), in one statement; the keys it
    marked."""
    unscorable = {"sub_key": np.array(sub_keys, dtype=np.int64),  # noqa: F841 - by name
                  "reason": np.array(reasons, dtype=object)}
    return {int(k) for (k,) in con.execute(
        "UPDATE submissions SET status = 'unscorable', score_error = u.reason "
        "FROM unscorable u WHERE submissions.sub_key = u.sub_key "
        "AND submissions.status IN ('pending', 'rescore') "
        "RETURNING submissions.sub_key").fetchall()}
