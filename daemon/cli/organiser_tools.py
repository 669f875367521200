"""Organiser tools: flags, report, recompute. Each asks the running daemon through its
API (address and token from the config) and, when no daemon answers, reads the database
file itself (read-only for flags and report) and builds the same documents."""

from __future__ import annotations

import argparse
import json
import time
import urllib.parse
from pathlib import Path

from .client import DaemonClient, quote
from .common import CONFIG_HELP, CliError, progress_bar, settings_of
from .render import print_report


def _database_file(settings) -> str:
    """The database path when no daemon answers; CliError when there is no file."""
    if not Path(settings.storage_path).exists():
        raise CliError(f"no daemon answers on {settings.server_host}:{settings.server_port} "
                       f"and there is no database at {settings.storage_path}")
    return settings.storage_path


def _read_file(settings, fn, *args, **kwargs):
    """A repository read on the database file, read-only (no daemon owns it now)."""
    import duckdb

    path = _database_file(settings)
    try:
        con = duckdb.connect(path, read_only=True)
    except duckdb.Error as exc:
        raise CliError(f"no daemon answers and the database cannot be opened: {exc}") from None
    try:
        return fn(con, *args, **kwargs)
    finally:
        con.close()


# ---------------------------------------------------------------------------- flags

def _flags_from_daemon(client: DaemonClient, query: dict) -> list[dict] | None:
    """All pages of GET /v1/flags from the running daemon, or None when none answers."""
    flags, cursor = [], None
    while True:
        params = dict(query, limit=500, **({"cursor": cursor} if cursor else {}))
        page = client.get("/v1/flags?" + urllib.parse.urlencode(params))
        if page is None:
            return None
        flags += page["flags"]
        cursor = page["next_cursor"]
        if not cursor:
            return flags


def _flags_from_file(settings, query: dict) -> list[dict]:
    from fairgrid.daemon import documents
    from fairgrid.daemon.store.repository import organiser as sql

    rows = _read_file(settings, sql.flags, tournament=query.get("tournament"),
                      player=query.get("player"), limit=1_000_000)
    return [documents.flag(r) for r in rows]


def cmd_flags(args: argparse.Namespace) -> int:
    settings = settings_of(args.config)
    query = {k: v for k, v in (("tournament", args.tournament), ("player", args.player)) if v}
    flags = _flags_from_daemon(DaemonClient.from_settings(settings), query)
    source = "daemon"
    if flags is None:
        flags, source = _flags_from_file(settings, query), "database file (read-only)"
    if args.json:
        for flag in flags:
            print(json.dumps(flag))
        return 0
    print(f"{len(flags)} flag{'s' if len(flags) != 1 else ''} (from the {source})")
    for f in flags:
        score = "" if f["anomaly"] is None else f"{f['anomaly']:.2f}"
        print(f"{f['created_at']}  {f['state']:<9} {score:>7}  {f['portal']}/{f['submission_id']}"
              f"  player {f['player_id']}  puzzle {f['puzzle_id']}  {f['reasons'] or ''}")
    return 0


# ---------------------------------------------------------------------------- report

def _submission_from_file(settings, portal: str, sid: str) -> dict:
    from fairgrid.daemon import documents
    from fairgrid.daemon.store.repository import organiser as sql

    def read(con):
        row = sql.submission(con, portal, sid)
        if row is None:
            return None
        return documents.submission(row, sql.moves(con, row["sub_key"]),
                                    sql.score_with_flag(con, portal, sid))

    doc = _read_file(settings, read)
    if doc is None:
        raise CliError(f"no submission {sid!r} from portal {portal!r}")
    return doc


def cmd_report(args: argparse.Namespace) -> int:
    settings = settings_of(args.config)
    doc = DaemonClient.from_settings(settings).get(
        f"/v1/submissions/{quote(args.portal)}/{quote(args.submission_id)}")
    if doc is None:
        doc = _submission_from_file(settings, args.portal, args.submission_id)
    if args.json:
        print(json.dumps(doc))
        return 0
    print_report(doc, args.png)
    return 0


# ---------------------------------------------------------------------------- recompute

def cmd_recompute(args: argparse.Namespace) -> int:
    """Run the nightly job now: through the running daemon, or on the file directly."""
    from fairgrid.daemon.work.nightly import STAGES

    settings = settings_of(args.config)
    bar = progress_bar(len(STAGES), "nightly", unit="stage")
    done = set()

    def progress(stage):
        if stage in STAGES and stage not in done:
            done.add(stage)
            if bar:
                bar.set_postfix_str(stage)
                bar.update(1)

    try:
        client = DaemonClient.from_settings(settings, admin=True)
        answer = client.request("POST", "/v1/jobs/nightly")
        if answer is not None:
            status, doc = answer
            if status != 202:
                raise CliError(f"the daemon answered {status}: {doc.get('error')}")
            run_id, via = doc["run_id"], "the running daemon"
            while True:
                time.sleep(0.5)
                status, doc = client.request("GET", f"/v1/jobs/{run_id}") or (0, {})
                if doc.get("stage") in STAGES:
                    for stage in STAGES[:STAGES.index(doc["stage"]) + 1]:
                        progress(stage)
                if doc.get("status") in ("success", "failed", "abandoned"):
                    break
            if doc["status"] != "success":
                raise CliError(f"run {run_id} {doc['status']}: "
                               f"{(doc.get('rows') or {}).get('error', '')}")
            summary = doc["rows"]
        else:
            summary, via = _recompute_file(settings, progress), "the database file"
    finally:
        if bar:
            bar.close()
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"nightly run {summary['run_id']} ({via}): {summary['solves']} solves, "
              f"{summary['puzzles']} puzzles, {summary['players']} players, "
              f"{summary['consensus_puzzles']} consensus orders, "
              f"{summary['seconds']:.1f} s")
    return 0


def _recompute_file(settings, progress) -> dict:
    import duckdb

    from fairgrid.daemon.store import StoreError, connect
    from fairgrid.daemon.store.repository import nightly as sql
    from fairgrid.daemon.work.nightly import direct_db, run_nightly

    try:
        con = connect(_database_file(settings), settings.storage_checkpoint_mb,
                      settings.storage_memory_limit_mb)
    except (StoreError, duckdb.Error) as exc:
        raise CliError(f"no daemon answers and the database cannot be opened: {exc}") from None
    try:
        summary = run_nightly(direct_db(con), settings, progress=progress)
        keys = summary.pop("rescore")
        if keys:  # the daemon's sweep re-scores them (status rescore) when it next starts
            sql.mark_for_rescore(con, keys)
        summary["rescore_pending"] = len(keys)
        return summary
    finally:
        con.close()


def add_commands(sub) -> None:

    p = sub.add_parser("flags", help="list flagged solves (from the running daemon)",
                       description="List flagged solves, newest first: from the running "
                       "daemon's API (address and token from the config), or read-only from "
                       "the database file when no daemon runs.")
    p.add_argument("--tournament")
    p.add_argument("--player")
    p.add_argument("--json", action="store_true", help="one JSON object a line")
    p.add_argument("--config", help=CONFIG_HELP)
    p.set_defaults(func=cmd_flags)

    p = sub.add_parser("report", help="the evidence of one scored solve",
                       description="Print a submission's score and evidence: the verdict, "
                       "every signal with its explanation, and the predicted and actual fill "
                       "order side by side. From the running daemon's API, or read-only from "
                       "the database file when no daemon runs.")
    p.add_argument("portal")
    p.add_argument("submission_id")
    p.add_argument("--png", metavar="FILE", help="also draw both orders as heatmaps (PNG)")
    p.add_argument("--json", action="store_true", help="print the submission document")
    p.add_argument("--config", help=CONFIG_HELP)
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("recompute", help="run the nightly rating refresh now",
                       description="Run the nightly job once (fit difficulty and skill, "
                       "recalibrate, consensus orders, re-score): through the running "
                       "daemon's API (address and admin token from the config), or directly "
                       "on the database file when no daemon runs.")
    p.add_argument("--json", action="store_true", help="print the run's summary as JSON")
    p.add_argument("--config", help=CONFIG_HELP)
    p.set_defaults(func=cmd_recompute)

