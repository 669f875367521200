"""Console sessions and the sign-in throttle (in memory: a restart signs everyone out).

A session is a random id in an HttpOnly, SameSite=Strict cookie (``Secure`` when the
request came over TLS, directly or through a proxy that says so) and a CSRF token that
every form carries. Sessions end on sign-out, after ``console.idle_minutes`` without a
request, after ``console.session_hours``, and when the person is disabled. Sign-in is
refused for ``console.lockout_s`` after ``console.login_failures`` failures, counted
per name and per client address: the connection's, or behind a reverse proxy listed in
``console.trusted_proxies`` the one its ``X-Forwarded-For`` names (:func:`client_address`).
"""

from __future__ import annotations

import hashlib
import ipaddress
import secrets
import time
from dataclasses import dataclass, field
from typing import Callable

COOKIE = "fairgrid_session"


@dataclass
class Session:
    user: str
    csrf: str
    started: float
    seen: float


class Sessions:
    def __init__(self, idle_s: float, max_s: float,
                 clock: Callable[[], float] = time.monotonic):
        self._idle_s = idle_s
        self._max_s = max_s
        self._clock = clock
        self._by_key: dict[str, Session] = {}  # by sha256 of the cookie value

    @staticmethod
    def _key(sid: str) -> str:
        # a cookie's bytes that are not UTF-8 arrive as lone surrogates
        return hashlib.sha256(sid.encode("utf-8", "surrogateescape")).hexdigest()

    def start(self, user: str) -> tuple[str, Session]:
        """A new session for ``user``: (cookie value, session)."""
        self._expire()
        now = self._clock()
        sid = secrets.token_urlsafe(32)
        session = Session(user, secrets.token_urlsafe(32), now, now)
        self._by_key[self._key(sid)] = session
        return sid, session

    def get(self, sid: str | None) -> Session | None:
        """The live session of a cookie value (its idle time starts again), else None."""
        if not sid:
            return None
        key = self._key(sid)
        session = self._by_key.get(key)
        if session is None:
            return None
        now = self._clock()
        if now - session.seen > self._idle_s or now - session.started > self._max_s:
            del self._by_key[key]
            return None
        session.seen = now
        return session

    def end(self, sid: str | None) -> None:
        if sid:
            self._by_key.pop(self._key(sid), None)

    def end_user(self, user: str) -> None:
        """Sign ``user`` out everywhere (disabled, or a new password)."""
        for key in [k for k, s in self._by_key.items() if s.user == user]:
            del self._by_key[key]

    def _expire(self) -> None:
        now = self._clock()
        for key in [k for k, s in self._by_key.items()
                    if now - s.seen > self._idle_s or now - s.started > self._max_s]:
            del self._by_key[key]


@dataclass
class LoginThrottle:
    failures: int
    lockout_s: float
    clock: Callable[[], float] = time.monotonic
    _seen: dict[str, list[float]] = field(default_factory=dict)
    _swept: float = 0.0  # when keys no sign-in has asked about since were last dropped

    def _recent(self, key: str) -> list[float]:
        now = self.clock()
        times = [t for t in self._seen.get(key, []) if now - t < self.lockout_s]
        if times:
            self._seen[key] = times
        else:
            self._seen.pop(key, None)
        return times

    def locked(self, *keys: str) -> bool:
        """Whether sign-in is refused for any of ``keys`` (a name, an address)."""
        return any(len(self._recent(k)) >= self.failures for k in keys)

    def failed(self, *keys: str) -> None:
        now = self.clock()
        if now - self._swept >= self.lockout_s:
            # a key is pruned when asked about again; one never asked about again (a
            # guessed name, an address gone) would be kept for good
            self._swept = now
            for k in [k for k, times in self._seen.items()
                      if not times or now - times[-1] >= self.lockout_s]:
                del self._seen[k]
        for k in keys:
            self._seen.setdefault(k, []).append(now)
            del self._seen[k][:-self.failures]  # only the last few matter

    def succeeded(self, name_key: str, *others: str) -> None:
        """A sign-in that was counted (``failed`` first) succeeded: the name starts afresh,
        the address loses that one attempt."""
        self._seen.pop(name_key, None)
        for k in others:
            if self._seen.get(k):
                self._seen[k].pop()


def client_address(peer: str | None, forwarded_for: list[str], trusted: tuple) -> str:
    """Who sent a request: ``peer`` (the connection's address), or when it is one of the
    ``trusted`` proxy networks, the rightmost address of ``X-Forwarded-For`` that is
    not (each proxy appends the address it saw; anything left of that is the client's
    to invent)."""
    def proxy(text: str) -> bool | None:  # None: not an address
        try:
            ip = ipaddress.ip_address(text)
        except ValueError:
            return None
        return any(ip in net for net in trusted)

    address = peer or "unknown"
    if not trusted or not proxy(address):
        return address
    hops = [hop.strip() for header in forwarded_for for hop in header.split(",")]
    for hop in reversed(hops):
        trusted_hop = proxy(hop)
        if trusted_hop is None:
            break
        address = hop
        if not trusted_hop:
            break
    return address
