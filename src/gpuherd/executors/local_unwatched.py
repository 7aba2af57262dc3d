"""The attempts that the daemon's start found running but the queue did not know (herd.db moved
aside, deleted, or restored from an older backup): left running, unwatched, for good
(local_escaped.LeftoverSweeper). Whoever asked (the engine: engine_unwatched.py) is told
which of them still run, after the start's pass and each time that changes, so that their
GPUs are not given to another job while they run.

No kernel event tells when the last of them ends: they are not the daemon's children, and a
process that forks and exits leaves one no pidfd was opened on. So while any still runs, a
pass over /proc comes every RECHECK seconds (what finds them finds that too). None found at
the start (the usual case): no timer, and a pass costs one test of an empty dict more.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

from gpuherd.executors.base import UnwatchedRuns

FOLDER_VARIABLE = "GPUHERD_ATTEMPT_DIR"
"""In every job's environment: its attempt's folder (jobfiles.job_env)."""

RECHECK = 2.0
"""Seconds between passes while an attempt the queue did not know runs: how long its GPUs
stay held after its last process ended."""

RunKey = tuple[int, int]


class Unwatched:
    def __init__(self) -> None:
        self.tell: UnwatchedRuns | None = None
        """Told which still run (LocalExecutor.end_leftovers)."""
        self._keys: dict[str, RunKey] = {}
        """By attempt key: the attempts found at the start that the queue did not know."""
        self._told: dict[RunKey, list[int]] = {}
        self._timer: asyncio.TimerHandle | None = None

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def spare(self, key: str, job_id: int, attempt: int) -> None:
        self._keys[key] = (job_id, attempt)

    def seen(self, found: Mapping[int, str] | None, again: Callable[[], None]) -> None:
        """After a pass that found `found` (pid -> attempt key; None: it failed, and tells
        nothing): tell which still run, if that changed, and ask for a pass (`again`) in
        RECHECK seconds while any does."""
        if not self._keys:
            return
        runs = self._told
        if found is not None:
            runs = {}
            for pid, key in found.items():
                if (run := self._keys.get(key)) is not None:
                    runs.setdefault(run, []).append(pid)
            if runs.keys() != self._told.keys() and self.tell is not None:
                self.tell({run: sorted(pids) for run, pids in runs.items()})
            self._told = runs
        if runs and self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(RECHECK, self._due, again)

    def _due(self, again: Callable[[], None]) -> None:
        self._timer = None
        again()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def given_folder(pid: int) -> str | None:
    """The attempt folder gpuherd gave this process (its environment's FOLDER_VARIABLE); None
    where it has none, or is gone. Where herd.db does not know a run, its folder is known
    thus, a sweep point's too, which its job's row alone names (engine_unwatched.py)."""
    import psutil  # deferred, as in LocalExecutor.given_gpus: only for such a run

    try:
        return psutil.Process(pid).environ().get(FOLDER_VARIABLE) or None
    except psutil.Error:
        return None
