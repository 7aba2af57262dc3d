"""Whether the engine's passes fail (a part of the engine).

A bug, or a database row that cannot be read, must not take the queue down; nor may it pass
unseen: queued jobs said "waiting for its turn" while no pass got that far. A failing pass
is logged once in full (not at every wake-up), tried again every RETRY seconds, and said by
`gpuherd ls`/`show` for every queued job and by `gpuherd daemon status`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

log = logging.getLogger("gpuherd.engine")

RETRY = 2.0
"""Seconds between passes tried again while they fail (other wake-ups try too)."""


class TickHealth:
    def __init__(self, wake_later: Callable[[float], None]) -> None:
        self._wake_later = wake_later
        self.failing: tuple[float, str] | None = None
        """Since when passes fail, and the error (`TypeError: ...`); None while they work."""
        self._retry_due = 0.0

    def failed(self, exc: Exception, logged: bool = False) -> None:
        """A pass raised: log a new error in full, and try again soon. `logged`: the caller
        said it in its own words (herd.db refusing a tick's changes: no bug, no traceback)."""
        error = f"{type(exc).__name__}: {exc}"
        if self.failing is None or self.failing[1] != error:
            self.failing = (time.time(), error)
            if not logged:
                log.error("engine pass failed (tried again every %gs)", RETRY, exc_info=exc)
        if time.monotonic() >= self._retry_due:  # one retry armed at a time
            self._retry_due = time.monotonic() + RETRY
            self._wake_later(RETRY)

    def worked(self) -> None:
        if self.failing is not None:
            log.info("engine passes work again (failing since %s)", time.ctime(self.failing[0]))
            self.failing = None

    def reason(self) -> str | None:
        """Why no queued job starts, while passes fail."""
        if self.failing is None:
            return None
        return f"not starting: the scheduler fails ({self.failing[1]}); see `gpuherd daemon log`"
