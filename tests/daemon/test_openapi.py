"""docs/openapi.yaml and the app's routes describe the same API."""

from __future__ import annotations

from pathlib import Path

import yaml

from fairgrid.daemon.app import create_app
from fairgrid.daemon.settings import Settings

SPEC = Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"


def test_routes_and_spec_agree():
    spec = yaml.safe_load(SPEC.read_text())
    documented = {(method.upper(), path) for path, ops in spec["paths"].items()
                  for method in ops if method in {"get", "post", "put", "delete", "patch"}}
    app = create_app(Settings())
    served = {(r.method, r.resource.canonical) for r in app.router.routes()
              if r.method != "HEAD"}
    assert served == documented


def test_every_operation_documents_its_errors():
    spec = yaml.safe_load(SPEC.read_text())
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            assert op.get("summary"), f"{method} {path} has no summary"
            if op.get("security"):
                assert "401" in op["responses"], f"{method} {path} does not document 401"
