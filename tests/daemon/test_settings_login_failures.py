"""``console.login_failures = 0`` (as one would write to switch the throttle off) is
refused: the throttle would refuse every sign-in for good, the right password's first."""

from __future__ import annotations

from fairgrid.daemon.console.pages import Console
from fairgrid.daemon.settings import SettingsError, load_settings

from .helpers import SECRET_A


def test_zero_login_failures_does_not_lock_everyone_out(tmp_path):
    cfg = tmp_path / "fairgrid.toml"
    cfg.write_text(f'[console]\nlogin_failures = 0\n'
                   f'[storage]\npath = "{tmp_path / "fg.duckdb"}"\n'
                   f'[portals.demo]\nsecrets = ["{SECRET_A}"]\n[auth]\norganiser_tokens = ["o"]\n')
    try:
        settings, _ = load_settings(str(cfg), env={})
    except SettingsError as exc:
        assert "console.login_failures" in str(exc), str(exc)
        return
    console = Console(settings)  # as the daemon builds it (console.setup)
    # a person's first sign-in, from an address that never failed one
    assert not console.throttle.locked("name:alice", "addr:192.0.2.7"), \
        "console.login_failures = 0 was taken, and refuses every sign-in, failures or not"
