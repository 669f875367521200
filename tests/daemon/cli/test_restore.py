"""``fairgrid restore`` puts only a whole backup in place, and checks what it wrote."""

from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import datetime, timezone

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
    from fairgrid.daemon.store.repository.lifecycle import table_counts

    db, target = tmp_path / "fairgrid.duckdb", tmp_path / "to.duckdb"
    _database(db, 4)
    out = _restore(db, "--to", target)
    assert out.returncode == 0, out.stderr
    assert "4 submissions (every table's rows checked)" in out.stdout
    other = tmp_path / "other.duckdb"
    _database(other, 2)
    con = connect(str(db))
    counts = table_counts(con)
    con.close()
    check_copy(target, counts)  # the restored file holds what the backup holds
    with pytest.raises(StoreError, match="submissions: 4 rows in the backup, 2 in the copy"):
        check_copy(other, counts)
