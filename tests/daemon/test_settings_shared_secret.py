"""Two portals configured with the same webhook secret are refused at the start, naming
both: a signature proves only the secret, so every webhook of the second portal was
taken for the first's and refused 401."""

from __future__ import annotations

import dataclasses

from fairgrid.daemon.app import create_app
from fairgrid.daemon.settings import SettingsError, load_settings

from .helpers import SECRET_A, URL, signed, solve_body


async def test_two_portals_sharing_a_secret_are_refused_or_both_work(aiohttp_client, tmp_path):
    cfg = tmp_path / "fairgrid.toml"
    # the operator copied [portals.acme] to make [portals.shop] and kept its secret
    cfg.write_text(f'[storage]\npath = "{tmp_path / "fg.duckdb"}"\n'
                   f'[analysis]\nworkers = 1\norder_runs = 4\norder_budget_s = 1.0\n'
                   f'[portals.acme]\nsecrets = ["{SECRET_A}"]\n'
                   f'[portals.shop]\nsecrets = ["{SECRET_A}"]\n'
                   f'[auth]\norganiser_tokens = ["org-token"]\n')
    try:
        settings, _ = load_settings(str(cfg), env={})
    except SettingsError as exc:  # the fix that refuses the config must name the clash
        assert "acme" in str(exc) and "shop" in str(exc), str(exc)
        return
    settings = dataclasses.replace(settings, storage_group_commit_ms=2.0)
    client = await aiohttp_client(create_app(settings))
    answers = {}
    for portal in ("acme", "shop"):
        raw, headers = signed(solve_body(portal=portal, submission_id=f"s-{portal}"),
                              msg_id=f"m-{portal}")
        resp = await client.post(URL, data=raw, headers=headers)
        answers[portal] = (resp.status, await resp.json())
    # the config was taken: each portal's correctly signed solve must then be accepted
    assert answers == {"acme": (202, {"status": "accepted"}),
                       "shop": (202, {"status": "accepted"})}, answers
