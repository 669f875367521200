"""The HTTP API's application: factory, routes, lifecycle.

``create_api(settings)`` builds the app with every API route; its resources (the DuckDB store with its writer
thread, the process pool, puzzle analysis, scoring, the nightly job's cron) open and close
in ``cleanup_ctx``, so SIGTERM (aiohttp's graceful shutdown) stops accepting, drains the
write queue, commits and closes. The daemon's whole app, the console's pages included, is
:func:`fairgrid.daemon.app.create_app`: the console builds on this package, never the
other way round.
"""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web
from prometheus_client import CollectorRegistry

from ..ingest import moves_of, warm_up
from ..ingest.catalog import PuzzleCatalog
from ..metrics import Metrics
from ..settings import Settings
from ..store import Store
from ..store.backups import remove_partials
from ..store.repository import organiser as organiser_sql
from ..work.analysis import PuzzleAnalysis
from ..work.compute import PRIORITY, Cluster
from ..work.notify import Notifier
from ..work.pool import Lane, LanePool
from ..work.nightly_runner import NightlyRunner
from ..work.scoring import Scorer
from ..work.verdicts import Verdicts
from . import (health, lifecycle, nightly_runs, notifications, organiser, players, puzzles,
               users)
from .auth import Accounts, dummy_hash
from .context import CTX, Context, Parts
from .middleware import PARSER_LIMITS, errors_middleware, metrics_middleware
from .webhook import handle_solve

log = logging.getLogger("fairgrid.web")


async def _resources(app: web.Application):
    """Open the daemon's parts in the order they depend on each other, hand them to the
    context, and close them in the reverse order at stop."""
    ctx = app[CTX]
    s = ctx.settings
    store = await asyncio.to_thread(
        Store, s.storage_path, queue_size=s.storage_write_queue_size,
        group_commit_ms=s.storage_group_commit_ms, max_batch=s.storage_max_batch,
        dedupe_days=s.storage_dedupe_days, checkpoint_mb=s.storage_checkpoint_mb,
        memory_limit_mb=s.storage_memory_limit_mb, threads=s.storage_threads,
        on_batch=ctx.metrics.batch_size.observe, moves_of=moves_of)
    for path in await asyncio.to_thread(remove_partials, lifecycle.backup_dir(s)):
        log.warning("removed %s: a backup a stop cut short", path)
    accounts = Accounts(store, s)
    await asyncio.to_thread(accounts.load)
    # the hash an unknown name is verified against, made now on a thread, so that the
    # first such sign-in costs what a real one does (once a process: it is cached)
    asyncio.get_running_loop().run_in_executor(None, dummy_hash)
    notifier = Notifier(store, s, ctx.metrics)
    await asyncio.to_thread(warm_up)  # the webhook's compiled checks, from numba's cache
    cluster = Cluster(s.compute_scheduler) if s.compute_scheduler else None
    pool = LanePool(s.analysis_workers, cluster=cluster)
    ctx.metrics.watch_pool(lambda: pool.renewed)
    analysis = PuzzleAnalysis(store, s, ctx.metrics, pool)
    scorer = Scorer(store, s, ctx.metrics, pool.lane(Lane.SCORING))
    analysis.on_ready = scorer.puzzle_ready
    analysis.on_invalid = scorer.puzzle_invalid
    scorer.verdicts = Verdicts(store, s, ctx.metrics)
    ctx.metrics.watch_queue(store.writer.depth)
    ctx.metrics.watch_puzzles(analysis.counts)
    ctx.metrics.watch_flags(lambda: store.read(organiser_sql.flag_counts))
    nightly = NightlyRunner(store, s, ctx.metrics, pool.lane(Lane.NIGHTLY), scorer,
                            tasks=cluster.lane(PRIORITY[int(Lane.SMALL_PUZZLES)] - 5)
                            if cluster else None)
    ctx.started(Parts(store, accounts, PuzzleCatalog(store), analysis, scorer, nightly,
                      notifier))
    await analysis.start()
    await scorer.verdicts.start()
    await scorer.start()
    await nightly.start()
    await notifier.start()
    watch = asyncio.create_task(ctx.secrets.watch(), name="fairgrid-secrets-watch")
    try:
        yield
    finally:
        watch.cancel()
        await asyncio.gather(watch, return_exceptions=True)
        await notifier.stop()
        await nightly.stop()
        await scorer.stop()
        await scorer.verdicts.stop()
        await analysis.stop()
        await asyncio.to_thread(pool.shutdown)  # closing a cluster's client may wait
        await asyncio.to_thread(store.close, s.server_shutdown_timeout_s)
        ctx.started(None)


def create_api(settings: Settings, registry: CollectorRegistry | None = None) -> web.Application:
    """The API's application (resources open when the app starts)."""
    app = web.Application(middlewares=[metrics_middleware, errors_middleware],
                          client_max_size=settings.server_max_body_bytes,
                          handler_args=PARSER_LIMITS)
    app[CTX] = Context(settings, Metrics(registry or CollectorRegistry()))
    app.cleanup_ctx.append(_resources)
    r = app.router
    r.add_post("/v1/webhooks/solves", handle_solve)
    r.add_post("/v1/puzzles", puzzles.post_puzzles)
    r.add_get("/v1/puzzles/{id:.+}", puzzles.get_puzzle)  # ids may hold a '/'

    r.add_get("/v1/submissions/{portal}/{submission_id}", organiser.get_submission)
    r.add_get("/v1/flags", organiser.get_flags)
    r.add_post("/v1/flags/{id}/review", organiser.review_flag)
    r.add_get("/v1/players", players.get_players)
    r.add_get("/v1/players/{portal}/{player_id}", organiser.get_player)
    r.add_post("/v1/players/{portal}/{player_id}/review", players.review_player)
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
    r.add_post("/v1/nightly-runs", nightly_runs.post_run)
    r.add_get("/v1/nightly-runs/{run_id}", nightly_runs.get_run)
    # the same under their names before (docs/openapi.yaml marks them deprecated)
    r.add_post("/v1/jobs/nightly", nightly_runs.post_run)
    r.add_get("/v1/jobs/{run_id}", nightly_runs.get_run)
    r.add_get("/metrics", health.metrics)
    r.add_get("/healthz", health.healthz)
    r.add_get("/readyz", health.readyz)
    return app
