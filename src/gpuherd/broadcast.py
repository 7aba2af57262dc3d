"""Fan-out of state changes to live subscribers (SSE streams, `wait`); never persisted."""

from __future__ import annotations

import asyncio
import itertools
import secrets
from collections import deque
from collections.abc import Callable
from typing import Any

Change = dict[str, Any]

BACKLOG = 10_000
"""Changes kept for a subscriber that reads slower than they come (a verb on 20,000 jobs
publishes 20,000 at once); past that it gets GAP instead of the backlog."""

GAP: Change = {"event": "gap"}
"""Given in place of the changes a subscriber fell too far behind to receive: whatever it
follows, it must read again. It stays subscribed and gets the changes after the gap."""

HISTORY = 1000
"""The last changes kept for a subscriber that names a `mark` it saw (a dashboard page's
stream, which connects after the page was drawn): it gets those after the mark; for a mark
older than these, GAP."""


class Broadcast:
    def __init__(self) -> None:
        self._subscribers: set[asyncio.Queue[Change | None]] = set()
        self._listeners: list[Callable[[Change], None]] = []
        self._published = 0
        self._history: deque[Change] = deque(maxlen=HISTORY)
        self._epoch = secrets.token_hex(4)
        """Tells this daemon's marks from another's (a page drawn before a restart)."""

    @property
    def mark(self) -> str:
        """Where the changes stand now ('EPOCH.COUNT'): what is drawn now shows every change
        up to here, and `subscribe(since=mark)` gives those published after it."""
        return f"{self._epoch}.{self._published}"

    def since(self, mark: str) -> list[Change]:
        """The changes published after `mark`; [GAP] for a mark older than the HISTORY kept,
        another daemon's, or none at all (the subscriber must read everything again)."""
        epoch, _, count = mark.partition(".")
        try:
            missed = self._published - int(count) if epoch == self._epoch else -1
        except ValueError:  # a URL typed by hand
            missed = -1
        if not 0 <= missed <= len(self._history):
            return [GAP]
        return list(itertools.islice(self._history, len(self._history) - missed, None))

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

    def unsubscribe(self, queue: asyncio.Queue[Change | None]) -> None:
        self._subscribers.discard(queue)

    def publish(self, *changes: Change) -> None:
        for change in changes:
            self._published += 1
            self._history.append(change)
            for listener in self._listeners:
                listener(change)
            for queue in self._subscribers:
                try:
                    queue.put_nowait(change)
                except asyncio.QueueFull:
                    # Drop the backlog, say so, and go on: before, such a subscriber was
                    # dropped without a word and waited for ever (a `gpuherd run` of 15,000
                    # jobs hung).
                    while not queue.empty():
                        queue.get_nowait()
                    queue.put_nowait(GAP)
                    queue.put_nowait(change)

    def close(self) -> None:
        for queue in self._subscribers:
            while queue.full():  # the end must arrive even behind a full backlog
                queue.get_nowait()
            queue.put_nowait(None)
        self._subscribers.clear()
