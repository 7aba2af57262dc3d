"""The attempts a daemon runs, and when it last saw them alive: a sign of life for the next
daemon, which may find one of them gone with no exit status (lost). A job that replaced its
shell (`exec python train.py`) writes nothing at its end, and one that wrote no log either was
recorded as lost at its start, run time 0.0s, though the daemon had watched it run until it
stopped, or crashed (core.recovery.lost_end takes the latest sign).

Kept in herd.db's settings (one row, dropped once read by the next start): replaced at each
stop (`leave`), and while attempts run, every SEEN_EVERY seconds (`Notes`), so that a daemon
killed with SIGKILL leaves one too, at most that old. The note rides in the engine's tick
transaction when one comes by (made anyway, under `synchronous = NORMAL`: no flush of its
own), else in a small one of its own; an idle daemon writes none and sets no timer for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import TYPE_CHECKING

from gpuherd.saved_settings import DamagedSetting
from gpuherd.store import Store

if TYPE_CHECKING:
    from gpuherd.attempts import Live

log = logging.getLogger("gpuherd.daemon")

SETTING = "seen_alive"
SEEN_EVERY = float(os.environ.get("GPUHERD_TEST_SEEN_ALIVE_EVERY") or 30.0)
"""Seconds between the running attempts' notes: a lost one's run time, after a crash, is at
most this short of the time it ran. (GPUHERD_TEST_SEEN_ALIVE_EVERY is the tests'.)"""


def leave(store: Store, attempts: Iterable[tuple[int, int]], at: float) -> None:
    """Record that these attempts (job id, attempt) ran at `at` (the daemon stops, they go on;
    or a note while it runs)."""
    store.set_setting(SETTING, json.dumps({"at": at, "attempts": sorted(attempts)}))


def take(store: Store) -> dict[tuple[int, int], float]:
    """What the last daemon left (when each attempt was seen alive), and drop it: it holds
    only for the start that follows that stop (or crash)."""
    text = store.get_setting(SETTING)
    if not text:
        return {}
    store.set_setting(SETTING, "")
    try:
        left = json.loads(text)
        at = float(left["at"])
        if not math.isfinite(at):
            raise ValueError("its time is not a finite number")
        return {(int(job), int(attempt)): at for job, attempt in left["attempts"]}
    # (written by this module: a hand edit's, or a crash's; 1e400 failed every start after)
    except (ValueError, TypeError, KeyError, ArithmeticError) as exc:
        why = {KeyError: f"no {exc} in it", OverflowError: "a number past any job's"}
        said = DamagedSetting(SETTING, text, why.get(type(exc), str(exc)))
        log.warning("%s: forgotten (a job found gone is said lost as of its last log write)", said)
        return {}


class Notes:
    """The periodic note of the running attempts (`live`: the engine's, by job id), at most
    and, while they run, at least every `every` seconds of `clock`."""

    def __init__(
        self,
        store: Store,
        live: Mapping[int, Live],
        clock: Callable[[], float],
        every: float = SEEN_EVERY,
    ) -> None:
        self._store, self._live, self._clock, self._every = store, live, clock, every
        self._written = -math.inf
        """When the last note committed (of `clock`)."""
        self._timer: asyncio.TimerHandle | None = None

    def note(self, now: float, slack: float = 0.0) -> None:
        """In the caller's transaction: the running attempts seen alive `now`, once the last
        note is `every` old (less `slack`: a timer may fire a little early)."""
        if now - self._written < self._every - slack or not self._live:
            return
        lives = [(live.job_id, live.attempt) for live in self._live.values()]
        leave(self._store, lives, now)
        self._store.after_commit(partial(self._wrote, now))

    def _wrote(self, at: float) -> None:
        self._written = max(self._written, at)

    def arm(self) -> None:
        """Have the next note written when due, while attempts run (else no timer at all)."""
        if self._timer is not None or not self._live:
            return
        due = self._written + self._every - self._clock()
        # (no sooner than a quarter of the interval: a herd.db that refuses it is not asked
        # again at once, nor ever more often than that)
        delay = min(max(due, self._every / 4), self._every)
        self._timer = asyncio.get_running_loop().call_later(delay, self._due)

    def _due(self) -> None:
        self._timer = None
        if not self._live:
            return  # they ended: nothing to note, and no timer until the next starts
        # (a herd.db that refuses it loses only this hint, and is asked again later)
        with contextlib.suppress(sqlite3.Error), self._store.transaction():
            self.note(self._clock(), slack=self._every / 10)
        self.arm()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
