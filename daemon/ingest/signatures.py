"""Standard Webhooks signature verification.

Signature scheme (standardwebhooks.com; PyPI ``standardwebhooks`` is the reference and the
tests sign with it): headers ``webhook-id``, ``webhook-timestamp`` (unix seconds) and
``webhook-signature``, a space-separated list of ``v1,<base64 HMAC-SHA256>`` over
``"{id}.{timestamp}.{raw body}"`` keyed with the base64-decoded part of a ``whsec_``
secret. The raw bytes are verified, in constant time, before anything is parsed; the
portal is the one whose secret verifies (portals are few: each is tried). A webhook-id
that no portal may send (over 200 characters, or holding control or formatting
characters) is a malformed request (400 naming the header), not a signature failure.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from typing import Mapping

from ..text import ascii_int
from .solve import MAX_ID_LENGTH, ValidationError, check_id


class SignatureError(Exception):
    """The request is not signed by a known portal (401); ``reason`` is a metric label."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Verifier:
    """Checks Standard Webhooks signatures against every portal's secrets."""

    keys: tuple[tuple[str, bytes], ...]  # (portal, key), several per portal for rotation
    tolerance_s: int = 300

    @classmethod
    def from_portals(cls, portals: Mapping[str, tuple[str, ...]], tolerance_s: int = 300
                     ) -> "Verifier":
        keys = []
        for portal, secrets in portals.items():
            for secret in secrets:
                keys.append((portal, base64.b64decode(secret.removeprefix("whsec_"))))
        return cls(tuple(keys), tolerance_s)

    def verify(self, headers: Mapping[str, str], body: bytes, now: float) -> tuple[str, str]:
        """The (portal, webhook-id) that signed ``body``; SignatureError, or
        ValidationError (400) for a malformed webhook-id."""
        getall = getattr(headers, "getall", None)   # a request's headers may repeat
        for name in ("webhook-id", "webhook-timestamp", "webhook-signature"):
            if getall is not None and len(getall(name, ())) > 1:
                # which one would count is no one's guess to make (several signatures
                # go in one header, space-separated)
                raise SignatureError("bad_header", f"{name} header given more than once")
        msg_id = headers.get("webhook-id")
        timestamp = headers.get("webhook-timestamp")
        signature = headers.get("webhook-signature")
        for name, value in (("webhook-id", msg_id), ("webhook-timestamp", timestamp),
                            ("webhook-signature", signature)):
            if not value:
                raise SignatureError("missing_header", f"missing {name} header")
        if len(msg_id) > MAX_ID_LENGTH:
            raise ValidationError("webhook-id", f"must be at most {MAX_ID_LENGTH} "
                                  f"characters", 400)
        check_id(msg_id, "webhook-id", 400)
        # ASCII digits only (int() takes "1_0" and other scripts' digits) and few of them
        # (a number with hundreds cannot be set against the clock)
        ts = ascii_int(timestamp, 12)
        if ts is None:
            raise SignatureError("bad_header", "webhook-timestamp must be unix seconds")
        if abs(now - ts) > self.tolerance_s:
            raise SignatureError("expired", f"webhook-timestamp is more than "
                                 f"{self.tolerance_s} s away from the server's clock")
        offered = []
        for part in signature.split():
            version, _, sig = part.partition(",")
            if version == "v1":
                try:
                    offered.append(base64.b64decode(sig, validate=True))
                except ValueError:
                    continue
        if not offered:
            raise SignatureError("bad_header", "webhook-signature has no v1 signature")
        signed = f"{msg_id}.{ts}.".encode() + body
        match = None
        for portal, key in self.keys:  # every key, every time: no early exit to time
            expected = hmac.digest(key, signed, "sha256")  # one-shot, in C
            for sig in offered:
                if hmac.compare_digest(expected, sig) and match is None:
                    match = portal
        if match is None:
            raise SignatureError("bad_signature", "signature does not match any portal's secret")
        return match, msg_id


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """Headers signing ``body`` as a portal does (used by ``fairgrid simulate``); the tests
    check it against the reference implementation."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    mac = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return {"webhook-id": msg_id, "webhook-timestamp": str(int(timestamp)),
            "webhook-signature": "v1," + base64.b64encode(mac).decode(),
            "content-type": "application/json"}
