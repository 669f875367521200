"""Who is calling: service tokens from the config, people's API tokens, console sessions.

A request resolves to a :class:`Principal`: a person (a row of ``users``, through a
personal API token or a console session) or a service token from the config
(``auth.organiser_tokens`` / ``auth.admin_tokens``, for API clients; the review history
names them as service tokens). An organiser sees the portals granted to them, or every
portal when granted so explicitly, and no portal otherwise: anything of another portal
answers 404, as if it did not exist. Reviews need a person (organiser or
admin) or an admin service token.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import re
import secrets
import unicodedata
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from ..store.records import utc_now
from ..store.repository import accounts as sql
from ..text import same_secret

ROLES = ("organiser", "admin")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
MIN_PASSWORD = 10
TOKEN_PREFIX = "fgu_"  # personal tokens are told apart from service tokens at a glance

_hasher = PasswordHasher()  # Argon2id, the library's recommended parameters


@functools.cache
def dummy_hash() -> str:
    """What a sign-in with an unknown name is verified against, so that it costs the same
    as a real check (made once a process, when the daemon starts: at import it would
    cost every command line 0.15 s)."""
    return _hasher.hash(secrets.token_hex(16))


class AuthError(Exception):
    """Missing or wrong credentials (401), or valid ones without the right (403)."""

    def __init__(self, message: str, status: int = 401):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Principal:
    name: str  # the person's name, or "service token N (organiser|admin)"
    role: str  # organiser | admin
    portals: frozenset[str] | None  # None: every portal
    person: bool

    def sees(self, portal: str) -> bool:
        return self.portals is None or portal in self.portals

    @property
    def can_review(self) -> bool:
        return self.person or self.role == "admin"

    def visible(self) -> list[str] | None:
        """The portals a query may read (None: no restriction)."""
        return None if self.portals is None else sorted(self.portals)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def check_password(password) -> str:
    """``password`` if a person can type it: 10 to 1,024 characters, not all blank, no
    control character (a NUL or an escape no keyboard sends, which a form could then
    never match) and no lone surrogate (it has no UTF-8, which Argon2 needs)."""
    if not isinstance(password, str) or len(password) < MIN_PASSWORD or len(password) > 1024:
        raise ValueError(f"a password has {MIN_PASSWORD} to 1,024 characters")
    if not password.strip():
        raise ValueError("a password is more than blanks")
    if any(unicodedata.category(ch) in ("Cc", "Cs") for ch in password):
        raise ValueError("a password has no control characters and no lone surrogates")
    return password


class Accounts:
    """The people and tokens, cached from the database (a few rows; refreshed after every
    change this daemon makes, and every change goes through it)."""

    def __init__(self, store, settings):
        self._store = store
        self._settings = settings
        self._users: dict[str, dict] = {}
        self._tokens: dict[str, tuple[str, str | None]] = {}
        self._verifying = asyncio.Semaphore(2)

    def load(self) -> None:
        self._users = {u["name"]: u for u in self._store.read(sql.users)}
        self._tokens = {d: (u, label) for d, u, label in self._store.read(sql.tokens)}

    def users(self) -> list[dict]:
        return list(self._users.values())

    def user(self, name: str) -> dict | None:
        return self._users.get(name)

    def principal_of(self, name: str) -> Principal | None:
        """The person ``name`` as a principal, None when unknown or disabled."""
        user = self._users.get(name)
        if user is None or user["disabled"]:
            return None
        # admins see every portal (admin routes are not scoped); an organiser sees the
        # portals listed, or every one when granted so: none by default (fail closed)
        every = user["role"] == "admin" or user["all_portals"]
        portals = None if every else frozenset(user["portals"])
        return Principal(name, user["role"], portals, True)

    def from_token(self, token: str, settings) -> Principal | None:
        found = None
        # compare with every service token: no early exit to time
        for role, tokens in (("admin", settings.admin_tokens),
                             ("organiser", settings.organiser_tokens)):
            for k, candidate in enumerate(tokens, 1):
                if same_secret(token, candidate) and found is None:
                    found = Principal(f"service token {k} ({role})", role, None, False)
        if found is not None:
            return found
        if token.startswith(TOKEN_PREFIX):
            entry = self._tokens.get(token_digest(token))
            if entry is not None:
                return self.principal_of(entry[0])
        return None

    async def verify_password(self, name: str, password: str) -> Principal | None:
        """The person when ``password`` is theirs and they are enabled (Argon2id, on a
        thread: about 50 ms of CPU by design)."""
        user = self._users.get(name)
        stored = user["password_hash"] if user and user["password_hash"] else None

        def verify() -> bool:
            try:
                return _hasher.verify(stored or dummy_hash(), password)
            except (VerificationError, InvalidHashError, UnicodeEncodeError):
                return False  # UnicodeEncodeError: a lone surrogate, which no password has

        async with self._verifying:  # Argon2 costs 64 MiB and ~50 ms: a few at a time
            ok = await asyncio.to_thread(verify)
        if not ok or user is None or not user["password_hash"]:
            return None
        return self.principal_of(name)

    async def add(self, name: str, role: str, portals: list[str], all_portals: bool,
                  password: str | None) -> bool:
        digest = None if password is None else await asyncio.to_thread(_hasher.hash, password)
        ok = await asyncio.wrap_future(self._store.write(sql.add_user, name, role, portals,
                                                         all_portals, digest, utc_now()))
        await asyncio.to_thread(self.load)
        return ok

    async def change(self, name: str, changes: dict) -> bool:
        changes = dict(changes)
        if "password" in changes:
            changes["password_hash"] = await asyncio.to_thread(_hasher.hash,
                                                               changes.pop("password"))
        ok = await asyncio.wrap_future(self._store.write(sql.change_user, name, changes,
                                                         utc_now()))
        await asyncio.to_thread(self.load)
        return ok

    async def new_token(self, name: str, label: str | None) -> str | None:
        """A new personal token for ``name`` (shown once; only its digest is kept)."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        ok = await asyncio.wrap_future(self._store.write(sql.add_token, token_digest(token),
                                                         name, label, utc_now()))
        await asyncio.to_thread(self.load)
        return token if ok else None

