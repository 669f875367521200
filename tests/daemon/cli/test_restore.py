"""``fairgrid restore`` puts only a whole backup in place, and checks what it wrote."""

from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import datetime, timezone

import duckdb
import pytest

from fairgrid.daemon.store.connection import connect
from fairgrid.daemon.testing import CMD

# a copy made the way a backup is (ATTACH + COPY FROM DATABASE), then the process is
# killed before the copy was detached: the rows are in the WAL beside it, not in the file
KILLED_COPY = """
import os, signal, sys, duckdb
con = duckdb.connect(sys.argv[1])
con.execute(f"ATTACH '{sys.argv[2]}' AS b")
con.execute("COPY FROM DATABASE fairgrid TO b")
os.kill(os.getpid(), signal.SIGKILL)
"""


def _database(path, submissions: int) -> None:
    """A fairgrid database with ``submissions`` rows."""
    con = connect(str(path))
    now = datetime.now(timezone.utc)
    for k in range(1, submissions + 1):
        con.execute("INSERT INTO submissions (sub_key, portal, submission_id, webhook_id, "
                    "player_id, puzzle_id, started_at, received_at, committed_at, n_moves, "
                    "duration_ms, complete, status, raw) VALUES (?, 'demo', ?, ?, 'p', 'x', "
                    "?, ?, ?, 0, 0, false, 'scored', '{}')", [k, f"s-{k}", f"h-{k}", now,
                                                             now, now])
    con.execute("UPDATE moves_through SET through = ?", [submissions])  # none has moves
    con.close()


def _restore(*args):
    return subprocess.run([*CMD, "restore", *map(str, args)], capture_output=True,
                          text=True, timeout=120)


def test_a_backup_with_a_wal_beside_it_is_refused(tmp_path):
    db, backup, target = (tmp_path / n for n in ("fairgrid.duckdb", "cut.duckdb", "to.duckdb"))
    _database(db, 3)
    killed = subprocess.run([sys.executable, "-c", KILLED_COPY, str(db), str(backup)])
    assert killed.returncode == -9
    assert (tmp_path / "cut.duckdb.wal").exists()  # the state the kill left
    out = _restore(backup, "--to", target)
    assert out.returncode == 2, out
    assert len(out.stderr.splitlines()) == 1 and "write-ahead log" in out.stderr
    assert not target.exists()


def test_a_partial_backup_is_refused(tmp_path):
    db, target = tmp_path / "fairgrid.duckdb", tmp_path / "to.duckdb"
    _database(db, 2)
    partial = tmp_path / "fairgrid-20260101T000000000000Z.duckdb.partial"
    shutil.copyfile(db, partial)
    out = _restore(partial, "--to", target)
    assert out.returncode == 2 and "cut short" in out.stderr, out
    assert not target.exists()


def test_a_restore_checks_every_tables_rows_in_what_it_wrote(tmp_path):
    from fairgrid.daemon.store import StoreError
    from fairgrid.daemon.store.backups import check_copy
    from fairgrid.daemon.store.repository.lifecycle import table_digests

    db, target = tmp_path / "fairgrid.duckdb", tmp_path / "to.duckdb"
    _database(db, 4)
    out = _restore(db, "--to", target)
    assert out.returncode == 0, out.stderr
    assert "4 submissions (every row read back and compared)" in out.stdout
    other = tmp_path / "other.duckdb"
    _database(other, 2)
    con = connect(str(db))
    digests = table_digests(con)
    con.close()
    check_copy(target, digests)  # the restored file holds what the backup holds
    with pytest.raises(StoreError, match="submissions: 4 rows in the backup, 2 in the copy"):
        check_copy(other, digests)
    same_count = tmp_path / "same.duckdb"
    _database(same_count, 4)  # as many rows, other values (its own timestamps)
    with pytest.raises(StoreError, match=r"submissions: 4 rows .* \(other values\)"):
        check_copy(same_count, digests)


def test_a_backup_cut_short_is_refused_and_the_target_kept(tmp_path):
    """DuckDB counts rows from its metadata, so a backup whose end was cut off (a copy
    interrupted, a full disk) still counts every row; the restore reads every row of
    the backup and refuses it, and the database it was to replace stays as it was."""
    from fairgrid.daemon.store.backups import write_backup
    from fairgrid.daemon.store.repository.lifecycle import table_counts, table_digests

    db, backup, target = (tmp_path / n for n in ("fairgrid.duckdb", "bk.duckdb", "to.duckdb"))
    con = connect(str(db))
    now = datetime.now(timezone.utc)
    con.execute("INSERT INTO submissions (sub_key, portal, submission_id, webhook_id, "
                "player_id, puzzle_id, started_at, received_at, committed_at, n_moves, "
                "duration_ms, complete, status, raw) SELECT i, 'demo', 's-' || i, "
                "'h-' || i, 'p', 'x', ?, ?, ?, 0, 0, false, 'scored', "
                "repeat(md5(i::VARCHAR), 40) FROM range(1, 3001) t(i)", [now, now, now])
    con.execute("UPDATE moves_through SET through = 3000")
    write_backup(con.cursor(), backup)
    con.close()
    _database(target, 2)
    before = target.read_bytes()
    data = backup.read_bytes()
    cut = tmp_path / "cut.duckdb"
    cut.write_bytes(data[:len(data) // 2])
    with duckdb.connect(str(cut), read_only=True) as c:  # what fooled the old check
        assert table_counts(c)["submissions"] == 3000
        with pytest.raises(duckdb.Error):
            table_digests(c)
    out = _restore(cut, "--to", target, "--force")
    assert out.returncode == 2, out
    assert len(out.stderr.splitlines()) == 1 and "not a whole fairgrid backup" in out.stderr
    assert target.read_bytes() == before
    assert not (tmp_path / "to.duckdb.restoring").exists()
    out = _restore(backup, "--to", target, "--force")  # the whole one goes in
    assert out.returncode == 0 and "3000 submissions" in out.stdout, out


@pytest.mark.parametrize("what", ["folder", "empty", "text", "damaged"])
def test_a_target_that_does_not_open_is_named_and_never_replaced(tmp_path, what):
    """Only a lock means a daemon holds the target; a damaged database (whose checksum
    error names a "block") is kept for whoever wants to recover it."""
    db, target = tmp_path / "fairgrid.duckdb", tmp_path / "to.duckdb"
    _database(db, 1)
    if what == "folder":
        target.mkdir()
    elif what == "damaged":
        _database(target, 3)
        data = bytearray(target.read_bytes())
        data[12288 + 8:12288 + 72] = b"\x5a" * 64  # inside its first data block
        target.write_bytes(bytes(data))
    else:
        target.write_text("" if what == "empty" else "my notes\n")
    before = None if what == "folder" else target.read_bytes()
    out = _restore(db, "--to", target, "--force")
    assert out.returncode == 2, out
    assert len(out.stderr.splitlines()) == 1 and "in use" not in out.stderr, out.stderr
    assert ("is a folder" if what == "folder"
            else "does not open as a DuckDB database") in out.stderr
    if before is not None:
        assert target.read_bytes() == before


def test_a_duckdb_file_that_is_no_fairgrid_backup_is_named(tmp_path):
    """A DuckDB file without fairgrid's tables: refused saying so, where DuckDB's
    replacement scan once read a Python function of the missing table's name and the
    error named it."""
    blank, target = tmp_path / "blank.duckdb", tmp_path / "to.duckdb"
    duckdb.connect(str(blank)).close()
    out = _restore(blank, "--to", target)
    assert out.returncode == 2 and len(out.stderr.splitlines()) == 1, out
    assert "no fairgrid backup" in out.stderr and "function" not in out.stderr
    assert not target.exists()


def test_a_newer_fairgrids_database_is_refused_by_restore_and_by_the_daemon(tmp_path):
    """A backup a newer fairgrid wrote (a schema version this code does not know): its
    writes would ignore or break what that version stores, so neither restore nor the
    daemon takes it, each saying so in one line."""
    from fairgrid.daemon.store import StoreError
    from fairgrid.daemon.store.connection import migrations

    newer, target = tmp_path / "newer.duckdb", tmp_path / "to.duckdb"
    _database(newer, 2)
    ours = migrations()[-1][0]
    con = duckdb.connect(str(newer))
    con.execute("INSERT INTO schema_version VALUES (?, now())", [ours + 1])
    con.close()
    out = _restore(newer, "--to", target)
    assert out.returncode == 2 and len(out.stderr.splitlines()) == 1, out
    assert f"schema version {ours + 1}, newer than this fairgrid's {ours}" in out.stderr
    assert not target.exists() and not (tmp_path / "to.duckdb.restoring").exists()
    with pytest.raises(StoreError, match=f"newer than this fairgrid's {ours}"):
        connect(str(newer))


def test_a_restore_into_a_full_folder_names_it_and_leaves_nothing(tmp_path, monkeypatch):
    """The copy fails part-way (a full disk): the error names the target's folder, not
    the backup, and the half copy is gone; one a kill left is removed at the next start."""
    from fairgrid.daemon.store import StoreError, backups
    from fairgrid.daemon.store.database import Store

    db, target = tmp_path / "fairgrid.duckdb", tmp_path / "out" / "to.duckdb"
    target.parent.mkdir()
    _database(db, 2)

    def full(src, dst):
        with open(dst, "wb") as fh:
            fh.write(b"half a copy")
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(backups.shutil, "copyfile", full)
    with pytest.raises(StoreError, match=f"cannot copy the backup into {target.parent}: "
                                         "No space left on device"):
        backups.restore(db, target)
    assert list(target.parent.iterdir()) == []
    # a kill mid-copy leaves the half copy; the daemon's next start removes it
    (tmp_path / "fairgrid.duckdb.restoring").write_bytes(b"half a copy")
    Store(str(db)).close()
    assert not (tmp_path / "fairgrid.duckdb.restoring").exists()


def test_a_first_schema_file_restores_beside_a_list_of_the_erased(tmp_path):
    """A file of the first schema (no skills table yet: a stopped database's file copied
    as a backup, long ago) restores; the people the list beside the target names are
    counted against what it can read, never a refusal of the file."""
    from fairgrid.daemon.store.backups import restore
    from fairgrid.daemon.store.connection import migrations

    src = tmp_path / "old.duckdb"
    con = duckdb.connect(str(src))
    con.execute(dict(migrations())[1])
    con.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, "
                "applied_at TIMESTAMPTZ NOT NULL)")
    con.execute("INSERT INTO schema_version VALUES (1, now())")
    con.close()
    target = tmp_path / "fairgrid.duckdb"
    (tmp_path / "fairgrid.duckdb.erased").write_text("ab" * 32 + "\n")
    (tmp_path / "fairgrid.duckdb.erasure-key").write_text("cd" * 32 + "\n")
    done = restore(src, target)
    assert done.version == 1 and target.exists()
    assert done.erased_again == 0   # the one it names never solved anything in this file
