"""Fan-out of state changes to live subscribers (SSE streams, `wait`); never persisted."""

from __future__ import annotations

import asyncio
from typing import Any

Change = dict[str, Any]


class Broadcast:
    def __init__(self, maxsize: int = 10_000) -> None:
        self._subscribers: set[asyncio.Queue[Change | None]] = set()
        self._maxsize = maxsize

    def subscribe(self) -> asyncio.Queue[Change | None]:
        queue: asyncio.Queue[Change | None] = asyncio.Queue(self._maxsize)
        self._subscribers.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[Change | None]) -> None:
        self._subscribers.discard(queue)

    def publish(self, change: Change) -> None:
        for queue in list(self._subscribers):
            try:
                queue.put_nowait(change)
            except asyncio.QueueFull:
                # A reader that fell this far behind gets a gap marker and must re-read state.
                self._subscribers.discard(queue)

    def close(self) -> None:
        for queue in list(self._subscribers):
            try:
                queue.put_nowait(None)
            except asyncio.QueueFull:
                pass
        self._subscribers.clear()
