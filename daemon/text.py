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
import ipaddress
import unicodedata
import urllib.parse

import yarl

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
    of any script, '-' and '_' kept, anything else '_' and the name then ended by a
    digest of the whole (so that "a/b" and "a b" do not write the same files); past
    :data:`FILE_STEM_BYTES`, cut short and ended by that digest."""
    name = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in text)
    if name == text and len(name.encode()) <= FILE_STEM_BYTES:
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
    """Whether ``url`` is an http(s) URL one can send to (:func:`url_problem`; a user
    name and password allowed: a daemon's address behind a proxy may need them)."""
    return url_problem(url, credentials=True) is None


def url_problem(url, credentials: bool = False) -> str | None:
    """What keeps ``url`` from being an http(s) URL one can send to, in words, or None: a
    string of at most 2,000 characters without whitespace or a character an id may not
    hold (a DEL is dropped from the host by the URL parser, so the request would go
    elsewhere), scheme http or https, no user name or password unless ``credentials``
    (the events are signed; a password in a notification endpoint's URL would be shown
    wherever the URL or a delivery error is), a host whose every label encodes (IDNA) or
    an IP address (a name whose last label is a number, decimal or 0x hex, must be one:
    the resolver reads 1.2.3 or 0x7f.1 as an IPv4 address, or refuses it), a port from 1
    to 65535 if any, and a URL aiohttp reads to send (no backslash in the host, xn--
    labels that decode). urllib and aiohttp refuse the rest only when called, with
    ValueError."""
    if not isinstance(url, str):
        return "must be a string"
    if len(url) > 2000:
        return "must be at most 2,000 characters"
    bad = next((c for c in url if c.isspace()), None) or refused_char(url)
    if bad is not None:
        return f"holds {describe(bad)}"
    try:  # urlsplit refuses "http://[::1", .port one past 65535
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return "is no URL (a bracket or a port out of place)"
    if parts.scheme not in ("http", "https"):
        return "must be an http or https URL"
    if not credentials and (parts.username is not None or parts.password is not None):
        return ("must not hold a user name or password (the events are signed: the "
                "receiver checks the signature)")
    host = parts.hostname
    if not host:
        return "must name a host"
    if port is not None and not 1 <= port <= 65535:
        return "must have a port from 1 to 65535, if any"
    try:
        ipaddress.ip_address(host)
    except ValueError:
        last = host.rstrip(".").rpartition(".")[2].lower()
        if last.isdigit() or last.startswith("0x") and all(
                c in "0123456789abcdef" for c in last[2:]):
            return f"has a host that is no IPv4 address, though it ends in a number: {host!r}"
        try:
            host.encode("idna")
        except UnicodeError:
            return f"has a host name that does not encode: {host!r} (an empty or long label)"
    try:  # as aiohttp reads it to send: a backslash in the host, an xn-- label that decodes
        yarl.URL(url).host   # the host is decoded when read
    except (ValueError, UnicodeError) as exc:
        return f"is no URL aiohttp can send to ({exc})"
    return None
