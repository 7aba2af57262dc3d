"""uvicorn's server, made quiet: it sleeps until told to stop instead of polling.

uvicorn's own main loop wakes ten times a second to look at `should_exit`, which was most of
what an idle daemon cost (issue 9, W4). Here setting `should_exit` wakes the loop, so an idle
server wakes only to refresh its HTTP Date header. Its loop says an accept() that failed for
want of fds once a minute, not thousands of times a second (connections.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

DATE_HEADER_EVERY = 30.0
"""Seconds between refreshes of the HTTP Date header (uvicorn's loop: every second)."""


def quiet_server_class() -> type[Any]:
    import uvicorn

    from gpuherd.api.connections import quiet_accept_failures

    class QuietServer(uvicorn.Server):
        @property
        def should_exit(self) -> bool:
            return bool(getattr(self, "_exit", False))

        @should_exit.setter
        def should_exit(self, value: bool) -> None:
            self._exit = value
            woken = getattr(self, "_woken", None)
            if value and woken is not None:
                loop, event = woken
                # Safe from a signal handler too; a loop already closed has nothing to wake.
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(event.set)

        async def main_loop(self) -> None:
            event = asyncio.Event()
            self._woken = (asyncio.get_running_loop(), event)
            quiet_accept_failures(self._woken[0])
            while not await self.on_tick(0):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), DATE_HEADER_EVERY)

    return QuietServer
