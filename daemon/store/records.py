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
    puzzle_id: str
    started_at: datetime
    received_at: datetime
    t_ms: np.ndarray  # int64
    cell: np.ndarray  # int16
    digit: np.ndarray  # int16
    note: np.ndarray  # bool: a pencil mark, not a placement
    complete: bool
    raw: str  # the body as received (same_content() on two of them: identical resubmission)
    # (givens, order, solution, puzzle type) of a puzzle to register with the solve
    new_puzzle: tuple[str, int, str, str] | None = None

    @classmethod
    def of(cls, event, webhook_id: str, received_at: datetime, complete: bool, raw: str,
           new_puzzle: tuple[str, int, str, str] | None = None) -> SubmissionRecord:
        """The record of a solve parsed by ``ingest.parse_body`` (its portal checked
        against the signature), as the webhook stores it."""
        return cls(event.portal, event.submission_id, webhook_id, event.tournament_id,
                   event.player_id, event.puzzle_id, event.started_at, received_at,
                   event.t_ms, event.cell.astype(np.int16), event.digit.astype(np.int16),
                   event.note, complete, raw, new_puzzle)


@dataclass(frozen=True)
class WriteResult:
    outcome: str  # accepted | duplicate | conflict (submission id) | hook_conflict (webhook-id)
    committed_at: float  # time.monotonic() at commit
    sub_key: int | None = None  # the stored row's key (accepted only)
