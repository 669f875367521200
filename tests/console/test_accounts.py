"""People, roles and portal scope through the API and the console (no browser): the
users routes, personal tokens, 404 across portals, reviews that name the person, the
sign-in throttle, CSRF, cookies and the console's security headers."""

from __future__ import annotations

import urllib.parse

import pytest

from fairgrid.daemon.console.pages import CONSOLE
from fairgrid.daemon.console.sessions import LoginThrottle, Sessions
from fairgrid.daemon.app import create_app

from ..daemon.helpers import (ADMIN, ORGANISER, OTHER_SECRET, PASSWORD, SECRET_A, add_user, bearer,
                              login_token, make_settings, post_flagged, sign_in,
                              sign_in_as_admin, signed, solve_body)


async def test_users_api_validates_and_tokens_are_personal(client):
    assert (await client.get("/v1/users", headers=bearer(ORGANISER))).status == 403
    for body, field in [({"name": "", "role": "organiser"}, "name"),
                        ({"name": "x y", "role": "organiser"}, "name"),
                        ({"name": "x", "role": "boss"}, "role"),
                        ({"name": "x"}, "role"),
                        ({"name": "x", "role": "organiser", "portals": ["nope"]}, "portals"),
                        ({"name": "x", "role": "organiser", "password": "short"}, "password"),
                        ({"name": "x", "role": "organiser", "password": "\0" * 12}, "password"),
                        ({"name": "x", "role": "organiser", "password": " " * 12}, "password"),
                        ({"name": "x", "role": "organiser",
                          "password": "good enough\x1b[2J"}, "password"),
                        ({"name": "x", "role": "organiser", "colour": "red"}, "colour"),
                        ({"name": "x", "role": "admin", "portals": ["demo"]}, "portals")]:
        resp = await client.post("/v1/users", json=body, headers=bearer(ADMIN))
        assert resp.status == 422 and (await resp.json())["field"] == field, body
    token = await add_user(client, "alice")
    again = await client.post("/v1/users", headers=bearer(ADMIN),
                              json={"name": "alice", "role": "admin"})
    assert again.status == 409
    # nor a look-alike: two reviewers no history tells apart, one sign-in throttle
    again = await client.post("/v1/users", headers=bearer(ADMIN),
                              json={"name": "ALICE", "role": "admin"})
    assert again.status == 409 and "letter case" in (await again.json())["error"]
    me = await (await client.get("/v1/me", headers=bearer(token))).json()
    assert me == {"name": "alice", "role": "organiser", "person": True, "portals": ["demo"]}
    listed = await (await client.get("/v1/users", headers=bearer(ADMIN))).json()
    assert [u["name"] for u in listed["users"]] == ["alice"]
    assert "password_hash" not in listed["users"][0] and listed["users"][0]["has_password"]
    # an admin sees every portal: making one scoped is refused, promoting one unscopes
    resp = await client.patch("/v1/users/alice", json={"role": "admin", "portals": ["demo"]},
                              headers=bearer(ADMIN))
    assert resp.status == 422 and (await resp.json())["field"] == "portals"
    resp = await client.patch("/v1/users/alice", json={"role": "admin"}, headers=bearer(ADMIN))
    assert (await resp.json())["portals"] == []
    assert (await (await client.get("/v1/me", headers=bearer(token))).json())["portals"] is None
    # disabling revokes the tokens
    resp = await client.patch("/v1/users/alice", json={"disabled": True}, headers=bearer(ADMIN))
    assert resp.status == 200 and (await resp.json())["disabled"]
    assert (await client.get("/v1/me", headers=bearer(token))).status == 401
    assert (await client.patch("/v1/users/nobody", json={"disabled": True},
                               headers=bearer(ADMIN))).status == 404


async def test_portal_scope_and_reviews_name_the_person(client):
    demo_flag = await post_flagged(client, "demo", "copy-demo", SECRET_A)
    other_flag = await post_flagged(client, "other", "copy-other", OTHER_SECRET)
    alice = await add_user(client, "alice", portals=["demo"])
    # the other portal does not exist for alice: 404, like a wrong id
    for path in ("/v1/submissions/other/copy-other", "/v1/players/other/p-42"):
        resp = await client.get(path, headers=bearer(alice))
        assert resp.status == 404, path
    assert (await client.get("/v1/submissions/demo/copy-demo",
                             headers=bearer(alice))).status == 200
    flags = await (await client.get("/v1/flags", headers=bearer(alice))).json()
    assert [f["portal"] for f in flags["flags"]] == ["demo"]
    resp = await client.post(f"/v1/flags/{other_flag}/review", headers=bearer(alice),
                             json={"state": "cleared"})
    assert resp.status == 404
    # a person's review names them; they cannot say they are someone else
    resp = await client.post(f"/v1/flags/{demo_flag}/review", headers=bearer(alice),
                             json={"state": "cleared", "actor": "bob"})
    assert resp.status == 422 and (await resp.json())["field"] == "actor"
    resp = await client.post(f"/v1/flags/{demo_flag}/review", headers=bearer(alice),
                             json={"state": "cleared", "note": "fast"})
    assert resp.status == 200
    assert (await resp.json())["history"][-1]["actor"] == "alice"
    # service tokens keep working, named as such; the organiser one only reads
    resp = await client.post(f"/v1/flags/{other_flag}/review", headers=bearer(ORGANISER),
                             json={"state": "cleared"})
    assert resp.status == 403
    resp = await client.post(f"/v1/flags/{other_flag}/review", headers=bearer(ADMIN),
                             json={"state": "confirmed", "actor": "carol"})
    assert (await resp.json())["history"][-1]["actor"] == "service token 1 (admin) for carol"


async def test_an_organiser_sees_no_portal_until_granted(client):
    raw, headers = signed(solve_body())
    assert (await client.post("/v1/webhooks/solves", data=raw, headers=headers)).status == 202
    nobody = await add_user(client, "nobody", portals=())
    me = await (await client.get("/v1/me", headers=bearer(nobody))).json()
    assert me["portals"] == []
    assert (await client.get("/v1/submissions/demo/s-1", headers=bearer(nobody))).status == 404
    # every portal only when asked for, and not together with a list
    resp = await client.post("/v1/users", headers=bearer(ADMIN), json={
        "name": "both", "role": "organiser", "portals": ["demo"], "all_portals": True})
    assert resp.status == 422 and (await resp.json())["field"] == "all_portals"
    resp = await client.post("/v1/users", headers=bearer(ADMIN), json={
        "name": "every", "role": "organiser", "all_portals": True})
    assert resp.status == 201 and (await resp.json())["all_portals"]
    # granting and narrowing: a list replaces "every portal", and the other way round
    resp = await client.patch("/v1/users/nobody", json={"all_portals": True},
                              headers=bearer(ADMIN))
    assert (await resp.json())["all_portals"]
    assert (await client.get("/v1/submissions/demo/s-1", headers=bearer(nobody))).status == 200
    resp = await client.patch("/v1/users/nobody", json={"portals": ["other"]},
                              headers=bearer(ADMIN))
    doc = await resp.json()
    assert doc["portals"] == ["other"] and not doc["all_portals"]
    assert (await client.get("/v1/submissions/demo/s-1", headers=bearer(nobody))).status == 404
    # an admin made an organiser keeps no portal of their admin days
    root = await add_user(client, "root", role="admin", portals=())
    assert (await client.get("/v1/me", headers=bearer(root))).status == 200
    resp = await client.patch("/v1/users/root", json={"role": "organiser"},
                              headers=bearer(ADMIN))
    doc = await resp.json()
    assert (doc["role"], doc["portals"], doc["all_portals"]) == ("organiser", [], False)
    assert (await (await client.get("/v1/me", headers=bearer(root))).json())["portals"] == []


async def test_sign_in_cookies_headers_csrf_and_scope(client):
    await add_user(client, "alice", portals=["demo"])
    resp = await client.get("/ui/flags", allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"].startswith("/ui/login?next=")
    # a form sent with no session (it ended): signing in returns to the page it was on,
    # not to the form's address, which is no page
    for referer, back in ((str(client.make_url("/ui/flags/7?sort=oldest")),
                           "/ui/flags/7?sort=oldest"),
                          ("https://elsewhere.example/ui/flags/7", "/ui/"), (None, "/ui/")):
        resp = await client.post("/ui/flags/7/review", data={"state": "cleared"},
                                 allow_redirects=False,
                                 headers={"Referer": referer} if referer else {})
        where = urllib.parse.urlsplit(resp.headers["Location"])
        assert resp.status == 303 and where.path == "/ui/login"
        assert urllib.parse.parse_qs(where.query) == {"next": [back]}, referer
    resp = await sign_in(client, "alice", "wrong password!")
    assert resp.status == 401 and "Wrong name or password" in await resp.text()
    # behind a TLS proxy the cookie is Secure (the test client then keeps it to itself)
    resp = await sign_in(client, "alice", headers={"X-Forwarded-Proto": "https"})
    cookie = resp.headers.getall("Set-Cookie")
    session = next(c for c in cookie if c.startswith("fairgrid_session="))
    assert "Secure" in session
    resp = await sign_in(client, "alice")
    assert resp.status == 303 and resp.headers["Location"] == "/ui/flags"
    cookie = resp.headers.getall("Set-Cookie")
    session = next(c for c in cookie if c.startswith("fairgrid_session="))
    for attr in ("HttpOnly", "SameSite=Strict", "Path=/ui/"):
        assert attr in session, session
    assert "Secure" not in session
    page = await client.get("/ui/flags")
    assert page.status == 200
    csp = page.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert "unsafe-inline" not in csp and page.headers["Cache-Control"] == "no-store"
    assert "<script>" not in await page.text() and " style=" not in await page.text()
    # a post without the session's CSRF token changes nothing
    resp = await client.post("/ui/flags/1/review", data={"state": "cleared"})
    assert resp.status == 403 and "CSRF" in await resp.text()
    assert (await client.post("/ui/logout", data={})).status == 403
    # bad filters are a 400 page, unknown pages and other portals' pages a 404
    assert (await client.get("/ui/flags?state=bogus")).status == 400
    assert (await client.get("/ui/nowhere")).status == 404
    assert (await client.get("/ui/players/other/p-42")).status == 404
    assert (await client.get("/ui/tournaments/t-1/flags.csv")).status == 404
    static = await client.get("/ui/static/console.css")
    assert static.status == 200 and "text/css" in static.headers["Content-Type"]


async def test_sign_in_is_throttled_and_never_redirects_elsewhere(client):
    await add_user(client, "alice")
    for _ in range(5):
        assert (await sign_in(client, "alice", "not the password")).status == 401
    # refused even with the right password while locked
    resp = await sign_in(client, "alice")
    assert resp.status == 429 and "Too many failed sign-ins" in await resp.text()
    # a form without the sign-in cookie's token is refused
    client.session.cookie_jar.clear()
    resp = await client.post("/ui/login", data={"name": "alice", "password": PASSWORD},
                             allow_redirects=False)
    assert resp.status == 403


async def test_behind_a_trusted_proxy_the_throttle_counts_each_client(aiohttp_client,
                                                                     tmp_path):
    client = await aiohttp_client(create_app(make_settings(
        tmp_path, console_trusted_proxies="10.0.0.0/8, 127.0.0.1")))
    await add_user(client, "alice")
    await add_user(client, "bob")

    def via(*hops):  # what the proxy sends: the addresses it and those before it saw
        return {"X-Forwarded-For": ", ".join(hops)}
    for _ in range(5):
        resp = await sign_in(client, "alice", "not the password", headers=via("203.0.113.5"))
        assert resp.status == 401
    # that client is refused, and so is alice's name from anywhere ...
    assert (await sign_in(client, "bob", headers=via("203.0.113.5"))).status == 429
    assert (await sign_in(client, "alice", headers=via("198.51.100.7"))).status == 429
    # ... but not everyone else behind the same proxy
    assert (await sign_in(client, "bob", headers=via("198.51.100.7"))).status == 303
    # an address the client put in front is not believed; proxies in a chain are skipped
    forged = via("198.51.100.9", "203.0.113.5", "10.1.2.3")
    assert (await sign_in(client, "bob", headers=forged)).status == 429


async def test_without_a_trusted_proxy_forwarded_for_is_ignored(client):
    await add_user(client, "alice")
    await add_user(client, "bob")
    for k in range(5):
        resp = await sign_in(client, f"guess-{k}", "not the password",
                              headers={"X-Forwarded-For": f"203.0.113.{k}"})
        assert resp.status == 401
    resp = await sign_in(client, "bob", headers={"X-Forwarded-For": "198.51.100.7"})
    assert resp.status == 429


def test_the_client_address_behind_proxies():
    from fairgrid.daemon.console.sessions import client_address
    from fairgrid.daemon.settings import SettingsError, proxy_networks

    trusted = proxy_networks("10.0.0.0/8, ::1")
    assert client_address("10.0.0.2", ["203.0.113.5"], trusted) == "203.0.113.5"
    assert client_address("::1", ["2001:db8::7, 10.9.9.9"], trusted) == "2001:db8::7"
    assert client_address("192.0.2.1", ["203.0.113.5"], trusted) == "192.0.2.1"
    assert client_address("10.0.0.2", [], trusted) == "10.0.0.2"
    assert client_address("10.0.0.2", ["junk, 10.0.0.3"], trusted) == "10.0.0.3"
    assert client_address("10.0.0.2", ["a, b", "203.0.113.5"], ()) == "10.0.0.2"
    with pytest.raises(SettingsError, match="console.trusted_proxies"):
        proxy_networks("10.0.0.0/8, proxy.example")


async def test_next_is_only_a_console_path(aiohttp_client, tmp_path):
    client = await aiohttp_client(create_app(make_settings(tmp_path)))
    await add_user(client, "alice")
    token = await login_token(client)
    resp = await client.post("/ui/login", data={"csrf": token, "name": "alice",
                                                "password": PASSWORD,
                                                "next": "//evil.example/ui/"},
                             allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"] == "/ui/"


def test_sessions_end_when_idle_too_long_or_old_or_disabled():
    now = [0.0]
    sessions = Sessions(idle_s=60, max_s=600, clock=lambda: now[0])
    sid, session = sessions.start("alice")
    now[0] = 59
    assert sessions.get(sid) is session  # seen: idle time starts again
    now[0] = 118
    assert sessions.get(sid) is session
    now[0] = 179
    assert sessions.get(sid) is None  # 61 s idle
    sid, _ = sessions.start("alice")
    for t in range(230, 800, 50):
        now[0] = t
        alive = sessions.get(sid)
    assert alive is None  # busy, but past the session's length
    sid, _ = sessions.start("alice")
    other, _ = sessions.start("bob")
    sessions.end_user("alice")
    assert sessions.get(sid) is None and sessions.get(other) is not None
    assert sessions.get("forged") is None and sessions.get(None) is None


def test_the_throttle_counts_per_key_and_forgets():
    now = [0.0]
    throttle = LoginThrottle(3, 100, clock=lambda: now[0])
    for _ in range(3):
        throttle.failed("name:a", "addr:1")
    assert throttle.locked("name:a") and throttle.locked("addr:1")
    assert not throttle.locked("name:b", "addr:2")
    now[0] = 101
    assert not throttle.locked("name:a", "addr:1")


async def test_a_new_password_through_the_api_signs_the_person_out_of_the_console(client):
    await add_user(client, "alice", portals=["demo"])
    await add_user(client, "bob", portals=["demo"])
    assert (await sign_in(client, "alice")).status == 303
    assert (await client.get("/ui/flags", allow_redirects=False)).status == 200
    # another person's change leaves alice's session alone
    resp = await client.patch("/v1/users/bob", json={"password": "another long password"},
                              headers=bearer(ADMIN))
    assert resp.status == 200
    assert (await client.get("/ui/flags", allow_redirects=False)).status == 200
    resp = await client.patch("/v1/users/alice", json={"password": "another long password"},
                              headers=bearer(ADMIN))
    assert resp.status == 200
    resp = await client.get("/ui/flags", allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"].startswith("/ui/login?next=")


async def test_links_to_ids_with_slashes_lead_to_their_own_pages(client):
    """A portal's ids are one path segment in every link (a "/" escaped too), so a
    player "zz/p-1" links to that player, never to p-1; "." and ".." are refused at
    ingestion, as no link can name them. A static name too long for the disk is a 404,
    and the page asked for before signing in keeps its whole query."""
    import re

    flag = await post_flagged(client, "demo", "s/../honest", SECRET_A, player_id="zz/p-1")
    for field in ("player_id", "submission_id"):
        raw, headers = signed(solve_body(**{"submission_id": "dots", field: ".."}),
                              msg_id=f"dots-{field}")
        resp = await client.post("/v1/webhooks/solves", data=raw, headers=headers)
        assert resp.status == 422 and (await resp.json())["field"] == field
    wanted = "/ui/flags?state=any&tournament=t-1&sort=oldest"
    resp = await client.get(wanted, allow_redirects=False)
    assert await login_token(client)
    target = resp.headers["Location"]
    form = await (await client.get(target)).text()
    assert f'value="{wanted.replace("&", "&amp;")}"' in form
    await add_user(client, "alice", portals=["demo"])
    assert (await sign_in(client, "alice")).status == 303
    page = await (await client.get(f"/ui/flags/{flag}")).text()
    links = set(re.findall(r'href="(/ui/(?:players|submissions)/[^"?#]+)"', page))
    assert len(links) >= 2, links
    for link in links:
        assert "/../" not in link and "zz/p-1" not in link, link
        resp = await client.get(link)
        assert resp.status == 200, link
        text = await resp.text()
        assert "zz/p-1" in text if "/players/" in link else "s/../honest" in text, link
    resp = await client.get("/ui/static/" + "a" * 300 + "%0aforged%1b")
    assert resp.status == 404


@pytest.mark.parametrize("part,words", [
    # a field that is not UTF-8: aiohttp raises decoding it
    (b'name="password"\r\n\r\n\xed\xa0\x80 long enough', "not UTF-8"),
    # a part with a file name is no text: its str(), a FileField's repr, was stored as
    # the review's note
    (b'name="note"; filename="note.txt"\r\nContent-Type: text/plain\r\n\r\nhonest',
     "sends a file"),
])
async def test_a_form_that_cannot_be_read_as_text_is_a_400(client, part, words):
    """At the sign-in form and behind it: a 400 page, never a 500, nothing stored."""
    body = (b'--XX\r\nContent-Disposition: form-data; name="state"\r\n\r\ncleared\r\n'
            b'--XX\r\nContent-Disposition: form-data; ' + part + b'\r\n--XX--\r\n')
    headers = {"Content-Type": "multipart/form-data; boundary=XX"}
    resp = await client.post("/ui/login", data=body, headers=headers)
    assert resp.status == 400 and words in await resp.text()
    await add_user(client, "alice", portals=["demo"])
    assert (await sign_in(client, "alice")).status == 303
    resp = await client.post("/ui/flags/review", data=body, headers=headers)
    assert resp.status == 400 and words in await resp.text()


async def test_an_unknown_notification_is_named_escaped(client):
    """A U+202E in the id a crafted form posts to would turn the page's words around:
    the 404 page shows it escaped, as every other page's 404 does."""
    import re

    await sign_in_as_admin(client)
    page = await (await client.get("/ui/notifications")).text()
    token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    resp = await client.post("/ui/notifications/%E2%80%AEtxt.exe/redeliver",
                             data={"csrf": token}, allow_redirects=False)
    text = await resp.text()
    assert resp.status == 404 and "\u202e" not in text and "\\u202e" in text, text[-500:]


async def test_a_sign_in_name_longer_than_any_name_is_not_kept(aiohttp_client, tmp_path):
    """Each failed sign-in counts its name in the throttle: a name of any length (up to
    the 1 MiB body limit; no account's is over 64 characters) was kept whole."""
    client = await aiohttp_client(create_app(make_settings(tmp_path)))
    throttle = client.server.app[CONSOLE].throttle
    for i in range(4):
        token = await login_token(client)
        resp = await client.post("/ui/login", data={"csrf": token,
                                                    "name": f"{i}" + "x" * 200_000,
                                                    "password": "wrong password"})
        assert resp.status in (400, 401)
    kept = sum(len(k) for k in throttle._seen)
    assert kept < 10_000, f"{kept} characters of names kept"


async def test_failures_for_names_never_tried_again_are_forgotten(aiohttp_client, tmp_path):
    """A key's failures were pruned only when that key was asked about again: every name
    and address that failed once stayed in memory for good."""
    client = await aiohttp_client(create_app(make_settings(tmp_path)))
    throttle = client.server.app[CONSOLE].throttle
    now = [0.0]
    throttle.clock = lambda: now[0]
    for i in range(3):
        token = await login_token(client)
        await client.post("/ui/login", data={"csrf": token, "name": f"guess-{i}",
                                             "password": "wrong password"})
    now[0] = throttle.lockout_s * 10
    for i in range(3):
        token = await login_token(client)
        await client.post("/ui/login", data={"csrf": token, "name": f"other-{i}",
                                             "password": "wrong password"})
    stale = [k for k, times in throttle._seen.items()
             if all(now[0] - t >= throttle.lockout_s for t in times)]
    assert not stale, f"kept past the lockout: {stale}"
