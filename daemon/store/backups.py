"""Backups that are whole or absent, and a restore that puts only a whole one in place.

A backup is written under ``<name>.partial`` beside its final name, closed checkpointed
(no WAL), fsynced and renamed: a file named ``fairgrid-<stamp>.duckdb`` is a complete
backup, and what a kill leaves is a ``.partial`` file, removed at the daemon's next start
(:func:`remove_partials`; not one another process is still writing) and refused by
:func:`restore`.
"""

from __future__ import annotations

import errno
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb

from . import files
from .connection import read_only, refuse_newer
from .erasure import checked_key, key_path, list_path, read_list, undone
from .errors import StoreError, is_lock_error
from .records import utc_now
from .repository import lifecycle as sql


def partial_path(target: Path) -> Path:
    return target.with_name(target.name + files.PARTIAL)


class BackupFailed(StoreError):
    """The backup's own file could not be written (its folder full, refused): the
    database is fine; ``no_space`` when the folder's disk is full."""

    def __init__(self, message: str, no_space: bool):
        super().__init__(message)
        self.no_space = no_space


def write_backup(cur, target: Path) -> dict:
    """Copy the database, as of one moment, into the new file ``target`` (through a
    temporary name: see the module); counts of the main tables in it. On failure
    nothing is left under either name."""
    partial = partial_path(target)
    try:
        with files.writing(partial):
            counts = sql.copy_database(cur, str(partial), utc_now())
            files.publish(partial, target)
    except (duckdb.IOException, OSError) as exc:  # writing the backup's own file
        files.remove_database(partial)
        why = (exc.strerror if isinstance(exc, OSError) and exc.strerror
               else str(exc).splitlines()[0])
        no_space = (getattr(exc, "errno", None) == errno.ENOSPC
                    or "No space left on device" in str(exc))
        raise BackupFailed(f"the backup into {target.parent} failed: {why}"
                           + (" (free space there, or set storage.backup_dir to a folder "
                              "with room)" if no_space else ""), no_space) from exc
    except duckdb.Error as exc:  # reading the database: its trouble, not the folder's
        files.remove_database(partial)
        raise StoreError(f"the backup to {target} failed: {exc}") from exc
    except BaseException:
        files.remove_database(partial)
        raise
    return counts


def remove_partials(folder: Path) -> list[Path]:
    """Remove the ``.partial`` files (and their WALs) killed backups left in ``folder``."""
    return files.remove_leftovers(folder, files.PARTIAL)


@dataclass(frozen=True)
class Restored:
    version: int | None      # the backup's schema version
    counts: dict[str, int]   # rows of every table, found again in the copy
    erased_again: int        # people erased after the backup: the next start erases them


def restore(source: Path, target: Path, force: bool = False) -> Restored:
    """Put the backup ``source`` in place of the database file ``target`` (no daemon may
    hold it; an existing one only with ``force``): only a whole backup (no WAL beside
    it, not a ``.partial``), and only once a copy beside ``target`` is checked to hold
    every row of the backup. StoreError naming what is wrong, ``target`` left as it was."""
    if source.name.endswith(files.PARTIAL):
        raise StoreError(f"{source} is a backup a stop cut short, not a backup")
    if files.wal_of(source).exists():
        raise StoreError(f"{source} has a write-ahead log beside it "
                         f"({files.wal_of(source).name}): a backup cut short or a database "
                         "still open, not a backup")
    try:
        with read_only(source, replacements=False) as con:
            version = sql.schema_version(con)
            digests = sql.table_digests(con)  # reads every row: a file cut short fails
            erased = sql.erased_digests(con)
            made_with = sql.erasure_fingerprint(con)
    except duckdb.CatalogException:
        raise StoreError(f"{source} is a DuckDB file but no fairgrid backup (it lacks "
                         "fairgrid's tables)") from None
    except (StoreError, duckdb.Error) as exc:
        raise StoreError(f"{source} is not a whole fairgrid backup: {exc}".splitlines()[0]
                         ) from None
    refuse_newer(version, str(source), "restore")
    if target.is_dir():
        raise StoreError(f"{target} is a folder, not a database file")
    _same_erasure_key(erased, made_with, target)
    again = _erased_again(source, target, erased)
    if target.exists():
        try:  # a running daemon holds the file's lock
            duckdb.connect(str(target)).close()
        except duckdb.Error as exc:
            if is_lock_error(exc):
                raise StoreError(f"{target} is in use: stop the daemon first") from None
            # never replace a file that does not open, --force or not: it may be a
            # damaged database someone wants to recover, or no database at all
            raise StoreError(f"{target} exists and does not open as a DuckDB database "
                             f"({str(exc).splitlines()[0]}): move it aside (keep it), "
                             "then restore") from None
        if not force:
            raise StoreError(f"{target} exists: add --force to replace it (keep a copy first)")
    tmp = target.with_name(target.name + files.RESTORING)
    files.remove_database(tmp)
    try:
        try:
            shutil.copyfile(source, tmp)
            os.chmod(tmp, 0o600)  # it holds password hashes and notification secrets
        except OSError as exc:  # a full disk, say: it is the target's folder that failed
            raise StoreError(f"cannot copy the backup into {target.parent}: "
                             f"{exc.strerror or exc}") from None
        check_copy(tmp, digests)
        files.publish(tmp, target)  # the old file's WAL goes: not replayed onto this one
    finally:
        files.remove_database(tmp)
    return Restored(version, {t: n for t, (n, _) in digests.items()}, again)


def _erased_again(source: Path, target: Path, erased: set[str]) -> int:
    """How many people the list beside ``target`` names as erased after the backup
    ``source`` was taken and the backup holds: the next start erases them again. Where
    the list cannot be matched to the backup's players (no key to match it with, a
    backup older than the players' tables), everyone it names that the backup does not
    list as erased: the start says what is wrong."""
    def held() -> list[tuple[str, str]]:
        with read_only(source, replacements=False) as con:
            return sql.players(con)
    try:
        return len(undone(str(target), erased, held))
    except (StoreError, OSError, duckdb.Error):
        try:
            return len(read_list(list_path(str(target))) - erased)
        except OSError:
            return 0


def _same_erasure_key(erased: set[str], made_with: str | None, target: Path) -> None:
    """StoreError, before anything is replaced, when the erasure key beside ``target``
    cannot read the backup's list of erased people: the daemon would refuse to start on
    the restored file, and without the key their solves would be accepted again."""
    if not erased:
        return
    try:
        checked_key(key_path(str(target)), len(erased), erased, made_with)
    except OSError as exc:
        raise StoreError(f"the erasure key beside {target} cannot be read: "
                         f"{exc.strerror or exc}") from None


def check_copy(copy: Path, digests: dict[str, tuple[int, int]]) -> None:
    """StoreError unless the file ``copy`` holds the rows ``digests`` describes
    (``table_digests``: every table's rows and the digest of their values)."""
    try:
        with read_only(copy, replacements=False) as con:
            got = sql.table_digests(con)
    except (StoreError, duckdb.Error) as exc:
        raise StoreError(f"the copy {copy} does not read back: {exc}".splitlines()[0]
                         ) from None
    wrong = [f"{t}: {n} rows in the backup, "
             f"{got[t][0] if t in got else 'no table'} in the copy"
             + (" (other values)" if t in got and got[t][0] == n else "")
             for t, (n, _) in digests.items() if got.get(t) != digests[t]]
    if wrong:
        raise StoreError(f"the copy does not match the backup ({'; '.join(wrong[:3])}); "
                         "nothing was replaced")
