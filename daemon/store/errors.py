"""What storage raises: the web layer turns each into a JSON 503."""

from __future__ import annotations


class StoreError(RuntimeError):
    """The database failed (disk, lock, corruption): the request can be retried later."""


class StoreLockedError(StoreError):
    """Another process holds the database file."""


class QueueFull(StoreError):
    """The write queue is full: answer 503 with Retry-After."""
