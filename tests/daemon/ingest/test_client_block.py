"""The webhook's client block: versioned signals checked against the one schema file
the recorder's tests read too; unversioned blocks as portals sent them before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from fairgrid.daemon.ingest import ValidationError, parse_body
from fairgrid.daemon.ingest.client_block import check_client, schema
from fairgrid.daemon.ingest.fast_path import parse_fast
from fairgrid.daemon.testing import solve_body

ROOT = Path(__file__).resolve().parents[3]

V1 = {"version": 1, "recorder": "fairgrid-recorder/0.1.0", "paste_count": 1,
      "pastes": [{"t_ms": 900, "cell": 4, "digits": 1}],
      "hidden": [{"t_ms": 1200, "ms": 8000}], "blur": [{"t_ms": 1100, "ms": 100}],
      "input": {"keyboard": 30, "pointer": 19}}


def _raw(client) -> bytes:
    return json.dumps(solve_body(client=client)).encode()


def _strip(node):
    """A schema without its words, with OpenAPI's $refs written as the file's."""
    if isinstance(node, dict):
        return {k: ("#/$defs/" + v.rsplit("/", 1)[1] if k == "$ref" else _strip(v))
                for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def test_openapi_and_the_schema_file_say_the_same():
    spec = yaml.safe_load((ROOT / "docs/openapi.yaml").read_text())["components"]["schemas"]
    for name, rule in schema()["$defs"].items():
        assert _strip(spec[name]) == _strip(rule), name


def test_the_schema_file_is_json_schema_and_a_real_validator_agrees():
    import jsonschema_rs

    validator = jsonschema_rs.validator_for(schema())
    log = {"started_at": "2026-11-21T10:00:00Z", "moves": solve_body()["moves"], "client": V1}
    assert validator.is_valid(log)
    for bad in ({**V1, "hidden": [{"t_ms": 1}]}, {**V1, "input": {"mouse": 3}},
                {**V1, "version": 2}, {**V1, "pastes": [{"t_ms": -1, "digits": 1}]}):
        assert not validator.is_valid({**log, "client": bad})
        with pytest.raises(ValidationError):
            check_client(bad)


def test_a_version_1_block_and_an_old_portals_block_are_taken_as_sent():
    for client in (V1, {"paste_count": 3, "device": {"kind": "tablet"}}, {},
                   {"paste_count": None},
                   {"hidden": "not checked without a version"}):
        assert parse_body(_raw(client)).client == client


@pytest.mark.parametrize("client, field", [
    ({**V1, "version": 2}, "client.version"),
    ({**V1, "version": True}, "client.version"),
    ({**V1, "hidden": {"t_ms": 1}}, "client.hidden"),
    ({**V1, "hidden": [{"t_ms": 1, "ms": 2}, {"t_ms": 1, "ms": -5}]}, "client.hidden[1].ms"),
    ({**V1, "blur": [{"t_ms": 1}]}, "client.blur[0].ms"),
    ({**V1, "pastes": [{"t_ms": 1, "digits": 1.5}]}, "client.pastes[0].digits"),
    ({**V1, "input": {"keyboard": "7"}}, "client.input.keyboard"),
    ({**V1, "input": {"mouse": 7}}, "client.input.mouse"),
    ({**V1, "paste_count": -1}, "client.paste_count"),
    ({**V1, "hidden": [{"t_ms": 1, "ms": 1}] * 10_001}, "client.hidden"),
    # an old portal's block is kept as sent, but the count scoring reads must be one
    ({"paste_count": -5}, "client.paste_count"),
    ({"paste_count": 1e308}, "client.paste_count"),
    ({"paste_count": "lots"}, "client.paste_count"),
    ({"paste_count": True}, "client.paste_count"),
])
def test_a_malformed_signal_is_refused_naming_the_field(client, field):
    raw = _raw(client)
    assert parse_fast(raw) is None  # the checked path decides, and names the field
    with pytest.raises(ValidationError) as exc:
        parse_body(raw)
    assert (exc.value.field, exc.value.status) == (field, 422)
