"""The files around the database: private modes, durable renames, temporary names.

Every file fairgrid writes holds something private (raw solves, password and token
hashes, notification secrets, the erasure key), so the daemon and the commands that
write data run under umask 077 (``fairgrid.daemon.cli.WRITES_DATA``), whatever the shell
or container gave them, and the files an older fairgrid made readable to others are
made private at start (:func:`make_private`). A file that must appear whole (a backup, a
rewritten database) is written under a temporary name beside its final one, made
durable, and renamed (:func:`publish`): a file under a final name is complete, and a
temporary one a kill left behind is removed at the next start (:func:`remove_leftovers`).
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from contextlib import contextmanager
from pathlib import Path

PARTIAL = ".partial"       # a backup being written: fairgrid-<stamp>.duckdb.partial
REWRITING = ".rewriting"   # the database being rewritten: <db>.rewriting
RESTORING = ".restoring"   # a backup being put in place of <db>: <db>.restoring


def make_private(path: Path | str) -> None:
    """Take group and other permissions off an existing file (one made before
    :func:`private_umask`, e.g. by an older fairgrid); nothing when it does not exist."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    if mode & 0o077:
        os.chmod(path, stat.S_IMODE(mode) & ~0o077)


def wal_of(path: Path | str) -> Path:
    """DuckDB's write-ahead log of the database file ``path``."""
    return Path(str(path) + ".wal")


def fsync_dir(folder: Path | str) -> None:
    """Make a rename or unlink in ``folder`` durable."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_file(path: Path | str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(tmp: Path | str, final: Path | str) -> None:
    """Put the finished database file ``tmp`` (checkpointed: no WAL beside it) in place
    as ``final``, durably: fsync, mode 0600, rename, fsync of the folder. An old WAL of
    ``final`` goes first: replayed onto the new file it would corrupt it."""
    tmp, final = Path(tmp), Path(final)
    if wal_of(tmp).exists():
        raise OSError(f"{tmp} still has a write-ahead log beside it: not a finished copy")
    fsync_file(tmp)
    make_private(tmp)
    wal_of(final).unlink(missing_ok=True)
    os.replace(tmp, final)
    fsync_dir(final.parent)


def remove_database(path: Path | str) -> None:
    """Remove a database file and its WAL, if they exist."""
    Path(path).unlink(missing_ok=True)
    wal_of(path).unlink(missing_ok=True)


LOCK = ".lock"  # held (flock) by the process writing <name>.partial, create to rename


@contextmanager
def writing(path: Path | str):
    """Hold ``<path>.lock`` while the file ``path`` is written and published: what tells
    another process's start (:func:`remove_leftovers`) that it is no leftover, for the
    whole time from its creation to its rename (DuckDB's own lock ends at its close)."""
    lock = Path(str(path) + LOCK)
    fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        lock.unlink(missing_ok=True)
        os.close(fd)


def in_use(path: Path | str) -> bool:
    """Whether another process is writing the file ``path``: it holds ``<path>.lock``
    (:func:`writing`), or DuckDB's POSIX lock on the file itself (a copy written some
    other way). A file this process cannot open is someone else's and counts as in use.
    Not for a file this process has open: closing any descriptor of a file drops the
    process's POSIX locks."""
    for name, lock in ((str(path) + LOCK, fcntl.flock), (str(path), fcntl.lockf)):
        try:
            fd = os.open(name, os.O_RDONLY)
        except FileNotFoundError:
            continue
        except OSError:
            return True
        try:
            lock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                return True
        finally:
            os.close(fd)
    return False


def remove_leftovers(folder: Path | str, suffix: str) -> list[Path]:
    """Remove files ending in ``suffix`` (and their WALs) from ``folder``: what a killed
    backup or rewrite left; the paths removed. A file another process is writing (a
    backup of another daemon or command sharing the folder) is no leftover and stays."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    found = sorted(p for p in folder.iterdir()
                   if p.name.endswith((suffix, suffix + ".wal", suffix + LOCK)))
    owner = {p: p.with_name(p.name[:p.name.rindex(suffix) + len(suffix)]) for p in found}
    busy = {o for o in set(owner.values()) if in_use(o)}
    gone = [p for p in found if owner[p] not in busy]
    for path in gone:
        path.unlink(missing_ok=True)
    return gone
