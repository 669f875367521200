"""The command line's rough edges, each pinned: one-line usage errors everywhere, the
password's length checked at once, a Nurikabe puzzle given to a Sudoku command, 16×16
givens as letters, ``flags --state any``, and simulated players per puzzle type."""

from __future__ import annotations

import argparse
import os

import numpy as np
import pytest

from fairgrid.daemon.cli import build_parser, main
from fairgrid.daemon.cli.common import CliError
from fairgrid.daemon.cli.puzzle_tools import render_ranks
from fairgrid.daemon.cli.user_tools import _password


def _commands(parser: argparse.ArgumentParser, prefix=()):
    """Every command and subcommand, as the words that name it."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix
    for action in subs:
        for name, sub in action.choices.items():
            yield from _commands(sub, (*prefix, name))


def test_every_usage_error_is_one_line_naming_help(capsys):
    commands = list(_commands(build_parser()))
    assert len(commands) > 20
    for words in commands:
        with pytest.raises(SystemExit) as exit_:
            main([*words, "--no-such-option"])
        assert exit_.value.code == 2, words
        err = capsys.readouterr().err
        assert err.count("\n") == 1, (words, err)
        assert err.startswith(f"fairgrid {' '.join(words)}: error: ") and f"(see fairgrid {' '.join(words)} --help)" in err


def test_the_password_length_is_checked_before_asking_again(monkeypatch):
    asked = []

    def ask(prompt):
        asked.append(prompt)
        return "short"
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    with pytest.raises(CliError, match="at least 10 characters"):
        _password(argparse.Namespace(password_stdin=False), ask=ask)
    assert asked == ["password: "]
    answers = iter(["long enough 1", "long enough 2"])
    with pytest.raises(CliError, match="differ"):
        _password(argparse.Namespace(password_stdin=False), ask=lambda _: next(answers))


def test_a_nurikabe_puzzle_without_its_type_is_named(capsys):
    assert main(["solve", "4x5:1...2.....3.....4."]) == 2
    assert "--type nurikabe" in capsys.readouterr().err


def test_big_givens_are_letters_as_the_input_writes_them():
    givens = np.zeros(256, dtype=np.int8)
    givens[:3] = [9, 10, 16]
    text = render_ranks(np.arange(256), givens, 4)
    assert "[9]" in text and "[A]" in text and "[G]" in text and "[1" not in text


def test_flags_take_state_any():
    args = build_parser().parse_args(["flags", "--state", "any"])
    assert args.state == "any"
    assert build_parser().parse_args(["flags"]).state == "any"


def test_simulated_players_are_apart_per_type():
    from fairgrid.daemon.cli.service import simulated_ids

    assert simulated_ids("sudoku", None, None) == ("simulated", "sim")
    assert simulated_ids("nurikabe", None, None) == ("simulated-nurikabe", "sim-nurikabe")
    assert simulated_ids("nurikabe", "cup", "p") == ("cup", "p")
    args = build_parser().parse_args(["simulate", "x", "--secret", "s", "--tournament", "t"])
    assert args.tournament == "t" and args.prefix is None


BAD_BYTES = b"\xff\xfe".decode("utf-8", "surrogateescape")  # as Python hands argv over


@pytest.mark.parametrize("argv, words", [
    # bytes that are no text, in what goes into a URL, a database path, a query
    (["player", "demo", BAD_BYTES], "player id given is not UTF-8 text"),
    (["erase", "demo", BAD_BYTES, "--yes"], "given is not UTF-8 text"),
    (["export", "--tournament", BAD_BYTES], "tournament given is not UTF-8 text"),
    # an empty filter or target (an unset shell variable) would act on everything
    (["export", "--tournament", ""], "--tournament: must name one (it is empty)"),
    (["flags", "--tournament", ""], "--tournament: must name one (it is empty)"),
    (["flags", "--player", ""], "--player: must name one (it is empty)"),
    (["notifications", "--portal", ""], "--portal: must name one (it is empty)"),
    (["notifications", "--redeliver", ""], "--redeliver: must name one (it is empty)"),
    # numbers int() reads and nobody types: "1_0", Arabic-Indic and fullwidth 10
    (["review", "1_0", "--state", "confirmed"], "expected a number, got '1_0'"),
    (["review", "\u0661\u0660", "--state", "confirmed"], "expected a number"),
    (["review", "\uff11\uff10", "--state", "confirmed"], "expected a number"),
    (["solve", "1" * 81, "--max-steps", "1_000"], "expected a number"),
    (["generate", "--level", "\u0663"], "expected a number"),
    (["generate", "--p", "0_5"], "expected a number"),
    (["generate", "--p", "1.5"], "must be from 0 to 1"),
    (["restore", BAD_BYTES, "--to", "x.duckdb"], "backup given is not UTF-8 text"),
    # a folder named where a puzzle file goes is not "no such file"
    (["rate", "/tmp"], "/tmp: is a folder, not a puzzle file"),
    (["solve", "/tmp/"], "/tmp/: is a folder, not a puzzle file"),
    # an address urllib would only refuse with a traceback at the first call
    (["flags", "--url", "http://[::1", "--token", "t"], "is not a daemon's address"),
    (["flags", "--url", "notaurl", "--token", "t"], "is not a daemon's address"),
    # a token no header can carry
    (["flags", "--url", "http://127.0.0.1:9", "--token", "中"], "holds characters no token"),
    (["flags", "--url", "http://127.0.0.1:9", "--token", "a\nb"], "holds characters no token"),
    (["predict-order", "1" * 81, "--png", "a" * 300 + ".png"], "File name too long"),
    # counts past what the compiled solvers and DuckDB hold; a grid no memory holds
    (["solve", "1" * 81, "--max-steps", "9" * 23], "must be from 1 to 2,147,483,647"),
    (["count", "1" * 81, "--limit", "9" * 23], "must be from 1 to 2,147,483,647"),
    (["generate", "--type", "nurikabe", "--rows", "99999"], "must be from 2 to 20"),
    (["simulate", "1" * 81, "--secret", "s", "--wait", "nan"], "must be a number of seconds"),
    (["simulate", "1" * 81, "--secret", "s", "--wait", "-1"], "must be a number of seconds"),
    # a port no socket binds, or one the demo could not connect to once bound
    (["demo", "--port", "99999"], "must be from 1 to 65,535"),
    (["demo", "--site-port", "0"], "must be from 1 to 65,535"),
])
def test_odd_arguments_end_in_one_line_not_a_traceback(capsys, argv, words):
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own errors
        code = exit_.code
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err


@pytest.mark.parametrize("command", [
    ["predict-order", "..3.2.6..9..3.5..1..18.64....81.29..7......"
     ".8..67.82....26.95..8..2.3..9..5.1.3..", "--runs", "1"],
    ["report", "demo", "s-1"]])
@pytest.mark.parametrize("name,words", [
    ("", "name a .png file"), ("order.txt", "name a .png file"),
    ("order", "name a .png file"), ("dir.png", "is a folder")])
def test_a_png_path_that_is_not_a_png_file_is_named(tmp_path, capsys, command, name, words):
    """--png takes a file named .png: matplotlib takes the format from the name (a .txt
    was a traceback) and writes NAME.png beside a folder or a name without one."""
    target = tmp_path / name if name else tmp_path
    if name == "dir.png":
        target.mkdir()
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--png", str(target)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err
    assert not [p for p in tmp_path.rglob("*.png") if p.is_file()]
    assert not (tmp_path.parent / (tmp_path.name + ".png")).exists()


@pytest.fixture
def keep_umask():
    """main() sets the owner-only umask for commands that write data; not for the rest
    of this test process."""
    mask = os.umask(0o022)
    os.umask(mask)
    yield
    os.umask(mask)


def test_an_export_that_fails_part_way_leaves_no_file(tmp_path, monkeypatch, capsys,
                                                       keep_umask):
    """A disk that fills after the first table (stood in for by the second COPY
    raising, as DuckDB does): exit 2 with one line, and no table written."""
    import duckdb

    from fairgrid.daemon.store.connection import connect
    from fairgrid.daemon.store.repository import lifecycle
    from fairgrid.daemon.testing import free_port

    db = tmp_path / "fairgrid.duckdb"
    con = connect(str(db))
    con.execute("INSERT INTO submissions (sub_key, portal, submission_id, webhook_id, "
                "player_id, puzzle_id, tournament_id, started_at, received_at, "
                "committed_at, n_moves, duration_ms, complete, status, raw) VALUES (1, "
                "'demo', 's-1', 'h-1', 'p', 'x', 't-1', now(), now(), now(), 0, 0, false, "
                "'scored', '{}')")
    con.execute("UPDATE moves_through SET through = 1")
    con.close()
    cfg = tmp_path / "f.toml"
    cfg.write_text(f'[storage]\npath = "{db}"\n[server]\nport = {free_port()}\n')
    real, calls = lifecycle.export_to, []

    def export_to(*args):
        calls.append(args[2])
        if len(calls) == 2:
            raise duckdb.IOException("IO Error: No space left on device")
        return real(*args)
    monkeypatch.setattr(lifecycle, "export_to", export_to)
    out = tmp_path / "out"
    assert main(["export", "--tournament", "t-1", "--out", str(out), "--config", str(cfg),
                 "--token", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err, err
    assert len(calls) == 2 and not out.exists()  # nor the folder made for it
    monkeypatch.setattr(lifecycle, "export_to", real)
    assert main(["export", "--tournament", "t-1", "--out", str(out), "--config", str(cfg),
                 "--token", "x"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        f"t-1-{t}.csv" for t in ("flags", "reviews", "scores", "submissions")]


def test_a_config_listening_on_port_0_still_reaches_its_file(tmp_path, capsys, keep_umask):
    """Port 0 (one the system picks) is a daemon's setting, not an address to call: with
    no daemon, the commands that fall back to the file do."""
    from fairgrid.daemon.store.connection import connect

    db = tmp_path / "fairgrid.duckdb"
    connect(str(db)).close()
    cfg = tmp_path / "f.toml"
    cfg.write_text(f'[storage]\npath = "{db}"\n[server]\nport = 0\n')
    assert main(["backup", str(tmp_path / "bk"), "--config", str(cfg), "--token", "x"]) == 0
    assert capsys.readouterr().out.strip().startswith(str(tmp_path / "bk"))


def test_a_failed_export_or_backup_leaves_no_folder(tmp_path, capsys, keep_umask):
    """``--out`` and the backup folder are made only once there is something to write:
    an unknown tournament or a database that does not open leaves nothing behind, and a
    folder under a file is refused in one line."""
    from fairgrid.daemon.store.connection import connect
    from fairgrid.daemon.testing import free_port

    db = tmp_path / "fairgrid.duckdb"
    connect(str(db)).close()
    cfg = tmp_path / "f.toml"
    cfg.write_text(f'[storage]\npath = "{db}"\n[server]\nport = {free_port()}\n')
    out = tmp_path / "new" / "out"
    assert main(["export", "--tournament", "t-nope", "--out", str(out), "--config", str(cfg),
                 "--token", "x"]) == 2
    assert "t-nope" in capsys.readouterr().err and not (tmp_path / "new").exists()
    broken = tmp_path / "broken.toml"
    (tmp_path / "not-a-db").write_bytes(b"\0" * 4096)
    broken.write_text(f'[storage]\npath = "{tmp_path / "not-a-db"}"\n'
                      f'[server]\nport = {free_port()}\n')
    assert main(["backup", str(tmp_path / "bk"), "--config", str(broken), "--token", "x"]) == 2
    assert capsys.readouterr().err.count("\n") == 1 and not (tmp_path / "bk").exists()
    # a database path nobody made (a typo) is refused, not made into an empty database
    typo = tmp_path / "typo.toml"
    typo.write_text(f'[storage]\npath = "{tmp_path / "fairgrid2.duckdb"}"\n'
                    f'[server]\nport = {free_port()}\n')
    assert main(["backup", str(tmp_path / "bk"), "--config", str(typo), "--token", "x"]) == 2
    assert "there is no database at" in capsys.readouterr().err
    assert not (tmp_path / "fairgrid2.duckdb").exists() and not (tmp_path / "bk").exists()
    (tmp_path / "plain").write_text("x")
    assert main(["export", "--tournament", "t-1", "--out", str(tmp_path / "plain" / "sub"),
                 "--config", str(cfg), "--token", "x"]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


@pytest.mark.parametrize("cron", ["garbage", "99 99 * * *"])
def test_serve_refuses_a_nightly_cron_it_cannot_read_in_one_line(tmp_path, capsys, cron):
    """A schedule APScheduler cannot read stops the start with one line naming the
    setting, before anything listens or opens the database."""
    cfg = tmp_path / "f.toml"
    cfg.write_text(f'[storage]\npath = "{tmp_path / "fg.duckdb"}"\n[nightly]\ncron = "{cron}"\n'
                   '[auth]\n')
    assert main(["serve", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nightly.cron" in err and cron in err, err
    assert not (tmp_path / "fg.duckdb").exists()


ONE_PUZZLE, PUZZLES = "1,048,576", "268,435,456"   # bytes a file may hold


@pytest.mark.parametrize("argv,size,words", [
    (["rate", "{f}", "--quick"], None, "not UTF-8 text (byte 0)"),
    (["solve", "{f}"], None, "not UTF-8 text (byte 0)"),
    (["solve", "--type", "nurikabe", "{f}"], None, "not UTF-8 text (byte 0)"),
    (["solve", "{f}"], (1 << 20) + 1, f"more than the {ONE_PUZZLE} a puzzle file may hold"),
    # a file of puzzles one a line, or a collection whose first Nurikabe puzzle is read
    (["rate", "{f}", "--quick"], (256 << 20) + 1, f"more than the {PUZZLES}"),
    (["solve", "--type", "nurikabe", "{f}"], (256 << 20) + 1, f"more than the {PUZZLES}"),
])
def test_a_puzzle_file_that_is_no_text_or_too_large_is_named(tmp_path, capsys, argv, size,
                                                           words):
    """A file of bytes that are not UTF-8 was a traceback in two commands of three; one
    far larger than any puzzle took gigabytes to parse. Refused, in one line naming it,
    before it is read (the large files here are sparse: nothing is written)."""
    f = tmp_path / "puzzles.txt"
    if size is None:
        f.write_bytes(b"\xff\n")
    else:
        with f.open("wb") as fh:
            fh.truncate(size)
    assert main([a.format(f=f) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and str(f) in err, err


def test_json_output_holds_no_nan(capsys):
    """A prediction's split-half reliability is undefined with fewer than four runs: null
    in the JSON, not NaN, which no JSON reader takes."""
    import json

    easy = "..3.2.6..9..3.5..1..18.64....81.29..7.......8..67.82....26.95..8..2.3..9..5.1.3.."
    assert main(["predict-order", easy, "--runs", "2", "--workers", "1", "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in {out[:200]}"))[
        "split_half"] is None


def test_an_export_of_a_tournament_with_a_long_id_gets_file_names_a_disk_holds():
    """A tournament id of 100 CJK characters (300 bytes) is a valid id but no file name
    (255 bytes at most): its export's names, written by the command line or offered by
    the API, are cut short and told apart by a digest."""
    from fairgrid.daemon.text import FILE_STEM_BYTES, file_stem

    assert file_stem("spring-cup-2026_1") == "spring-cup-2026_1"
    # ids that read alike once their odd characters are '_' get names of their own
    assert file_stem("spring-cup/2026 #1").startswith("spring-cup_2026__1-")
    assert len({file_stem("a/b"), file_stem("a b"), file_stem("a_b")}) == 3
    long_a, long_b = "中" * 100, "中" * 99 + "国"
    stems = {file_stem(long_a), file_stem(long_b)}
    assert len(stems) == 2 and file_stem(long_a) == file_stem(long_a)
    for stem in stems:
        assert len(f"{stem}-submissions.parquet".encode()) <= 255
        assert len(stem.encode()) <= FILE_STEM_BYTES and stem.startswith("中" * 40)
    # the API's download is named the same way
    import urllib.parse

    from fairgrid.daemon.web.responses import attachment
    header = attachment(long_a, "-submissions.parquet")
    name = urllib.parse.unquote(header.split("filename*=UTF-8''")[1])
    assert name == file_stem(long_a) + "-submissions.parquet"


def test_a_backup_moved_to_another_folder_is_whole_or_stays_where_it_was(tmp_path,
                                                                          monkeypatch):
    """`fairgrid backup DIR` moves the daemon's backup: across file systems (a rename
    that fails) as a copy under the .partial name a restore refuses, renamed once whole;
    where it cannot go, the error says where the whole backup still is."""
    import errno
    from pathlib import Path

    from fairgrid.daemon.cli.lifecycle_tools import _move_backup

    made = tmp_path / "backups" / "fairgrid-1.duckdb"
    made.parent.mkdir()
    made.write_bytes(b"x" * 1000)
    moved = _move_backup(made, tmp_path / "here")  # one file system: a rename
    assert moved.read_bytes() == b"x" * 1000 and not made.exists()

    made.write_bytes(b"y" * 1000)

    def cross_device(self, target):
        raise OSError(errno.EXDEV, "Invalid cross-device link")
    monkeypatch.setattr(Path, "rename", cross_device)
    moved = _move_backup(made, tmp_path / "there")
    assert moved.read_bytes() == b"y" * 1000 and not made.exists()
    assert [p.name for p in moved.parent.iterdir()] == [made.name]  # no .partial left

    # a copy cut short (a full disk) leaves nothing in the folder, the backup in place
    import shutil

    made.write_bytes(b"w" * 1000)

    def full_disk(src, dst):
        Path(dst).write_bytes(b"w" * 10)
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(shutil, "copyfile", full_disk)
    with pytest.raises(CliError, match="No space left on device"):
        _move_backup(made, tmp_path / "full")
    assert list((tmp_path / "full").iterdir()) == [] and made.read_bytes() == b"w" * 1000
    monkeypatch.undo()

    made.write_bytes(b"z" * 1000)
    (tmp_path / "a-file").write_text("")
    with pytest.raises(CliError, match=f"the backup is whole at {made}"):
        _move_backup(made, tmp_path / "a-file" / "below")
    assert made.read_bytes() == b"z" * 1000


def test_a_password_that_is_not_utf8_is_named(monkeypatch):
    """Bytes that are not UTF-8 on stdin arrive as lone surrogates: refused naming the
    password, not sent on to come back as the daemon's 'body is not valid JSON'."""
    import io

    raw = io.TextIOWrapper(io.BytesIO(b"pw\xff\xfe1234567890\n"), encoding="utf-8",
                           errors="surrogateescape")
    monkeypatch.setattr("sys.stdin", raw)
    with pytest.raises(CliError, match="password given is not UTF-8"):
        _password(argparse.Namespace(password_stdin=True))
    raw = io.TextIOWrapper(io.BytesIO(b"pw\xff\xfe1234567890\n"), encoding="utf-8")
    monkeypatch.setattr("sys.stdin", raw)
    with pytest.raises(CliError, match="password given is not UTF-8"):
        _password(argparse.Namespace(password_stdin=True))


def test_recompute_on_a_file_whose_erasure_key_is_missing_is_one_line(tmp_path, capsys,
                                                                      keep_umask):
    """recompute erases again, as the daemon's start does, what a restore undid; with the
    erasure list beside the file but not its key, that is one line naming the key, not
    a traceback, and the job does not run."""
    from fairgrid.daemon.store.connection import connect
    from fairgrid.daemon.testing import free_port

    db = tmp_path / "fairgrid.duckdb"
    connect(str(db)).close()
    (tmp_path / "fairgrid.duckdb.erased").write_text("a" * 64 + "\n")
    cfg = tmp_path / "f.toml"
    cfg.write_text(f'[storage]\npath = "{db}"\n[server]\nport = {free_port()}\n')
    assert main(["recompute", "--config", str(cfg), "--token", "x"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].startswith("fairgrid recompute: error: the erasure key")
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [["flags"], ["report", "demo", "s-1"],
                                  ["export", "--tournament", "t-1"], ["recompute"],
                                  ["backup", "BK"]])
def test_another_programs_database_file_is_named_and_left_alone(tmp_path, capsys, argv,
                                                                keep_umask):
    """``storage.path`` naming another program's DuckDB file (a typo in the config), no
    daemon running: each command that falls back to the file says so in one line and
    exits 2, and writes nothing into that file (no fairgrid tables)."""
    import duckdb

    from fairgrid.daemon.testing import free_port

    db = tmp_path / "other.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE inventory (item VARCHAR)")
    cfg = tmp_path / "f.toml"
    cfg.write_text(f'[storage]\npath = "{db}"\n[server]\nport = {free_port()}\n')
    argv = [str(tmp_path / "bk") if a == "BK" else a for a in argv]
    assert main([*argv, "--config", str(cfg), "--token", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fairgrid" in err and "Traceback" not in err, err
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT table_name FROM duckdb_tables()").fetchall() == [
            ("inventory",)]


async def test_a_reviewers_note_reaches_the_next_reviewers_terminal_escaped(aiohttp_client,
                                                                         tmp_path):
    """``fairgrid review`` prints the flag's history: a note another reviewer stored
    through the API (an escape sequence that clears the screen and sets the window
    title, a right-to-left override) comes out escaped, as ``review-player`` and
    ``player`` print theirs."""
    import asyncio
    import sys

    from fairgrid.daemon.app import create_app

    from ..helpers import ADMIN, SECRET_A, add_user, bearer, make_settings, post_flagged

    client = await aiohttp_client(create_app(make_settings(tmp_path)))
    flag = await post_flagged(client, "demo", "s-esc", SECRET_A, player_id="p-esc")
    token = await add_user(client, "alice", portals=["demo"])
    resp = await client.post(f"/v1/flags/{flag}/review", headers=bearer(token),
                             json={"state": "confirmed",
                                   "note": "\x1b[2J\x1b]0;owned\x07 \u202eevil"})
    assert resp.status == 200
    # read as open, decided since by alice: --seen makes the stale decision a refusal
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "fairgrid.daemon.cli", "review", str(flag), "--state",
        "cleared", "--seen", "open", "--url", str(client.make_url("")).rstrip("/"),
        "--token", ADMIN, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 2 and len(err.decode().strip().splitlines()) == 1, err.decode()
    assert "409" in err.decode() and "alice" in err.decode(), err.decode()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "fairgrid.daemon.cli", "review", str(flag), "--state",
        "cleared", "--url", str(client.make_url("")).rstrip("/"), "--token", ADMIN,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    text = out.decode()
    assert "evil" in text and "by alice" in text, text
    assert not any(ch in text for ch in "\x1b\x07\u202e"), repr(text)
