"""``compute.scheduler`` set where the ``[cluster]`` extra (``distributed``) is not
installed: puzzles wait ``pending``, their ``waiting_for`` naming the package to
install, rather than each marked ``invalid`` for good; ``fairgrid rate --scheduler``
says the same in one line."""

from __future__ import annotations

import sys

import pytest

from fairgrid.daemon.app import create_app
from fairgrid.daemon.work.compute import Cluster, ComputeUnavailable

from ...fixtures import EASY, MEDIUM
from ..helpers import ADMIN, ORGANISER, bearer, make_settings, until


@pytest.fixture
def no_distributed(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed: ImportError


def test_without_distributed_the_cluster_is_unavailable_not_an_import_error(no_distributed):
    with pytest.raises(ComputeUnavailable):
        Cluster("tcp://127.0.0.1:8786", timeout_s=1).client()


async def test_without_distributed_puzzles_wait_instead_of_turning_invalid(
        aiohttp_client, tmp_path, no_distributed):
    try:
        client = await aiohttp_client(create_app(make_settings(
            tmp_path, compute_scheduler="tcp://127.0.0.1:8786", compute_retry_s=0.2)))
    except Exception:  # noqa: BLE001 - refusing to start is a fix too
        return
    try:
        resp = await client.post("/v1/puzzles", json={"id": "easy", "givens": EASY},
                                 headers=bearer(ADMIN))
        assert resp.status == 201
        docs = []

        async def decided():
            doc = await (await client.get("/v1/puzzles/easy",
                                          headers=bearer(ORGANISER))).json()
            docs.append(doc)
            return doc["status"] != "pending" or doc.get("waiting_for")
        await until(decided, 60)
        doc = docs[-1]
        assert doc["status"] == "pending", doc
        assert "distributed" in doc["waiting_for"] or "cluster" in doc["waiting_for"]
    finally:
        await client.close()


def test_rate_with_a_scheduler_but_no_distributed_is_one_clean_line(tmp_path, capsys,
                                                                   no_distributed):
    from fairgrid.daemon.cli import main

    bank = tmp_path / "bank.txt"
    bank.write_text(f"{EASY}\n{MEDIUM}\n")
    code = main(["rate", str(bank), "--quick", "--scheduler", "tcp://127.0.0.1:8786"])
    assert code == 2
    assert "fairgrid rate: error:" in capsys.readouterr().err
