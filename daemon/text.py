"""Which characters an id may hold, and how text holding others is shown.

Ids (portal, submission, tournament, player and puzzle ids, webhook-ids) are refused at
ingestion when they hold a control character (Unicode category Cc), a format character
(Cf: the bidirectional overrides and isolates such as U+202E, zero-width characters, the
byte-order mark), a line or paragraph separator (Zl, Zp) or a surrogate (Cs): those
change how the text around them is displayed (a U+202E reverses what follows it in the
console's queue and in a terminal) without being visible themselves. Rows stored before
the rule are shown with such characters escaped (:func:`shown`), and the console isolates
every id in ``<bdi>``.
"""

from __future__ import annotations

import hashlib
import hmac
import unicodedata
import urllib.parse

REFUSED = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})  # Unicode general categories


def refused_char(text: str) -> str | None:
    """The first character of ``text`` an id may not hold, or None (ASCII text, the
    common case, is decided in C: its only refused characters are the controls)."""
    if text.isascii():
        if text.isprintable():
            return None
        return next(ch for ch in text if not ch.isprintable())
    for ch in text:
        if unicodedata.category(ch) in REFUSED:
            return ch
    return None


def visible(text: str) -> bool:
    """Whether ``text`` holds a character one can see: not only blanks, zero-width and
    direction marks (which ``str.strip`` keeps)."""
    return any(not ch.isspace() and unicodedata.category(ch) not in REFUSED for ch in text)


def describe(ch: str) -> str:
    """A refused character as words for an error message: U+202E RIGHT-TO-LEFT OVERRIDE."""
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" {name}" if name else "")


def shown(text) -> str:
    """``text`` with every refused character escaped as ``\\uXXXX``, for a terminal or a
    page title (None shows as '-')."""
    if text is None:
        return "-"
    text = str(text)
    if refused_char(text) is None:
        return text
    return "".join(f"\\u{ord(ch):04x}" if unicodedata.category(ch) in REFUSED else ch
                   for ch in text)


def ascii_int(text: str | None, digits: int = 18) -> int | None:
    """``text`` as a number when it is 1 to ``digits`` ASCII digits (ids fit a BIGINT),
    else None: int() also takes "١" (Arabic-Indic one), "５" and "5_0", which are no
    id or count anyone typed, and str.isdigit() takes "²", which int() refuses."""
    if text and len(text) <= digits and text.isascii() and text.isdigit():
        return int(text)
    return None


# bytes of the part of a file name an id gives: a file name holds 255, and an id holds
# 200 characters (600 bytes in CJK)
FILE_STEM_BYTES = 150


def file_stem(text: str) -> str:
    """``text`` (a tournament id, say) as the start of a file name: letters and digits
    of any script, '-' and '_' kept, anything else '_'; past :data:`FILE_STEM_BYTES`, cut
    short and told apart by a digest of the whole."""
    name = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in text)
    if len(name.encode()) <= FILE_STEM_BYTES:
        return name
    digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return f"{name.encode()[:FILE_STEM_BYTES - 13].decode('utf-8', 'ignore')}-{digest}"


def same_secret(given: str, expected: str) -> bool:
    """Whether a secret a request gave (a token, a form's CSRF value) is ``expected``,
    in constant time. Compared as bytes: ``hmac.compare_digest`` refuses str holding
    other than ASCII, and aiohttp hands a header's bytes that are not UTF-8 on as lone
    surrogates, which encode back to those bytes."""
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"),
                               expected.encode("utf-8", "surrogateescape"))


def http_url(url) -> bool:
    """Whether ``url`` is an http(s) URL one can send to: a host, a port from 1 to 65535
    if any, no whitespace or control characters, at most 2,000 characters (urllib and
    aiohttp would refuse the rest only when called, with ValueError)."""
    if not isinstance(url, str) or len(url) > 2000 or any(c.isspace() or ord(c) < 32
                                                         for c in url):
        return False
    try:  # urlsplit refuses "http://[::1", .port one past 65535
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return False
    return (parts.scheme in ("http", "https") and bool(parts.hostname)
            and (port is None or 1 <= port <= 65535))
