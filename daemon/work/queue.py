"""The queue both kinds of background work share: puzzles waiting for analysis and
submissions waiting for a score.

Each key is queued at most once. The queue is bounded; a key that finds it full is
dropped, and a periodic sweep asks the database for everything still waiting (after a
burst, or a restart) and queues it again, so nothing waits for good.
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, Generic, Hashable, TypeVar

K = TypeVar("K", bound=Hashable)


class WorkQueue(Generic[K]):
    def __init__(self, maxsize: int, sweep: Callable[[], Awaitable[list[K]]],
                 sweep_s: float = 30.0):
        self._queue: asyncio.Queue[K] = asyncio.Queue(maxsize=maxsize)
        self._queued: set[K] = set()
        self._sweep = sweep
        self._sweep_s = sweep_s

    def schedule(self, key: K) -> None:
        """Queue ``key`` unless it is queued or being worked on (a full queue drops it:
        the sweep finds it later)."""
        if key in self._queued:
            return
        try:
            self._queue.put_nowait(key)
            self._queued.add(key)
        except asyncio.QueueFull:
            pass

    async def get(self) -> K:
        return await self._queue.get()

    def take(self, keys: list[K], most: int) -> list[K]:
        """Add to ``keys`` whatever is queued now, up to ``most`` in all."""
        while len(keys) < most and not self._queue.empty():
            keys.append(self._queue.get_nowait())
        return keys

    def done(self, *keys: K) -> None:
        """The work on ``keys`` is over (done or failed): they may be queued again."""
        for key in keys:
            self._queued.discard(key)

    def full(self) -> bool:
        return self._queue.full()

    def waiting(self) -> int:
        """Keys queued now (not yet taken)."""
        return self._queue.qsize()

    def pending(self) -> int:
        """Keys queued or being worked on."""
        return len(self._queued)

    async def sweep_forever(self) -> None:
        while True:
            for key in await self._sweep():
                self.schedule(key)
            await asyncio.sleep(self._sweep_s)
