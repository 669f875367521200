"""``FAIRGRID_PORTAL_SECRETS`` naming a portal twice (``acme=whsec_old; acme=whsec_new``,
a rotation written as a second entry) is refused: the second entry replaced the first,
whose secret the portal still signs with."""

from __future__ import annotations

import pytest

from fairgrid.daemon.settings import SettingsError, load_settings

from .helpers import SECRET_A, SECRET_B


def test_a_portal_named_twice_in_the_environment_loses_no_secret(tmp_path):
    env = {"FAIRGRID_STORAGE_PATH": str(tmp_path / "fg.duckdb"),
           "FAIRGRID_PORTAL_SECRETS": f"acme={SECRET_A}; acme={SECRET_B}"}
    with pytest.raises(SettingsError, match="portal 'acme' is named twice"):
        load_settings(None, env=env)


def test_an_empty_portal_variable_is_refused_not_read_as_no_portals(tmp_path):
    """``FAIRGRID_PORTAL_SECRETS=`` (an unset variable in a compose file) meant no
    portal at all, and the secrets file was not read either: every webhook a 401."""
    for value in ("", "  \n"):
        env = {"FAIRGRID_STORAGE_PATH": str(tmp_path / "fg.duckdb"),
               "FAIRGRID_PORTAL_SECRETS": value}
        with pytest.raises(SettingsError, match="FAIRGRID_PORTAL_SECRETS is set but empty"):
            load_settings(None, env=env)
