"""Erasure, export and backup (admin routes; ``fairgrid erase|export|backup`` call them)."""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from aiohttp import web

from ..ingest import ValidationError
from ..store import StoreError, backups
from ..store.records import utc_now
from ..store.repository import lifecycle as sql
from ..store.repository import needs_moves
from .tokens import require_token
from .context import CTX, read, write
from .responses import attachment, error, json_body, json_response, known_query

CHUNK = 1 << 20
log = logging.getLogger("fairgrid.web")


async def post_erase(request: web.Request) -> web.Response:
    """Forget a person: every solve, move, score, flag, review, notification and skill
    rating of theirs, in one transaction, then rewrite the database file so that their
    bytes are gone from it. They are listed as erased first (a keyed hash, not their
    id): their solves are refused from then on, after restarts and restores too. The
    erasure itself is recorded (when, by whom, how many rows), not whom it was about."""
    who = require_token(request, admin=True)
    known_query(request)
    portal, player = request.match_info["portal"], request.match_info["player_id"]
    ctx = request.app[CTX]
    if not await read(request, sql.player_known, portal, player):
        return error(404, f"no player {player!r} of portal {portal!r}")
    digest = ctx.store.erased.digest(portal, player)
    try:
        await asyncio.to_thread(ctx.store.erased.remember, digest)
    except OSError as exc:  # nothing erased: the list comes first, and it could not grow
        log.error("the erased-players list could not be written: %s", exc)
        return error(507 if exc.errno == errno.ENOSPC else 503,
                     f"nothing was erased: the list of erased people "
                     f"({ctx.store.erased.file}) could not be written "
                     f"({exc.strerror or exc}); free its disk and try again")
    rows = await write(request, sql.erase_player, portal, player, who.name, utc_now(),
                       digest)
    if rows is None:  # another erasure of them came first
        return error(404, f"no player {player!r} of portal {portal!r}")
    ctx.scorer.forget_all()
    try:
        await asyncio.to_thread(ctx.store.rewrite)
        rewritten = True
    except StoreError as exc:  # erased all the same; the next start rewrites the file
        log.error("the database file was not rewritten after an erasure: %s", exc)
        rewritten = False
    return json_response({"portal": portal, "erased": rows, "file_rewritten": rewritten})


async def get_export(request: web.Request) -> web.StreamResponse:
    """One table of a tournament as CSV or Parquet, written by DuckDB's COPY into a
    temporary file and streamed from it."""
    require_token(request, admin=True)
    known_query(request)
    tournament, table, fmt = (request.match_info[k] for k in ("tournament", "table", "fmt"))
    if table not in sql.EXPORTS:
        raise ValidationError("table", f"must be one of {', '.join(sql.EXPORTS)}", 404)
    if fmt not in sql.FORMATS:
        raise ValidationError("format", f"must be one of {', '.join(sql.FORMATS)}", 404)
    if not await read(request, sql.tournament_known, tournament):
        raise ValidationError("tournament", f"no solve was sent for tournament {tournament!r}",
                              404)
    fd, path = tempfile.mkstemp(suffix=f".{fmt}", prefix="fairgrid-export-")
    os.close(fd)
    try:
        rows = await read(request, sql.export_to, tournament, table, fmt, path)
        resp = web.StreamResponse(headers={
            "Content-Type": "text/csv" if fmt == "csv" else "application/vnd.apache.parquet",
            "Content-Disposition": attachment(tournament, f"-{table}.{fmt}"),
            "X-Fairgrid-Rows": str(rows)})
        resp.content_length = os.path.getsize(path)
        await resp.prepare(request)
        with open(path, "rb") as f:
            while chunk := await asyncio.to_thread(f.read, CHUNK):
                await resp.write(chunk)
        await resp.write_eof()
        return resp
    finally:
        os.unlink(path)


@needs_moves
def _backup(cur, target: Path) -> dict:
    return backups.write_backup(cur, target)


async def post_backup(request: web.Request) -> web.Response:
    """A consistent copy of the database, taken while the daemon serves, as a new DuckDB
    file in ``storage.backup_dir`` on the daemon's machine (a folder the operator chose:
    the API never writes anywhere else), under its final name only once it is whole."""
    require_token(request, admin=True)
    known_query(request)
    body = await json_body(request, empty={})
    if not isinstance(body, dict) or body:
        raise ValidationError(None, "the body is an empty JSON object (backups go to "
                              "storage.backup_dir)", 422)
    settings = request.app[CTX].settings
    folder = backup_dir(settings)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValidationError("storage.backup_dir", f"cannot create {folder}: {exc.strerror}",
                              422) from None
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    target = folder / f"fairgrid-{stamp}.duckdb"
    try:
        counts = await read(request, _backup, target)
    except backups.BackupFailed as exc:  # its folder's trouble, not the database's
        return error(507 if exc.no_space else 503, str(exc), "storage.backup_dir")
    return json_response({"path": str(target), "bytes": target.stat().st_size,
                          "rows": counts}, status=201)


def backup_dir(settings) -> Path:
    """``storage.backup_dir``, relative to the database's folder."""
    return Path(settings.storage_path).resolve().parent / settings.storage_backup_dir
