"""Whether the engine's passes fail, and whether its callbacks did (a part of the engine).

A bug, or a database row that cannot be read, must not take the queue down; nor may it pass
unseen: queued jobs said "waiting for its turn" while no pass got that far. A failing pass
is logged once in full (not at every wake-up), tried again after RETRY seconds, then after
twice as long each time it fails again (up to RETRY_MAX; other wake-ups try too), and said by
`gpuherd ls`/`show` for every queued job and by `gpuherd daemon status`.

The engine's other entries from the event loop (a job's exit, its deadline, the timers of
telemetry and notes) are the loop's callbacks: one that raises is caught by the loop's
exception handler (`watch`), logged once in full, and said by `daemon status` for as long as
the daemon runs (what it was doing, recording a job's end say, is not done again: the next
start reads it from the job's folder). Whoever must stop on either (`gpuherd run`) listens.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("gpuherd.engine")

RETRY = 2.0
"""Seconds before a failing pass is tried again the first time (other wake-ups try too)."""
RETRY_MAX = 30.0
"""The longest wait between tries: each one that fails again doubles the wait up to this."""
SAID_MAX = 100
"""Errors remembered as logged in full (each new one beyond: in full each time)."""
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
ENGINE_FILES = (
    "attempts.py",
    "devices.py",
    "engine",  # (engine.py, engine_begin.py, ...)
    "executors/",
    "log_cap_watch.py",
    "seen_alive.py",
    "silence_watch.py",
)
"""The files (under the package) whose loop callbacks are the scheduler's."""
NOT_ENGINE_FILES = (
    "api/",
    "daemon_signals.py",
    "hooks.py",
    "job_commits.py",
    "runner_commits.py",
    "runner_failure.py",
    "runner_gpu_file.py",
    "runner_input.py",
    "runner_live.py",
    "runner_signals.py",
)
"""Those whose callbacks are not: their errors are printed as the loop prints any."""


class TickHealth:
    def __init__(
        self, wake_later: Callable[[float], None], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._wake_later = wake_later
        self._clock = clock  # (for the retries' times)
        self.failing: tuple[float, str] | None = None
        """Since when passes fail, and the error (`TypeError: ...`); None while they work."""
        self.broken: tuple[float, str] | None = None
        """When a callback of the engine last raised, and its error; None if none did."""
        self.listeners: list[Callable[[str], None]] = []
        """Told the error of each new unexpected failure (`gpuherd run` stops on it)."""
        self._retry_due = 0.0
        self._backoff = RETRY
        self._said: set[str] = set()  # errors whose traceback is in the log already
        self._loop: asyncio.AbstractEventLoop | None = None
        self._handler_before: Any = None

    def failed(self, exc: Exception, logged: bool = False, retry: bool = True) -> None:
        """A pass raised: log a new error in full, and try again later. `logged`: the caller
        said it in its own words (herd.db refusing a tick's changes: no bug, no traceback).
        `retry` False: no pass follows (the engine closes: nobody is told either)."""
        error = f"{type(exc).__name__}: {exc}"
        if self.failing is None or self.failing[1] != error:
            self.failing = (time.time(), error)
            if not logged:
                said = "engine pass failed (tried again after %gs, then less often)"
                self._log(error, exc, said, RETRY, tell=retry)
        if retry and self._clock() >= self._retry_due:  # one retry armed at a time
            self._retry_due = self._clock() + self._backoff
            self._wake_later(self._backoff)
            self._backoff = min(self._backoff * 2, RETRY_MAX)

    def worked(self) -> None:
        self._backoff = RETRY
        if self.failing is not None:
            log.info("engine passes work again (failing since %s)", time.ctime(self.failing[0]))
            self.failing = None

    def reason(self) -> str | None:
        """Why no queued job starts, while passes fail."""
        if self.failing is None:
            return None
        return f"not starting: the scheduler fails ({self.failing[1]}); see `gpuherd daemon log`"

    def status(self) -> str | None:
        """What `daemon status` says: a failing pass, else a callback that raised."""
        if (failing := self.reason()) is not None or self.broken is None:
            return failing
        at, error = self.broken
        return (
            f"the scheduler failed at {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(at))}"
            f" ({error}); see `gpuherd daemon log`; a job that shows running after it ended"
            " is recorded by the next start (`gpuherd daemon restart`)"
        )

    # ---- the loop's callbacks ---------------------------------------------------------------

    def watch(self, loop: asyncio.AbstractEventLoop) -> None:
        """Take the exceptions the engine's callbacks on `loop` raise (until `unwatch`)."""
        self._loop, self._handler_before = loop, loop.get_exception_handler()
        loop.set_exception_handler(self._on_loop_error)

    def unwatch(self) -> None:
        """Give the loop its handler back (the engine closed: nobody is told any more)."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.set_exception_handler(self._handler_before)
        self._loop = None

    def _on_loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, Exception) and "handle" in context and _the_engines(exc):
            self.broken = (time.time(), f"{type(exc).__name__}: {exc}")
            self._log(self.broken[1], exc, "engine callback failed (%s)", _where(exc))
            self._wake_later(0)  # a tick: whatever it can still record, it records
        elif self._handler_before is not None:
            self._handler_before(loop, context)
        else:
            loop.default_exception_handler(context)

    def _log(
        self, error: str, exc: Exception, message: str, *args: object, tell: bool = True
    ) -> None:
        """Log `message` with the traceback the first time `error` is seen, else in a line;
        tell the listeners of it (`tell`: not once the engine closes)."""
        if error in self._said:
            log.error(message + ": %s (its traceback: above)", *args, error)
        else:
            if len(self._said) < SAID_MAX:
                self._said.add(error)
            log.error(message, *args, exc_info=exc)
        for listener in self.listeners if tell else ():
            listener(error)


def _the_engines(exc: Exception) -> bool:
    """Whether the callback that raised `exc` is the engine's: the first of gpuherd's frames
    in its traceback (the callback the loop called) is in one of ENGINE_FILES. Another's (the
    API's, a hook's, `gpuherd run`'s display) goes to the loop's handler, as before: it is no
    failure of the scheduler, and must not stop a run (tests/unit/test_engine_health.py
    checks that every file that sets loop callbacks is in one list or the other)."""
    return _where(exc).partition(",")[0].startswith(ENGINE_FILES)


def _where(exc: Exception) -> str:
    """The callback of gpuherd's that the loop called (`executors/local.py, _on_leader_exit`):
    its handle says only `<Handle cancelled>` once the callback removed its own reader."""
    tb = exc.__traceback__
    while tb is not None and not tb.tb_frame.f_code.co_filename.startswith(_PACKAGE):
        tb = tb.tb_next
    if tb is None:
        return "?"
    code = tb.tb_frame.f_code
    return f"{code.co_filename.removeprefix(_PACKAGE)}, {code.co_name}"
