"""The aiohttp application: factory, routes, one error middleware, lifecycle.

``create_app(settings)`` builds the app; its resources (the DuckDB store with its writer
thread, the analysis process pool, the puzzle registry's tasks) open and close in
``cleanup_ctx``, so SIGTERM (aiohttp's graceful shutdown) stops accepting, drains the
write queue, commits and closes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from .context import CTX, AuthError, Context, error, require_token
from .metrics import Metrics
from .puzzles import PuzzleConflict, PuzzleRegistry
from .settings import Settings
from .signatures import SignatureError, Verifier
from .store import QueueFull, Store, StoreError
from .validate import ValidationError, parse_json, warm_up
from .queries import get_flags, get_player, get_puzzle, get_submission, review_flag
from .jobs import STAGES, JobBusy, NightlyRunner
from .scoring import Scorer
from .webhook import handle_solve

log = logging.getLogger("fairgrid")
RETRY_AFTER_S = "5"


@web.middleware
async def metrics_middleware(request: web.Request, handler):
    """Count every response by route template (never the raw path) and status code."""
    status = 500
    try:
        response = await handler(request)
        status = response.status
        return response
    except web.HTTPException as exc:
        status = exc.status
        raise
    finally:
        resource = request.match_info.route.resource
        route = resource.canonical if resource is not None else "unmatched"
        request.app[CTX].metrics.http_responses.labels(route, str(status)).inc()


@web.middleware
async def errors_middleware(request: web.Request, handler):
    """Every failure becomes a JSON error; never a traceback, never a partial write."""
    try:
        return await handler(request)
    except ValidationError as exc:
        return error(exc.status, str(exc) if exc.field is None else f"{exc.field}: {exc}",
                     exc.field)
    except SignatureError as exc:
        return error(401, str(exc))
    except AuthError as exc:
        return error(401, str(exc), headers={"WWW-Authenticate": "Bearer"})
    except PuzzleConflict as exc:
        return error(409, str(exc), "id")
    except QueueFull as exc:
        return error(503, f"overloaded: {exc}; retry later", headers={"Retry-After": RETRY_AFTER_S})
    except StoreError as exc:
        log.error("storage error: %s", exc)
        return error(503, "storage unavailable; retry later", headers={"Retry-After": RETRY_AFTER_S})
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        reason = {413: "request body too large"}.get(exc.status, exc.reason)
        return error(exc.status, reason)
    except asyncio.CancelledError:
        raise
    except Exception:  # noqa: BLE001 - the last line of defence
        log.exception("unhandled error on %s %s", request.method, request.path)
        return error(500, "internal error")


# ------------------------------------------------------------------------------- routes

async def post_nightly(request: web.Request) -> web.Response:
    """``POST /v1/jobs/nightly`` (admin): start the nightly rating refresh now."""
    require_token(request, admin=True)
    try:
        run_id = request.app[CTX].jobs.trigger()
    except JobBusy as exc:
        return error(409, str(exc))
    return web.json_response({"run_id": run_id, "status": "running"}, status=202)


async def get_job(request: web.Request) -> web.Response:
    """``GET /v1/jobs/{run_id}`` (admin): a job run's status, live stage and row counts."""
    require_token(request, admin=True)
    ctx = request.app[CTX]
    run_id = request.match_info["run_id"]
    rows = await asyncio.to_thread(
        ctx.store.read_dicts, "SELECT * FROM job_runs WHERE id = ?", [run_id])
    live = ctx.jobs.state if ctx.jobs.state.get("run_id") == run_id else None
    if not rows and live is None:
        return error(404, f"no job run {run_id!r}")
    row = rows[0] if rows else {}
    status = row.get("status", "running")
    return web.json_response({
        "run_id": run_id, "job": row.get("job", "nightly"), "status": status,
        "stage": live["stage"] if live else None,
        "stages": list(STAGES),
        "started_at": row["started_at"].isoformat() if row.get("started_at") else None,
        "finished_at": row["finished_at"].isoformat() if row.get("finished_at") else None,
        "rows": json.loads(row["rows"]) if row.get("rows") else None})


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "alive"})


async def readyz(request: web.Request) -> web.Response:
    ctx = request.app[CTX]
    try:
        await asyncio.to_thread(ctx.store.read, "SELECT 1")
    except StoreError:
        return error(503, "database unavailable")
    if not ctx.puzzles.running():
        return error(503, "puzzle analysis is not running")
    return web.json_response({"status": "ready"})


async def metrics(request: web.Request) -> web.Response:
    data = generate_latest(request.app[CTX].metrics.registry)
    return web.Response(body=data, headers={"Content-Type": CONTENT_TYPE_LATEST})


async def post_puzzles(request: web.Request) -> web.Response:
    """Register one puzzle ``{"id", "givens"}`` or many ``{"puzzles": [...]}``."""
    require_token(request, admin=True)
    data = parse_json(await request.read())
    many = "puzzles" in data
    items = data["puzzles"] if many else [data]
    if not isinstance(items, list) or not items:
        raise ValidationError("puzzles", "must be a non-empty list")
    checked = []
    for i, item in enumerate(items):
        where = f"puzzles[{i}]." if many else ""
        if not isinstance(item, dict):
            raise ValidationError(where.rstrip(".") or None, "must be an object", 422)
        pid, givens = item.get("id"), item.get("givens")
        if not isinstance(pid, str) or not pid or len(pid) > 200:
            raise ValidationError(where + "id", "must be a string of 1..200 characters")
        if not isinstance(givens, str):
            raise ValidationError(where + "givens", "must be puzzle text")
        checked.append((where, pid, givens))
    registry = request.app[CTX].puzzles
    results, created_any = [], False
    for where, pid, givens in checked:
        try:
            created, _info = await registry.register(pid, givens)
        except ValidationError as exc:
            exc.field = where + (exc.field or "givens")
            raise
        created_any |= created
        results.append({"id": pid, "status": "registered" if created else "known"})
    status = 201 if created_any else 200
    return web.json_response({"puzzles": results} if many else results[0], status=status)


# ------------------------------------------------------------------------------- lifecycle

def _pool_worker_init() -> None:
    """Pool workers only use CPU nobody else wants (Linux SCHED_IDLE; elsewhere nice 19):
    analysis and scoring yield the CPU to ingestion, fall behind during a burst and catch
    up when it is over (``fairgrid_scoring_backlog`` shows how far behind). They also die
    with the daemon: a SIGKILLed daemon must not leave orphaned workers behind (Linux
    PR_SET_PDEATHSIG)."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        try:
            os.nice(19)
        except OSError:
            pass
    try:
        import ctypes
        import signal
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the daemon died before the call
            os._exit(1)
    except (OSError, AttributeError):
        pass  # not Linux: shutdown still stops the pool


def _pool(settings: Settings) -> ProcessPoolExecutor:
    workers = settings.analysis_workers or os.cpu_count() or 1
    # spawn: the daemon has threads (the writer), which fork does not copy safely
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_pool_worker_init)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop the analysis pool now: queued work is dropped, running work is killed (the
    puzzles stay pending and are analysed after the next start; submissions are scored
    by the next start's sweep).

    A worker killed while it writes a result (a scoring batch's evidence is megabytes)
    leaves the executor's manager thread reading the rest of that message forever, and
    the interpreter waits for that thread at exit: SIGTERM then hung the daemon after
    its clean shutdown. Closing the daemon's own ends of the pool's pipes wakes those
    threads (end of file, a broken pipe), and the executor winds itself up."""
    # no public API for any of this before Python 3.14
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    # the daemon's ends of the pipes the manager thread and the queue feeder may block on
    # (shutdown() drops the executor's references to them)
    ends = [getattr(getattr(pool, "_result_queue", None), "_writer", None),
            getattr(getattr(pool, "_call_queue", None), "_reader", None)]
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        proc.terminate()
    for proc in processes:
        proc.join(5)
    if manager is None:
        return
    manager.join(1)
    if manager.is_alive():
        for end in ends:
            try:
                end.close()
            except (AttributeError, OSError):
                pass
        manager.join(5)


async def _resources(app: web.Application):
    ctx = app[CTX]
    s = ctx.settings
    ctx.store = await asyncio.to_thread(
        Store, s.storage_path, queue_size=s.storage_write_queue_size,
        group_commit_ms=s.storage_group_commit_ms, max_batch=s.storage_max_batch,
        dedupe_days=s.storage_dedupe_days, checkpoint_mb=s.storage_checkpoint_mb,
        memory_limit_mb=s.storage_memory_limit_mb, threads=s.storage_threads,
        on_batch=ctx.metrics.batch_size.observe)
    await asyncio.to_thread(warm_up)  # the webhook's compiled checks, from numba's cache
    pool = _pool(s)
    ctx.puzzles = PuzzleRegistry(ctx.store, s, ctx.metrics, pool)
    ctx.scorer = Scorer(ctx.store, s, ctx.metrics, pool)
    ctx.puzzles.on_ready = ctx.scorer.puzzle_ready
    ctx.metrics.watch_queue(ctx.store.writer.depth)
    ctx.metrics.watch_puzzles(ctx.puzzles.counts)
    ctx.jobs = NightlyRunner(ctx.store, s, ctx.metrics, pool, ctx.scorer)
    await ctx.puzzles.start()
    await ctx.scorer.start()
    await ctx.jobs.start()
    try:
        yield
    finally:
        await ctx.jobs.stop()
        await ctx.scorer.stop()
        await ctx.puzzles.stop()
        _stop_pool(pool)
        await asyncio.to_thread(ctx.store.close, s.server_shutdown_timeout_s)


def create_app(settings: Settings, registry: CollectorRegistry | None = None) -> web.Application:
    """The fairgrid web application (resources open when the app starts)."""
    app = web.Application(middlewares=[metrics_middleware, errors_middleware],
                          client_max_size=settings.server_max_body_bytes)
    metrics_ = Metrics(registry or CollectorRegistry())
    app[CTX] = Context(settings, metrics_,
                       Verifier.from_portals(settings.portals, settings.webhooks_tolerance_s))
    app.cleanup_ctx.append(_resources)
    app.router.add_post("/v1/webhooks/solves", handle_solve)
    app.router.add_post("/v1/puzzles", post_puzzles)
    app.router.add_get("/v1/puzzles/{id}", get_puzzle)
    app.router.add_get("/v1/submissions/{portal}/{submission_id}", get_submission)
    app.router.add_get("/v1/flags", get_flags)
    app.router.add_post("/v1/flags/{id}/review", review_flag)
    app.router.add_get("/v1/players/{portal}/{player_id}", get_player)
    app.router.add_post("/v1/jobs/nightly", post_nightly)
    app.router.add_get("/v1/jobs/{run_id}", get_job)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    return app
