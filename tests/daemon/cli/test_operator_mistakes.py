"""What an operator can get wrong with the settings, the CLI and the data's life, met
with one line naming the problem, and nothing acknowledged or erased lost (real
daemons, real DuckDB files, the real command line)."""

from __future__ import annotations

import json
import signal
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from fairgrid.daemon.testing import (CMD, SECRET_A, free_port, signed, solve_body, start,
                                     write_config)


def _cli(*args, env=None, timeout=120):
    return subprocess.run([*CMD, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env)


def _one_line_error(proc, *words):
    """The project's rule: exit status 2, one line on stderr, no traceback."""
    assert "Traceback" not in proc.stderr, proc.stderr[-1500:]
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-1500:])
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    for word in words:
        assert word in lines[0], lines[0]


def _call(base, method, path, body=None, headers=None, token="adm", timeout=60):
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method, headers={
        "Authorization": f"Bearer {token}", "content-type": "application/json",
        **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        try:
            return exc.code, json.loads(raw or b"null")
        except ValueError:
            return exc.code, raw.decode(errors="replace")


def _post_solve(base, sid, player, tournament="cup"):
    raw, headers = signed(solve_body(submission_id=sid, player_id=player,
                                     tournament_id=tournament), msg_id=f"hook-{sid}")
    return _call(base, "POST", "/v1/webhooks/solves", raw, headers)


def _stop(proc):
    proc.send_signal(signal.SIGTERM)
    proc.wait(90)


def _serve_or_refuse(cfg, base, cwd=None):
    """``fairgrid serve`` on ``cfg``: once it answers at ``base``, or once it exited
    (a start that refused; its stderr is the process's to read)."""
    proc = subprocess.Popen([*CMD, "serve", "--config", str(cfg)], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2):
                break
        except OSError:
            time.sleep(0.2)
    return proc


# --------------------------------------------------------------------------- settings

@pytest.mark.parametrize("where", ["toml", "env"])
def test_server_uvloop_can_be_set_at_all(tmp_path, where):
    """``server.uvloop`` (a bool) can be set in the file and the environment."""
    from fairgrid.daemon.settings import load_settings

    cfg = tmp_path / "fg.toml"
    text = '[auth]\nadmin_tokens = ["adm"]\n'
    env = {}
    if where == "toml":
        text += "[server]\nuvloop = false\n"
    else:
        env["FAIRGRID_SERVER_UVLOOP"] = "false"
    cfg.write_text(text)
    settings, _ = load_settings(str(cfg), env=env, generate=False)
    assert settings.server_uvloop is False


@pytest.mark.parametrize("path", ["", ":memory:"])
def test_a_storage_path_that_names_no_file_loses_nothing_acknowledged(tmp_path, path):
    """``storage.path = ""`` (an empty FAIRGRID_STORAGE_PATH from a template, say) or
    ``":memory:"`` would have DuckDB open an in-memory database, whose acknowledged
    solves a restart loses: refused in one line (or, were it taken, kept)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cfg = tmp_path / "fg.toml"
    write_config(cfg, port, tmp_path / "placeholder.duckdb")
    cfg.write_text(cfg.read_text().replace(f'path = "{tmp_path / "placeholder.duckdb"}"',
                                           f'path = "{path}"'))
    proc = _serve_or_refuse(cfg, base, cwd=tmp_path)
    try:
        if proc.poll() is not None:  # refused at start: the rule, in one line
            err = proc.stderr.read()
            assert proc.returncode == 2 and "storage.path" in err, err
            return
        status, doc = _post_solve(base, "kept-1", "p-1")
        assert status == 202, doc  # acknowledged: it must survive a restart
        _stop(proc)
        proc = start(cfg, base, cwd=tmp_path)
        status, doc = _call(base, "GET", "/v1/submissions/demo/kept-1", token="org")
        assert status == 200, f"an acknowledged solve is gone after a restart: {doc}"
    finally:
        if proc.poll() is None:
            _stop(proc)


@pytest.mark.parametrize("command", [["serve"], ["flags"], ["backup"]])
def test_a_nul_in_a_configured_path_is_named_in_one_line(tmp_path, command):
    """A TOML string may hold ``\\u0000``: a path holding it is named in one line."""
    cfg = tmp_path / "fg.toml"
    cfg.write_text(f'[server]\nport = {free_port()}\n[storage]\npath = "a\\u0000b.duckdb"\n'
                   '[auth]\nadmin_tokens = ["adm"]\norganiser_tokens = ["org"]\n'
                   f'[portals.demo]\nsecrets = ["{SECRET_A}"]\n')
    out = _cli(*command, "--config", cfg, timeout=60)
    _one_line_error(out, "storage.path")


def test_a_portal_secret_that_is_not_base64_is_named_at_start(tmp_path):
    """A ``whsec_`` secret cut short when pasted (not base64) is named in one line."""
    port = free_port()
    cfg = tmp_path / "fg.toml"
    write_config(cfg, port, tmp_path / "fg.duckdb", portals={"demo": "whsec_MfKQ9r8GKYq"})
    out = _cli("serve", "--config", cfg, timeout=60)
    _one_line_error(out, "portals.demo.secrets")


def test_an_edit_with_a_bad_secret_still_revokes_a_removed_token(tmp_path):
    """An edit that takes a leaked admin token out and, by mistake, breaks a secret is
    refused (logged), but the token it took out stops working all the same."""
    import os

    from fairgrid.daemon.settings import load_settings
    from fairgrid.daemon.web.secrets import Secrets

    cfg = tmp_path / "fg.toml"
    cfg.write_text(f'[portals.demo]\nsecrets = ["{SECRET_A}"]\n'
                   '[auth]\nadmin_tokens = ["leaked", "new"]\n')
    settings, _ = load_settings(str(cfg), env={}, generate=False)
    secrets = Secrets(settings)
    cfg.write_text(f'[portals.demo]\nsecrets = ["{SECRET_A}"]\n'
                   '[portals.shop]\nsecrets = ["whsec_abc"]\n'   # pasted cut short
                   '[auth]\nadmin_tokens = ["new"]\n')
    st = cfg.stat()
    os.utime(cfg, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    secrets.reload()
    secrets.reload()  # the watch's next look, a second later
    assert "leaked" not in secrets.settings.admin_tokens


# ------------------------------------------------------------------ the CLI's client

def _fake_server(answer: bytes):
    """A TCP server on 127.0.0.1 answering every connection with ``answer``."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()

    def serve():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                try:
                    conn.recv(65536)
                    conn.sendall(answer)
                except OSError:
                    pass

    threading.Thread(target=serve, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.getsockname()[1]}"


ANSWERS = {
    # another service on the port: an SSH server, a web page, JSON of another shape
    "not-http": b"SSH-2.0-OpenSSH_9.2\r\n",
    "html-200": (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 13\r\n"
                 b"Connection: close\r\n\r\n<html></html>"),
    "json-list": (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2"
                  b"\r\nConnection: close\r\n\r\n[]"),
}


@pytest.mark.parametrize("answer", sorted(ANSWERS))
@pytest.mark.parametrize("command", [["flags"], ["report", "demo", "s-1"], ["backup"],
                                     ["players"]])
def test_a_url_that_is_no_fairgrid_daemon_is_one_line(answer, command):
    """``--url`` (or the config's port) reaching something that is not a fairgrid daemon
    (a typo'd port, a proxy's page) is one line naming the address."""
    srv, url = _fake_server(ANSWERS[answer])
    try:
        out = _cli(*command, "--url", url, "--token", "adm", timeout=60)
    finally:
        srv.close()
    _one_line_error(out, url.split("//")[1])


# ------------------------------------------------------------------ erasure and keys

def test_a_backup_restored_on_a_new_host_keeps_refusing_the_erased(tmp_path):
    """An erased person stays refused (410) after restores. On a new host started once
    (which made a key of its own) a backup that lists the erased under the old key is
    refused by the restore, naming the erasure key, before anything is replaced; with
    the old key put beside the target it restores, and their solves stay refused."""
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    who = "erase-me-7f3a"

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    write_config(old / "fg.toml", port, old / "fg.duckdb")
    proc = start(old / "fg.toml", base)
    try:
        assert _post_solve(base, "e-1", who)[0] == 202
        assert _post_solve(base, "k-1", "keep-me")[0] == 202
        status, doc = _call(base, "POST", f"/v1/players/demo/{who}/erase")
        assert status == 200, doc
        assert _post_solve(base, "e-2", who)[0] == 410   # refused, as promised
        status, doc = _call(base, "POST", "/v1/backups", {})
        assert status == 201, doc
        backup = Path(doc["path"])
    finally:
        _stop(proc)

    # the new host: installed and started once (its own key), stopped, then restored
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    write_config(new / "fg.toml", port, new / "fg.duckdb")
    _stop(start(new / "fg.toml", base))
    before = (new / "fg.duckdb").read_bytes()
    out = _cli("restore", backup, "--to", new / "fg.duckdb", "--force")
    _one_line_error(out, "erasure key")
    assert (new / "fg.duckdb").read_bytes() == before
    shutil.copyfile(old / "fg.duckdb.erasure-key", new / "fg.duckdb.erasure-key")
    out = _cli("restore", backup, "--to", new / "fg.duckdb", "--force")
    assert out.returncode == 0, out.stderr
    proc = _serve_or_refuse(new / "fg.toml", base)
    try:
        assert proc.poll() is None, proc.stderr.read()
        status, doc = _post_solve(base, "e-3", who)
        assert status == 410, f"an erased person's solve was accepted: {status} {doc}"
    finally:
        if proc.poll() is None:
            _stop(proc)


# ------------------------------------------------------------- two daemons, one file

def test_a_second_daemon_refused_by_the_lock_leaves_the_first_ones_files_alone(tmp_path):
    """A second store on a file a running daemon holds is refused by DuckDB's lock, and
    only then: the copy the first one may be rewriting into (``<db>.rewriting``) and a
    restore's (``<db>.restoring``) are not taken from under it as a kill's leftovers."""
    from fairgrid.daemon.store import Store, StoreError

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    db, cfg = tmp_path / "fg.duckdb", tmp_path / "fg.toml"
    write_config(cfg, port, db)
    proc = start(cfg, base)
    try:
        copies = [Path(str(db) + ".rewriting"), Path(str(db) + ".restoring")]
        for copy in copies:     # what the running daemon would be writing
            copy.write_bytes(b"in progress")
        with pytest.raises(StoreError, match="in use"):
            Store(str(db))
        assert all(copy.exists() for copy in copies)
    finally:
        _stop(proc)
    for copy in copies:
        copy.unlink()


def _db_without_its_key(tmp_path, db_folder=None):
    """A fairgrid database that has never had an erasure key beside it (one from before
    the key existed, or moved here without it): the start makes the key."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    db, cfg = tmp_path / "fg.duckdb", tmp_path / "fg.toml"
    write_config(cfg, port, db)
    _stop(start(cfg, base))  # the file and its schema
    Path(str(db) + ".erasure-key").unlink()
    Path(str(db) + ".erased").unlink(missing_ok=True)
    if db_folder is not None:
        import shutil

        shutil.copyfile(db, db_folder / "fg.duckdb")
        write_config(cfg, port, db_folder / "fg.duckdb")
        db = db_folder / "fg.duckdb"
    return db, cfg, base


def test_a_start_on_a_full_disk_does_not_leave_a_key_that_blocks_every_later_start(
        tmp_path):
    """A first start beside a database without an erasure key, with no room to write
    one (here a file-size limit: EFBIG, as the disk-full tests make it), leaves no key
    behind, not an empty one: once there is room again, the daemon starts."""
    import resource

    db, cfg, base = _db_without_its_key(tmp_path)

    def cap():
        resource.setrlimit(resource.RLIMIT_FSIZE, (16, resource.RLIM_INFINITY))

    full = subprocess.run([*CMD, "serve", "--config", str(cfg)], capture_output=True,
                          text=True, timeout=120, preexec_fn=cap)
    assert full.returncode == 2, full.stderr[-1500:]   # no room: refused, fine
    assert not Path(str(db) + ".erasure-key").exists()
    proc = start(cfg, base)  # room again: the daemon starts
    _stop(proc)


def test_no_room_for_the_erasure_key_is_not_called_a_port_problem(tmp_path):
    """A start that cannot write its erasure key (no room: here a file-size limit, as
    the disk-full tests make it) names the key, not the port."""
    import resource

    db, cfg, base = _db_without_its_key(tmp_path)

    def cap():
        resource.setrlimit(resource.RLIMIT_FSIZE, (16, resource.RLIM_INFINITY))

    out = subprocess.run([*CMD, "serve", "--config", str(cfg)], capture_output=True,
                         text=True, timeout=120, preexec_fn=cap)
    last = out.stderr.strip().splitlines()[-1]
    assert out.returncode == 2, out.stderr[-1500:]
    assert "cannot listen" not in last and "erasure key" in last, last
    assert "Traceback" not in out.stderr


def _serve_once(answer: bytes) -> int:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def run():
        conn, _ = srv.accept()
        conn.recv(65536)
        conn.sendall(answer)
        conn.close()
        srv.close()

    threading.Thread(target=run, daemon=True).start()
    return srv.getsockname()[1]


@pytest.mark.parametrize("status", [b"200 OK", b"500 Oops"])
def test_an_answer_cut_short_is_a_cli_error_not_a_traceback(status):
    """A service that hangs up in the middle of its answer's body, an error's too."""
    from fairgrid.daemon.cli.client import DaemonClient
    from fairgrid.daemon.cli.common import CliError

    port = _serve_once(b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\n"
                       b"Content-Length: 100\r\n\r\n{\"err")
    client = DaemonClient(f"http://127.0.0.1:{port}", "t")
    try:
        client.request("GET", "/v1/status")
    except CliError:
        pass            # the 200: no fairgrid answer, in one line


def test_a_first_start_where_hard_links_are_not_supported_makes_its_key(tmp_path,
                                                                        monkeypatch):
    """vfat, exFAT and some CIFS/FUSE mounts answer link() with EPERM: the key is then
    written in place, whole."""
    import errno
    import os

    from fairgrid.daemon.store.erasure import ErasedPlayers, key_path

    def no_link(src, dst, *a, **kw):
        raise OSError(errno.EPERM, "Operation not permitted", str(src), None, str(dst))

    monkeypatch.setattr(os, "link", no_link)
    db = str(tmp_path / "f.duckdb")
    erased = ErasedPlayers.open(db, set())
    assert len(key_path(db).read_text().strip()) == 64 and erased.fingerprint
    assert not list(tmp_path.glob("*.new"))     # no part file left behind
