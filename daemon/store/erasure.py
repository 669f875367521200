"""Who was erased, remembered without naming them, so that their solves are refused.

An erased person is an HMAC-SHA256 of portal and player id under a key of the daemon's,
generated at the first start into ``<database>.erasure-key`` (mode 0600) and never
written into the database or a backup: whoever holds the file cannot test candidate ids
against the list. The digests live in two places:

* the table ``erased_players``, written in the erasure's own transaction (so a backup
  carries the erasures made before it);
* the file ``<database>.erased`` beside the database, appended and fsynced before the
  erasure's transaction: a backup restored over the database does not carry the
  erasures made after it, and this file, which a restore leaves alone, does.

At start the two are merged (:meth:`ErasedPlayers.open`), and the store erases again
any listed person the database still holds (``Store``). The webhook asks
:meth:`ErasedPlayers.check` before it queues a solve: a set lookup, and one HMAC while
the set is not empty.
"""

from __future__ import annotations

import errno
import hmac
import os
import secrets
import stat
import threading
from pathlib import Path
from typing import Callable

from ..errors import ValidationError

from .errors import StoreError
from .files import fsync_dir, make_private

KEY_SUFFIX = ".erasure-key"
LIST_SUFFIX = ".erased"
GONE = 410


def key_path(db_path: str) -> Path:
    return Path(db_path + KEY_SUFFIX)


def list_path(db_path: str) -> Path:
    return Path(db_path + LIST_SUFFIX)


class ErasedPlayers:
    """The erased people of one database: their digests in memory and in the list file."""

    def __init__(self, key: bytes, digests: set[str], path: Path):
        self._key = key
        self.fingerprint = fingerprint(key)
        self._digests = set(digests)
        self._path = path
        self._lock = threading.Lock()  # appends to the list file, one at a time
        # listed in the file but not in the database: erasures a restore took back
        self.only_in_file: set[str] = set()

    @classmethod
    def open(cls, db_path: str, in_database: set[str],
             made_with: str | None = None) -> "ErasedPlayers":
        """The key (made on first use) and every digest of the list file and of
        ``in_database``; the file is brought up to the union. StoreError when digests
        exist but the key does not, or when the database's digests were made with
        another key (``made_with``: that key's :func:`fingerprint`, as the database
        stores it): no one would match them, and an erased person's solves would be
        accepted again."""
        try:
            return cls._open(db_path, in_database, made_with)
        except OSError as exc:  # no room for a new key, a file root made unreadable
            raise StoreError(f"the erasure key or list beside {db_path} cannot be used: "
                             f"{exc.strerror or exc}: {exc.filename}") from None

    @classmethod
    def _open(cls, db_path: str, in_database: set[str],
              made_with: str | None) -> "ErasedPlayers":
        kpath, lpath = key_path(db_path), list_path(db_path)
        in_file = read_list(lpath)
        if not kpath.exists() and not (in_file or in_database):
            _create_key(kpath)
        key = checked_key(kpath, len(in_file | in_database), in_database, made_with)
        make_private(kpath)
        make_private(lpath)
        out = cls(key, in_file | in_database, lpath)
        missing = sorted(in_database - in_file)
        if missing:
            out._append(missing)
        out.only_in_file = in_file - in_database
        return out

    def digest(self, portal: str, player_id: str) -> str:
        return _digest(self._key, portal, player_id)

    def __len__(self) -> int:
        return len(self._digests)

    def __contains__(self, digest: str) -> bool:
        return digest in self._digests

    def check(self, portal: str, player_id: str) -> None:
        """Refuse (410, field ``player_id``) a solve of an erased person."""
        if self._digests and self.digest(portal, player_id) in self._digests:
            raise ValidationError("player_id", "this player was erased from fairgrid at "
                                  "the portal's request: their solves are no longer "
                                  "accepted", GONE)

    @property
    def file(self) -> Path:
        """The file the list is kept in."""
        return self._path

    def remember(self, digest: str) -> None:
        """List ``digest`` durably (the file, fsynced), then in memory: from here on the
        person's solves are refused, here and after any restart or restore."""
        if digest not in self._digests:
            self._append([digest])
        self._digests.add(digest)

    def _append(self, digests: list[str]) -> None:
        with self._lock:
            new = not self._path.exists()
            fd = os.open(self._path, os.O_RDWR | os.O_APPEND | os.O_CREAT,
                         stat.S_IRUSR | stat.S_IWUSR)
            try:
                size = os.fstat(fd).st_size
                # a line a crash tore stays a line of its own, not the start of this one
                torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
                os.write(fd, ("\n" if torn else "").encode()
                         + "".join(d + "\n" for d in digests).encode())
                os.fsync(fd)
            finally:
                os.close(fd)
            if new:
                fsync_dir(self._path.parent)


def fingerprint(key: bytes) -> str:
    """What tells one erasure key from another, and nothing about the ids it digests."""
    return hmac.digest(key, b"fairgrid erasure key", "sha256").hex()[:32]


def _digest(key: bytes, portal: str, player_id: str) -> str:
    return hmac.digest(key, f"{portal}\x1f{player_id}".encode(), "sha256").hex()


def undone(db_path: str, in_database: set[str],
           players: Callable[[], list[tuple[str, str]]]) -> list[tuple[str, str]]:
    """Of ``players()`` (read only when the list file names someone the database does
    not: every offline read asks), those the list file names as erased and the database
    does not remember (erasures a restore took back: the next start erases them again).
    Reads only; nothing is created or appended, for what reads the file without a
    daemon."""
    only = read_list(list_path(db_path)) - in_database
    if not only:
        return []
    key = checked_key(key_path(db_path), len(only), set(), None)
    return [(portal, player) for portal, player in players()
            if _digest(key, portal, player) in only]


def _create_key(path: Path) -> None:
    """A new key, whole or not at all: written and fsynced under a name of its own, then
    linked into place (never over a key another process made meanwhile). A disk with no
    room leaves no key, not an empty one that would refuse every later start."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = (secrets.token_hex(32) + "\n").encode()
    part = path.with_name(f"{path.name}.{os.getpid()}.new")
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, stat.S_IRUSR | stat.S_IWUSR)
    try:
        try:
            _write_whole(fd, text, part)
        finally:
            os.close(fd)
        try:
            os.link(part, path)
        except FileExistsError:
            pass    # another process made it first: that one is the key
        except OSError as exc:
            if exc.errno not in NO_LINKS:
                raise
            _create_in_place(path, text)
    finally:
        part.unlink(missing_ok=True)
    fsync_dir(path.parent)


# what link() answers on file systems without hard links (vfat, exFAT, some CIFS/FUSE)
NO_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV,
                      errno.ENOSYS})


def _create_in_place(path: Path, text: bytes) -> None:
    """The key written where it belongs (no hard links here), removed again when the
    write falls short."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
    try:
        _write_whole(fd, text, path)
    except BaseException:
        os.close(fd)
        path.unlink(missing_ok=True)
        raise
    os.close(fd)


def _write_whole(fd: int, text: bytes, path: Path) -> None:
    """``text`` written to ``fd`` (the key file ``path``) and fsynced; ENOSPC when the
    write falls short (no room left)."""
    if os.write(fd, text) != len(text):
        raise OSError(errno.ENOSPC, "the erasure key was written short", str(path))
    os.fsync(fd)


def checked_key(kpath: Path, remembered: int, in_database: set[str],
                made_with: str | None) -> bytes:
    """The erasure key at ``kpath``, which must read the ``remembered`` erased people
    (``in_database`` of them digested with the key whose fingerprint is ``made_with``):
    StoreError when it is missing while any are remembered, or is another key. Without
    the right key their solves would be accepted again."""
    if not kpath.exists() and remembered:
        raise StoreError(
            f"the erasure key {kpath} is missing, but {remembered} erased player(s) are "
            "remembered: put the key back from where the database came from (without it "
            "their solves would be accepted again)")
    key = read_key(kpath)
    if in_database and made_with is not None and made_with != fingerprint(key):
        raise StoreError(
            f"the erasure key {kpath} is not the key the database's {len(in_database)} "
            "erasure(s) were made with: put back the key from where the database came "
            "from (with this one their solves would be accepted again)")
    return key


def read_key(path: Path) -> bytes:
    text = path.read_text(encoding="ascii", errors="replace").strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) < 32:
        raise StoreError(f"the erasure key {path} is not 64 hexadecimal digits")
    return key


def read_list(path: Path) -> set[str]:
    """The digests of the list file; a torn last line (a crash mid-append) is skipped:
    its erasure was never committed."""
    try:
        lines = path.read_text(encoding="ascii", errors="replace").splitlines()
    except FileNotFoundError:
        return set()
    return {line for line in lines if len(line) == 64
            and all(c in "0123456789abcdef" for c in line)}
