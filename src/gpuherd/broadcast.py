"""Fan-out of state changes to live subscribers (SSE streams, `wait`); never persisted."""

from __future__ import annotations

import asyncio
import itertools
import secrets
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

Change = dict[str, Any]
Numbered = tuple[int, Change]
"""A change with its number: the count of changes published up to it, from this daemon's
start (`subscribe_numbered`: an event stream's `id`)."""
Item = TypeVar("Item")

BACKLOG = 10_000
"""Changes kept for a subscriber that reads slower than they come (a verb on 20,000 jobs
publishes 20,000 at once); past that it gets GAP instead of the backlog."""

GAP: Change = {"event": "gap"}
"""Given in place of the changes a subscriber fell too far behind to receive: whatever it
follows, it must read again. It stays subscribed and gets the changes after the gap."""

HISTORY = 1000
"""The last changes kept for a subscriber that names a `mark` it saw (a dashboard page's
stream, which connects after the page was drawn; an `/events` reader back with its
Last-Event-ID): it gets those after the mark; for a mark older than these, GAP. (Bounded: a
verb on 20,000 jobs leaves its last 1000 changes.)"""


class Broadcast:
    def __init__(self) -> None:
        self._subscribers: set[asyncio.Queue[Change | None]] = set()
        self._numbered: set[asyncio.Queue[Numbered | None]] = set()
        self._listeners: list[Callable[[Change], None]] = []
        self._published = 0
        self._history: deque[Change] = deque(maxlen=HISTORY)
        self._epoch = secrets.token_hex(4)
        """Tells this daemon's marks from another's (a page drawn before a restart)."""

    @property
    def mark(self) -> str:
        """Where the changes stand now ('EPOCH.COUNT'): what is drawn now shows every change
        up to here, and `subscribe(since=mark)` gives those published after it."""
        return self.mark_of(self._published)

    def since(self, mark: str) -> list[Change]:
        """The changes published after `mark`; [GAP] for a mark older than the HISTORY kept,
        another daemon's, or none at all (the subscriber must read everything again)."""
        return [change for _, change in self._numbered_since(mark)]

    def _numbered_since(self, mark: str) -> list[Numbered]:
        """since(), each change with its number (a GAP with the last one published)."""
        epoch, _, count = mark.partition(".")
        try:
            missed = self._published - int(count) if epoch == self._epoch else -1
        except ValueError:  # a URL typed by hand
            missed = -1
        if not 0 <= missed <= len(self._history):
            return [(self._published, GAP)]
        kept = itertools.islice(self._history, len(self._history) - missed, None)
        return list(enumerate(kept, start=self._published - missed + 1))

    def mark_of(self, number: int) -> str:
        """The mark just after the change numbered `number` (the SSE `id` it is sent with)."""
        return f"{self._epoch}.{number}"

    def listen(self, listener: Callable[[Change], None]) -> None:
        """Call `listener` with every change as it is published: for an in-process follower
        that must see each one and mostly ignores them (a queue would cost every change a
        task switch); it must be quick and must not raise."""
        self._listeners.append(listener)

    def subscribe(
        self, backlog: int | None = None, since: str | None = None
    ) -> asyncio.Queue[Change | None]:
        """A queue of the changes from now on; None at its end (the daemon is stopping).
        `backlog` 0: keep every change, for an in-process reader that needs each one (the
        runner of `gpuherd run`, which reports every job's end). `since`: a mark; the queue
        begins with the changes after it (see `since()`), so none between is lost."""
        queue: asyncio.Queue[Change | None] = asyncio.Queue(BACKLOG if backlog is None else backlog)
        for change in self.since(since) if since is not None else []:
            queue.put_nowait(change)  # HISTORY is less than BACKLOG: they fit
        self._subscribers.add(queue)
        return queue

    def subscribe_numbered(self, since: str | None = None) -> asyncio.Queue[Numbered | None]:
        """subscribe(since=), each change with its number (mark_of names it): for a stream
        whose reader may come back after the last one it got (`/events`, `Last-Event-ID`).
        A GAP comes with the number of the change before those that follow it."""
        queue: asyncio.Queue[Numbered | None] = asyncio.Queue(BACKLOG)
        for numbered in self._numbered_since(since) if since is not None else []:
            queue.put_nowait(numbered)  # HISTORY is less than BACKLOG: they fit
        self._numbered.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[Change | None]) -> None:
        self._subscribers.discard(queue)

    def unsubscribe_numbered(self, queue: asyncio.Queue[Numbered | None]) -> None:
        self._numbered.discard(queue)

    def publish(self, *changes: Change) -> None:
        for change in changes:
            self._published += 1
            self._history.append(change)
            for listener in self._listeners:
                listener(change)
            for queue in self._subscribers:
                _offer(queue, change, GAP)
            for numbered in self._numbered:
                _offer(numbered, (self._published, change), (self._published - 1, GAP))

    def close(self) -> None:
        for queue in self._subscribers:
            _end(queue)
        for numbered in self._numbered:
            _end(numbered)
        self._subscribers.clear()
        self._numbered.clear()


def _offer(queue: asyncio.Queue[Item | None], item: Item, gap: Item) -> None:
    """`item` into a subscriber's queue; a queue full (BACKLOG behind) is emptied and given
    `gap` first. Before, such a subscriber was dropped without a word and waited for ever (a
    `gpuherd run` of 15,000 jobs hung)."""
    try:
        queue.put_nowait(item)
    except asyncio.QueueFull:
        while not queue.empty():
            queue.get_nowait()
        queue.put_nowait(gap)
        queue.put_nowait(item)


def _end(queue: asyncio.Queue[Item | None]) -> None:
    while queue.full():  # the end must arrive even behind a full backlog
        queue.get_nowait()
    queue.put_nowait(None)
