"""The one HTTP client of the command line: every command that talks to a daemon (the
organiser commands through the API, ``simulate`` through the webhook) uses it. Standard
library only, so that no command needs aiohttp to run."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.parse
import urllib.request

from fairgrid.daemon.text import http_url

from .common import CliError


def quote(part: str) -> str:
    """A path segment."""
    return urllib.parse.quote(part, safe="")


def checked_url(url: str) -> str:
    """A daemon's address given by a person (``--url``, ``FAIRGRID_URL``); CliError
    naming it when urllib would refuse it (with ValueError, at the first call, far from
    the option)."""
    if not http_url(url):
        raise CliError(f"{url!r} is not a daemon's address (e.g. http://127.0.0.1:8080)")
    return url


def address(settings) -> str:
    """The daemon's base URL from its settings (an IPv6 host in brackets)."""
    host = settings.server_host
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{settings.server_port}"


class DaemonClient:
    """Calls to a daemon at ``base_url``, with ``token`` as the bearer (if any)."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 30.0):
        # a header holds printable ASCII: anything else was a traceback at the first call
        if token is not None and not (token.isascii() and token.isprintable()):
            raise CliError("the token given holds characters no token has (only printable "
                           "ASCII): check --token, FAIRGRID_TOKEN or the config")
        self.base_url = base_url.rstrip("/")
        self.token = token
        self._timeout = timeout

    @classmethod
    def from_settings(cls, settings, *, admin: bool = False) -> DaemonClient:
        """A client of the daemon the config describes, with its first admin token (or
        any organiser or admin token); CliError when the config has none."""
        tokens = (settings.admin_tokens if admin
                  else settings.organiser_tokens + settings.admin_tokens)
        if not tokens:
            raise CliError("no admin token in the config to call the daemon with" if admin
                           else "no organiser or admin token in the config to call the "
                           "daemon with")
        return cls(address(settings), tokens[0])

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict] | None:
        """(status, JSON body) of a call; None when no daemon answers. An error status's
        body has its ``error``."""
        headers = dict(headers or {})
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if method == "POST" and body is None:
            body = b""
        req = urllib.request.Request(self.base_url + path, data=body, method=method,
                                     headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self._timeout) as resp:
                return resp.status, self._document(resp.read())
        except urllib.error.HTTPError as exc:
            try:
                doc = json.loads(exc.read() or b"{}")
            except (ValueError, http.client.HTTPException, OSError):  # cut short, say
                doc = {}
            if not isinstance(doc, dict):
                doc = {}
            doc.setdefault("error", exc.reason)
            return exc.code, doc
        except (urllib.error.URLError, ConnectionError):
            # nothing listens there (a config's port 0 included): no daemon answers
            return None
        except http.client.HTTPException as exc:
            # something listens, but speaks no HTTP (or hung up): another service
            raise CliError(f"what answers at {self.base_url} is no fairgrid daemon: "
                           f"{type(exc).__name__}") from None

    def _document(self, raw: bytes) -> dict:
        """A success's JSON object; CliError naming the address for anything else (a
        web page, another service's JSON: the port of something that is not fairgrid)."""
        try:
            doc = json.loads(raw or b"{}")
        except ValueError:
            doc = None
        if not isinstance(doc, dict):
            raise CliError(f"what answers at {self.base_url} is no fairgrid daemon: its "
                           "answer is not a JSON object")
        return doc

    def get(self, path: str) -> dict | None:
        """GET a route: its JSON, None when no daemon answers, CliError on an error."""
        answer = self.request("GET", path)
        if answer is None:
            return None
        status, doc = answer
        if status >= 400:
            raise CliError(f"the daemon answered {status}: {doc['error']}")
        return doc
