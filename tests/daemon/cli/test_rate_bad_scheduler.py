"""``fairgrid rate FILE --scheduler ADDRESS`` with an address that is no Dask scheduler:
one line, exit 2, no traceback. The half-made ``distributed.Client`` of a failed
connection is freed at once: finalised at interpreter exit, it waited out its timeout
twice and printed "Exception ignored in Client.__del__ ... TimeoutError". A single
puzzle is rated here, and ``--scheduler`` with it is refused rather than ignored.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ...fixtures import EASY, MEDIUM

CMD = [sys.executable, "-m", "fairgrid.daemon.cli"]


def _rate(*args, timeout=120):
    return subprocess.run([*CMD, "rate", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ,
                                                "FAIRGRID_COMPUTE_SCHEDULER": ""})


@pytest.mark.parametrize("address", ["garbage", "tcp://[::1"])
def test_a_malformed_scheduler_address_is_one_clean_line_at_once(tmp_path, address):
    bank = tmp_path / "bank.txt"
    bank.write_text(f"{EASY}\n{MEDIUM}\n")
    proc = _rate(str(bank), "--quick", "--scheduler", address)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(errors) == 1, proc.stderr
    assert errors[0].startswith("fairgrid rate: error:") and address in errors[0]


def test_one_puzzle_with_a_bad_scheduler_is_not_silently_rated_locally():
    proc = _rate(EASY, "--quick", "--scheduler", "garbage")
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-200:])
    assert "--scheduler" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
