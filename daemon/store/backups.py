"""Backups that are whole or absent, and the restore's checks.

A backup is written under ``<name>.partial`` beside its final name, closed checkpointed
(no WAL), fsynced and renamed: a file named ``fairgrid-<stamp>.duckdb`` is a complete
backup, and what a kill leaves is a ``.partial`` file, removed at the daemon's next start
(:func:`remove_partials`) and refused by ``fairgrid restore``.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from . import files
from .errors import StoreError
from .records import utc_now
from .repository import lifecycle as sql


def partial_path(target: Path) -> Path:
    return target.with_name(target.name + files.PARTIAL)


def write_backup(cur, target: Path) -> dict:
    """Copy the database, as of one moment, into the new file ``target`` (through a
    temporary name: see the module); counts of the main tables in it. On failure
    nothing is left under either name."""
    partial = partial_path(target)
    try:
        counts = sql.copy_database(cur, str(partial), utc_now())
        files.publish(partial, target)
    except (duckdb.Error, OSError) as exc:
        files.remove_database(partial)
        raise StoreError(f"the backup to {target} failed: {exc}") from exc
    except BaseException:
        files.remove_database(partial)
        raise
    return counts


def remove_partials(folder: Path) -> list[Path]:
    """Remove the ``.partial`` files (and their WALs) killed backups left in ``folder``."""
    return files.remove_leftovers(folder, files.PARTIAL)
