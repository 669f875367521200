"""``storage.threads`` and ``analysis.workers`` past what a machine can make (a pasted
byte count) are refused in one line, exit 2: DuckDB aborted on the one (std::bad_alloc)
and the pool overflowed on the other (a traceback)."""

from __future__ import annotations

import os
import subprocess

import pytest

from .helpers import CMD, free_port, write_config


@pytest.mark.parametrize("variable,key", [
    ("FAIRGRID_STORAGE_THREADS", "storage.threads"),
    ("FAIRGRID_ANALYSIS_WORKERS", "analysis.workers"),
])
def test_a_thread_or_process_count_nobody_can_run_is_one_line_and_exit_2(tmp_path, variable,
                                                                          key):
    cfg = tmp_path / "fairgrid.toml"
    write_config(cfg, free_port(), tmp_path / "fg.duckdb")
    env = {**os.environ, variable: str(2**32)}
    proc = subprocess.run([*CMD, "serve", "--config", str(cfg)], capture_output=True,
                          text=True, timeout=90, env=env)
    lines = [line for line in proc.stderr.splitlines() if "apscheduler" not in line]
    assert proc.returncode == 2, (proc.returncode, lines[-4:])
    assert "Traceback" not in proc.stderr and key in lines[-1], lines[-4:]
