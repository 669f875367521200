"""Erasure, retention, export and backup against the real app and DuckDB file."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import duckdb
import numpy as np
import pytest

from fairgrid.analytics.simulate import simulate
from fairgrid.solvers import parse

from fairgrid.daemon.ingest import moves_of
from fairgrid.daemon.store.connection import connect
from fairgrid.daemon.store.repository import lifecycle
from fairgrid.daemon.testing import EASY_ROW_COPY as ROW_COPY
from fairgrid.daemon.testing import free_port
from fairgrid.daemon.app import create_app
from fairgrid.daemon.web.context import CTX

from ...fixtures import EASY, EASY_SOLUTION
from ..helpers import (ADMIN, ORGANISER, bearer, make_settings, nightly_run, query, signed,
                       solve_body, until)


async def _post(client, sid, player, moves=None, tournament="cup", **extra):
    body = solve_body(submission_id=sid, moves=moves, tournament_id=tournament,
                      player_id=player, **extra)
    raw, headers = signed(body, msg_id=f"hook-{sid}")
    resp = await client.post("/v1/webhooks/solves", data=raw, headers=headers)
    assert resp.status == 202, await resp.text()


async def _all_scored(client, sids):
    async def done():
        for sid in sids:
            doc = await (await client.get(f"/v1/submissions/demo/{sid}",
                                          headers=bearer(ORGANISER))).json()
            if doc.get("status") != "scored":
                return False
        return True
    await until(done, 180)


def _mentions(store, needles: list[str]) -> dict[str, int]:
    """Rows of every table whose any text column contains any of ``needles``."""
    found = {}
    tables = query(store, "SELECT table_name FROM information_schema.tables "
                   "WHERE table_schema = 'main'")
    for (table,) in tables:
        cols = [c for (c,) in query(store, "SELECT column_name FROM information_schema.columns"
                                    " WHERE table_name = ? AND data_type = 'VARCHAR'",
                                    [table])]
        if not cols:
            continue
        cond = " OR ".join(f'contains("{c}", ?)' for c in cols for _ in needles)
        params = [n for _ in cols for n in needles]
        n = query(store, f'SELECT count(*) FROM "{table}" WHERE {cond}', params)[0][0]
        if n:
            found[table] = n
    return found


async def test_erasure_leaves_nothing_of_the_person_and_ratings_still_work(aiohttp_client,
                                                                          tmp_path):
    # a fit on three players' solves is in force from nightly.min_solves = 3
    client = await aiohttp_client(create_app(make_settings(tmp_path, nightly_min_solves=3)))
    await _post(client, "stays", "keep-me")
    await _all_scored(client, ["stays"])
    ratings = (await (await client.get("/v1/puzzles/easy", headers=bearer(ORGANISER))).json()
               )["ratings"]

    def honest(seed):
        return simulate(parse(EASY), np.array([int(c) for c in EASY_SOLUTION]), "honest",
                        rng=seed, expected_log_s=ratings["expected_log_s"],
                        sd_log=ratings["sd_log"], skill=0.0).moves()
    # honest, and the person's first solve of the puzzle: it counts for ratings
    await _post(client, "gone-2", "erase-me", honest(4))
    await _post(client, "gone-1", "erase-me", ROW_COPY,  # flagged, a day later
                started_at="2026-11-22T10:00:00Z")
    await _post(client, "also-1", "keep-2", honest(5))
    await _post(client, "also-2", "keep-3", honest(6))
    # another player sends the person's honest log again: its evidence names theirs
    await _post(client, "repeat", "keep-4", [{**m, "t_ms": m["t_ms"] + 1500}
                                             for m in honest(4)])
    await _all_scored(client, ["gone-1", "gone-2", "also-1", "also-2", "repeat"])
    repeat = (await (await client.get("/v1/submissions/demo/repeat", headers=bearer(
        ORGANISER))).json())["score"]
    assert repeat["flagged"] and repeat["log_match"]["submission_id"] == "gone-2"
    await nightly_run(client)  # the person now has a skill rating too
    store = client.server.app[CTX].store
    assert _mentions(store, ["erase-me"])  # everywhere before
    resp = await client.post("/v1/players/demo/erase-me/erase", headers=bearer(ORGANISER))
    assert resp.status == 403
    resp = await client.post("/v1/players/demo/erase-me/erase", headers=bearer(ADMIN))
    assert resp.status == 200
    doc = await resp.json()
    rows = doc["erased"]
    assert doc["file_rewritten"] is True
    assert rows["submissions"] == 2 and rows["moves"] == 2 * 49 and rows["flags"] >= 1
    assert rows["player_ratings"] >= 1 and rows["scores"] == 2
    assert _mentions(store, ["erase-me", "gone-1", "gone-2"]) == {}
    repeat = (await (await client.get("/v1/submissions/demo/repeat", headers=bearer(
        ORGANISER))).json())["score"]
    assert repeat["flagged"] and repeat["log_match"]["submission_id"] is None
    assert repeat["log_match"]["erased"] is True
    assert "a solve since erased" in next(
        s["explanation"] for s in repeat["signals"] if s["name"] == "log_match")
    # the erasure is on record, without whom it was about
    (at, portal, actor, counted, rewritten), = query(store, "SELECT * FROM erasures")
    assert portal == "demo" and actor == "service token 1 (admin)" and rewritten >= at
    assert json.loads(counted) == rows
    assert (await client.post("/v1/players/demo/erase-me/erase",
                              headers=bearer(ADMIN))).status == 404
    # the other player, the puzzle and the ratings are as they were, and a run still works
    assert (await client.get("/v1/submissions/demo/stays", headers=bearer(ORGANISER))).status == 200
    await nightly_run(client)


async def test_retention_drops_old_move_logs_and_keeps_the_verdicts(client):
    await _post(client, "old", "p-1", ROW_COPY)
    await _all_scored(client, ["old"])
    store = client.server.app[CTX].store
    future = datetime.now(timezone.utc) + timedelta(days=1)
    # its flag is open: the reviewer decides on the replay, so the log stays till then
    moves = query(store, "SELECT count(*) FROM moves")[0][0]
    assert await asyncio.wrap_future(store.write(lifecycle.apply_retention, future)) == 0
    assert query(store, "SELECT count(*) FROM moves")[0][0] == moves > 0
    (flag,), = query(store, "SELECT id FROM flags")
    resp = await client.post(f"/v1/flags/{flag}/review", headers=bearer(ADMIN),
                             json={"state": "confirmed"})
    assert resp.status == 200
    assert await asyncio.wrap_future(store.write(lifecycle.apply_retention, future)) == 1
    assert query(store, "SELECT count(*) FROM moves")[0][0] == 0
    raw = json.loads(query(store, "SELECT raw FROM submissions")[0][0])
    assert "moves" not in raw and raw["player_id"] == "p-1"
    assert query(store, "SELECT count(*) FROM flags")[0][0] == 1
    assert await asyncio.wrap_future(store.write(lifecycle.apply_retention, future)) == 0


async def test_export_is_read_back_by_duckdb(client, tmp_path):
    await _post(client, "a", "p-1", ROW_COPY)
    await _post(client, "b", "p-2")
    await _post(client, "c", "p-3", tournament="other-cup")
    await _all_scored(client, ["a", "b", "c"])
    flags = (await (await client.get("/v1/flags?tournament=cup", headers=bearer(ADMIN))
                    ).json())["flags"]
    assert flags  # the row copy at least
    await client.post(f"/v1/flags/{flags[0]['id']}/review", headers=bearer(ADMIN),
                      json={"state": "confirmed"})
    # each flag's history starts with its raising; one review more
    expect = {"submissions": 2, "scores": 2, "flags": len(flags), "reviews": len(flags) + 1}
    for fmt, reader in (("parquet", "read_parquet"), ("csv", "read_csv")):
        for table, n in expect.items():
            resp = await client.get(f"/v1/tournaments/cup/export/{table}.{fmt}",
                                    headers=bearer(ADMIN))
            assert resp.status == 200 and resp.headers["X-Fairgrid-Rows"] == str(n)
            path = tmp_path / f"{table}.{fmt}"
            path.write_bytes(await resp.read())
            con = duckdb.connect()
            assert con.execute(f"SELECT count(*) FROM {reader}(?)", [str(path)]).fetchone()[0] == n
            if table == "submissions":
                ids = sorted(r[0] for r in con.execute(
                    f"SELECT submission_id FROM {reader}(?)", [str(path)]).fetchall())
                assert ids == ["a", "b"]
            con.close()
    try:
        import pyarrow.parquet as pq
    except ImportError:
        pq = None
    if pq is not None:  # where pyarrow is installed it reads them as well
        assert pq.read_table(tmp_path / "flags.parquet").num_rows == len(flags)
    for path in ("/v1/tournaments/cup/export/nope.csv", "/v1/tournaments/cup/export/flags.xml",
                 "/v1/tournaments/nope/export/flags.csv"):
        assert (await client.get(path, headers=bearer(ADMIN))).status == 404
    resp = await client.get("/v1/tournaments/nope/export/flags.csv", headers=bearer(ADMIN))
    assert "'nope'" in (await resp.json())["error"]
    assert (await client.get("/v1/tournaments/cup/export/flags.csv",
                             headers=bearer(ORGANISER))).status == 403
    # through the daemon, `fairgrid export` of a tournament it refuses leaves no folder
    from fairgrid.daemon.cli import main as cli_main

    out = tmp_path / "new" / "out"
    rc = await asyncio.to_thread(cli_main, [
        "export", "--tournament", "nope", "--out", str(out),
        "--url", str(client.make_url("")).rstrip("/"), "--token", ADMIN])
    assert rc == 2 and not (tmp_path / "new").exists()
    rc = await asyncio.to_thread(cli_main, [
        "export", "--tournament", "cup", "--out", str(out),
        "--url", str(client.make_url("")).rstrip("/"), "--token", ADMIN])
    assert rc == 0 and len(list(out.iterdir())) == 4


async def test_a_backup_under_load_holds_every_acknowledged_solve(client, tmp_path):
    acked: list[str] = []
    stop = asyncio.Event()

    async def load():
        k = 0
        while not stop.is_set():
            await _post(client, f"load-{k}", f"p-{k % 7}")
            acked.append(f"load-{k}")
            k += 1

    sender = asyncio.create_task(load())
    await until(lambda: _at_least(acked, 30))
    before = list(acked)  # acknowledged before the backup was asked for
    resp = await client.post("/v1/backups", headers=bearer(ADMIN))
    await until(lambda: _at_least(acked, len(before) + 10))
    stop.set()
    await sender
    assert resp.status == 201, await resp.text()
    doc = await resp.json()
    con = duckdb.connect(doc["path"], read_only=True)
    stored = {s for (s,) in con.execute("SELECT submission_id FROM submissions").fetchall()}
    con.close()
    assert set(before) <= stored and doc["rows"]["submissions"] == len(stored)
    assert doc["path"].startswith(str(tmp_path / "backups"))  # storage.backup_dir
    bad = await client.post("/v1/backups", json={"dir": "/etc"}, headers=bearer(ADMIN))
    assert bad.status == 422  # the API writes nowhere else
    # restore: the CLI puts it in place of a stopped daemon's file, which then opens
    target = tmp_path / "restored.duckdb"
    out = subprocess.run([sys.executable, "-m", "fairgrid.daemon.cli", "restore", doc["path"],
                          "--to", str(target)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert f"{len(stored)} submissions" in out.stdout
    again = subprocess.run([sys.executable, "-m", "fairgrid.daemon.cli", "restore",
                            doc["path"], "--to", str(target)], capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 2 and "--force" in again.stderr
    # solves committed while the backup took its snapshot may have come without their
    # moves rows; the first start re-derives them from the raw bodies, as after a crash
    con = connect(str(target), moves_of=moves_of)
    assert con.execute("SELECT count(*) FROM submissions").fetchone()[0] == len(stored)
    assert con.execute("SELECT count(*) FROM moves").fetchone()[0] == 49 * len(stored)
    con.close()


async def _at_least(items, n):
    return len(items) >= n


async def test_a_backup_folder_out_of_room_is_named_not_the_database(client, tmp_path,
                                                                     monkeypatch):
    """The backup's folder fills up (DuckDB's write fails with ENOSPC): a 507 naming the
    folder and what to do, nothing left behind, and the database serves on."""
    from fairgrid.daemon.store import backups

    def full(cur, path, now):
        with open(path, "wb") as fh:
            fh.write(b"half a backup")
        raise duckdb.IOException(f'IO Error: Could not write file "{path}": No space left '
                                 "on device")
    monkeypatch.setattr(backups.sql, "copy_database", full)
    resp = await client.post("/v1/backups", headers=bearer(ADMIN))
    doc = await resp.json()
    assert resp.status == 507 and doc["field"] == "storage.backup_dir", doc
    assert str(tmp_path / "backups") in doc["error"] and "No space left" in doc["error"]
    assert "storage.backup_dir" in doc["error"]
    assert list((tmp_path / "backups").iterdir()) == []
    assert (await client.get("/readyz")).status == 200


async def test_a_score_or_rating_computed_before_an_erasure_does_not_bring_it_back(client):
    from fairgrid.daemon.store.repository import nightly, scores

    await _post(client, "gone", "erase-me", ROW_COPY)
    await _all_scored(client, ["gone"])
    store = client.server.app[CTX].store
    assert (await client.post("/v1/players/demo/erase-me/erase",
                              headers=bearer(ADMIN))).status == 200
    # a scoring batch and a rating run that started before the erasure now write
    batch = {"sub_key": np.array([1], dtype=np.int64),
             "portal": np.array(["demo"], dtype=object),
             "submission_id": np.array(["gone"], dtype=object),
             "anomaly": np.array([9.0]), "p_value": np.array([1e-9]),
             "flagged": np.array([True]), "evidence": np.array(["{}"], dtype=object),
             "reasons": np.array(['["speed"]'], dtype=object),
             "note": np.array(["raised"], dtype=object),
             "run_id": np.array([None], dtype=object)}
    now = datetime.now(timezone.utc)
    await asyncio.wrap_future(store.write(scores.write_scores, batch, now, False))
    run = nightly.RatingRunRow("late-run", now, 1, 0, 1, 0.0, 0.3, "{}", "{}", "{}", "{}")
    players = {"run_id": np.array(["late-run"], dtype=object),
               "portal": np.array(["demo"], dtype=object),
               "player_id": np.array(["erase-me"], dtype=object),
               "skill": np.array([0.1]), "solves": np.array([1], dtype=np.int64),
               "puzzle_type": np.array(["sudoku"], dtype=object)}
    puzzles = {"puzzle_id": np.array([], dtype=object)}
    await asyncio.wrap_future(store.write(nightly.write_rating_run, run, puzzles, players))
    assert _mentions(store, ["erase-me", "gone"]) == {}


def _bytes_of(db: Path, needle: str) -> int:
    """Occurrences of ``needle`` in the database file and its WAL, as bytes on disk."""
    return sum(p.read_bytes().count(needle.encode())
               for p in (db, Path(str(db) + ".wal")) if p.exists())


async def _erasable(client, player: str, sids: list[str]):
    """``player``'s solves stored, scored, flagged, with a pending flag.raised event
    (its payload names them): every place a person's id lives."""
    await client.put("/v1/portals/demo/notify", json={"url": "http://127.0.0.1:9/h"},
                     headers=bearer(ADMIN))
    sent = []
    for sid in sids:
        body = solve_body(submission_id=sid, moves=ROW_COPY, tournament_id="cup",
                          player_id=player)
        raw, headers = signed(body, msg_id=f"hook-{sid}")
        resp = await client.post("/v1/webhooks/solves", data=raw, headers=headers)
        assert resp.status == 202, await resp.text()
        sent.append((raw, headers))
    await _all_scored(client, sids)
    store = client.server.app[CTX].store
    await until(lambda: _rows_at_least(store, "SELECT count(*) FROM outbox", len(sids)))
    return sent


async def _rows_at_least(store, sql, n):
    return query(store, sql)[0][0] >= n


async def test_an_erased_persons_bytes_leave_the_file_and_their_webhooks_are_refused(
        client, tmp_path):
    db = tmp_path / "fairgrid.duckdb"
    who = "erase-me-5d1c9a"  # a string found nowhere else in the file
    sent = await _erasable(client, who, ["e-1", "e-2"])
    await _post(client, "stays", "keep-me")
    store = client.server.app[CTX].store
    assert _bytes_of(db, who) > 0  # raw bodies, outbox payloads: on disk before
    resp = await client.post(f"/v1/players/demo/{who}/erase", headers=bearer(ADMIN))
    assert resp.status == 200, await resp.text()
    assert _bytes_of(db, who) == 0
    assert (await resp.json())["file_rewritten"] is True
    # the portal retries the very same signed webhook: refused, and nothing stored
    for raw, headers in sent:
        again = await client.post("/v1/webhooks/solves", data=raw, headers=headers)
        assert again.status == 410, await again.text()
        doc = await again.json()
        assert doc["field"] == "player_id" and "erased" in doc["error"]
    fresh = solve_body(submission_id="e-3", player_id=who)
    raw, headers = signed(fresh, msg_id="hook-e-3")
    assert (await client.post("/v1/webhooks/solves", data=raw, headers=headers)).status == 410
    await _post(client, "other", "keep-me")  # everyone else is served as before
    assert (await client.get(f"/v1/players/demo/{who}", headers=bearer(ORGANISER))
            ).status == 404
    assert query(store, "SELECT count(*) FROM erased_players")[0][0] == 1
    await client.close()  # a checkpoint and close: still nothing of them
    assert _bytes_of(db, who) == 0
    assert (tmp_path / "fairgrid.duckdb.erasure-key").stat().st_mode & 0o777 == 0o600


async def test_a_backup_from_before_an_erasure_restored_does_not_bring_the_person_back(
        aiohttp_client, tmp_path):
    db = tmp_path / "fairgrid.duckdb"
    who = "erase-me-83b0e2"
    client = await aiohttp_client(create_app(make_settings(tmp_path)))
    sent = await _erasable(client, who, ["r-1"])
    await _post(client, "stays", "keep-me")
    backup = await client.post("/v1/backups", headers=bearer(ADMIN))
    assert backup.status == 201
    old = (await backup.json())["path"]
    assert _bytes_of(Path(old), who) > 0  # the backup holds them: erasure cannot reach it
    assert (await client.post(f"/v1/players/demo/{who}/erase", headers=bearer(ADMIN))
            ).status == 200
    # someone who came after the backup, and is erased: the backup never held them
    await _post(client, "late", "came-later")
    assert (await client.post("/v1/players/demo/came-later/erase", headers=bearer(ADMIN))
            ).status == 200
    await client.close()
    out = subprocess.run([sys.executable, "-m", "fairgrid.daemon.cli", "restore", old,
                          "--to", str(db), "--force"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "1 player(s) erased after this backup" in out.stderr
    assert _bytes_of(db, who) > 0  # the old file is back in place, the person with it

    # before any daemon starts, the commands that read the file themselves
    cfg = tmp_path / "offline.toml"
    cfg.write_text(f'[storage]\npath = "{db}"\n[server]\nport = {free_port()}\n')

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "fairgrid.daemon.cli", *args,
                               "--config", str(cfg), "--token", "adm"],
                              capture_output=True, text=True, timeout=120)
    exported = cli("export", "--tournament", "cup", "--out", str(tmp_path / "ex"))
    assert exported.returncode == 2, exported
    assert len(exported.stderr.splitlines()) == 1
    assert "1 player(s) erased after the backup" in exported.stderr
    assert not list((tmp_path / "ex").glob("*"))  # nothing of theirs written out
    # nor shown: the flags and a report read from the file refuse the same way
    for shown in (cli("flags"), cli("report", "demo", "r-1")):
        assert shown.returncode == 2 and who not in shown.stdout, shown
        assert "1 player(s) erased after the backup" in shown.stderr
    # the nightly job on the file erases them again first, as the daemon's start does:
    # it neither fits nor re-scores them, and the file's flags no longer hold them
    ran = cli("recompute")
    assert ran.returncode == 0, ran.stderr
    shown = cli("flags")
    assert shown.returncode == 0 and who not in shown.stdout, shown
    backed = cli("backup", str(tmp_path / "bk"))
    assert backed.returncode == 0, backed.stderr
    made = Path(backed.stdout.strip())
    assert _bytes_of(made, who) == 0 and _bytes_of(made, "keep-me") > 0
    # the file itself is rewritten at the daemon's start (below)

    client = await aiohttp_client(create_app(make_settings(tmp_path)))
    store = client.server.app[CTX].store
    assert _bytes_of(db, who) == 0  # erased again, and the file rewritten, at the start
    assert _mentions(store, [who, "r-1"]) == {}
    assert (await client.get("/v1/submissions/demo/stays", headers=bearer(ORGANISER))
            ).status == 200
    # the backup predates the erasure's record; the file's own erasing again records one
    actors = [a for (a,) in query(store, "SELECT actor FROM erasures")]
    assert actors == ["fairgrid (an erasure a restore had undone)"]
    raw, headers = sent[0]
    assert (await client.post("/v1/webhooks/solves", data=raw, headers=headers)).status == 410


async def test_without_its_key_the_erased_list_is_refused_at_start(aiohttp_client, tmp_path):
    from fairgrid.daemon.store import Store, StoreError

    client = await aiohttp_client(create_app(make_settings(tmp_path)))
    await _post(client, "gone", "erase-me")
    assert (await client.post("/v1/players/demo/erase-me/erase", headers=bearer(ADMIN))
            ).status == 200
    await client.close()
    (tmp_path / "fairgrid.duckdb.erasure-key").unlink()
    with pytest.raises(StoreError, match="erasure key .* is missing"):
        Store(str(tmp_path / "fairgrid.duckdb"))


async def test_the_rewrite_after_an_erasure_loses_nothing_under_load(client):
    await _post(client, "gone", "erase-me")
    acked: list[str] = []
    stop = asyncio.Event()

    async def load():
        k = 0
        while not stop.is_set():
            await _post(client, f"load-{k}", f"p-{k % 7}")
            acked.append(f"load-{k}")
            k += 1

    async def reads():  # organiser reads go on through the rewrite too
        while not stop.is_set():
            resp = await client.get("/v1/flags", headers=bearer(ORGANISER))
            assert resp.status == 200
    tasks = [asyncio.create_task(load()), asyncio.create_task(reads())]
    await until(lambda: _at_least(acked, 20))
    resp = await client.post("/v1/players/demo/erase-me/erase", headers=bearer(ADMIN))
    during = len(acked)
    await until(lambda: _at_least(acked, during + 20))
    stop.set()
    await asyncio.gather(*tasks)
    assert resp.status == 200 and (await resp.json())["file_rewritten"] is True
    store = client.server.app[CTX].store
    stored = {s for (s,) in query(store, "SELECT submission_id FROM submissions")}
    assert stored == set(acked)
    assert query(store, "SELECT count(*) FROM moves", needs_moves=True)[0][0] == 49 * len(acked)
