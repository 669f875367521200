"""An empty ``server.host`` (``FAIRGRID_SERVER_HOST=`` from an unset variable, or
``host = ""``) is refused: aiohttp would listen on every interface, putting the API, the
console and /metrics on the network."""

from __future__ import annotations

import ipaddress

import pytest

from fairgrid.daemon.settings import SettingsError, load_settings

from .helpers import SECRET_A


@pytest.mark.parametrize("where", ["env", "toml"])
def test_an_empty_server_host_does_not_listen_everywhere(tmp_path, where):
    cfg = tmp_path / "fairgrid.toml"
    host_line = 'host = ""\n' if where == "toml" else ""
    cfg.write_text(f'[server]\n{host_line}port = 8080\n'
                   f'[storage]\npath = "{tmp_path / "fg.duckdb"}"\n'
                   f'[portals.demo]\nsecrets = ["{SECRET_A}"]\n[auth]\norganiser_tokens = ["o"]\n')
    env = {"FAIRGRID_SERVER_HOST": ""} if where == "env" else {}
    try:
        settings, _ = load_settings(str(cfg), env=env)
    except SettingsError as exc:
        assert "server.host" in str(exc), str(exc)
        return
    host = settings.server_host
    # '' is what asyncio's create_server binds to every interface with
    assert host.strip() and (host == "localhost" or ipaddress.ip_address(host).is_loopback), \
        f"server.host {host!r} was taken: the daemon listens on every interface"
