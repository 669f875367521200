"""The aiohttp application: factory, routes, lifecycle.

``create_app(settings)`` builds the app; its resources (the DuckDB store with its writer
thread, the process pool, puzzle analysis, scoring, the nightly scheduler) open and close
in ``cleanup_ctx``, so SIGTERM (aiohttp's graceful shutdown) stops accepting, drains the
write queue, commits and closes.
"""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web
from prometheus_client import CollectorRegistry

from ..ingest import moves_of, warm_up
from ..ingest.signatures import Verifier
from ..metrics import Metrics
from ..settings import Settings
from ..store import Store
from ..store.backups import remove_partials
from ..store.repository import organiser as organiser_sql
from ..work.analysis import PuzzleRegistry
from ..work.compute import PRIORITY, Cluster
from ..work.notify import Notifier
from ..work.pool import Lane, LanePool
from ..work.scheduler import NightlyRunner
from ..work.scoring import Scorer
from . import health, jobs, lifecycle, notifications, organiser, puzzles, users
from .. import console
from .auth import Accounts
from .context import CTX, Context, watch_secrets
from .middleware import errors_middleware, metrics_middleware
from .webhook import handle_solve

log = logging.getLogger("fairgrid.web")


async def _resources(app: web.Application):
    ctx = app[CTX]
    s = ctx.settings
    ctx.store = await asyncio.to_thread(
        Store, s.storage_path, queue_size=s.storage_write_queue_size,
        group_commit_ms=s.storage_group_commit_ms, max_batch=s.storage_max_batch,
        dedupe_days=s.storage_dedupe_days, checkpoint_mb=s.storage_checkpoint_mb,
        memory_limit_mb=s.storage_memory_limit_mb, threads=s.storage_threads,
        on_batch=ctx.metrics.batch_size.observe, moves_of=moves_of)
    for path in await asyncio.to_thread(remove_partials, lifecycle.backup_dir(s)):
        log.warning("removed %s: a backup a stop cut short", path)
    ctx.accounts = Accounts(ctx.store, s)
    await asyncio.to_thread(ctx.accounts.load)
    ctx.notifier = Notifier(ctx.store, s, ctx.metrics)
    await asyncio.to_thread(warm_up)  # the webhook's compiled checks, from numba's cache
    cluster = Cluster(s.compute_scheduler) if s.compute_scheduler else None
    pool = LanePool(s.analysis_workers, cluster=cluster)
    ctx.puzzles = PuzzleRegistry(ctx.store, s, ctx.metrics, pool)
    ctx.scorer = Scorer(ctx.store, s, ctx.metrics, pool.lane(Lane.SCORING))
    ctx.puzzles.on_ready = ctx.scorer.puzzle_ready
    ctx.metrics.watch_queue(ctx.store.writer.depth)
    ctx.metrics.watch_puzzles(ctx.puzzles.counts)
    ctx.metrics.watch_flags(lambda: ctx.store.read(organiser_sql.flag_counts))
    ctx.jobs = NightlyRunner(ctx.store, s, ctx.metrics, pool.lane(Lane.NIGHTLY), ctx.scorer,
                             tasks=cluster.lane(PRIORITY[int(Lane.SMALL_PUZZLES)] - 5)
                             if cluster else None)
    await ctx.puzzles.start()
    await ctx.scorer.start()
    await ctx.jobs.start()
    await ctx.notifier.start()
    try:
        yield
    finally:
        await ctx.notifier.stop()
        await ctx.jobs.stop()
        await ctx.scorer.stop()
        await ctx.puzzles.stop()
        await asyncio.to_thread(pool.shutdown)  # closing a cluster's client may wait
        await asyncio.to_thread(ctx.store.close, s.server_shutdown_timeout_s)


async def _secrets_watch(app: web.Application):
    task = asyncio.create_task(watch_secrets(app[CTX]), name="fairgrid-secrets-watch")
    yield
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def create_app(settings: Settings, registry: CollectorRegistry | None = None) -> web.Application:
    """The fairgrid web application (resources open when the app starts)."""
    app = web.Application(middlewares=[metrics_middleware, errors_middleware],
                          client_max_size=settings.server_max_body_bytes)
    metrics_ = Metrics(registry or CollectorRegistry())
    app[CTX] = Context(settings, metrics_,
                       Verifier.from_portals(settings.portals, settings.webhooks_tolerance_s))
    app[CTX].reload_portals()  # note the portals' and tokens' files as they are now
    app.cleanup_ctx.append(_resources)
    app.cleanup_ctx.append(_secrets_watch)
    r = app.router
    r.add_post("/v1/webhooks/solves", handle_solve)
    r.add_post("/v1/puzzles", puzzles.post_puzzles)
    r.add_get("/v1/puzzles/{id:.+}", puzzles.get_puzzle)  # ids may hold a '/'

    r.add_get("/v1/submissions/{portal}/{submission_id}", organiser.get_submission)
    r.add_get("/v1/flags", organiser.get_flags)
    r.add_post("/v1/flags/{id}/review", organiser.review_flag)
    r.add_get("/v1/players/{portal}/{player_id}", organiser.get_player)
    r.add_get("/v1/users", users.get_users)
    r.add_post("/v1/users", users.post_user)
    r.add_patch("/v1/users/{name}", users.patch_user)
    r.add_post("/v1/users/{name}/tokens", users.post_token)
    r.add_get("/v1/me", users.get_me)
    r.add_put("/v1/portals/{portal}/notify", notifications.put_endpoint)
    r.add_delete("/v1/portals/{portal}/notify", notifications.delete_endpoint)
    r.add_get("/v1/notifications", notifications.get_notifications)
    r.add_post("/v1/notifications/{id}/redeliver", notifications.post_redeliver)
    r.add_post("/v1/players/{portal}/{player_id}/erase", lifecycle.post_erase)
    r.add_get("/v1/tournaments/{tournament}/export/{table}.{fmt}", lifecycle.get_export)
    r.add_post("/v1/backups", lifecycle.post_backup)
    r.add_post("/v1/jobs/nightly", jobs.post_nightly)
    r.add_get("/v1/jobs/{run_id}", jobs.get_job)
    console.setup(app)
    r.add_get("/metrics", health.metrics)
    r.add_get("/healthz", health.healthz)
    r.add_get("/readyz", health.readyz)
    return app
