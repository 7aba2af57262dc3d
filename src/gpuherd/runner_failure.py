"""`gpuherd run` when its scheduler fails: it stops, it does not hang.

An unexpected exception in the engine (a bug: engine_health.py) may recur at every pass, and
may be what records the jobs' ends: a run that waited for them could wait for ever (2,000
jobs all ended, 709 still `running` in its herd.db, the run never exiting). So the run ends
as a second Ctrl-C ends it, whatever the error: nothing new starts, the running jobs are
killed (SIGTERM, SIGKILL after the grace), and once their ends are recorded, or GIVE_UP
seconds after the kill where they cannot be, the run is over. Killed rather than waited for:
their ends may never be seen, and a job left running after the run exits holds its GPU with
nobody to account for it. A herd.db that refuses writes (a full disk) is no such failure:
those passes are tried again, as in the daemon.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from gpuherd.core.units import plural
from gpuherd.engine import Engine

log = logging.getLogger("gpuherd.runner")

GIVE_UP = 5.0
"""Seconds after the kill's grace before the run ends without the ends it waits for."""


def failed_words(error: str) -> str:
    """The run's last line (stderr) about it: where the traceback is."""
    return f"the scheduler failed ({error}); its traceback is above, on stderr"


class Failure:
    """Listens to the engine's health (a listener of engine_health.TickHealth) and stops the
    run on its first unexpected error: `stop_dispatch` (the run's: nothing new starts, lines
    still coming are not run), `notice` what it does, kill the running jobs within `grace`."""

    def __init__(
        self,
        engine: Engine,
        stop_dispatch: Callable[[], None],
        notice: Callable[[str], None],
        grace: float,
    ) -> None:
        self._engine, self._stop_dispatch, self._notice = engine, stop_dispatch, notice
        self._grace = grace
        self.error: str | None = None
        self.gave_up = False
        """The killed jobs' ends were not all recorded in time: the run ends without them."""
        self._timer: asyncio.TimerHandle | None = None

    def __call__(self, error: str) -> None:
        if self.error is None:  # (called from inside the failing pass: the stop comes after)
            self.error = error
            self._stop_dispatch()
            asyncio.get_running_loop().call_soon(self._stop)

    def _stop(self) -> None:
        engine = self._engine
        running = len(engine.live)
        killing = f", killing {plural(running, 'running job')}" if running else ""
        self._notice(f"the scheduler failed ({self.error}): starting nothing new{killing}")
        try:
            engine.kill_all(self._grace)
        except Exception:  # (the same bug, maybe): the processes go all the same
            log.exception("stopping the jobs through the engine failed: killing them directly")
            for live in list(engine.live.values()):
                engine.executor.terminate(live.pid, self._grace)
        self._timer = asyncio.get_running_loop().call_later(self._grace + GIVE_UP, self._give_up)

    def _give_up(self) -> None:
        self.gave_up = True
        self._engine.changes.publish({"event": "gave_up"})  # (wakes the run's loop)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
