"""An erasure whose list of erased people cannot grow (a full disk) erases nothing and
says why: a 507 naming the file, not a 500 "internal error" (docs/reliability.md: a full
disk gets clean, retryable answers). The full disk is the list's append raising ENOSPC.
"""

from __future__ import annotations

import errno

from fairgrid.daemon.store.erasure import ErasedPlayers

from ..helpers import ADMIN, bearer, signed, solve_body


async def test_an_erasure_on_a_full_disk_is_a_clean_storage_answer(client, monkeypatch):
    body = solve_body(submission_id="s-1", player_id="erase-me")
    raw, headers = signed(body, msg_id="hook-s-1")
    assert (await client.post("/v1/webhooks/solves", data=raw, headers=headers)).status == 202

    def no_room(self, digests):
        raise OSError(errno.ENOSPC, "No space left on device", str(self._path))
    monkeypatch.setattr(ErasedPlayers, "_append", no_room)
    resp = await client.post("/v1/players/demo/erase-me/erase", headers=bearer(ADMIN))
    doc = await resp.json()
    assert resp.status == 507 and "space" in doc["error"].lower(), (resp.status, doc)
    assert "nothing was erased" in doc["error"] and ".erased" in doc["error"], doc
    # the disk freed, the same request erases them
    monkeypatch.undo()
    resp = await client.post("/v1/players/demo/erase-me/erase", headers=bearer(ADMIN))
    assert resp.status == 200 and (await resp.json())["erased"]["submissions"] == 1
