"""Every SQL statement of the daemon, as named functions, one module per area.

A function's first argument is a DuckDB connection or cursor. Reads run on a cursor of
their own through :meth:`Store.read`; writes run inside the single writer's transaction
through :meth:`Writer.call`. A read of the ``moves`` table is marked :func:`needs_moves`:
the moves rows follow the acknowledging transaction by a moment (``store.writer``), and
``Store.read`` waits for them only when the function says it reads them.
"""

from __future__ import annotations


def needs_moves(fn):
    """Mark a read that needs the moves of every acknowledged submission stored."""
    fn.needs_moves = True
    return fn


from . import ingest, nightly, organiser, puzzles, scores  # noqa: E402

__all__ = ["needs_moves", "ingest", "nightly", "organiser", "puzzles", "scores"]
