"""Evidence from the portal page's own signals (the webhook's ``client`` block).

Optional evidence: a solve without a block, or with an unversioned one (before the
recorder) has none either way, except ``paste_count``, read as portals always sent it.

``paste``  paste events into the grid (version 1: the recorded pastes).
``away``   bits of the cells nothing proved (``deduction.Deduction.unproven``: right
           first time, no technique up to the puzzle's hardest step, nor the player's
           own marks, proved them) placed within :data:`WINDOW_MS` of coming back to the
           page after at least :data:`AWAY_MIN_MS` away (hidden, or shown without focus).
           A person who looks up the answer elsewhere comes back and types it; an honest
           person switches tabs too, but what they place on coming back is what the board
           shows them, so the signal is judged as a count of bits against a Poisson null
           (``calibration.GUARD``) and is 0 for a solve whose block shows no absence.
           Computed only where the technique ladder judges placements (9×9 Sudoku).
"""

from __future__ import annotations

import math

import numpy as np

AWAY_MIN_MS = 5_000     # shorter absences are a glance at another window
WINDOW_MS = 30_000      # placements this soon after coming back count


def version(client: dict | None) -> int | None:
    """The block's version (None: no block, or an unversioned one). JSON has one number
    type: ``1.0`` is version 1, as ingestion took it."""
    v = client.get("version") if client else None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
            or v != int(v):
        return None
    return int(v)


def absences(client: dict | None) -> np.ndarray:
    """(start, end) ms of the times the player was away for :data:`AWAY_MIN_MS` or more
    (hidden and blur intervals merged), sorted; empty without a version 1 block."""
    if version(client) != 1:
        return np.empty((0, 2), dtype=np.int64)
    spans = sorted((int(x["t_ms"]), int(x["t_ms"]) + int(x["ms"]))
                   for x in (client.get("hidden") or []) + (client.get("blur") or []))
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out = np.asarray([m for m in merged if m[1] - m[0] >= AWAY_MIN_MS], dtype=np.int64)
    return out.reshape(-1, 2)


def after_return(times_ms: np.ndarray, away: np.ndarray) -> np.ndarray:
    """Per placement time, the index of the absence it came just after (within
    :data:`WINDOW_MS` of its end), or -1."""
    times_ms = np.asarray(times_ms, dtype=np.int64)
    if away.size == 0:
        return np.full(times_ms.size, -1)
    k = np.searchsorted(away[:, 1], times_ms, side="right") - 1
    ok = (k >= 0) & (times_ms - away[np.maximum(k, 0), 1] <= WINDOW_MS)
    return np.where(ok, k, -1)


def paste_count(client: dict | None) -> float | None:
    if version(client) == 1 and isinstance(client.get("pastes"), list):
        return float(len(client["pastes"]))
    if client and isinstance(client.get("paste_count"), (int, float)) \
            and not isinstance(client["paste_count"], bool):
        return float(client["paste_count"])
    return None


def away_mask(client: dict | None, rep) -> np.ndarray | None:
    """The placements ``away`` counts (see the module doc), or None when it says nothing."""
    found = rep.deduction
    if version(client) != 1 or found is None:
        return None
    return found.unproven & (after_return(rep.times_ms, absences(client)) >= 0)


def client_signals(client: dict | None, rep) -> dict[str, float]:
    """``paste`` and ``away`` where the block shows one. A version 1 block's signals are
    evidence only when present: a player who never pasted, or came back to place what the
    board proved, gets no signal rather than a p of about 1, which would dilute the
    other kinds of evidence in the verdict's combination. An unversioned block's
    ``paste_count`` is read as portals always sent it, 0 included."""
    out = {}
    pastes = paste_count(client)
    if pastes is not None and (pastes > 0 or version(client) is None):
        out["paste"] = pastes
    mask = away_mask(client, rep)
    if mask is not None and mask.any():
        out["away"] = rep.deduction.bits(mask)
    return out


def away_words(value: float, centre: float, client: dict | None, rep) -> str:
    """The ``away`` signal in an organiser's words."""
    away = absences(client)
    which = np.flatnonzero(away_mask(client, rep))
    seconds = (away[:, 1] - away[:, 0]).sum() / 1000
    head = (f"the player left the page {len(away)} time{'s' if len(away) != 1 else ''} "
            f"for 5 s or more ({seconds:.0f} s in all)")
    k = int(which[0])
    gone = away[after_return(rep.times_ms[k:k + 1], away)[0]]
    return (f"{head}, and on coming back placed {which.size} cell"
            f"{'s' if which.size != 1 else ''} nothing on the board proved ({value:.1f} "
            f"bits; honest solves are allowed about {centre:.1f}); the first, placement "
            f"{k + 1}, came {(rep.times_ms[k] - gone[1]) / 1000:.0f} s after "
            f"{(gone[1] - gone[0]) / 1000:.0f} s away")
