"""Organiser tools: flags, report, player, review, recompute. Each asks the running daemon
through its API — address and token from ``--url``/``--token``, ``FAIRGRID_URL``/
``FAIRGRID_TOKEN``, or the config — and, when no daemon answers and the config names a
database file, reads the file itself (read-only for flags, report and player) and builds
the same documents."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time
import urllib.parse
from pathlib import Path

from ..json_out import dumps
from .client import DaemonClient, address, checked_url, quote
from .common import CONFIG_HELP, CliError, ident, named, png_file, progress_bar, settings_of
from ..states import FLAG_STATES, REVIEW_STATES
from ..text import shown
from .render import history_entry, print_case, print_report


def _database_file(settings) -> str:
    """The database path when no daemon answers; CliError when there is no file."""
    if not Path(settings.storage_path).exists():
        raise CliError(f"no daemon answers on {settings.server_host}:{settings.server_port} "
                       f"and there is no database at {settings.storage_path}")
    return settings.storage_path


def _read_file(settings, fn, *args, **kwargs):
    """A repository read on the database file, read-only (no daemon owns it now)."""
    with open_file(_database_file(settings)) as con:
        return fn(con, *args, **kwargs)


@contextlib.contextmanager
def open_file(path: str):
    """The database file at ``path``, read-only (no daemon owns it now), once it holds
    nobody an erasure a restore took back would show; CliError when it cannot be read."""
    from fairgrid.daemon.store import StoreError
    from fairgrid.daemon.store.connection import read_only

    import duckdb

    try:
        con = read_only(path, replacements=False)
    except StoreError as exc:
        raise CliError(f"no daemon answers and the database cannot be opened: {exc}") from None
    with con:
        _fairgrid_database(con.cursor(), path)
        _no_erasure_undone(con.cursor(), path)
        try:
            yield con
        except duckdb.Error as exc:
            raise CliError(f"the database {path} cannot be read: "
                           f"{str(exc).splitlines()[0]}") from None


def _fairgrid_database(cur, path: str) -> None:
    """CliError unless the file is a fairgrid database this fairgrid can read (a
    config's ``storage.path`` may name another program's DuckDB file)."""
    import duckdb

    from fairgrid.daemon.store import StoreError
    from fairgrid.daemon.store.connection import refuse_newer
    from fairgrid.daemon.store.repository import lifecycle

    try:
        version = lifecycle.schema_version(cur)
    except duckdb.Error:
        version = None
    if version is None:
        raise CliError(f"{path} is no fairgrid database (it has no schema version): check "
                       "storage.path")
    try:
        refuse_newer(version, f"the database {path}", "read")
    except StoreError as exc:
        raise CliError(str(exc)) from None


def _no_erasure_undone(cur, db_path: str) -> None:
    """CliError if the file holds people erased after the backup it was restored from:
    read-only, a command cannot erase them again, and must not show or write them out."""
    import duckdb

    from fairgrid.daemon.store import StoreError
    from fairgrid.daemon.store.erasure import undone
    from fairgrid.daemon.store.repository import lifecycle

    try:
        held = undone(db_path, lifecycle.erased_digests(cur), lambda: lifecycle.players(cur))
    except StoreError as exc:
        raise CliError(str(exc)) from None
    except duckdb.Error as exc:
        raise CliError(f"the database cannot be read: {str(exc).splitlines()[0]}") from None
    if held:
        raise CliError(f"the database holds {len(held)} player(s) erased after the backup "
                       "it was restored from: start the daemon once (it erases them "
                       "again), then try again")


def connect(args: argparse.Namespace, *, admin: bool = False):
    """(client, settings or None): the daemon at ``--url``/``FAIRGRID_URL`` with the token
    of ``--token``/``FAIRGRID_TOKEN``, or else the config's address and its first token
    (an admin one for ``admin``). An explicit address needs an explicit token: the
    config's tokens are not sent to another host. Settings come back only with the
    config's own address: only then is its database file the fallback."""
    url = getattr(args, "url", None) or os.environ.get("FAIRGRID_URL")
    token = getattr(args, "token", None) or os.environ.get("FAIRGRID_TOKEN")
    if url:
        if not token:
            raise CliError(f"--url {url} needs --token (or FAIRGRID_TOKEN): the config's "
                           f"tokens are only sent to the config's own daemon")
        return DaemonClient(checked_url(url), token), None
    settings = settings_of(args.config)
    if token is None:
        token = DaemonClient.from_settings(settings, admin=admin).token
    return DaemonClient(address(settings), token), \
        settings


def _unreachable(client: DaemonClient) -> CliError:
    return CliError(f"no daemon answers at {client.base_url}")


def call(args: argparse.Namespace, method: str, path: str, body: dict | None = None, *,
         admin: bool = True) -> dict:
    """A JSON call to the daemon ``connect`` finds: its answer, or CliError naming the
    status and the daemon's error (or that none answers)."""
    client, _ = connect(args, admin=admin)
    data = None if body is None else json.dumps(body).encode()
    answer = client.request(method, path, data, {"content-type": "application/json"})
    if answer is None:
        raise _unreachable(client)
    status, doc = answer
    if status >= 400:
        raise CliError(f"the daemon answered {status}: {doc.get('error')}")
    return doc


# ---------------------------------------------------------------------------- flags

def all_pages(client: DaemonClient, route: str, key: str, query: dict) -> list[dict] | None:
    """Every item (``key``) of every page of a paginated GET ``route`` from the running
    daemon, or None when none answers."""
    items, cursor = [], None
    while True:
        params = dict(query, limit=500, **({"cursor": cursor} if cursor else {}))
        page = client.get(f"{route}?" + urllib.parse.urlencode(params))
        if page is None:
            return None
        items += page[key]
        cursor = page["next_cursor"]
        if not cursor:
            return items


def _flags_from_file(settings, query: dict) -> list[dict]:
    from fairgrid.daemon import documents
    from fairgrid.daemon.store.repository import organiser as sql

    rows = _read_file(settings, sql.flags, tournament=query.get("tournament"),
                      player=query.get("player"), state=query.get("state"), limit=1_000_000)
    return [documents.flag(r) for r in rows]


def cmd_flags(args: argparse.Namespace) -> int:
    query = {k: v for k, v in (("tournament", args.tournament), ("player", args.player),
                               ("state", args.state)) if v and v != "any"}
    client, settings = connect(args)
    flags = all_pages(client, "/v1/flags", "flags", query)
    source = "daemon"
    if flags is None:
        if settings is None:
            raise _unreachable(client)
        flags, source = _flags_from_file(settings, query), "database file (read-only)"
    if args.json:
        for flag in flags:
            print(dumps(flag))
        return 0
    print(f"{len(flags)} flag{'s' if len(flags) != 1 else ''} (from the {source})")
    if flags:
        print(f"{'id':>6}  {'raised (UTC)':<20} {'state':<9} {'anomaly':>7}  "
              f"{'tournament':<12} {'portal/submission':<24} {'player':<12} reasons")
    for f in flags:
        score = "" if f["anomaly"] is None else f"{f['anomaly']:.2f}"
        print(f"{f['id']:>6}  {f['created_at'][:19]:<20} {f['state']:<9} {score:>7}  "
              f"{shown(f['tournament_id']):<12} "
              f"{shown(f['portal']) + '/' + shown(f['submission_id']):<24} "
              f"{shown(f['player_id']):<12} {', '.join(f['reasons'] or [])}")
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
    client, settings = connect(args)
    doc = client.get(f"/v1/submissions/{quote(args.portal)}/{quote(args.submission_id)}")
    if doc is None:
        if settings is None:
            raise _unreachable(client)
        doc = _submission_from_file(settings, args.portal, args.submission_id)
    if args.json:
        print(dumps(doc))
        return 0
    print_report(doc, args.png)
    return 0


# ----------------------------------------------------------------------- player, review

def cmd_player(args: argparse.Namespace) -> int:
    client, _ = connect(args)
    doc = client.get(f"/v1/players/{quote(args.portal)}/{quote(args.player_id)}")
    if doc is None:
        raise _unreachable(client)
    if args.json:
        print(dumps(doc))
        return 0
    agg = doc["aggregate"]
    # the season verdict is the player's state (printed below); these two numbers are
    # what an organiser sees beside it
    season = doc.get("verdict")
    state = season["state"].upper() if season else "not judged yet"
    z = "-" if agg["stouffer_z"] is None else f"{agg['stouffer_z']:.2f}"
    print(f"{shown(doc['portal'])}/{shown(doc['player_id'])}: season verdict {state}; "
          f"{agg['flagged']} flag{'' if agg['flagged'] == 1 else 's'} standing "
          f"(worth a look from {agg['player_flag_count']}), Stouffer's z {z} (worth a "
          f"look from {agg['player_flag_threshold']})")
    print(f"{agg['submissions']} submissions, {agg['scored']} scored, "
          f"{agg['complete']} complete")
    if doc.get("verdict"):
        print_case(doc["verdict"])
    for sub in doc["submissions"]:
        score = "" if sub["anomaly"] is None else f"{sub['anomaly']:.2f}"
        print(f"  {sub['started_at'][:19]}  {shown(sub['submission_id']):<20} "
              f"{shown(sub['tournament_id']):<12} {shown(sub['puzzle_id']):<14} "
              f"{sub['status']:<8} {score:>7}{'  FLAGGED' if sub['flagged'] else ''}"
              + (f"  ({shown(sub['score_error'])})" if sub.get("score_error") else ""))
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    doc = call(args, "POST", f"/v1/flags/{args.flag_id}/review",
               {"state": args.state, **({"note": args.note} if args.note else {}),
                **({"seen": args.seen} if args.seen else {})})
    print(f"flag {doc['id']} is {doc['state']}; history: "
          + "; ".join(history_entry(h) for h in doc["history"]))
    return 0


# ---------------------------------------------------------------------------- recompute

# how long a recompute waits for a daemon that stopped answering mid-run (a restart by
# systemd answers again well within it, with the run abandoned)
RECOMPUTE_SILENCE_S = 60.0


def cmd_recompute(args: argparse.Namespace) -> int:
    """Run the nightly job now: through the running daemon, or on the file directly."""
    from fairgrid.daemon.work.nightly import STAGES

    client, settings = connect(args, admin=True)
    bar = progress_bar(len(STAGES), "nightly", unit="stage")
    done = set()

    def progress(stage):
        if stage in STAGES and stage not in done:
            done.add(stage)
            if bar:
                bar.set_postfix_str(stage)
                bar.update(1)

    try:
        answer = client.request("POST", "/v1/nightly-runs")
        if answer is not None:
            status, doc = answer
            if status != 202:
                raise CliError(f"the daemon answered {status}: {doc.get('error')}")
            run_id, via = doc["run_id"], "the running daemon"
            silent_since = None
            while True:
                time.sleep(0.5)
                answer = client.request("GET", f"/v1/nightly-runs/{run_id}")
                if answer is None:      # gone: a restart marks the run abandoned
                    silent_since = silent_since or time.monotonic()
                    if time.monotonic() - silent_since > RECOMPUTE_SILENCE_S:
                        raise CliError(f"the daemon stopped answering while run {run_id} "
                                       f"ran; its next start marks the run abandoned")
                    continue
                silent_since = None
                status, doc = answer
                if status >= 400:
                    raise CliError(f"the daemon answered {status} about run {run_id}: "
                                   f"{doc.get('error')}")
                if doc.get("stage") in STAGES:
                    for stage in STAGES[:STAGES.index(doc["stage"]) + 1]:
                        progress(stage)
                if doc.get("status") in ("success", "failed", "abandoned"):
                    break
            if doc["status"] != "success":
                raise CliError(f"run {run_id} {doc['status']}: "
                               f"{(doc.get('rows') or {}).get('error', '')}")
            summary = doc["rows"]
        elif settings is None:
            raise _unreachable(client)
        else:
            summary, via = _recompute_file(settings, progress), "the database file"
    finally:
        if bar:
            bar.close()
    if args.json:
        print(dumps(summary))
    else:
        print(f"nightly run {summary['run_id']} ({via}): {summary['solves']} solves, "
              f"{summary['puzzles']} puzzles, {summary['players']} players, "
              f"{summary['consensus_puzzles']} consensus orders, "
              f"{summary['seconds']:.1f} s")
    return 0


def _recompute_file(settings, progress) -> dict:
    import duckdb

    from fairgrid.daemon.ingest import moves_of
    from fairgrid.daemon.store import StoreError, connect
    from fairgrid.daemon.store.database import erase_again, open_erased
    from fairgrid.daemon.store.repository import nightly as nightly_sql
    from fairgrid.daemon.work.nightly import JOB, run_nightly
    from fairgrid.daemon.work.nightly_db import direct_db
    from fairgrid.daemon.work.pool import Lane, LanePool

    path = _database_file(settings)
    try:
        con = connect(path, settings.storage_checkpoint_mb,
                      settings.storage_memory_limit_mb, moves_of=moves_of)
    except (StoreError, duckdb.Error) as exc:
        raise CliError(f"no daemon answers and the database cannot be opened: {exc}") from None
    try:
        # as the daemon's start does: a backup restored over the file may hold people
        # erased since, whom the job must neither fit nor re-score
        try:
            erase_again(con, open_erased(con, path))
            # the file is this process's alone: a run it shows running was killed
            nightly_sql.abandon_running(con, JOB)
        except (StoreError, duckdb.Error) as exc:
            raise CliError(str(exc).splitlines()[0]) from None
        # the daemon's pool as the daemon builds it: the fit, the per-puzzle work and the
        # players' verdicts run on every core (analysis.workers)
        pool = LanePool(settings.analysis_workers)
        try:
            summary = run_nightly(direct_db(con), settings, progress=progress,
                                  executor=pool.lane(Lane.NIGHTLY))
        except (StoreError, duckdb.Error) as exc:  # a full disk: the ratings before stand
            raise CliError("the nightly job could not write to the database (the ratings "
                           f"in force stay): {str(exc).splitlines()[0]}") from None
        finally:
            pool.shutdown()
        # the write stage left them ``rescore``: the daemon's sweep re-scores them
        summary["rescore_pending"] = len(summary.pop("rescore"))
        return summary
    finally:
        con.close()


def _daemon_options(p) -> None:
    p.add_argument("--url", help="the daemon, e.g. http://127.0.0.1:8080 (default: "
                   "FAIRGRID_URL, else the config's server address)")
    p.add_argument("--token", help="bearer token (default: FAIRGRID_TOKEN, else the "
                   "config's first organiser or admin token)")
    p.add_argument("--config", help=CONFIG_HELP)


def add_commands(sub) -> None:

    p = sub.add_parser("flags", help="list flagged solves (from the running daemon)",
                       description="List flagged solves, newest first: from the running "
                       "daemon's API (address and token from the config), or read-only from "
                       "the database file when no daemon runs.")
    p.add_argument("--tournament", type=named)
    p.add_argument("--player", type=named)
    p.add_argument("--state", choices=(*FLAG_STATES, "any"), default="any",
                   help="the flags in this review state (default: any)")
    p.add_argument("--json", action="store_true", help="one JSON object a line")
    _daemon_options(p)
    p.set_defaults(func=cmd_flags)

    p = sub.add_parser("report", help="the evidence of one scored solve",
                       description="Print a submission's score and evidence: the verdict, "
                       "every signal with its explanation, and the predicted and actual fill "
                       "order side by side. From the running daemon's API, or read-only from "
                       "the database file when no daemon runs.")
    p.add_argument("portal")
    p.add_argument("submission_id")
    p.add_argument("--png", metavar="FILE.png", type=png_file,
                   help="also draw both orders as heatmaps (PNG)")
    p.add_argument("--json", action="store_true", help="print the submission document")
    _daemon_options(p)
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("player", help="a player's solves and season verdict",
                       description="Print a player's season verdict, flags standing and "
                       "Stouffer's Z, the case, and their submissions, newest first (from "
                       "the running daemon).")
    p.add_argument("portal")
    p.add_argument("player_id")
    p.add_argument("--json", action="store_true", help="print the player document")
    _daemon_options(p)
    p.set_defaults(func=cmd_player)

    p = sub.add_parser("review", help="decide on a flag (admin token)",
                       description="Record a decision on a flag: cleared, confirmed, or open "
                       "to reopen it (an appeal). The history keeps every decision.")
    p.add_argument("flag_id", type=ident, help="the id `fairgrid flags` prints")
    p.add_argument("--state", required=True, choices=REVIEW_STATES)
    p.add_argument("--note", help="why, for the history")
    p.add_argument("--seen", choices=FLAG_STATES,
                   help="the flag's state as you read it (`fairgrid flags` prints it): "
                   "refused if another decision or a re-score changed it since")
    _daemon_options(p)
    p.set_defaults(func=cmd_review)

    p = sub.add_parser("recompute", help="run the nightly rating refresh now",
                       description="Run the nightly job once (fit difficulty and skill, "
                       "recalibrate, consensus orders, re-score): through the running "
                       "daemon's API (address and admin token from the config), or directly "
                       "on the database file when no daemon runs.")
    p.add_argument("--json", action="store_true", help="print the run's summary as JSON")
    _daemon_options(p)
    p.set_defaults(func=cmd_recompute)

