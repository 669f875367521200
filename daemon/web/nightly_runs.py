"""``POST /v1/nightly-runs`` and ``GET /v1/nightly-runs/{run_id}`` (admin); the
deprecated ``/v1/jobs/nightly`` and ``/v1/jobs/{run_id}`` route here too."""

from __future__ import annotations

import json

from aiohttp import web

from ..store.repository import organiser as sql
from ..work.nightly import STAGES
from ..work.nightly_runner import NightlyBusy
from ..documents import iso
from .tokens import require_token
from .context import CTX, read
from .responses import error, json_response, known_query


async def post_run(request: web.Request) -> web.Response:
    """Start the nightly rating refresh now."""
    require_token(request, admin=True)
    known_query(request)
    try:
        run_id = await request.app[CTX].nightly.run_now()
    except NightlyBusy as exc:
        return error(409, str(exc))
    return json_response({"run_id": run_id, "status": "running"}, status=202)


async def get_run(request: web.Request) -> web.Response:
    """A nightly run's status, live stage and row counts."""
    require_token(request, admin=True)
    known_query(request)
    runner = request.app[CTX].nightly
    run_id = request.match_info["run_id"]
    row = await read(request, sql.job_run, run_id)
    live = runner.state if runner.state.get("run_id") == run_id else None
    if row is None and live is None:
        return error(404, f"no nightly run {run_id!r}")
    row = row or {}
    status = row.get("status", "running")
    if status == "running" and live is not None and not runner.in_progress() \
            and live["stage"] in ("failed", "cancelled"):
        # it ended, and writing so failed too (a full disk): the row is not the truth
        status = "failed" if live["stage"] == "failed" else "abandoned"
    return json_response({
        "run_id": run_id, "job": row.get("job", "nightly"),
        "status": status,
        "stage": live["stage"] if live else None,
        "stages": list(STAGES),
        "started_at": iso(row.get("started_at")),
        "finished_at": iso(row.get("finished_at")),
        "rows": json.loads(row["rows"]) if row.get("rows") else None})
