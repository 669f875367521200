"""What the nightly job and the player verdicts need from a database, whoever owns it:
repository reads and one-transaction writes (the daemon's store, or a connection of a
process that runs alone)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..store.connection import in_transaction


@dataclass
class NightlyDB:
    """What the job needs from a database: repository reads and one-transaction writes."""

    read: Callable          # (fn, *args) -> fn(cursor, *args)
    write: Callable         # (fn, *args) -> fn(con, *args), in one transaction


def direct_db(con) -> NightlyDB:
    """A NightlyDB on a DuckDB connection owned by this process (no daemon runs)."""
    return NightlyDB(lambda fn, *args: fn(con, *args),
                     lambda fn, *args: in_transaction(con, fn, *args))


def store_db(store) -> NightlyDB:
    """A NightlyDB on the daemon's store (its reader and its writer thread)."""
    return NightlyDB(store.read, lambda fn, *args: store.write(fn, *args).result())
