"""Commands for the data's life outside scoring: where notifications go and whether they
arrived, erasing a person, exports and backups (through the running daemon, which holds
the database; ``backup`` and ``export`` also work on the file when no daemon runs)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..json_out import dumps
from ..text import file_stem, shown
from .client import quote
from .common import CliError, named
from .organiser_tools import (_daemon_options, _database_file, _unreachable, call, connect,
                              open_file)


def cmd_notify(args: argparse.Namespace) -> int:
    path = f"/v1/portals/{quote(args.portal)}/notify"
    if args.off:
        call(args, "DELETE", path)
        print(f"portal {args.portal}: no notifications")
        return 0
    if not args.endpoint:
        raise CliError("give the endpoint URL, or --off")
    doc = call(args, "PUT", path, {"url": args.endpoint})
    print(f"portal {args.portal}: events go to {doc['url']}, signed with the secret below "
          "(shown this once; the portal verifies with it as fairgrid verifies webhooks)",
          file=sys.stderr)
    print(doc["secret"])
    return 0


def cmd_notifications(args: argparse.Namespace) -> int:
    if args.redeliver:
        doc = call(args, "POST", f"/v1/notifications/{quote(args.redeliver)}/redeliver")
        print(f"{doc['id']} queued for delivery")
        return 0
    query = "&".join(f"{k}={quote(v)}" for k, v in (("state", args.state),
                                                     ("portal", args.portal)) if v)
    doc = call(args, "GET", "/v1/notifications" + (f"?{query}" if query else ""),
                admin=False)
    rows = doc["notifications"]
    if args.json:
        for r in rows:
            print(dumps(r))
        return 0
    print(f"{len(rows)} notification{'s' if len(rows) != 1 else ''}")
    if rows:
        print("id\ttype\tportal\tstate\tattempts\tcreated\tlast error")
    for r in rows:
        print(f"{r['id']}\t{r['type']}\t{r['portal']}\t{r['state']}\t{r['attempts']}\t"
              f"{r['created_at'][:19]}\t{shown(r['last_error']) if r['last_error'] else ''}")
    return 0


def cmd_erase(args: argparse.Namespace) -> int:
    if not args.yes:
        raise CliError(f"this removes every solve, score, flag and review of {args.player!r} "
                       f"of portal {args.portal!r} for good: add --yes")
    doc = call(args, "POST", f"/v1/players/{quote(args.portal)}/{quote(args.player)}/erase")
    rows = doc["erased"]
    print(f"erased {args.portal}/{args.player}: " + ", ".join(
        f"{n} {table}" for table, n in rows.items() if n))
    if not doc.get("file_rewritten", True):
        print("the database file could not be rewritten yet (the daemon's log says why): "
              "their deleted rows' bytes stay in it until the daemon's next start",
              file=sys.stderr)
    return 0


def _download(client, path: str, target: Path) -> int:
    """GET a binary route into ``target``; the row count the daemon reports. An answer
    cut short (a daemon that stopped, a proxy's timeout) is a CliError, not a file."""
    import http.client
    import urllib.error
    import urllib.request

    req = urllib.request.Request(client.base_url + path,
                                 headers={"Authorization": f"Bearer {client.token}"})
    try:
        with urllib.request.urlopen(req, timeout=600) as resp, open(target, "wb") as out:
            got = 0
            while chunk := resp.read(1 << 20):
                out.write(chunk)
                got += len(chunk)
            length = resp.headers.get("Content-Length")
            if length is not None and length.isdigit() and got != int(length):
                raise http.client.IncompleteRead(b"", int(length) - got)
            return int(resp.headers.get("X-Fairgrid-Rows", "0"))
    except (http.client.IncompleteRead, ConnectionError, TimeoutError) as exc:
        raise CliError(f"the daemon's answer for {target.name} was cut short "
                       f"({type(exc).__name__}); nothing was written, export again") from None
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read()).get("error")
        except ValueError:
            message = exc.reason
        raise CliError(f"the daemon answered {exc.code}: {message}") from None


def folder(path: str) -> Path:
    """A folder to write into, made (with its parents) only once there is something to
    write: a command that fails before leaves nothing behind. Named as a file, or
    under one, is refused at once."""
    out = Path(path).resolve()
    top = outermost_missing(out)
    nearest = out if top is None else top.parent  # the folder it will be made in
    if not nearest.is_dir():
        raise CliError(f"{nearest} is a file, not a folder")
    return out


def outermost_missing(out: Path) -> Path | None:
    """The outermost of ``out`` and its parents that does not exist yet (what making
    ``out`` makes first), or None when ``out`` exists."""
    return next((at for at in reversed((out, *out.parents)) if not at.exists()), None)


EXPORT_TMP = ".export-"      # an export's hidden folder while it writes
STALE_EXPORT_S = 3600        # ... left by a kill: removed by a later export after this


def _remove_stale_exports(out: Path) -> None:
    """Remove the hidden folders exports a kill stopped left in ``out`` (an hour old:
    an export running beside this one keeps its own)."""
    import shutil
    import time

    for old in out.glob(EXPORT_TMP + "*"):
        try:
            if old.is_dir() and time.time() - old.stat().st_mtime > STALE_EXPORT_S:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:
            continue


def cmd_export(args: argparse.Namespace) -> int:
    import contextlib
    import shutil
    import tempfile

    import duckdb

    from fairgrid.daemon.store.repository import lifecycle

    out = folder(args.out)
    client, settings = connect(args, admin=True)
    name = file_stem(args.tournament)
    alive = client.request("GET", "/healthz") is not None
    if not alive and settings is None:
        raise _unreachable(client)
    # no daemon: straight from the file, read-only
    with contextlib.nullcontext() if alive else open_file(settings.storage_path) as con:
        if con is not None and not lifecycle.tournament_known(con.cursor(), args.tournament):
            raise CliError(f"no solve was sent for tournament {args.tournament!r}")
        targets = {t: out / f"{name}-{t}.{args.format}" for t in lifecycle.EXPORTS}
        for target in targets.values():
            if target.is_dir():
                raise CliError(f"{target} is a folder: the export writes a file there")
        # every file into a hidden folder of its own first, moved out once all are
        # written: a failure while writing leaves none of them (a kill leaves that
        # folder, removed by a later export here)
        made = outermost_missing(out)
        out.mkdir(parents=True, exist_ok=True)
        _remove_stale_exports(out)
        tmp = Path(tempfile.mkdtemp(dir=out, prefix=EXPORT_TMP))
        written, done = [], False
        try:
            for table, target in targets.items():
                part = tmp / target.name
                if con is None:
                    rows = _download(client, f"/v1/tournaments/{quote(args.tournament)}/"
                                     f"export/{table}.{args.format}", part)
                else:
                    rows = lifecycle.export_to(con.cursor(), args.tournament, table,
                                               args.format, str(part))
                written.append((part, target, rows))
            for part, target, _ in written:
                part.replace(target)
            done = True
        except duckdb.Error as exc:
            raise CliError(f"the export failed: {str(exc).splitlines()[0]}") from None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            if not done and made is not None:  # the folders this export made, if empty
                for at in (out, *out.parents):
                    try:
                        at.rmdir()
                    except OSError:
                        break
                    if at == made:
                        break
    for _, target, rows in written:
        print(f"{target}\t{rows} rows")
    return 0


def _move_backup(made: Path, target_dir: Path) -> Path:
    """Move the backup the daemon wrote to ``target_dir``, whole or not at all: across
    file systems a move is a copy, made under the ``.partial`` name a restore refuses and
    renamed once complete. CliError saying where the backup is when it cannot be moved."""
    import shutil

    from fairgrid.daemon.store import files

    target = target_dir / made.name
    part = target.with_name(target.name + files.PARTIAL)
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        try:
            made.rename(target)  # the same file system: one step
            return target
        except OSError:
            shutil.copyfile(made, part)
            files.publish(part, target)  # whole on disk before it takes the final name
    except OSError as exc:
        try:
            part.unlink(missing_ok=True)
        except OSError:
            pass  # no folder to hold it: nothing was written
        raise CliError(f"the backup is whole at {made}, but it cannot be moved to "
                       f"{target_dir}: {exc.strerror or exc}") from None
    try:
        made.unlink()
    except OSError as exc:  # e.g. the daemon's file, another user's: the copy stands
        print(f"fairgrid backup: copied to {target}; the daemon's copy at {made} remains "
              f"({exc.strerror or exc})", file=sys.stderr)
    return target


def _not_older(path: str) -> None:
    """CliError for a database of an older schema than this fairgrid's: opening it to
    back it up would upgrade it first, and the copy too, leaving nothing the fairgrid
    that wrote it can go back to (the backup is taken before an upgrade)."""
    import duckdb

    from fairgrid.daemon.store import StoreError
    from fairgrid.daemon.store.connection import migrations, read_only
    from fairgrid.daemon.store.repository.lifecycle import schema_version

    try:
        with read_only(path, replacements=False) as con:
            version = schema_version(con)
    except (StoreError, duckdb.Error):
        return      # no fairgrid schema yet, or locked: opening it says what is wrong
    ours = migrations()[-1][0]
    if version is not None and version < ours:
        raise CliError(f"the database {path} has schema version {version}, older than this "
                       f"fairgrid's {ours}: a backup would upgrade it first; back it up with "
                       "the fairgrid that wrote it, or copy the file while nothing runs on it")


def cmd_backup(args: argparse.Namespace) -> int:
    import os

    target_dir = folder(args.dir) if args.dir else None
    client, settings = connect(args, admin=True)
    answer = client.request("POST", "/v1/backups", b"{}", {"content-type": "application/json"})
    if answer is not None:
        status, doc = answer
        if status >= 400:
            raise CliError(f"the daemon answered {status}: {doc.get('error')}")
        if target_dir is not None:  # the daemon writes to its backup_dir; move it here
            made = Path(doc["path"])
            if not made.exists():
                raise CliError(f"the daemon wrote {made}, which is not on this machine: "
                               "fetch it from there")
            doc["path"] = str(_move_backup(made, target_dir))
    elif settings is None:
        raise _unreachable(client)
    else:  # no daemon: the file is ours
        from datetime import datetime, timezone

        import duckdb

        from fairgrid.daemon.store import StoreError
        from fairgrid.daemon.store.backups import write_backup
        from fairgrid.daemon.store.connection import connect as open_db
        from fairgrid.daemon.store.database import erase_again, open_erased
        from fairgrid.daemon.web.lifecycle import backup_dir

        _database_file(settings)    # a path nobody made is refused, not made empty
        _not_older(settings.storage_path)
        into = target_dir or backup_dir(settings)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        target = into / f"fairgrid-{stamp}.duckdb"
        try:
            con = open_db(settings.storage_path)
        except StoreError as exc:
            raise CliError(str(exc)) from None
        try:
            into.mkdir(parents=True, exist_ok=True)  # once the file opened
            # as the daemon's start does: a backup restored over the file may hold people
            # erased since, and this copy must not carry them on
            erase_again(con, open_erased(con, settings.storage_path))
            rows = write_backup(con.cursor(), target)
        except (StoreError, duckdb.Error) as exc:
            raise CliError(str(exc).splitlines()[0]) from None
        finally:
            con.close()
        doc = {"path": str(target), "bytes": os.path.getsize(target), "rows": rows}
    print(doc["path"])
    print(f"backup of {doc['rows']['submissions']} submissions, {doc['bytes']:,} bytes; "
          "restore with: fairgrid restore " + doc["path"], file=sys.stderr)
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    """Put a backup in place of the database file (the daemon must be stopped): only a
    whole one, and only once the copy is checked (:func:`store.backups.restore`)."""
    from fairgrid.daemon.store import StoreError
    from fairgrid.daemon.store.backups import restore

    from .common import settings_of

    source = Path(args.backup)
    target = Path(args.to) if args.to else Path(settings_of(args.config).storage_path)
    try:
        done = restore(source, target, force=args.force)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    print(f"restored {target} from {source}: schema version {done.version}, "
          f"{done.counts.get('submissions', 0)} submissions (every row read back and compared)")
    if done.erased_again:
        print(f"{done.erased_again} player(s) erased after this backup was taken are erased "
              "again when the daemon starts", file=sys.stderr)
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("notify", help="send a portal signed events (flag.raised, "
                       "flag.reviewed, player.flagged, ratings.updated)",
                       description="Set where a portal's events go. Prints the new signing "
                       "secret once; --off stops them.")
    p.add_argument("portal")
    p.add_argument("endpoint", nargs="?", metavar="URL", help="where the events go")
    p.add_argument("--off", action="store_true", help="send this portal no more events")
    _daemon_options(p)
    p.set_defaults(func=cmd_notify)

    p = sub.add_parser("notifications", help="outgoing notifications and their delivery",
                       description="List outgoing notifications, newest first, or redeliver "
                       "one (an admin token).")
    p.add_argument("--state", choices=("pending", "delivered", "failed"))
    p.add_argument("--portal", type=named)
    p.add_argument("--redeliver", metavar="ID", type=named,
                   help="queue this notification again")
    p.add_argument("--json", action="store_true", help="one JSON object a line")
    _daemon_options(p)
    p.set_defaults(func=cmd_notifications)

    p = sub.add_parser("erase", help="forget a player (every solve, score, flag, review)",
                       description="Remove a person's solves, moves, scores, flags, reviews, "
                       "notifications and skill ratings, in one transaction, through the "
                       "running daemon, which then rewrites its database file so that none "
                       "of their bytes remain. Their solves are refused from then on (410). "
                       "The erasure is recorded without naming them; backups taken before "
                       "still hold them (docs/operations.md).")
    p.add_argument("portal")
    p.add_argument("player")
    p.add_argument("--yes", action="store_true", help="yes, for good")
    _daemon_options(p)
    p.set_defaults(func=cmd_erase)

    p = sub.add_parser("export", help="a tournament's submissions, scores, flags, reviews",
                       description="Write a tournament's submissions, scores, flags and "
                       "reviews as four CSV or Parquet files (DuckDB's COPY): through the "
                       "running daemon, or from the file when none runs.")
    p.add_argument("--tournament", required=True, type=named)
    p.add_argument("--format", choices=("csv", "parquet"), default="csv")
    p.add_argument("--out", default=".", help="folder to write into (default: here)")
    _daemon_options(p)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("backup", help="a consistent copy of the database, while it runs",
                       description="Copy the whole database as of one moment into a new "
                       "DuckDB file (DuckDB's COPY FROM DATABASE): by the running daemon, "
                       "which keeps serving, into its storage.backup_dir, then moved to DIR "
                       "if given; or directly when none runs.")
    p.add_argument("dir", nargs="?", help="where to put it (default: the daemon's "
                   "storage.backup_dir)")
    _daemon_options(p)
    p.set_defaults(func=cmd_backup)

    p = sub.add_parser("restore", help="put a backup in place (the daemon stopped)",
                       description="Check a backup is whole (no WAL beside it, not a "
                       ".partial, every row readable), copy it beside the database file "
                       "(the config's storage.path, or --to), check the copy holds the "
                       "same rows, and rename it over the file. The daemon must be "
                       "stopped; an existing database needs --force.")
    p.add_argument("backup")
    p.add_argument("--to", help="the database file to write (default: the config's)")
    p.add_argument("--force", action="store_true", help="replace an existing file")
    p.add_argument("--config")
    p.set_defaults(func=cmd_restore)
