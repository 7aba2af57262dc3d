"""What the serving daemon does with each signal a user or the system may send it, each said in
its log. SIGHUP and SIGUSR1 had their default action, which ended it on the spot: no word in
daemon.log, its socket and herd.db's write-ahead log left behind (its jobs ran on, and the next
daemon re-attached them, as after `kill -9`).

- SIGTERM, SIGINT (Ctrl-C of a foreground daemon): a clean stop, as `gpuherd daemon stop`;
  a second SIGINT cuts the wait for open connections short (uvicorn's).
- SIGHUP: the same clean stop. It is what a foreground daemon gets when its terminal (an ssh
  or tmux window) closes, which leaves it nowhere to write; gpuherd has nothing to reload
  (`gpuherd daemon restart` starts the daemon again).
- SIGUSR1, SIGUSR2: ignored, said in the log. They mean nothing to gpuherd, and a queue stopped
  by a stray one (a tool that sends it to reopen logs, or a mistyped pid) is worse than a
  line saying it came.

Handlers are Python functions, never SIG_IGN: a signal ignored so would stay ignored in every
job the daemon starts (exec keeps SIG_IGN, and resets handlers to the default)."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

log = logging.getLogger("gpuherd.daemon")

Handler = Callable[[int, FrameType | None], None]

STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
IGNORED = (signal.SIGUSR1, signal.SIGUSR2)


@contextmanager
def handled(stop: Handler) -> Iterator[None]:
    """Within (the daemon serving): STOPPING signals call `stop` (the server's), IGNORED ones
    nothing; each is logged. The handlers before are put back after."""

    def stopping(signum: int, frame: FrameType | None) -> None:
        _log_soon("daemon %d got %s: stopping", os.getpid(), signal.Signals(signum).name)
        stop(signum, frame)

    def ignored(signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        _log_soon("daemon %d got %s: ignored (it means nothing to gpuherd)", os.getpid(), name)

    before = {sig: signal.signal(sig, stopping) for sig in STOPPING}
    before |= {sig: signal.signal(sig, ignored) for sig in IGNORED}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _log_soon(message: str, *args: object) -> None:
    """Log from a signal handler through the event loop: the handler runs between two of the
    main thread's bytecodes, maybe inside a logging call of its own, whose line this would cut."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # (outside the loop: at once)
        log.info(message, *args)
        return
    loop.call_soon_threadsafe(log.info, message, *args)
