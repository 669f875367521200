"""The records that cross into storage: a validated submission and its write outcome."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import numpy as np

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


def epoch_us(when: datetime) -> int:
    """Microseconds since the Unix epoch (exact; ``when`` carries a time zone)."""
    return (when - _EPOCH) // _MICROSECOND


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(eq=False, slots=True)  # not frozen: a frozen init cost ~2 % of a webhook's time
class SubmissionRecord:
    """A validated submission, ready to store (built by the webhook layer)."""

    portal: str
    submission_id: str
    webhook_id: str
    tournament_id: str | None
    player_id: str
    puzzle_id: str  # the internal id (puzzles.id); the portal's name until a claim sets it
    started_at: datetime
    received_at: datetime
    t_ms: np.ndarray  # int64
    cell: np.ndarray  # int16
    digit: np.ndarray  # int16
    note: np.ndarray  # bool: a pencil mark, not a placement
    complete: bool
    raw: str  # the body as received (same_content() on two of them: identical resubmission)
    # (givens, box size, solution, puzzle type) of a puzzle the portal knew no puzzle of
    # that name for: the writer claims the name (``repository.ingest.claim_puzzle``)
    new_puzzle: tuple[str, int, str, str] | None = None

    @classmethod
    def of(cls, event, puzzle_id: str, webhook_id: str, received_at: datetime,
           complete: bool, raw: str, new_puzzle: tuple[str, int, str, str] | None = None
           ) -> SubmissionRecord:
        """The record of a solve parsed by ``ingest.parse_body`` (its portal checked
        against the signature), as the webhook stores it: ``puzzle_id`` is the puzzle
        the portal's name resolved to, or that name when ``new_puzzle`` is to be
        claimed."""
        return cls(event.portal, event.submission_id, webhook_id, event.tournament_id,
                   event.player_id, puzzle_id, event.started_at, received_at,
                   event.t_ms, event.cell.astype(np.int16), event.digit.astype(np.int16),
                   event.note, complete, raw, new_puzzle)


@dataclass(frozen=True)
class WriteResult:
    # accepted | duplicate | conflict (submission id) | hook_conflict (webhook-id) |
    # puzzle_conflict (the portal's puzzle of that name has other givens)
    outcome: str
    committed_at: float  # time.monotonic() at commit
    sub_key: int | None = None  # the stored row's key (accepted only)
    puzzle_id: str | None = None  # the puzzle it was stored against (accepted only)
