"""A bug in a handler: the caller gets a JSON 500 with a reference, and the log holds the
traceback under the same reference, with the webhook's id to send it again."""

from __future__ import annotations

import logging

from fairgrid.daemon.app import create_app

from ..helpers import make_settings


async def test_a_500_names_a_reference_the_log_holds(aiohttp_client, tmp_path, caplog):
    app = create_app(make_settings(tmp_path))

    async def broken(request):
        raise RuntimeError("a bug")

    app.router.add_post("/v1/broken", broken)
    client = await aiohttp_client(app)
    with caplog.at_level(logging.ERROR):
        resp = await client.post("/v1/broken", data=b"{}",
                                 headers={"webhook-id": "msg_2Lx"})
    assert resp.status == 500
    doc = await resp.json()
    assert doc["error"].startswith("internal error (ref ")
    ref = doc["error"][len("internal error (ref "):-1]
    assert len(ref) == 12
    logged = [r for r in caplog.records if "unhandled error on POST /v1/broken" in r.getMessage()]
    assert len(logged) == 1
    line = logged[0].getMessage()
    assert f"ref {ref}" in line and "webhook-id msg_2Lx" in line
    assert logged[0].exc_info[0] is RuntimeError
    other = await (await client.post("/v1/broken", data=b"{}")).json()
    assert other["error"] != doc["error"]   # each failure its own reference
    await client.close()
