"""The puzzles ingestion knows: a cache over the stored ones, looked up by the name a portal
gives them, and registration through ``POST /v1/puzzles``.

A webhook's ``puzzle.id`` is the sending portal's own name
(``store.repository.ingest.resolve_name``, docs/puzzles.md#puzzle-ids); a puzzle first
seen in a webhook is registered by the writer in the solve's own transaction
(``claim_puzzle``), so the catalog only reads it back on the next lookup. What is
registered is analysed by ``work.analysis`` before scoring can use it.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict

from ..errors import Conflict, ValidationError
from ..store import QueueFull, Store
from ..store.records import utc_now
from ..store.repository import puzzles as sql
from .puzzles import PuzzleInfo, check_puzzle_off_loop


ADMIN_SENDER = ""     # the admin API's checks take turns under this name (no portal's)
REFUSED_KEPT = 1_000  # puzzle texts whose refusal is remembered (the newest)


class PuzzleCatalog:
    """Registered puzzles by id and by (portal, name), read once and cached."""

    def __init__(self, store: Store):
        self._store = store
        self._by_id: dict[str, PuzzleInfo] = {}
        self._by_name: dict[tuple[str, str], PuzzleInfo] = {}
        self._turns: dict[str, asyncio.Semaphore] = {}
        self._refused: OrderedDict[tuple[str, str], str] = OrderedDict()

    async def check(self, text: str, field: str, type_name: str,
                    sender: str = ADMIN_SENDER) -> tuple[str, int, str]:
        """:func:`.puzzles.check_puzzle` of a puzzle ``sender`` (a portal, or the admin
        API) sent: one check at a time per sender, so a portal whose puzzles run to the
        search's cap holds one of the two check threads and every other portal's checks
        run on the other; a text refused lately is refused again at once."""
        key = (type_name, text)
        if key in self._refused:
            self._refused.move_to_end(key)
            raise ValidationError(field, self._refused[key])
        async with self._turns.setdefault(sender, asyncio.Semaphore(1)):
            try:
                return await check_puzzle_off_loop(text, field, type_name)
            except ValidationError as exc:
                self._refused[key] = str(exc)
                while len(self._refused) > REFUSED_KEPT:
                    self._refused.popitem(last=False)
                raise

    async def lookup(self, portal: str, name: str) -> PuzzleInfo | None:
        """The puzzle ``portal`` calls ``name``, or None."""
        info = self._by_name.get((portal, name))
        if info is not None:
            return info
        row = await asyncio.to_thread(self._store.read, sql.resolve_name, portal, name)
        if row is None:
            return None
        info = self._by_id.setdefault(row[0], PuzzleInfo(*row))
        self._by_name[(portal, name)] = info
        return info

    async def by_id(self, puzzle_id: str) -> PuzzleInfo | None:
        """A registered puzzle by its internal id, or None."""
        info = self._by_id.get(puzzle_id)
        if info is not None:
            return info
        row = await asyncio.to_thread(self._store.read, sql.puzzle_texts, puzzle_id)
        if row is None:
            return None
        return self._by_id.setdefault(puzzle_id, PuzzleInfo(puzzle_id, *row))

    async def register_many(self, items: list[tuple[str, str, str, str]], *,
                            room: callable) -> tuple[list[bool], list[PuzzleInfo]]:
        """Register puzzles ``(where, id, givens, puzzle type)`` for every portal, all or
        none: (whether each item was new, the new puzzles). ValidationError naming
        ``where`` for the first bad puzzle, Conflict for an id registered (or listed
        twice) with other givens or another type, QueueFull when ``room(ncells)`` says
        the analysis queue cannot take a new one; nothing is written then."""
        rows: dict[str, tuple[str, str, int, str, str]] = {}
        for where, pid, text, type_name in items:
            try:
                givens, box_size, solution = await self.check(text, "givens", type_name)
            except ValidationError as exc:
                exc.field = where + (exc.field or "givens")
                raise
            if pid in rows and (rows[pid][1], rows[pid][4]) != (givens, type_name):
                raise Conflict("id", f"puzzle {pid!r} is listed twice with other givens "
                                     f"or another type")
            rows[pid] = (pid, givens, box_size, solution, type_name)
        new = []
        for pid, row in rows.items():
            known = await self.by_id(pid)
            if known is None:
                new.append(row)
            elif (known.givens, known.puzzle_type) != (row[1], row[4]):
                raise Conflict("id", f"puzzle {pid!r} is registered with other givens or "
                                     f"as another type")
        if not all(room(len(row[3])) for row in new):
            raise QueueFull("the analysis queue is full")
        # the known ones too: one a portal's webhook registered becomes shared
        clash = await asyncio.wrap_future(self._store.write(
            sql.register_many, list(rows.values()), utc_now()))
        if clash:  # lost a race with another registration
            raise Conflict("id", f"puzzle {clash[0]!r} is registered with other givens")
        infos = [self._by_id.setdefault(pid, PuzzleInfo(pid, givens, box, solution, type_name))
                 for pid, givens, box, solution, type_name in new]
        fresh = {row[0] for row in new}
        created = []
        for _, pid, _, _ in items:
            created.append(pid in fresh)
            fresh.discard(pid)  # an id listed twice is new once
        return created, infos
