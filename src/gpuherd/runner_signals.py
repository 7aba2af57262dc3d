"""`gpuherd run`'s signals, and its output to a terminal or a pipe that may be gone.

SIGINT and SIGTERM interrupt: the first starts nothing new, the second kills the running
jobs. SIGHUP (the terminal closed, the ssh connection dropped) means nobody is left to wait
for them: the running jobs are killed at once and their ends recorded, and the run exits
HANGUP_STATUS. What it says after that goes to a terminal that may be gone: runner_stdout.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator

INTERRUPT_STATUS = 130
"""Exit status of a run stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells say it)."""
HANGUP_STATUS = 129
"""Exit status of a run stopped by SIGHUP (128 + SIGHUP)."""


@contextlib.contextmanager
def handled(on_interrupt: Callable[[], None], on_hangup: Callable[[], None]) -> Iterator[None]:
    """Call `on_interrupt` for SIGINT and SIGTERM and `on_hangup` for SIGHUP, on the running
    loop, until the block ends. A SIGHUP ignored from the start (`nohup gpuherd run`) stays
    ignored: whoever started the run wants its jobs to outlive the terminal."""
    loop = asyncio.get_running_loop()
    handlers = {signal.SIGINT: on_interrupt, signal.SIGTERM: on_interrupt}
    if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:
        handlers[signal.SIGHUP] = on_hangup
    for signum, handler in handlers.items():
        loop.add_signal_handler(signum, handler)
    try:
        yield
    finally:
        for signum in handlers:
            loop.remove_signal_handler(signum)


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Before the run's loop handles them (a --yielder's run): SIGINT and SIGTERM raise
    KeyboardInterrupt (`gpuherd: interrupted`, exit INTERRUPT_STATUS) and SIGHUP, unless
    ignored, exits HANGUP_STATUS, as they would in the run. Their default ended the run alone
    (SIGTERM, SIGHUP), leaving the yielder's process running, or did nothing (a SIGINT ignored
    since a script's `&`); an exception unwinds through what kills it."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    def hang_up(signum: int, frame: object) -> None:
        raise SystemExit(HANGUP_STATUS)

    handlers = {signal.SIGINT: interrupt, signal.SIGTERM: interrupt}
    if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:  # (nohup: stays ignored)
        handlers[signal.SIGHUP] = hang_up
    before = {signum: signal.signal(signum, handler) for signum, handler in handlers.items()}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
