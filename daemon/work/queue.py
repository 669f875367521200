"""The queue both kinds of background work share: puzzles waiting for analysis and
submissions waiting for a score.

Each key is queued at most once. The queue is bounded; a key that finds it full is
dropped, and a periodic sweep asks the database for everything still waiting (after a
burst, or a restart) and queues it again, so nothing waits for good. Keys are taken in
the order they came or, given ``turns`` (a key's group: the portal that registered a
puzzle), by turns of their groups, each group's oldest first: one group's burst delays
another group's key by a turn, not by the burst.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Awaitable, Callable, Generic, Hashable, TypeVar

K = TypeVar("K", bound=Hashable)


class WorkQueue(Generic[K]):
    def __init__(self, maxsize: int, sweep: Callable[[], Awaitable[list[K]]],
                 sweep_s: float = 30.0, *, turns: Callable[[K], Hashable] | None = None):
        self._maxsize = maxsize
        # each group's keys, oldest first; the group whose turn is next comes first
        self._groups: dict[Hashable, deque[K]] = {}
        self._size = 0
        self._ready = asyncio.Event()
        self._queued: set[K] = set()
        self._sweep = sweep
        self._sweep_s = sweep_s
        self._turns = turns

    def schedule(self, key: K) -> None:
        """Queue ``key`` unless it is queued or being worked on (a full queue drops it:
        the sweep finds it later)."""
        if key in self._queued or self.full():
            return
        group = None if self._turns is None else self._turns(key)
        self._groups.setdefault(group, deque()).append(key)
        self._size += 1
        self._queued.add(key)
        self._ready.set()

    def _next(self) -> K:
        group, keys = next(iter(self._groups.items()))
        del self._groups[group]
        key = keys.popleft()
        if keys:
            self._groups[group] = keys   # to the back: every other group's turn first
        self._size -= 1
        return key

    async def get(self) -> K:
        while not self._size:
            self._ready.clear()
            await self._ready.wait()
        return self._next()

    def take(self, keys: list[K], most: int) -> list[K]:
        """Add to ``keys`` whatever is queued now, up to ``most`` in all."""
        while len(keys) < most and self._size:
            keys.append(self._next())
        return keys

    def done(self, *keys: K) -> None:
        """The work on ``keys`` is over (done or failed): they may be queued again."""
        for key in keys:
            self._queued.discard(key)

    def full(self) -> bool:
        return 0 < self._maxsize <= self._size

    def waiting(self) -> int:
        """Keys queued now (not yet taken)."""
        return self._size

    def pending(self) -> int:
        """Keys queued or being worked on."""
        return len(self._queued)

    async def sweep_forever(self) -> None:
        while True:
            for key in await self._sweep():
                self.schedule(key)
            await asyncio.sleep(self._sweep_s)
