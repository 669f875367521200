"""``POST /v1/jobs/nightly`` and ``GET /v1/jobs/{run_id}`` (admin)."""

from __future__ import annotations

import json

from aiohttp import web

from ..store.repository import organiser as sql
from ..work.nightly import STAGES
from ..work.scheduler import JobBusy
from ..documents import iso
from .tokens import require_token
from .context import CTX, read
from .responses import error, json_response, known_query


async def post_nightly(request: web.Request) -> web.Response:
    """Start the nightly rating refresh now."""
    require_token(request, admin=True)
    known_query(request)
    try:
        run_id = await request.app[CTX].jobs.run_now()
    except JobBusy as exc:
        return error(409, str(exc))
    return json_response({"run_id": run_id, "status": "running"}, status=202)


async def get_job(request: web.Request) -> web.Response:
    """A job run's status, live stage and row counts."""
    require_token(request, admin=True)
    known_query(request)
    jobs = request.app[CTX].jobs
    run_id = request.match_info["run_id"]
    row = await read(request, sql.job_run, run_id)
    live = jobs.state if jobs.state.get("run_id") == run_id else None
    if row is None and live is None:
        return error(404, f"no job run {run_id!r}")
    row = row or {}
    return json_response({
        "run_id": run_id, "job": row.get("job", "nightly"),
        "status": row.get("status", "running"),
        "stage": live["stage"] if live else None,
        "stages": list(STAGES),
        "started_at": iso(row.get("started_at")),
        "finished_at": iso(row.get("finished_at")),
        "rows": json.loads(row["rows"]) if row.get("rows") else None})
