"""The JSON documents of the organiser API, built from repository rows. The API and the
command line's offline path (a database file and no daemon) build them the same way."""

from __future__ import annotations

import json


def iso(value):
    """A stored time as ISO 8601 text (None stays None)."""
    return value.isoformat() if value is not None else None


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


def submission(row: dict, moves: list[tuple], scored: dict | None) -> dict:
    """A stored solve with its moves and its score (the evidence, its time and flag)."""
    score = None
    if scored is not None:
        score = json.loads(scored["evidence"])
        score["scored_at"] = iso(scored["scored_at"])
        score["flag"] = (None if scored["flag_id"] is None else
                         {"id": scored["flag_id"], "state": scored["state"]})
    return {
        "portal": row["portal"], "submission_id": row["submission_id"],
        "status": row["status"], "tournament_id": row["tournament_id"],
        "player_id": row["player_id"], "puzzle_id": row["puzzle_id"],
        "started_at": iso(row["started_at"]), "received_at": iso(row["received_at"]),
        "committed_at": iso(row["committed_at"]), "complete": row["complete"],
        "duration_ms": row["duration_ms"], "n_moves": row["n_moves"],
        "moves": [{"t_ms": t, "cell": c, "digit": d, "kind": "note" if n else "place"}
                  for t, c, d, n in moves],
        "score": score,
    }
