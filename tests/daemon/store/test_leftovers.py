"""What a start clears from a backup folder: a killed backup's ``.partial`` file (its
WAL and lock file), never one that another process sharing the folder is still writing,
from its creation to its rename."""

from __future__ import annotations

import subprocess
import sys

import duckdb

from fairgrid.daemon.store.backups import remove_partials

# a second process writing a backup under its temporary name as any DuckDB copy does
# (no lock file: DuckDB's own lock on the file it attached is what says it is in use)
ATTACHED = """
import sys, duckdb
c = duckdb.connect()
c.execute(f"ATTACH '{sys.argv[1]}' AS b")
c.execute("CREATE TABLE b.t AS SELECT 1 AS x")
print("writing", flush=True)
sys.stdin.readline()
c.execute("DETACH b")
"""

# a daemon's or an offline `fairgrid backup`'s backup, paused after the copy closed
# (DuckDB's lock gone), in the fsync before the rename: seconds for a big file
PUBLISHING = r"""
import sys
from pathlib import Path
from fairgrid.daemon.store import backups, files
from fairgrid.daemon.store.connection import connect
con = connect(sys.argv[1])
slow = files.fsync_file
def fsync_file(path):
    print("publishing", flush=True)
    sys.stdin.readline()
    slow(path)
files.fsync_file = fsync_file
backups.write_backup(con.cursor(), Path(sys.argv[2]))
print("done", flush=True)
"""


def _writer(code: str, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code, *map(str, args)], text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def test_a_backup_another_process_has_open_stays(tmp_path):
    killed = tmp_path / "fairgrid-20260101T000000000000Z.duckdb.partial"
    duckdb.connect(str(killed)).close()
    for end in (".wal", ".lock"):    # what a kill mid-copy leaves beside it
        (tmp_path / (killed.name + end)).write_bytes(b"")
    live = tmp_path / "fairgrid-20260102T000000000000Z.duckdb.partial"
    writer = _writer(ATTACHED, live)
    try:
        assert writer.stdout.readline().strip() == "writing"
        live_wal = tmp_path / (live.name + ".wal")
        had_wal = live_wal.exists()
        gone = remove_partials(tmp_path)
        assert sorted(p.name for p in gone) == sorted(
            killed.name + end for end in ("", ".lock", ".wal"))
        assert live.exists() and live_wal.exists() == had_wal
    finally:
        writer.communicate("\n", timeout=60)
    assert writer.returncode == 0
    # once its writer is gone (here: finished without the rename), it is a leftover
    assert live in remove_partials(tmp_path) and not live.exists()


def test_a_backup_closed_but_not_yet_renamed_stays(tmp_path):
    folder = tmp_path / "backups"
    folder.mkdir()
    target = folder / "fairgrid-20260102T000000000000Z.duckdb"
    writer = _writer(PUBLISHING, tmp_path / "db.duckdb", target)
    try:
        assert writer.stdout.readline().strip() == "publishing"
        assert remove_partials(folder) == []     # another daemon starting meanwhile
    finally:
        out, _ = writer.communicate("\n", timeout=120)
    assert writer.returncode == 0 and out.strip() == "done"
    assert sorted(p.name for p in folder.iterdir()) == [target.name]   # nor a lock left
