"""The CSV export of a tournament's flags and reviews, safe to open in a spreadsheet."""

from __future__ import annotations

import csv
import io
import unicodedata
from datetime import datetime

from aiohttp import web

from ..store.repository import console as sql
from ..web.auth import Principal
from ..web.context import read
from ..web.responses import attachment
from .pages import NotFound, page


# OWASP's CSV injection guidance: a cell a spreadsheet could read as a formula starts
# with one of these (or their fullwidth forms, which spreadsheets take for them) once
# leading blanks are skipped
FORMULA_START = frozenset("=+-@|\uff1d\uff0b\uff0d\uff20\uff5c")


def _blank(ch: str) -> bool:
    """Spaces of every kind, line breaks, controls and invisible format characters."""
    return ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Zs", "Zl", "Zp")


def _cell(value) -> str:
    """A CSV cell a spreadsheet will not run: text whose first character after any
    blanks could start a formula, or that starts with a tab or a line break, gets a
    leading ' (numbers and times are left as they are); no control character reaches a
    terminal (:func:`_quiet`)."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat()
    text = str(value)
    if isinstance(value, (int, float)):
        return text
    first = next((ch for ch in text if not _blank(ch)), "")
    if first in FORMULA_START or text[:1] in ("\t", "\r", "\n"):
        text = "'" + text
    return _quiet(text)


def _quiet(text: str) -> str:
    """``text`` with its control characters but tab and line breaks (ESC, BEL, NUL,
    backspace, C1's CSI) written as ``\\uXXXX``, as the command line shows them: the
    file is read with ``cat`` and ``less`` as often as in a spreadsheet, and a terminal
    acts on them."""
    if text.isprintable():
        return text
    return "".join(f"\\u{ord(ch):04x}" if ch not in "\t\r\n"
                   and unicodedata.category(ch) == "Cc" else ch for ch in text)


@page
async def export_csv(request: web.Request, who: Principal) -> web.StreamResponse:
    tournament = request.match_info["tournament"]
    rows = await read(request, sql.export, who.visible(), tournament)
    if not rows:
        raise NotFound(f"Tournament {tournament!r} has no flags you can see.")
    out = io.StringIO()
    columns = list(rows[0])
    writer = csv.writer(out)
    writer.writerow(columns)
    for r in rows:
        writer.writerow([_cell(r[c]) for c in columns])
    return web.Response(text=out.getvalue(), content_type="text/csv", headers={
        "Content-Disposition": attachment(f"flags-{tournament}", ".csv")})


