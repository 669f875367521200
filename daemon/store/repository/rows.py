"""Small pieces the repository's reads share: result rows as dicts, a portal filter."""

from __future__ import annotations


def dicts(cur) -> list[dict]:
    """The rows of the last statement on ``cur``, each a dict by column name."""
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def first(cur) -> dict | None:
    """The first row of the last statement on ``cur`` as a dict, or None."""
    rows = dicts(cur)
    return rows[0] if rows else None


def portal_clause(column: str, portals: list[str] | None) -> tuple[str, list]:
    """A condition limiting ``column`` to ``portals`` (None: no limit), and its parameters."""
    if portals is None:
        return "TRUE", []
    if not portals:
        return "FALSE", []
    return f"{column} IN ({', '.join('?' * len(portals))})", list(portals)
