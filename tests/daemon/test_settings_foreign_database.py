"""``storage.path`` naming another program's DuckDB file that has a table called
``schema_version`` of other columns: the start says, in one line, that the file is
another program's, not a multi-line DuckDB Binder error."""

from __future__ import annotations

import subprocess

import duckdb

from .helpers import CMD, free_port, write_config


def test_another_programs_schema_version_table_is_one_line(tmp_path):
    db = tmp_path / "other.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE schema_version (id INTEGER, migration TEXT)")
    con.execute("INSERT INTO schema_version VALUES (1, 'create customers')")
    con.execute("CREATE TABLE customers (id INTEGER, name TEXT)")
    con.close()
    cfg = tmp_path / "fairgrid.toml"
    write_config(cfg, free_port(), db)
    proc = subprocess.run([*CMD, "serve", "--config", str(cfg)], capture_output=True,
                          text=True, timeout=90)
    lines = [line for line in proc.stderr.strip().splitlines() if "apscheduler" not in line]
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    # one line says it all: the last line is the error, and it names the file
    assert lines[-1].startswith("fairgrid serve: error:") and str(db) in lines[-1], lines[-6:]
