"""The nightly job's reads and writes: eligible solves, fill ranks for the consensus, a
sample of solves for the per-level nulls, the rating run, the job's bookkeeping.

Rows cross as named tuples (:class:`RatedPuzzle`, :class:`EligiblePlayer`,
:class:`ConsensusCandidate`, :class:`PuzzleText`, :class:`RatingRunRow`), many rows as
columns (dicts of arrays)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import NamedTuple

import numpy as np

from ...states import STANDING, sql_list
from . import needs_moves, outbox

# the longest solve the fit reads: a log that spans more than a day measures the time a
# page stayed open, not solving, and a few such would move every shared puzzle's rating
MAX_FIT_DURATION_MS = 24 * 3600 * 1000

# the solves the ratings learn from: complete, timed (up to a day), scored (one scoring
# has not judged yet could be a copy no flag keeps out), of analysed puzzles, without an
# open or confirmed flag, and the player's first solve to finish the puzzle (one who
# solves it again remembers it: quicker, its hard steps found at once, as the player
# verdict's ``solved_again`` says; a fit on replays would rate the player too skilled
# and the puzzle too easy)
ELIGIBLE = f"""
    SELECT s.sub_key, s.puzzle_id, s.portal, s.player_id, s.duration_ms, p.puzzle_type
    FROM submissions s JOIN puzzles p ON p.id = s.puzzle_id
    WHERE s.complete AND s.duration_ms > 0 AND s.duration_ms <= {MAX_FIT_DURATION_MS}
      AND s.status IN ('scored', 'rescore')
      AND p.status = 'ready' AND p.ratings IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM flags f WHERE f.portal = s.portal
                      AND f.submission_id = s.submission_id
                      AND f.state IN """ + sql_list(STANDING) + """)
      AND NOT EXISTS (SELECT 1 FROM submissions b WHERE b.portal = s.portal
                      AND b.player_id = s.player_id AND b.puzzle_id = s.puzzle_id
                      AND b.complete AND (epoch_ms(b.started_at) + b.duration_ms
                      < epoch_ms(s.started_at) + s.duration_ms
                      OR epoch_ms(b.started_at) + b.duration_ms
                      = epoch_ms(s.started_at) + s.duration_ms AND b.sub_key < s.sub_key))
"""

# the eligible solves whose move log is still held (retention drops old ones' logs and
# keeps the solves, whose times still rate): what reads moves samples and counts these
LOGGED = ELIGIBLE + "  AND EXISTS (SELECT 1 FROM moves m WHERE m.sub_key = s.sub_key)\n"


class RatedPuzzle(NamedTuple):
    """An analysed puzzle the ratings cover."""

    id: str
    model: str          # the puzzle model's JSON (``puzzles.ratings``)
    givens: str
    puzzle_type: str


class EligiblePlayer(NamedTuple):
    """A player of one puzzle type with an eligible solve of it (rated per type)."""

    portal: str
    player_id: str
    puzzle_type: str


class ConsensusCandidate(NamedTuple):
    """A puzzle with enough eligible solves for a consensus order."""

    puzzle_id: str
    solves: int


class PuzzleText(NamedTuple):
    """What the per-level nulls read of a puzzle."""

    id: str
    givens: str
    solution: str
    box_size: int
    fill_rank_median: str | None    # JSON: the predicted median fill rank per cell
    puzzle_type: str
    ratings: str | None             # JSON: the puzzle's model (analytics.puzzle_model)


class RatingRunRow(NamedTuple):
    """A ``rating_runs`` row: each field is the column of the same name."""

    run_id: str
    finished_at: datetime
    solves: int
    puzzles: int
    players: int
    mu: float                       # Sudoku's, as the columns of a run before types
    residual_sd: float
    calibration: str                # JSON: the metrics -> log-time model in force after
    correlations: str               # JSON: metric -> {pearson, spearman} vs humans
    level_nulls: str                 # JSON: level key -> signal -> [centre, scale]
    by_type: str                    # JSON: type -> {mu, residual_sd, skill_sd, solves}
    portal_level_nulls: str = "{}"  # JSON: portal -> level key -> signal -> [centre, scale]


def start_run(con, run_id: str, job: str, started: datetime) -> None:
    """The run's ``running`` row (once: the daemon writes it before the run starts,
    and the run itself again)."""
    con.execute("INSERT INTO job_runs VALUES (?, ?, ?, NULL, 'running', NULL) "
                "ON CONFLICT (id) DO NOTHING", [run_id, job, started])


def finish_run(con, run_id: str, status: str, finished: datetime, rows: dict) -> None:
    con.execute("UPDATE job_runs SET status = ?, finished_at = ?, rows = ? WHERE id = ?",
                [status, finished, json.dumps(rows), run_id])


def missed(cur, job: str, slot: datetime) -> bool:
    """Whether the daemon was down at ``slot``: the database (or a run of ``job``) is
    older than it, and no run of ``job`` started since (a database made after the slot
    missed nothing)."""
    return bool(cur.execute(
        "SELECT ((SELECT min(applied_at) FROM schema_version) < ? OR EXISTS (SELECT 1 FROM "
        "job_runs WHERE job = ? AND started_at < ?)) AND NOT EXISTS (SELECT 1 FROM job_runs "
        "WHERE job = ? AND started_at >= ?)", [slot, job, slot, job, slot]).fetchone()[0])


def abandon_running(con, job: str) -> datetime | None:
    """Mark the runs of ``job`` a killed process left ``running`` as abandoned, saying
    whether the run's own ratings are in force (it was killed after its write stage
    committed, which stored its rating run: the solves that stage marked are re-scored by
    the daemon's sweep) or not; the job's last success."""
    con.execute(
        "UPDATE job_runs j SET status = 'abandoned', finished_at = r.finished_at, rows = "
        "json_object('error', CASE WHEN r.run_id IS NULL THEN 'killed before its write "
        "stage: the ratings before it stay in force' ELSE 'killed after its write stage: "
        "its ratings are in force, and its solves are re-scored by the daemon''s sweep' "
        "END, 'in_force', r.run_id IS NOT NULL) FROM (SELECT id, run_id, rr.finished_at "
        "FROM job_runs LEFT JOIN rating_runs rr ON rr.run_id = job_runs.id WHERE "
        "status = 'running' AND job = ?) r WHERE j.id = r.id", [job])
    return con.execute("SELECT max(finished_at) FROM job_runs WHERE job = ? AND "
                       "(status = 'success' OR (status = 'abandoned' AND "
                       "json_extract(rows, '$.in_force')::BOOLEAN))", [job]).fetchone()[0]


def current_correlations(cur) -> str | None:
    row = cur.execute("SELECT r.correlations FROM current_rating c JOIN rating_runs r "
                      "ON r.run_id = c.run_id").fetchone()
    return row[0] if row else None


def current_calibration(cur) -> str | None:
    """The calibration JSON of the rating run in force, if any."""
    row = cur.execute("SELECT r.calibration FROM current_rating c JOIN rating_runs r "
                      "ON r.run_id = c.run_id").fetchone()
    return row[0] if row else None


def rated_puzzles(cur) -> list[RatedPuzzle]:
    """Every analysed puzzle, by id."""
    return [RatedPuzzle._make(r) for r in cur.execute(
        "SELECT id, ratings, givens, puzzle_type FROM puzzles "
        "WHERE status = 'ready' AND ratings IS NOT NULL ORDER BY id").fetchall()]


def save_puzzle_metrics(cur, rows: list[tuple[str, str]]) -> None:
    """Store puzzle models whose metrics the nightly job completed: (model JSON, id)."""
    cur.executemany("UPDATE puzzles SET ratings = ? WHERE id = ?", rows)


def eligible_solves(cur) -> dict[str, np.ndarray]:
    """Every eligible solve as columns j (puzzle index in :func:`rated_puzzles` order),
    i (player index in :func:`eligible_players` order: a player of each puzzle type
    they solved) and duration_ms."""
    return cur.execute(
        f"WITH e AS ({ELIGIBLE}), pz AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS j "
        "FROM puzzles WHERE status = 'ready' AND ratings IS NOT NULL), "
        "pl AS (SELECT portal, player_id, puzzle_type, row_number() OVER "
        "(ORDER BY portal, player_id, puzzle_type) - 1 AS i "
        "FROM (SELECT DISTINCT portal, player_id, puzzle_type FROM e)) "
        "SELECT pz.j, pl.i, e.duration_ms FROM e JOIN pz ON pz.id = e.puzzle_id "
        "JOIN pl ON pl.portal = e.portal AND pl.player_id = e.player_id "
        "AND pl.puzzle_type = e.puzzle_type").fetchnumpy()


def snapshot(cur) -> tuple[list[RatedPuzzle], dict[str, np.ndarray], list[EligiblePlayer]]:
    """:func:`rated_puzzles`, :func:`eligible_solves` and :func:`eligible_players` read in
    one transaction: the solves' indices j and i point into the two lists read with them
    (read apart, a solve committed in between would shift the indices of the players
    after its own, and fit them on each other's solves)."""
    cur.execute("BEGIN TRANSACTION")
    try:
        return rated_puzzles(cur), eligible_solves(cur), eligible_players(cur)
    finally:
        cur.execute("ROLLBACK")  # nothing was written


def eligible_players(cur) -> list[EligiblePlayer]:
    """Each player and type with an eligible solve, by portal, player id and type."""
    return [EligiblePlayer._make(r) for r in cur.execute(
        f"WITH e AS ({ELIGIBLE}) SELECT DISTINCT portal, player_id, "
        "puzzle_type FROM e ORDER BY portal, player_id, puzzle_type").fetchall()]


def consensus_candidates(cur, min_solves: int) -> list[ConsensusCandidate]:
    """The puzzles with at least ``min_solves`` eligible solves whose move log is still
    held, by id."""
    return [ConsensusCandidate._make(r) for r in cur.execute(
        f"WITH e AS ({LOGGED}) SELECT puzzle_id, count(*) FROM e "
        "GROUP BY puzzle_id HAVING count(*) >= ? ORDER BY puzzle_id",
        [min_solves]).fetchall()]


@needs_moves
def fill_ranks(cur, first: str, last: str, min_solves: int,
               floor: int = 0) -> dict[str, np.ndarray]:
    """For the eligible solves of puzzles ``first``..``last`` (ids) with at least
    ``min_solves`` of them: one row per filled cell per solve, with the rank at which the
    solve filled it. For a complete solve the last move on each cell places its final,
    correct digit, so the fill order is the order of each cell's last move (ties by
    sequence). Columns puzzle_id, sub_key, cell, r, ncells (the puzzle's cells: its
    solution has one symbol a cell), sorted by puzzle.

    Of a puzzle several portals solved, a portal counts at most as many solves (its
    first) as every other portal together, or ``floor``: one portal's many solves in an
    order of its own do not make the order every portal's players are compared with,
    and another portal's few solves of the puzzle do not take it away."""
    return cur.execute(
        f"WITH e AS ({LOGGED} AND s.puzzle_id BETWEEN ? AND ?), "
        "counted AS (SELECT sub_key, puzzle_id, row_number() OVER (PARTITION BY "
        "puzzle_id, portal ORDER BY sub_key) AS k, count(*) OVER (PARTITION BY "
        "puzzle_id, portal) AS mine, count(*) OVER (PARTITION BY puzzle_id) AS every "
        "FROM e), "
        "capped AS (SELECT sub_key, puzzle_id FROM counted "
        "WHERE mine = every OR k <= greatest(every - mine, ?)), "
        "big AS (SELECT puzzle_id FROM capped GROUP BY puzzle_id HAVING count(*) >= ?), "
        "es AS (SELECT c.sub_key, c.puzzle_id FROM capped c JOIN big USING (puzzle_id)), "
        "last AS (SELECT m.sub_key, m.cell, max(m.seq) AS seq, arg_max(m.t_ms, m.seq) AS t "
        "FROM moves m JOIN es USING (sub_key) WHERE NOT m.note GROUP BY m.sub_key, m.cell) "
        "SELECT es.puzzle_id, l.sub_key, l.cell, "
        "rank() OVER (PARTITION BY l.sub_key ORDER BY l.t, l.seq) AS r, "
        "length(p.solution) AS ncells "
        "FROM last l JOIN es USING (sub_key) JOIN puzzles p ON p.id = es.puzzle_id "
        "ORDER BY es.puzzle_id, l.sub_key, l.cell",
        [first, last, int(floor), min_solves]).fetchnumpy()


@needs_moves
def sample_moves(cur, sample: int, seed: int, least: int = 0) -> dict[str, np.ndarray]:
    """The moves of a seeded sample of eligible solves whose log is still held: ``sample``
    of them shared by the
    portals, as many of each as the portals holding fewer leave (:func:`share`), but at
    least ``least`` of each; a portal's are its first in an order hashed from each
    solve's key and ``seed`` (so other portals change how many, never which). Columns
    sub_key, puzzle_id, portal, place (the solve's place in its portal's order), t_ms,
    cell, digit, note, sorted by sub_key, then seq."""
    counts = [n for (n,) in cur.execute(
        f"SELECT count(*) FROM ({LOGGED}) GROUP BY portal").fetchall()]
    quota = max(share(counts, sample), least)
    return cur.execute(
        f"WITH e AS ({LOGGED}), "
        "ranked AS (SELECT sub_key, puzzle_id, portal, row_number() OVER (PARTITION BY "
        "portal ORDER BY hash(sub_key, ?::BIGINT), sub_key) AS k FROM e), "
        "smp AS (SELECT sub_key, puzzle_id, portal, k FROM ranked WHERE k <= ?) "
        "SELECT m.sub_key, smp.puzzle_id, smp.portal, smp.k AS place, m.t_ms, m.cell, "
        "m.digit, m.note "
        "FROM moves m JOIN smp USING (sub_key) ORDER BY m.sub_key, m.seq",
        [int(seed), int(quota)]).fetchnumpy()


def share(counts: list[int], sample: int) -> int:
    """The fewest solves ``n`` of each portal (holding ``counts``) such that the portals
    together give ``sample``, each min(its count, n): a portal with fewer leaves the rest
    to the others (every solve where they hold fewer in all)."""
    rest, left = sample, len(counts)
    for c in sorted(counts):
        if c * left >= rest:
            return -(-rest // left)
        rest, left = rest - c, left - 1
    return max(counts, default=0)


def puzzle_texts(cur, ids: list[str]) -> list[PuzzleText]:
    """The puzzles ``ids`` (in no particular order)."""
    return [PuzzleText._make(r) for r in cur.execute(
        "SELECT id, givens, solution, box_size, fill_rank_median, puzzle_type, ratings "
        "FROM puzzles WHERE list_contains(?, id)", [ids]).fetchall()]


def write_rating_run(con, run: RatingRunRow, puzzle_rows: dict, player_rows: dict,
                     rescore_since: datetime | None = None,
                     portal_rows: dict | None = None) -> None:
    """Store a rating run (its ``rating_runs`` row ``run``, its puzzles', players' and
    portals' own difficulties' rows as columns named as theirs) and put it in force: one
    transaction (the
    writer's). The submissions scored since ``rescore_since`` are left to re-score
    (status ``rescore``) in it too: a run stopped or killed after this still has its
    solves re-scored, by the daemon's sweep."""
    names = RatingRunRow._fields
    con.execute(f"INSERT INTO rating_runs ({', '.join(names)}) "
                f"VALUES ({', '.join('$' + n for n in names)})", run._asdict())
    if len(puzzle_rows["puzzle_id"]):
        con.register("new_puzzle_ratings", puzzle_rows)
        con.execute("INSERT INTO puzzle_ratings BY NAME SELECT * FROM new_puzzle_ratings")
        con.unregister("new_puzzle_ratings")
    if portal_rows is not None and len(portal_rows["puzzle_id"]):
        con.register("new_portal_ratings", portal_rows)
        con.execute("INSERT INTO puzzle_portal_ratings BY NAME "
                    "SELECT * FROM new_portal_ratings")
        con.unregister("new_portal_ratings")
    if len(player_rows["player_id"]):
        con.register("new_player_ratings", player_rows)
        # a player erased while the run was computed stays erased
        con.execute("INSERT INTO player_ratings BY NAME SELECT * FROM new_player_ratings n "
                    "WHERE EXISTS (SELECT 1 FROM submissions s WHERE s.portal = n.portal "
                    "AND s.player_id = n.player_id)")
        con.unregister("new_player_ratings")
    con.execute("INSERT INTO current_rating VALUES (1, ?) ON CONFLICT (id) DO UPDATE "
                "SET run_id = excluded.run_id", [run.run_id])
    if rescore_since is not None:
        # only a solve whose log is still held can be scored again (a rescore window
        # widened past what retention kept reaches solves whose logs went)
        con.execute("UPDATE submissions SET status = 'rescore' WHERE status = 'scored' "
                    "AND committed_at >= ? AND EXISTS (SELECT 1 FROM moves m "
                    "WHERE m.sub_key = submissions.sub_key)", [rescore_since])
    outbox.enqueue_ratings(con, run.run_id, datetime.now(timezone.utc))


def to_rescore(cur) -> list[int]:
    """Submissions left to re-score (status ``rescore``), oldest first."""
    return [k for (k,) in cur.execute(
        "SELECT sub_key FROM submissions WHERE status = 'rescore' "
        "ORDER BY committed_at").fetchall()]
