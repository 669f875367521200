"""The row count an export reports is the count of rows in the file it wrote, while the
tournament's solves keep arriving: the count is COPY's own. A count taken by a second
statement read a later snapshot than the file's."""

from __future__ import annotations

from datetime import datetime, timezone

import duckdb

from fairgrid.daemon.store.connection import connect
from fairgrid.daemon.store.repository import lifecycle

from ..helpers import COLUMNS


def _solve(con, k: int) -> None:
    at = datetime(2026, 11, 21, 10, tzinfo=timezone.utc)
    con.execute(f"INSERT INTO submissions {COLUMNS} VALUES (?, 'demo', ?, ?, 'cup', 'p', "
                "'easy', ?, ?, ?, 1, 1, true, 'scored', '{}')",
                [k, f"s-{k}", f"w-{k}", at, at, at])


class _SolveArrivesAfterEachStatement:
    """A read cursor under which a webhook's solve is committed after every statement
    it runs (what a busy daemon's writer does between two reads)."""

    def __init__(self, con):
        self._con, self._cur, self._k = con, con.cursor(), 100

    def execute(self, sql, params=None):
        result = self._cur.execute(sql, params or [])
        rows = result.fetchall()
        self._k += 1
        _solve(self._con, self._k)
        return _Rows(rows)


class _Rows:
    def __init__(self, rows):
        self._rows = rows

    def fetchall(self):
        return self._rows


def test_the_reported_row_count_is_the_files(tmp_path):
    con = connect(str(tmp_path / "fg.duckdb"))
    try:
        for k in range(3):
            _solve(con, k)
        target = tmp_path / "submissions.csv"
        rows = lifecycle.export_to(_SolveArrivesAfterEachStatement(con), "cup",
                                   "submissions", "csv", str(target))
        in_file = duckdb.connect().execute("SELECT count(*) FROM read_csv(?)",
                                           [str(target)]).fetchone()[0]
        assert rows == in_file == 3
    finally:
        con.close()
