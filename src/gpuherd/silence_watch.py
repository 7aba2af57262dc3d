"""`--no-output-timeout`, watched: a running attempt's logs looked at a few times per its limit
(SILENCE_CHECKS, at most every 5 s); one that has printed nothing for that long is flagged as
stalled (`Live.stalled`) and the engine is told (what it does: `--on-no-output`). Its next
output clears the flag. A paused attempt's silence is not its own: it does not count."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gpuherd import jobfiles

if TYPE_CHECKING:
    from gpuherd.attempts import Live

OnStall = Callable[[int, float], None]
"""Called with a job id and how many seconds it has printed nothing."""
SILENCE_CHECKS = 4
"""Looks at a job's logs this many times per --no-output-timeout (at most every 5 s)."""


def watch_output(live: Live, limit: float, watched: Callable[[], bool], on_stall: OnStall) -> None:
    """A liveness check: the job's log sizes, a few times per `limit` seconds, for as long as
    `watched()` (the attempt runs, and the daemon watching it has not stopped)."""
    loop = asyncio.get_running_loop()
    every = min(max(limit / SILENCE_CHECKS, 0.05), 5.0)
    last = (-1, loop.time())  # (bytes written so far, when that changed)

    def check() -> None:
        nonlocal last
        if not watched():
            return  # the attempt ended, or the daemon stopped (its loop runs a moment on)
        loop.call_later(every, check)  # first: a look that raises must not end the watch
        size, written = _log_state(live.attempt_dir)
        now = loop.time()
        if last[0] < 0 and written and not live.paused:
            # First look (also after a restart): silent since the logs' last write, in
            # this attempt (a log an earlier run left in the folder is older).
            since = max(written, _number(live.started_info.get("started_at")))
            last = (size, now - max(0.0, time.time() - since))
        elif size != last[0] or live.paused:  # a paused job's silence is not its own
            last = (size, now)
            live.stalled = False
        elif not live.stalled and now - last[1] >= limit:
            live.stalled = True
            try:
                on_stall(live.job_id, now - last[1])
            except BaseException:  # not stored (a full disk): flagged again next look
                live.stalled = False
                raise

    check()


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _log_state(folder: Path) -> tuple[int, float]:
    """The logs' bytes so far, and when they were last written (0: no log yet)."""
    total, written = 0, 0.0
    for name in jobfiles.LOGS:
        try:
            stat = (folder / name).stat()
        except OSError:
            continue
        total, written = total + stat.st_size, max(written, stat.st_mtime)
    return total, written
