"""Settings: TOML, environment overrides, the embedded default, and their documentation."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest
from standardwebhooks import Webhook

from fairgrid.daemon.settings import SETTINGS, SettingsError, load_settings
from fairgrid.daemon.ingest.signatures import SignatureError, Verifier

from .helpers import SECRET_A, SECRET_B, signed

DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_every_setting_is_documented():
    text = DOCS.read_text()
    missing = [name for s in SETTINGS for name in (s.key, s.env)
               if not re.search(rf"`{re.escape(name)}`", text)]
    assert not missing, f"undocumented in docs/configuration.md: {missing}"


def test_toml_and_environment(tmp_path):
    cfg = tmp_path / "f.toml"
    cfg.write_text('[server]\nport = 9000\n[storage]\npath = "x.duckdb"\n'
                   f'[portals.demo]\nsecrets = ["{SECRET_A}"]\n[auth]\norganiser_tokens = ["o"]\n')
    s, created = load_settings(str(cfg), env={"FAIRGRID_SERVER_PORT": "9100"})
    assert (s.server_port, s.storage_path, s.portals["demo"], created) == \
        (9100, "x.duckdb", (SECRET_A,), False)
    s, _ = load_settings(None, env={"FAIRGRID_CONFIG": str(cfg)})
    assert s.server_port == 9000 and s.organiser_tokens == ("o",) and s.admin_tokens == ()


@pytest.mark.parametrize("text,env,words", [
    ("[server]\nport = 'x'\n", {}, "server.port must be int"),
    ("[server]\nprot = 1\n", {}, "unknown setting server.prot"),
    ("[nightly]\nhuor = 3\n", {}, "unknown setting nightly.huor"),
    ("[portals.demo]\nsecrets = [\"whsec_eA==\"]\n[auth]\nadmin_token = [\"x\"]\n", {},
     "unknown setting auth.admin_token"),
    ("[portals.demo]\nsecret = [\"whsec_eA==\"]\n", {}, "unknown setting portals.demo.secret"),
    ("auth = 5\n[portals.demo]\nsecrets = [\"whsec_eA==\"]\n", {}, "[auth] must be a table"),
    ("[srever]\n", {}, "unknown section [srever]"),
    ("[portals.demo]\nsecrets = ['abc']\n", {}, "start with 'whsec_'"),
    ("[portals.demo]\nsecrets = 'whsec_x'\n", {}, "portals.demo.secrets must be a list"),
    ("port = \n", {}, "f.toml"),
    ("", {"FAIRGRID_SERVER_PORT": "-1"}, "FAIRGRID_SERVER_PORT: server.port must be >= 0"),
    ("", {"FAIRGRID_SCORING_PLAYER_ALPHA": "nan"},
     "scoring.player_alpha must be a finite number"),
    ("[scoring]\nplayer_alpha = 0.0\n", {}, "scoring.player_alpha must be between 0 and 1"),
    ("[scoring]\nfpr = 1.5\n", {}, "scoring.fpr must be between 0 and 1"),
    ("[notify]\ntimeout_s = inf\n", {}, "notify.timeout_s must be a finite number"),
    ("[notify]\ntimeout_s = 1" + "0" * 400 + "\n", {}, "notify.timeout_s must be float"),
    ("[console]\ntrusted_proxies = '10.0.0.0/8, proxy'\n", {}, "console.trusted_proxies"),
    ("[metrics]\ntoken_file = '/nonexistent/token'\n", {}, "metrics.token_file: cannot read"),
    # a port past 65535 would listen on another (the kernel keeps its low 16 bits)
    ("[server]\nport = 70000\n", {}, "server.port must be from 0 to 65,535"),
    ("", {"FAIRGRID_SERVER_PORT": "9" * 25}, "server.port must be from 0 to 65,535"),
    ("[storage]\ncheckpoint_mb = " + "9" * 30 + "\n", {}, "storage.checkpoint_mb must be"),
    # values the start took that then refused every puzzle, webhook or body limit
    ("[analysis]\norder_runs = 0\n", {}, "analysis.order_runs must be from 1 to"),
    ("[analysis]\norder_budget_s = 0\n", {}, "analysis.order_budget_s must be from 0.001"),
    ("[storage]\nwrite_queue_size = 0\n", {}, "storage.write_queue_size must be from 1"),
    ("[server]\nmax_body_bytes = 0\n", {}, "server.max_body_bytes must be from 1"),
    ("[nightly]\nmin_solves = 0\n", {}, "nightly.min_solves must be from 1"),
    ("[storage]\ngroup_commit_ms = 1e308\n", {}, "storage.group_commit_ms must be from 0 to"),
    # ... or that overflowed a clock (timedelta) at the first delivery, sign-in or webhook
    ("[notify]\ngive_up_hours = 1e308\n", {}, "notify.give_up_hours must be from 0 to"),
    ("[console]\nsession_hours = 99999999999\n", {}, "console.session_hours must be from 1"),
    ("[storage]\ndedupe_days = 99999999999\n", {}, "storage.dedupe_days must be from 0"),
    ("[notify]\npoll_s = 0\n", {}, "notify.poll_s must be from 0.001"),
])
def test_bad_settings_name_the_problem(tmp_path, text, env, words):
    cfg = tmp_path / "f.toml"
    cfg.write_text(text + "\n[auth]\n" if "portals" not in text and "port = \n" not in text
                   else text)
    with pytest.raises(SettingsError) as exc:
        load_settings(str(cfg), env=env)
    assert words in str(exc.value)


def test_embedded_default_generates_secrets_once(tmp_path):
    env = {"FAIRGRID_STORAGE_PATH": str(tmp_path / "fg.duckdb")}
    s1, created1 = load_settings(None, env=env)
    s2, created2 = load_settings(None, env=env)
    path = tmp_path / "fairgrid.secrets.toml"
    assert created1 and not created2
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert s1.portals == s2.portals and list(s1.portals) == ["demo"]
    assert s1.admin_tokens == s2.admin_tokens and s1.organiser_tokens


def test_verifier_agrees_with_the_reference_implementation():
    verifier = Verifier.from_portals({"demo": (SECRET_A, SECRET_B)})
    raw, headers = signed({"hello": "world"}, secret=SECRET_B, msg_id="id-7")
    Webhook(SECRET_B).verify(raw, headers)  # the reference accepts it
    assert verifier.verify(headers, raw, float(headers["webhook-timestamp"])) == ("demo", "id-7")
    with pytest.raises(SignatureError) as exc:
        verifier.verify(headers, raw + b" ", float(headers["webhook-timestamp"]))
    assert exc.value.reason == "bad_signature"


def test_portal_add_writes_the_embedded_secrets_file(tmp_path):
    import subprocess
    import sys

    env = {**os.environ, "FAIRGRID_STORAGE_PATH": str(tmp_path / "fg.duckdb")}
    env.pop("FAIRGRID_CONFIG", None)
    cmd = [sys.executable, "-m", "fairgrid.daemon.cli", "portal", "add"]
    out = subprocess.run([*cmd, "acme"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    secret = out.stdout.strip()
    assert secret.startswith("whsec_")
    settings, _ = load_settings(None, env=env)
    assert settings.portals["acme"] == (secret,) and "demo" in settings.portals
    bad = subprocess.run([*cmd, "no spaces"], capture_output=True, text=True, env=env,
                         timeout=60)
    assert bad.returncode == 2 and "portal name" in bad.stderr
    # with a config of one's own, a portal it has already is a rotation: the advice adds
    # to its list (a second [portals.acme] table would break the file)
    cfg = tmp_path / "f.toml"
    cfg.write_text(f'[storage]\npath = "{tmp_path / "fg.duckdb"}"\n'
                   f'[portals.acme]\nsecrets = ["{secret}"]\n')
    again = subprocess.run([*cmd, "acme", "--config", str(cfg)], capture_output=True,
                           text=True, env=env, timeout=60)
    assert again.returncode == 0 and "in your config already" in again.stderr
    assert '"<the secrets it has>", "whsec_' in again.stderr


async def test_a_portal_added_while_the_daemon_runs_is_accepted_without_a_restart(
        aiohttp_client, tmp_path):
    import subprocess
    import sys

    from fairgrid.daemon.testing import signed, solve_body
    from fairgrid.daemon.app import create_app

    env = {**os.environ, "FAIRGRID_STORAGE_PATH": str(tmp_path / "fg.duckdb")}
    env.pop("FAIRGRID_CONFIG", None)
    settings, _ = load_settings(None, env=env)
    client = await aiohttp_client(create_app(settings))
    cmd = [sys.executable, "-m", "fairgrid.daemon.cli", "portal", "add", "acme"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0 and "no restart" in out.stderr
    # known at once, before any webhook of it: to accounts and to notifications
    admin = {"Authorization": f"Bearer {settings.admin_tokens[0]}"}
    resp = await client.post("/v1/users", headers=admin, json={
        "name": "alice", "role": "organiser", "portals": ["acme"]})
    assert resp.status == 201, await resp.text()
    resp = await client.put("/v1/portals/acme/notify", headers=admin,
                            json={"url": "https://acme.example/events"})
    assert resp.status == 200, await resp.text()
    raw, headers = signed(solve_body(portal="acme"), secret=out.stdout.strip())
    resp = await client.post("/v1/webhooks/solves", data=raw, headers=headers)
    assert resp.status == 202, await resp.text()
    # a second secret for the same portal is a rotation, and the command says so
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    assert again.returncode == 0 and "2 secrets" in again.stderr
    # a secret nobody added is still refused
    raw, headers = signed(solve_body("s-2", portal="acme"),
                          secret="whsec_" + "A" * 43 + "=")
    resp = await client.post("/v1/webhooks/solves", data=raw, headers=headers)
    assert resp.status == 401


def test_portals_and_tokens_from_the_environment_or_files(tmp_path):
    from fairgrid.daemon.settings import SettingsError

    secrets = tmp_path / "admin"
    secrets.write_text("adm-1\nadm-2\n")
    env = {"FAIRGRID_STORAGE_PATH": str(tmp_path / "fg.duckdb"),
           "FAIRGRID_PORTAL_SECRETS": "acme=whsec_YQ==, whsec_Yg==; shop=whsec_Yw==",
           "FAIRGRID_AUTH_ORGANISER_TOKENS": "org-1,org-2",
           "FAIRGRID_AUTH_ADMIN_TOKENS_FILE": str(secrets)}
    settings, created = load_settings(None, env=env)
    assert settings.portals == {"acme": ("whsec_YQ==", "whsec_Yg=="), "shop": ("whsec_Yw==",)}
    assert settings.organiser_tokens == ("org-1", "org-2")
    assert settings.admin_tokens == ("adm-1", "adm-2")
    assert not created and not (tmp_path / "fairgrid.secrets.toml").exists()
    for bad, word in ((dict(env, FAIRGRID_PORTAL_SECRETS="acme"), "NAME=whsec_"),
                      (dict(env, FAIRGRID_PORTAL_SECRETS="acme=nope"), "whsec_"),
                      (dict(env, FAIRGRID_AUTH_ADMIN_TOKENS_FILE=str(tmp_path / "none")),
                       "cannot read")):
        with pytest.raises(SettingsError, match=word):
            load_settings(None, env=bad)


async def test_portals_and_tokens_changed_while_the_daemon_runs_take_effect(
        aiohttp_client, tmp_path):
    import asyncio
    import dataclasses

    from fairgrid.daemon.app import create_app

    from .helpers import ADMIN, bearer

    async def start(cfg, env):
        settings, _ = load_settings(str(cfg), env=env)
        return await aiohttp_client(create_app(dataclasses.replace(
            settings, analysis_workers=1, analysis_order_runs=4,
            analysis_order_budget_s=1.0)))

    cfg = tmp_path / "fairgrid.toml"
    own = {"demo": SECRET_A, "acme": SECRET_B}     # a portal's secret is its own

    def config(*portals, admins=(ADMIN,)):
        cfg.write_text(f'[storage]\npath = "{cfg.parent / "fg.duckdb"}"\n'
                       + "".join(f'[portals.{p}]\nsecrets = ["{own[p]}"]\n' for p in portals)
                       + "[auth]\nadmin_tokens = [" + ", ".join(f'"{t}"' for t in admins)
                       + "]\n")
    config("demo")
    client = await start(cfg, {})
    # a portal added to the file is known at once: to accounts and to notifications
    config("demo", "acme")
    resp = await client.post("/v1/users", headers=bearer(ADMIN), json={
        "name": "alice", "role": "organiser", "portals": ["acme"]})
    assert resp.status == 201, await resp.text()
    resp = await client.put("/v1/portals/acme/notify", headers=bearer(ADMIN),
                            json={"url": "https://acme.example/events"})
    assert resp.status == 200, await resp.text()
    assert (await client.put("/v1/portals/nope/notify", headers=bearer(ADMIN),
                             json={"url": "https://x.example/e"})).status == 404
    # a new admin token works at once; one taken out stops working within a second
    config("demo", "acme", admins=(ADMIN, "admin-2"))
    assert (await client.get("/v1/users", headers=bearer("admin-2"))).status == 200
    config("demo", "acme", admins=("admin-2",))
    deadline = asyncio.get_running_loop().time() + 30
    while (await client.get("/v1/users", headers=bearer(ADMIN))).status != 401:
        assert asyncio.get_running_loop().time() < deadline, "the old token still works"
        await asyncio.sleep(0.1)
    # a file caught half-written changes nothing
    cfg.write_text("[portals.demo\n")
    assert (await client.get("/v1/users", headers=bearer("admin-2"))).status == 200
    # token files (FAIRGRID_AUTH_…_FILE, container secrets) likewise
    other = tmp_path / "other"
    other.mkdir()
    cfg = other / "fairgrid.toml"
    config("demo")
    organisers = other / "organiser-tokens"
    organisers.write_text("org-1\n")
    client = await start(cfg, {"FAIRGRID_AUTH_ORGANISER_TOKENS_FILE": str(organisers)})
    assert (await client.get("/v1/me", headers=bearer("org-2"))).status == 401
    organisers.write_text("org-1\norg-2\n")
    me = await client.get("/v1/me", headers=bearer("org-2"))
    assert me.status == 200 and (await me.json())["role"] == "organiser"


def test_a_config_file_that_is_not_utf8_is_named(tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_bytes(b"\xff\xfe[server]\n")
    with pytest.raises(SettingsError, match="bad.toml is not UTF-8 text"):
        load_settings(str(cfg), env={})


@pytest.mark.parametrize("content,words", [
    (b"portals = 5\n", "[portals] must be a table"),
    (b"auth = 'x'\n", "[auth] must be a table"),
    (b"garbage [[[\n", "Expected"),
    (b"\xff\n", "is not UTF-8 text"),
])
def test_a_damaged_embedded_secrets_file_is_named(tmp_path, monkeypatch, capsys, content, words):
    """A secrets file beside the database that is no table of portals and tokens stops
    the start, and ``portal add``, in one line naming that file (an int in place of the
    portals table was an AttributeError)."""
    from fairgrid.daemon.cli import main

    (tmp_path / "fairgrid.secrets.toml").write_bytes(content)
    env = {"FAIRGRID_STORAGE_PATH": str(tmp_path / "fg.duckdb")}
    with pytest.raises(SettingsError) as exc:
        load_settings(None, env=env)
    assert words in str(exc.value) and "fairgrid.secrets.toml" in str(exc.value)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FAIRGRID_CONFIG", raising=False)
    assert main(["portal", "add", "acme"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "fairgrid.secrets.toml" in err, err


@pytest.mark.parametrize("name", ["fairgrid.2024-05-01T03:00.duckdb", "t-1:x.duckdb",
                                  "a.b:c.duckdb"])
def test_a_storage_path_with_a_colon_that_names_a_file_is_taken(tmp_path, monkeypatch,
                                                                 name):
    """Only what DuckDB does not open as a file is refused: a colon in a file name is
    fine (DuckDB opens these three as plain files)."""
    from fairgrid.daemon.store import connect

    monkeypatch.chdir(tmp_path)
    connect(name).close()
    assert (tmp_path / name).exists()
    settings, _ = load_settings(None, {"FAIRGRID_STORAGE_PATH": name}, generate=False)
    assert settings.storage_path == name


@pytest.mark.parametrize("name", ["", " ", ":memory:", ":memory:x", "md:fairgrid",
                                  "MotherDuck:x", "s3://bucket/fairgrid.duckdb"])
def test_a_storage_path_that_names_no_file_is_refused(name):
    with pytest.raises(SettingsError, match="storage.path must name a database file"):
        load_settings(None, {"FAIRGRID_STORAGE_PATH": name}, generate=False)


def test_a_tab_separated_cron_is_taken(tmp_path):
    """crontab fields are split on white space, tabs included."""
    settings, _ = load_settings(None, {"FAIRGRID_STORAGE_PATH": str(tmp_path / "f.duckdb"),
                                       "FAIRGRID_NIGHTLY_CRON": "0\t3 * * *"},
                                generate=False)
    assert settings.nightly_cron.split() == ["0", "3", "*", "*", "*"]
