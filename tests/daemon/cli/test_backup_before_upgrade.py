"""`fairgrid backup` with the daemon stopped, on a database an older fairgrid wrote.

An upgrade on a host often goes: stop the daemon, install the new version, take a
backup. Opening the file to copy it applied every pending migration first, so the
database and its backup were both of the new schema, which the fairgrid that wrote them
refuses: nothing to go back to. The backup is refused instead, and the file is left as
it was.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import duckdb

from fairgrid.daemon.store.connection import migrations

from ..store.test_migrations import _at_schema


def _version(path: Path) -> int:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute("SELECT max(version) FROM schema_version").fetchone()[0]
    finally:
        con.close()


def test_an_offline_backup_of_an_older_schema_is_refused_and_changes_nothing(tmp_path):
    newest = migrations()[-1][0]
    old = newest - 1
    db = tmp_path / "fairgrid.duckdb"
    _at_schema(str(db), old, datetime.now(timezone.utc)).close()
    cfg = tmp_path / "fairgrid.toml"
    cfg.write_text(f'[storage]\npath = "{db}"\n[server]\nport = 1\n'
                   '[auth]\nadmin_tokens = ["adm"]\n')
    out = subprocess.run([sys.executable, "-m", "fairgrid.daemon.cli", "backup",
                          str(tmp_path / "bk"), "--config", str(cfg)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert len(out.stderr.strip().splitlines()) == 1
    assert f"schema version {old}, older than this fairgrid's {newest}" in out.stderr
    assert _version(db) == old and not (tmp_path / "bk").exists()
