"""What storage raises: the web layer turns each into a JSON 503."""

from __future__ import annotations


class StoreError(RuntimeError):
    """The database failed (disk, lock, corruption): the request can be retried later."""


class StoreLockedError(StoreError):
    """Another process holds the database file."""


class QueueFull(StoreError):
    """The write queue is full: answer 503 with Retry-After."""


def is_lock_error(exc: BaseException) -> bool:
    """Whether DuckDB refused to open a file because another process holds it ("Could
    not set lock on file ...: Conflicting lock is held"); not any message with "lock" in
    it: a damaged file's "Corrupt database file: ... in block ..." has one too."""
    text = str(exc).lower()
    return "could not set lock" in text or "conflicting lock" in text
