"""Outgoing notifications against real receivers on 127.0.0.1: signed, retried with
backoff until delivered, one stable id per event, failures visible and redeliverable,
and ingestion untouched by a receiver that hangs."""

from __future__ import annotations

import asyncio
import json
import re

from aiohttp import web
from standardwebhooks import Webhook

from fairgrid.daemon.testing import free_port
from fairgrid.daemon.testing import EASY_ROW_COPY as ROW_COPY
from fairgrid.daemon.app import create_app
from fairgrid.daemon.web.context import CTX
from fairgrid.daemon.work.notify import backoff_s

from ..helpers import (ADMIN, ORGANISER, OTHER_SECRET, bearer, make_settings, signed, solve_body,
                       until)

FAST = dict(notify_backoff_s=0.05, notify_backoff_max_s=0.2, notify_poll_s=0.05)


class Receiver:
    """A portal's endpoint: fails the first ``fail`` attempts with a 500, or holds every
    request until ``release`` is set; keeps what it was sent."""

    def __init__(self, fail: int = 0, hold: bool = False):
        self.fail = fail
        self.attempts: list[tuple[dict, bytes]] = []
        self.accepted: list[dict] = []
        self.release = asyncio.Event()
        self.arrived = asyncio.Event()
        if not hold:
            self.release.set()

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        self.attempts.append((dict(request.headers), body))
        self.arrived.set()
        await self.release.wait()
        if len(self.attempts) <= self.fail:
            return web.Response(status=500)
        self.accepted.append(json.loads(body))
        return web.Response(status=204)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/hook", self.handle)
        return app


async def _endpoint(client, url):
    resp = await client.put("/v1/portals/demo/notify", json={"url": url}, headers=bearer(ADMIN))
    assert resp.status == 200, await resp.text()
    return (await resp.json())["secret"]


async def _post(client, sid, moves=ROW_COPY):
    raw, headers = signed(solve_body(submission_id=sid, moves=moves), msg_id=sid)
    resp = await client.post("/v1/webhooks/solves", data=raw, headers=headers)
    assert resp.status == 202, await resp.text()


async def _notes(client, **query):
    resp = await client.get("/v1/notifications", params=query, headers=bearer(ORGANISER))
    return (await resp.json())["notifications"]


def test_backoff_doubles_with_jitter_up_to_the_cap():
    import random
    rng = random.Random(1)
    waits = [backoff_s(k, 5.0, 60.0, rng) for k in range(1, 8)]
    assert 2.5 <= waits[0] <= 5.0 and 5.0 <= waits[1] <= 10.0 and 10.0 <= waits[2] <= 20.0
    assert all(w <= 60.0 for w in waits) and waits[-1] >= 30.0


async def test_events_are_signed_retried_and_delivered_with_one_id(aiohttp_client,
                                                                   aiohttp_server, tmp_path):
    receiver = Receiver(fail=3)
    server = await aiohttp_server(receiver.app())
    client = await aiohttp_client(create_app(make_settings(tmp_path, **FAST)))
    secret = await _endpoint(client, str(server.make_url("/hook")))
    await _post(client, "copy")
    await until(lambda: _has(receiver, 1))
    await until(lambda: _delivered(client, 1))
    # four attempts of one event: three 500s, then accepted; the same id every time
    ids = {h["webhook-id"] for h, _ in receiver.attempts}
    assert len(receiver.attempts) == 4 and len(ids) == 1
    for headers, body in receiver.attempts:
        Webhook(secret).verify(body, {k.lower(): v for k, v in headers.items()})
    event = receiver.accepted[0]
    assert event["type"] == "flag.raised" and event["id"] == ids.pop()
    assert event["data"]["submission_id"] == "copy" and event["data"]["reasons"]
    notes = await _notes(client)
    assert [(n["type"], n["state"], n["attempts"]) for n in notes] == [
        ("flag.raised", "delivered", 4)]
    # a review is an event too, naming who decided
    flag_id = event["data"]["flag_id"]
    await client.post(f"/v1/flags/{flag_id}/review", headers=bearer(ADMIN),
                      json={"state": "cleared", "note": "known fast solver"})
    await until(lambda: _has(receiver, 2))
    await until(lambda: _delivered(client, 2))
    reviewed = receiver.accepted[1]
    assert reviewed["type"] == "flag.reviewed" and reviewed["data"]["state"] == "cleared"
    assert reviewed["data"]["by"] == "service token 1 (admin)"
    metrics = await (await client.get("/metrics")).text()
    assert 'fairgrid_notifications{state="delivered"} 2.0' in metrics
    assert 'fairgrid_notification_attempts_total{outcome="retry"} 3.0' in metrics
    assert "fairgrid_notifications_oldest_undelivered_seconds 0.0" in metrics


async def _has(receiver, n):
    return len(receiver.accepted) >= n


async def _delivered(client, n):
    """The service has recorded ``n`` deliveries: a receiver holds an event a moment
    before the notifier has read its answer and written it down."""
    return len(await _notes(client, state="delivered")) >= n


async def test_a_receiver_that_is_down_then_failed_then_redelivered(aiohttp_client,
                                                                    aiohttp_server, tmp_path):
    port = free_port()  # nothing listens here yet
    client = await aiohttp_client(create_app(make_settings(
        tmp_path, **FAST, notify_give_up_hours=0.5 / 3600)))
    await _endpoint(client, f"http://127.0.0.1:{port}/hook")
    await _post(client, "copy")

    async def failed():
        return [n["state"] for n in await _notes(client)] == ["failed"]
    await until(failed)
    note = (await _notes(client, state="failed"))[0]
    assert note["attempts"] >= 1 and note["last_error"]
    metrics = await (await client.get("/metrics")).text()
    assert 'fairgrid_notifications{state="failed"} 1.0' in metrics
    assert "fairgrid_notifications_oldest_undelivered_seconds 0.0" not in metrics
    # the receiver comes up; an admin redelivers
    receiver = Receiver()
    await aiohttp_server(receiver.app(), port=port)
    assert (await client.post(f"/v1/notifications/{note['id']}/redeliver",
                              headers=bearer(ORGANISER))).status == 403
    resp = await client.post(f"/v1/notifications/{note['id']}/redeliver",
                             headers=bearer(ADMIN))
    assert resp.status == 200
    await until(lambda: _has(receiver, 1))
    await until(lambda: _delivered(client, 1))
    # a reviewer sees it in the console too, and an admin sends it again from there
    await client.post("/v1/users", headers=bearer(ADMIN), json={
        "name": "root", "role": "admin", "password": "root password 1"})
    login = await (await client.get("/ui/login")).text()
    token = re.search(r'name="csrf" value="([^"]+)"', login).group(1)
    await client.post("/ui/login", data={"csrf": token, "name": "root",
                                         "password": "root password 1"})
    page = await (await client.get("/ui/notifications?state=delivered")).text()
    assert note["id"] in page and "flag.raised" in page
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    resp = await client.post(f"/ui/notifications/{note['id']}/redeliver",
                             data={"csrf": csrf}, allow_redirects=False)
    assert resp.status == 303
    await until(lambda: _has(receiver, 2))
    assert receiver.accepted[1]["id"] == note["id"]  # the same event, the same id
    assert receiver.accepted[0]["id"] == note["id"]
    assert (await client.post("/v1/notifications/evt_nope/redeliver",
                              headers=bearer(ADMIN))).status == 404


async def test_a_hanging_receiver_does_not_hold_up_ingestion(aiohttp_client, aiohttp_server,
                                                            tmp_path):
    receiver = Receiver(hold=True)
    server = await aiohttp_server(receiver.app())
    client = await aiohttp_client(create_app(make_settings(tmp_path, **FAST)))
    await _endpoint(client, str(server.make_url("/hook")))
    await _post(client, "copy")
    await asyncio.wait_for(receiver.arrived.wait(), 120)
    # a delivery is in flight and held open: webhooks are acknowledged all the same
    for k in range(20):
        await _post(client, f"more-{k}", moves=solve_body()["moves"])
    store = client.server.app[CTX].store
    assert store is not None
    receiver.release.set()
    await until(lambda: _has(receiver, 1))


async def test_endpoints_are_validated(aiohttp_client, tmp_path):
    client = await aiohttp_client(create_app(make_settings(tmp_path)))
    for body, status in [({"url": "ftp://x"}, 422), ({"url": 5}, 422), ({}, 422),
                         ({"url": "http://[::1"}, 422), ({"url": "http://x.example:99999/"},
                                                          422),
                         ({"url": "http://x.example:0/"}, 422), ({"url": "http://:80/"}, 422),
                         ({"url": "http://x.example/a b"}, 422),
                         ({"url": "https://x.example/h", "extra": 1}, 422)]:
        resp = await client.put("/v1/portals/demo/notify", json=body, headers=bearer(ADMIN))
        assert resp.status == status, body
    # URLs urllib takes that would fail at every delivery, go elsewhere, or show a password
    for url, words in [("http://a..b/", "does not encode"), ("http://..:1/", "does not encode"),
                       ("http://a\x7f.example/", "U+007F"),
                       ("http://ex\u200bample.com/", "U+200B ZERO WIDTH SPACE"),
                       ("http://bob:pw@x.example/h", "password"),
                       ("http://x\\y/", "aiohttp can send to"),
                       ("http://xn--zz/", "aiohttp can send to"),
                       ("http://999.999.999.999/", "no IPv4 address"),
                       ("http://a.0x7f/", "no IPv4 address")]:
        resp = await client.put("/v1/portals/demo/notify", json={"url": url},
                                headers=bearer(ADMIN))
        assert resp.status == 422 and words in (await resp.text()), url
    for url in ("https://bücher.example/h", "http://[::1]:8080/h", "http://10.0.0.1/h",
                "http://x.0x7fz/h"):
        resp = await client.put("/v1/portals/demo/notify", json={"url": url},
                                headers=bearer(ADMIN))
        assert resp.status == 200, url
    resp = await client.put("/v1/portals/nope/notify", json={"url": "https://x.example/h"},
                            headers=bearer(ADMIN))
    assert resp.status == 404
    assert (await client.put("/v1/portals/demo/notify", json={"url": "https://x.example/h"},
                             headers=bearer(ORGANISER))).status == 403
    resp = await client.delete("/v1/portals/demo/notify", headers=bearer(ADMIN))
    assert resp.status == 200 and (await resp.json())["url"] is None
    assert (await client.get("/v1/notifications?state=bogus",
                             headers=bearer(ORGANISER))).status == 400


async def _endpoint_of(client, portal, url):
    resp = await client.put(f"/v1/portals/{portal}/notify", json={"url": url},
                            headers=bearer(ADMIN))
    assert resp.status == 200, await resp.text()
    return (await resp.json())["secret"]


class Endless:
    """A receiver that accepts with a 200 and then sends an answer of up to 1 GiB, as
    fast as the other side reads it; notes how much went out before the daemon hung up."""

    def __init__(self):
        self.sent = 0
        self.hung_up = asyncio.Event()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        await request.read()
        resp = web.StreamResponse(status=200)
        await resp.prepare(request)
        chunk = b"x" * 65536
        try:
            while self.sent < 1 << 30:
                await resp.write(chunk)
                self.sent += len(chunk)
        finally:  # the write fails, or the handler is cancelled, once the daemon hangs up
            self.hung_up.set()
        return resp

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/hook", self.handle)
        return app


async def test_a_huge_answer_is_not_read_to_its_end(aiohttp_client, aiohttp_server,
                                                    tmp_path):
    receiver = Endless()
    server = await aiohttp_server(receiver.app())
    client = await aiohttp_client(create_app(make_settings(tmp_path, **FAST,
                                                           notify_timeout_s=30.0)))
    await _endpoint(client, str(server.make_url("/hook")))
    await _post(client, "copy")

    async def delivered():
        return [n["state"] for n in await _notes(client)] == ["delivered"]
    # a 2xx is all that counts: the daemon reads the start of the answer, then hangs up
    # (reading it all would take until notify.timeout_s and fail every attempt)
    await until(delivered)
    await asyncio.wait_for(receiver.hung_up.wait(), 60)
    assert receiver.sent < 100 << 20
    note = (await _notes(client))[0]
    assert note["attempts"] == 1 and note["last_status"] == 200


async def test_a_redirect_is_a_failed_attempt_and_never_followed(aiohttp_client,
                                                                 aiohttp_server, tmp_path):
    target = Receiver()
    elsewhere = await aiohttp_server(target.app())
    moved = web.Application()

    async def redirect(request: web.Request) -> web.Response:
        await request.read()
        raise web.HTTPTemporaryRedirect(str(elsewhere.make_url("/hook")))
    moved.router.add_post("/hook", redirect)
    server = await aiohttp_server(moved)
    client = await aiohttp_client(create_app(make_settings(
        tmp_path, **FAST, notify_give_up_hours=0.5 / 3600)))
    await _endpoint(client, str(server.make_url("/hook")))
    await _post(client, "copy")

    async def failed():
        return [n["state"] for n in await _notes(client)] == ["failed"]
    await until(failed)
    note = (await _notes(client))[0]
    # the signed POST went to the endpoint only; a 307 would have re-sent it
    assert target.attempts == []
    assert note["last_status"] == 307 and note["attempts"] >= 1
    assert "redirect" in note["last_error"] and "not followed" in note["last_error"]
    assert str(elsewhere.make_url("/hook")) in note["last_error"]


async def test_one_portals_hanging_receiver_does_not_hold_up_another_portal(
        aiohttp_client, aiohttp_server, tmp_path):
    slow, fast = Receiver(hold=True), Receiver()
    slow_server = await aiohttp_server(slow.app())
    fast_server = await aiohttp_server(fast.app())
    # the hanging request ends only when the test releases it, never by the timeout
    client = await aiohttp_client(create_app(make_settings(tmp_path, **FAST,
                                                           notify_timeout_s=600.0)))
    await _endpoint_of(client, "demo", str(slow_server.make_url("/hook")))
    await _endpoint_of(client, "other", str(fast_server.make_url("/hook")))
    await _post(client, "copy")
    await asyncio.wait_for(slow.arrived.wait(), 120)  # demo's delivery is held open
    body = solve_body(submission_id="copy-other", portal="other", moves=ROW_COPY)
    raw, headers = signed(body, secret=OTHER_SECRET, msg_id="copy-other")
    assert (await client.post("/v1/webhooks/solves", data=raw, headers=headers)).status == 202

    async def delivered(portal):
        return [n["state"] for n in await _notes(client, portal=portal)] == ["delivered"]
    # the other portal's event is delivered and recorded while demo's is still held
    await until(lambda: delivered("other"))
    assert not slow.release.is_set() and len(slow.attempts) == 1
    assert fast.accepted[0]["data"]["portal"] == "other"
    held = (await _notes(client, portal="demo"))[0]
    assert held["state"] == "pending" and held["attempts"] == 0
    slow.release.set()
    await until(lambda: delivered("demo"))


async def _raw_receiver(answer: bytes):
    """A receiver on 127.0.0.1 that answers every request with ``answer``, bytes as they
    are (no HTTP library would send them), and closes; (server, its hook URL, hits)."""
    hits = []

    async def handle(reader, writer):
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
        await reader.readexactly(length)
        hits.append(head)
        writer.write(answer)
        await writer.drain()
        writer.close()
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/hook", hits


async def test_a_receivers_bytes_are_recorded_escaped_and_its_event_backs_off(
        aiohttp_client, tmp_path):
    # a redirect to bytes that are no UTF-8, with a terminal's escape sequence
    server, url, hits = await _raw_receiver(
        b"HTTP/1.1 302 Found\r\nLocation: http://x/\xff\xfe\x1b]0;pwned\x07\r\n"
        b"Content-Length: 0\r\nConnection: close\r\n\r\n")
    async with server:
        client = await aiohttp_client(create_app(make_settings(
            tmp_path, **FAST, notify_give_up_hours=1.0 / 3600)))
        await _endpoint(client, url)
        await _post(client, "copy")

        async def failed():
            return [n["state"] for n in await _notes(client)] == ["failed"]
        await until(failed)
    note = (await _notes(client))[0]
    # every attempt recorded (so backoff and the give-up applied), none written raw
    assert note["last_status"] == 302 and note["attempts"] == len(hits) >= 1
    assert "\\u001b]0;pwned\\u0007" in note["last_error"]
    assert "\x1b" not in note["last_error"] and "\\udcff" in note["last_error"]


async def test_a_2xx_whose_answer_is_cut_short_is_delivered(aiohttp_client, tmp_path):
    server, url, hits = await _raw_receiver(
        b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nabc")
    async with server:
        client = await aiohttp_client(create_app(make_settings(tmp_path, **FAST)))
        await _endpoint(client, url)
        await _post(client, "copy")
        await until(lambda: _delivered(client, 1))
    note = (await _notes(client))[0]
    assert note["attempts"] == 1 and len(hits) == 1 and note["last_error"] is None


async def test_a_redelivery_asked_for_during_an_attempt_wins(aiohttp_client, aiohttp_server,
                                                             tmp_path):
    receiver = Receiver(fail=1, hold=True)
    server = await aiohttp_server(receiver.app())
    # any failed attempt is past the give-up time: alone, it marks the event failed
    client = await aiohttp_client(create_app(make_settings(
        tmp_path, **FAST, notify_give_up_hours=1e-9, notify_timeout_s=600.0)))
    await _endpoint(client, str(server.make_url("/hook")))
    await _post(client, "copy")
    await asyncio.wait_for(receiver.arrived.wait(), 120)
    event = (await _notes(client))[0]["id"]
    resp = await client.post(f"/v1/notifications/{event}/redeliver", headers=bearer(ADMIN))
    assert resp.status == 200
    receiver.release.set()  # the held attempt is answered 500
    await until(lambda: _has(receiver, 1))
    await until(lambda: _delivered(client, 1))
    assert len(receiver.attempts) == 2
