"""The JSON documents of the organiser API, built from repository rows. The API and the
command line's offline path (a database file and no daemon) build them the same way."""

from __future__ import annotations

import json

from fairgrid.analytics.calibration import player_z
from fairgrid.analytics.evidence import Evidence
from fairgrid.analytics.player_verdict import PlayerVerdict
from fairgrid.solvers.puzzle_types import DEFAULT_TYPE, puzzle_type


def iso(value):
    """A stored time as ISO 8601 text (None stays None). A time outside what Python
    represents (a year before 1 in the session's time zone, stored before ingestion
    bounded times) comes from DuckDB as its own text, which is served as it is."""
    if value is None:
        return None
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def loads(value):
    """A stored JSON column (None stays None)."""
    return None if value is None else json.loads(value)


def flag(r: dict) -> dict:
    """A row of ``repository.organiser.flags``."""
    return {"id": r["id"], "portal": r["portal"], "submission_id": r["submission_id"],
            "created_at": iso(r["created_at"]), "state": r["state"],
            "reasons": loads(r["reasons"]), "tournament_id": r["tournament_id"],
            "player_id": r["player_id"], "puzzle_id": r["puzzle_id"],
            "anomaly": r["anomaly"], "p_value": r["p_value"]}


def player_numbers(rows: list[dict]) -> tuple[float | None, int]:
    """The two numbers shown beside a player's season verdict, from their submission
    rows: Stouffer's Z over the scored solves' combined p (None before any is scored)
    and the flags standing."""
    pvals = [r["p_value"] for r in rows if r["p_value"] is not None]
    return (player_z(pvals) if pvals else None), sum(1 for r in rows if r["flagged"])


def player_verdict(row: dict, history: list[tuple]) -> dict:
    """A stored verdict as the API shows it: state, the evidence's own verdict in words,
    each finding with the solves behind it, the verdict that last flagged the player
    (``flagging``; a flagged player stays flagged until a person decides, so it may be
    stronger than what the season shows now), and the review history."""
    v = PlayerVerdict.from_json(json.loads(row["verdict"]))
    return {"state": row["state"], "flagged": row["flagged"], "p_value": row["p_value"],
            "solves": row["solves"], "alpha": v.alpha, "summary": v.summary,
            "rests_on": v.rests_on, "null": v.null_source, "kinds": v.kinds,
            "findings": [f.to_json() for f in v.findings],
            "judged_at": iso(row["judged_at"]), "flagged_at": iso(row["flagged_at"]),
            "flagging": flagging_verdict(row),
            "history": [{"changed_at": iso(at), "state": st, "note": nt, "actor": ac}
                        for at, st, nt, ac in history]}


def _kept_flagging(row: dict) -> PlayerVerdict | None:
    """The stored verdict that last flagged the player, None when none is kept."""
    text = row.get("flagging_verdict")
    return PlayerVerdict.from_json(json.loads(text)) if text else None


def flagging_verdict(row: dict, findings: bool = True) -> dict | None:
    """The verdict that last flagged the player (p, solves, summary and, with
    ``findings``, each finding), None when none is kept."""
    v = _kept_flagging(row)
    if v is None:
        return None
    doc = {"p_value": v.p_value, "solves": v.solves, "summary": v.summary}
    return {**doc, "findings": [f.to_json() for f in v.findings]} if findings else doc


def receded(row: dict) -> PlayerVerdict | None:
    """The verdict that flagged a player still flagged whose evidence no longer flags
    them by itself (later solves diluted it): the case waits for a person, and the
    reviewer reads what flagged them. None otherwise."""
    if row["state"] != "flagged" or row["flagged"]:
        return None
    return _kept_flagging(row)


def case_summary(row: dict) -> str:
    """A stored verdict's sentence for a queue or a player page: for a flagged player
    whose evidence has since been diluted, what flagged them, and that the season no
    longer does by itself."""
    now = PlayerVerdict.from_json(json.loads(row["verdict"])).summary
    then = receded(row)
    if then is None:
        return now
    return (f"{then.summary} (when flagged, over {then.solves} solves; by itself the "
            f"season of {row['solves']} solves no longer flags the player)")


# what reading a document that is not evidence fairgrid wrote (hand-edited, cut short) raises
NOT_EVIDENCE = (KeyError, TypeError, ValueError, AttributeError)
# ... and what a stored row that cannot be read raises on its way to a fit, a score or a
# verdict (its document, and the arithmetic on its numbers): one such row is logged and
# left out, never a reason to stop the work on the others
UNREADABLE = (*NOT_EVIDENCE, IndexError, ArithmeticError)


def current_evidence(doc: dict) -> dict:
    """A stored evidence document of any version as the current version reads; one that
    is not evidence fairgrid wrote as it is."""
    try:
        return Evidence.from_json(doc).to_json()
    except NOT_EVIDENCE:
        return doc


def stored_evidence(text: str | None) -> Evidence | None:
    """The evidence of a ``scores.evidence`` text of any version; None without a score,
    or for a document that is not evidence fairgrid wrote (nothing a page can show)."""
    try:
        return Evidence.from_json(json.loads(text)) if text else None
    except NOT_EVIDENCE:
        return None


def submission(row: dict, moves: list[tuple], scored: dict | None) -> dict:
    """A stored solve with its moves, the client block its portal sent, and its score (the
    evidence, its time and flag); ``score_error`` says why an ``unscorable`` one could not
    be scored."""
    from fairgrid.daemon.errors import ValidationError
    from fairgrid.daemon.ingest.solve import scoring_fields

    try:
        client = scoring_fields(row["raw"])[0] if row.get("raw") else None
    except ValidationError:  # a body stored before today's bounds: shown without it
        client = None
    score = None
    if scored is not None:
        score = current_evidence(json.loads(scored["evidence"]))
        score["scored_at"] = iso(scored["scored_at"])
        score["flag"] = (None if scored["flag_id"] is None else
                         {"id": scored["flag_id"], "state": scored["state"]})
    return {
        "portal": row["portal"], "submission_id": row["submission_id"],
        "status": row["status"], "score_error": row.get("score_error"),
        "tournament_id": row["tournament_id"],
        "player_id": row["player_id"], "puzzle_id": row["puzzle_id"],
        "started_at": iso(row["started_at"]), "received_at": iso(row["received_at"]),
        "committed_at": iso(row["committed_at"]), "complete": row["complete"],
        "duration_ms": row["duration_ms"], "n_moves": row["n_moves"],
        "moves": [{"t_ms": t, "cell": c, "digit": d, "kind": "note" if n else "place"}
                  for t, c, d, n in moves],
        "client": client,
        "score": score,
    }


def puzzle_shape(type_name: str, givens: str) -> tuple[int, int]:
    """(rows, cols) of a stored puzzle."""
    t = puzzle_type(type_name)
    return t.shape(t.parse(givens))


def puzzle(row: dict) -> dict:
    """A puzzle's status, solution, ratings and predicted fill order (a row of
    ``repository.puzzles.puzzle_document``). The fill-order keys keep the names of the
    published contract (``predicted_order``, ``order_median``, ``order_spread``,
    ``order_basis_runs``: "order" there is the fill order); ``box_size`` is the side of a
    Sudoku box (null for a type without boxes), also sent as ``order``, its name before,
    for older clients. Per-cell grids are ``rows`` lists of ``cols``."""
    type_name = row.get("puzzle_type") or DEFAULT_TYPE
    rows, cols = puzzle_shape(type_name, row["givens"])

    def grid(values):
        return None if values is None else [values[r * cols:(r + 1) * cols] for r in range(rows)]

    return {
        "id": row["id"], "owner": row.get("owner"), "puzzle_type": type_name,
        "status": row["status"],
        "givens": row["givens"], "rows": rows, "cols": cols,
        "box_size": row["box_size"] or None,  # stored 0 for a type without boxes
        "order": row["box_size"] or None,  # deprecated: box_size's name before
        "solution": row["solution"], "error": row["error"],
        "registered_at": iso(row["registered_at"]), "analysed_at": iso(row["analysed_at"]),
        "level": row["level"], "ratings": loads(row["ratings"]),
        "sa_median_steps": row["sa_median_steps"], "sa_capped_runs": row["sa_capped_runs"],
        "order_basis_runs": row["fill_basis_runs"],
        "predicted_order": grid(loads(row["predicted_fill_order"])),
        "order_median": grid(loads(row["fill_rank_median"])),
        "order_spread": grid(loads(row["fill_rank_spread"])),
        "order_reliability": _reliability(loads(row["ratings"])),
    }


def _reliability(ratings: dict | None) -> dict | None:
    """How far the predicted fill order can be trusted, and whether scoring uses it."""
    from fairgrid.analytics.puzzle_model import ORDER_RELIABILITY_FLOOR, PuzzleModel

    if not ratings:
        return None
    model = PuzzleModel.from_json(ratings)
    used = model.order_usable
    return {"split_half": model.order_reliability, "floor": ORDER_RELIABILITY_FLOOR,
            "used_for_scoring": used,
            "why": None if used else "the SA runs disagree on the order (split-half "
                                     "agreement below the floor): scoring leaves the order "
                                     "signal out for this puzzle"}
