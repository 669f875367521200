"""``fairgrid portal add NAME`` where the portals come from the environment
(``FAIRGRID_PORTAL_SECRETS`` or ``..._FILE``) writes no secrets file the daemon would
never read: it says to add the new secret to that variable or file."""

from __future__ import annotations

import os
import subprocess

from fairgrid.daemon.settings import load_settings

from .helpers import CMD, SECRET_A


def test_portal_add_never_claims_a_portal_the_daemon_will_not_read(tmp_path):
    # a host that began on the embedded default, then moved its secrets to the environment
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRGRID_")}
    first = subprocess.run([*CMD, "portal", "add", "demo"], capture_output=True, text=True,
                           timeout=60, cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stderr
    env["FAIRGRID_PORTAL_SECRETS"] = f"acme={SECRET_A}"
    proc = subprocess.run([*CMD, "portal", "add", "shop"], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path, env=env)
    daemon_env = {"FAIRGRID_PORTAL_SECRETS": env["FAIRGRID_PORTAL_SECRETS"],
                  "FAIRGRID_STORAGE_PATH": str(tmp_path / "fairgrid.duckdb")}
    portals = load_settings(None, env=daemon_env, generate=False)[0].portals
    claimed = proc.returncode == 0 and "takes it up at once" in proc.stderr
    assert not claimed or "shop" in portals, (
        f"portal add said {proc.stderr.strip()!r}, but the daemon, started with this "
        f"environment, knows only the portals {sorted(portals)}")


def test_portal_add_with_the_tokens_in_the_environment_says_where_portals_go(tmp_path):
    """With only the service tokens in the environment the daemon reads no embedded
    secrets file, so there is none to add to: the command says where the portal goes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRGRID_")}
    env["FAIRGRID_AUTH_ADMIN_TOKENS"] = "adm-token-1"
    proc = subprocess.run([*CMD, "portal", "add", "shop"], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    secret = proc.stdout.strip()
    assert secret.startswith("whsec_")
    assert f"FAIRGRID_PORTAL_SECRETS (shop={secret}" in proc.stderr
    assert not list(tmp_path.iterdir())   # nothing written the daemon would not read
