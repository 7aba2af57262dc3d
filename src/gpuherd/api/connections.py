"""The daemon's connections, kept in bounds: a deadline for each request to arrive, a cap on
those open per listener, and the log said at most once a minute of each.

A connection that sent nothing, or only part of a request's head, was kept for as long as
its client liked (uvicorn's `timeout_keep_alive` runs only after an answer, and stops at the
next byte): no token is asked before a whole request is in, so anyone who could reach the
dashboard's port held the daemon's file descriptors, and at their limit the daemon could
accept no connection, not even its own user's over the Unix socket, and wrote ~4,500 lines a
second of asyncio's `socket.accept() out of system resource` to daemon.log. Now:

- A request must have arrived whole (its head, and its body if it has one) within
  REQUEST_DEADLINE of the connection's start, or of the end of the answer before it on a
  kept-alive connection: one that has not is closed. A request that has arrived is never
  cut: a long poll (`/jobs/wait`), an event stream or a `log -f` runs as long as it lasts.
- At most `connection_cap()` connections are open per listener (the Unix socket, the TCP
  one). A new one over it takes the place of the longest idle one (no request under way:
  a client between requests, or one still sending its request); when every one has a
  request under way, the new one is answered 503 and closed at once. Either way accept()
  goes on, and no fd is held: the daemon keeps its fds for its jobs (pidfds, logs).
- What was closed is logged once a minute at most, with a count (`Note`), and so is
  asyncio's EMFILE on accept, should the jobs' fds reach the limit all the same.
"""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import time
import weakref
from functools import cache
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

log = logging.getLogger("gpuherd.api")

REQUEST_DEADLINE = 20.0
"""Seconds a connection has to send a whole request, from its start or from the end of the
answer before (`request_deadline`). A client of the daemon sends its request at once;
browsers within a few seconds."""
MOST_CONNECTIONS = 1024
"""The cap per listener, for a large fd limit; `connection_cap` lowers it under a small one."""
SILENT_AT_STOP = 2.0
"""Seconds a stopping server waits for the request of a connection that has sent none yet
(`GuardedH11.shutdown`)."""
NOTE_EVERY = 60.0
"""Seconds between two log lines of one kind (a count of what happened between them)."""


@cache
def request_deadline() -> float:
    """REQUEST_DEADLINE, read at the first connection (not at import: a daemon the tests fork
    from a preloaded process has its own environment). (GPUHERD_TEST_REQUEST_DEADLINE, in
    seconds, is the tests', not for users.)"""
    return float(os.environ.get("GPUHERD_TEST_REQUEST_DEADLINE") or REQUEST_DEADLINE)


@cache
def connection_cap() -> int:
    """Connections a listener keeps open at most: a quarter of the fd limit (both listeners
    at their cap leave half of it to the jobs and the store), at most MOST_CONNECTIONS.
    Read at the first connection, after the daemon raised its limit (fd_limit.py).
    (GPUHERD_TEST_CONNECTION_CAP is the tests', not for users.)"""
    named = os.environ.get("GPUHERD_TEST_CONNECTION_CAP")
    if named:
        return max(1, int(named))
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        return MOST_CONNECTIONS
    return max(8, min(MOST_CONNECTIONS, soft // 4))


class Note:
    """One kind of log line, said at most once every NOTE_EVERY seconds: the first at once,
    the next with how many happened since the last one said."""

    def __init__(self, level: int, what: str) -> None:
        self.level, self.what = level, what
        self.said_at = -NOTE_EVERY
        self.unsaid = 0

    def happened(self, *args: object) -> None:
        self.unsaid += 1
        now = time.monotonic()
        if now - self.said_at < NOTE_EVERY:
            return
        more = f" ({self.unsaid} times in the last {NOTE_EVERY:.0f} s)" if self.unsaid > 1 else ""
        log.log(self.level, self.what + more, *args)
        self.said_at, self.unsaid = now, 0


TOO_SLOW = Note(
    logging.INFO,
    "closed a connection that sent no whole request within %.0f s of its start or its last answer",
)
MADE_ROOM = Note(
    logging.INFO,
    "closed the longest idle connection on %s: %d were open, the most kept (the new one is served)",
)
REFUSED = Note(
    logging.WARNING,
    "refused a connection on %s: %d are open, each with a request under way, the most kept",
)
ACCEPT_FAILED = Note(logging.ERROR, "cannot accept connections: %s")

_FULL = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s"
)


def _full_answer(cap: int) -> bytes:
    said = f"the daemon has {cap} connections open here, its most, each with a request under "
    said += "way: close some (a script that opens many), then ask again\n"
    return _FULL % (len(said), said.encode())


_IDLE: weakref.WeakKeyDictionary[ServerState, dict[GuardedH11, None]] = weakref.WeakKeyDictionary()
"""Per listener (its uvicorn ServerState), its connections with no request under way, the
longest idle first."""


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol, with the request deadline and the connection cap."""

    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if self.refused(transport):
            self.connections.discard(self)
            transport.close()
            return
        cap = connection_cap()
        if len(self.connections) > cap and not self._make_room(cap):
            REFUSED.happened(self._where(), cap)
            self.connections.discard(self)
            transport.write(_full_answer(cap))
            transport.close()
            return
        self._idle_now()

    def refused(self, transport: asyncio.Transport) -> bool:
        """Whether to close this connection before anything (a subclass's check)."""
        return False

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._busy_or_idle()
        if self._stopping and self._asked():
            self.cycle.keep_alive = False  # (answered, then closed: the server stops)

    _stopping = False

    def shutdown(self) -> None:
        """A stopping server's word to each connection. uvicorn closes one with no request
        under way, but one on the Unix socket that has sent no request yet was made just
        before the stop, by a client that sends its request at once (the CLI, the Python
        API): closed, it lost its request, unable to tell whether it was done. It is
        answered, then closed (SILENT_AT_STOP at most for its request to come, as long as
        uvicorn waits for connections to close). Over TCP a browser opens connections ahead
        of its requests: those would hold every stop that long."""
        if self._asked() or self.transport.is_closing() or self.client is not None:
            super().shutdown()
            return
        self._stopping = True
        asyncio.get_running_loop().call_later(SILENT_AT_STOP, self._close_if_silent)

    def _close_if_silent(self) -> None:
        if not self._asked() and not self.transport.is_closing():
            super().shutdown()

    def _asked(self) -> bool:
        """A request has come on this connection (uvicorn's `cycle` is None until then)."""
        cycle: Any = self.cycle
        return cycle is not None

    def on_response_complete(self) -> None:
        super().on_response_complete()  # (may start a request that came behind this one)
        if not self.transport.is_closing():
            self._busy_or_idle(answered=True)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_clock()
        _idle_of(self.server_state).pop(self, None)
        super().connection_lost(exc)

    def _under_way(self) -> bool:
        """A request has arrived and is not answered yet."""
        cycle: Any = self.cycle
        return cycle is not None and not cycle.response_complete

    def _busy_or_idle(self, answered: bool = False) -> None:
        if not self._under_way():
            if answered:
                self._idle_now()
            return
        _idle_of(self.server_state).pop(self, None)
        if self.conn.their_state is not h11.SEND_BODY:
            self._stop_clock()  # all of it is in: the request runs as long as it lasts

    def _idle_now(self) -> None:
        """No request under way, from now on: the clock starts, and this one may make room."""
        idle = _idle_of(self.server_state)
        idle.pop(self, None)
        idle[self] = None  # (the longest idle first)
        self._stop_clock()
        self._deadline = asyncio.get_running_loop().call_later(request_deadline(), self._late)

    def _stop_clock(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _late(self) -> None:
        self._deadline = None
        if self._under_way() and self.conn.their_state is not h11.SEND_BODY:
            return  # (its request came whole: not cut)
        TOO_SLOW.happened(request_deadline())
        self.transport.close()

    def _make_room(self, cap: int) -> bool:
        """Close the longest idle connection but this one; False if every one is busy."""
        for other in _idle_of(self.server_state):
            if other is not self:
                MADE_ROOM.happened(self._where(), cap + 1)
                _idle_of(self.server_state).pop(other)
                other.transport.close()
                return True
        return False

    def _where(self) -> str:
        return "the Unix socket" if self.client is None else "the TCP listener"


def _idle_of(state: ServerState) -> dict[GuardedH11, None]:
    idle = _IDLE.get(state)
    if idle is None:
        idle = _IDLE[state] = {}
    return idle


def quiet_accept_failures(loop: asyncio.AbstractEventLoop) -> None:
    """asyncio logs every accept() that fails for want of fds (EMFILE), with its traceback,
    and tries again up to the listen backlog's times at once (CPython's selector loop): at
    the limit, ~4,500 lines a second. Said once a minute instead; any other exception of the
    loop as before. Done once per loop."""
    before = loop.get_exception_handler()
    if getattr(before, "quiets_accept", False):
        return

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") == "socket.accept() out of system resource":
            ACCEPT_FAILED.happened(context.get("exception"))
        elif before is not None:
            before(loop, context)
        else:
            loop.default_exception_handler(context)

    handler.quiets_accept = True  # type: ignore[attr-defined]
    loop.set_exception_handler(handler)
