"""`GET /api/v1/events`: every change of the queue as a server-sent event, each with its `id`,
so that a reader cut off (a network hiccup, a laptop asleep) comes back where it was.

The stream sent no `id:`, so a reader that reconnected could only start from now, missing
without a word whatever changed meanwhile. Each event's id is the daemon's mark after it
(`EPOCH.COUNT`, Broadcast.mark_of: EPOCH is drawn at each daemon start, so an id is never
taken for another daemon's); the stream's first message, a comment, carries the mark of the
moment it connected, so even a reader that saw no change has one. A reader that sends one back
as `Last-Event-ID` (an EventSource does so when it reconnects) gets the changes after it, as
long as the daemon holds them (its last HISTORY); for an id it cannot resume from (too old,
another daemon's, not an id at all) it gets `{"event": "gap"}` at once, as one that fell too
far behind does: read again what you follow.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from gpuherd.broadcast import Broadcast

RESUME_HEADER = "Last-Event-ID"
"""The header an EventSource sends the last id it got in, when it reconnects."""
BURST = 256
"""Changes queued behind one sent in the same write, at most (~100 KiB)."""


async def change_events(changes: Broadcast, resume_after: str | None) -> AsyncIterator[str]:
    """The stream's text: the connection said, then each change as `id:` and `data:` lines,
    until the daemon stops. `resume_after`: the Last-Event-ID a reader came back with."""
    # Subscribed and the mark read in one step (no await between): no change falls between.
    queue = changes.subscribe_numbered(since=resume_after or None)
    try:
        yield ": connected\n\n" if resume_after else f": connected\nid: {changes.mark}\n\n"
        while (numbered := await queue.get()) is not None:
            burst = [numbered]  # (with those queued behind it: one write for them all)
            while len(burst) < BURST and not queue.empty():
                if (more := queue.get_nowait()) is None:
                    queue.put_nowait(None)  # (the daemon stops: after these)
                    break
                burst.append(more)
            yield "".join(
                f"id: {changes.mark_of(number)}\ndata: {json.dumps(change)}\n\n"
                for number, change in burst
            )
            # A turn of the loop: a reader that hung up is seen before the next write. A
            # burst of changes queued went out at once, a write each, with no turn between,
            # and asyncio logged each write after the hang-up (thousands of lines).
            await asyncio.sleep(0)
    finally:
        changes.unsubscribe_numbered(queue)
