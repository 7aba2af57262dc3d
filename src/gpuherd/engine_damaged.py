"""The jobs whose rows in herd.db cannot be read, set aside by the engine (a part of it): one
such row (herd.db changed by another program) costs its job alone, where it failed every
pass of the scheduler, and so every job's start, and every daemon start (damaged_rows.py).

* A queued job: placement's reads leave it out (store_reads.RowJobs). While one is set aside
  a pass runs every RECHECK seconds, besides those that wake-ups run: a row set back by hand
  is scheduled again with nobody waking the daemon.
* A running job the daemon watches holds its GPUs as any (they are the daemon's to know, not
  the row's) while its process runs. Its end cannot be recorded on a row that cannot be read:
  it is kept, and recorded at the first pass after the row is set back (its GPUs are free
  meanwhile: its process has ended).
* A running (or paused) job found as the daemon starts cannot be re-attached (what runs, and
  where its files are, is in the row). The GPUs its row says it runs on (`assigned`, else its
  latest attempt's) are held for it, so that no job is placed where it may still run. Where
  neither reads, every GPU is held: it may run on any of them, and a job placed beside it
  could make both run out of memory (CPU-only jobs still start); the log says so. Either
  lasts until the row is set back and the daemon restarted (it re-attaches then).

Attempts that run but that herd.db does not know at all (moved aside, deleted, restored) are
not watched either: the GPUs held for them are counted here too (engine_unwatched.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from gpuherd.core.model import Job, Reservation
from gpuherd.damaged_rows import DamagedRows
from gpuherd.engine_unwatched import UnwatchedRuns

if TYPE_CHECKING:
    from gpuherd.attempts import Live
    from gpuherd.engine import Engine
    from gpuherd.executors.base import ExitStatus

RECHECK = 2.0
"""Seconds between passes while a queued job is set aside, or an end waits for its row."""
RESTART = "; set it back, then `gpuherd daemon restart` re-attaches to the job"

End = tuple["Live", "ExitStatus"]


class SetAside:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self.queued = engine.store.set_aside_queued
        self.running = DamagedRows("its end is recorded once its row is set back")
        """Running jobs set aside: an end kept, or found so as the daemon started."""
        self.ends: list[End] = []
        """Watched attempts' ends not recorded: their jobs' rows cannot be read."""
        self.held: dict[int, tuple[int, ...]] = {}
        """The GPUs held for each running job found set aside as the daemon started."""
        self.unwatched = UnwatchedRuns(engine)
        """Attempts that herd.db does not know, found running as the daemon started."""
        self._armed = False

    def arm(self) -> None:
        """After a tick: another pass in RECHECK seconds (one armed at a time) while a queued
        job is set aside (those no longer queued dropped) or an end waits for its row."""
        if self._armed or not (self.queued or self.ends):
            return
        if self.queued:
            ids = list(self.queued.why)
            self.queued.forget(set(ids) - self._engine.store.queued_among(ids))
        if self.queued or self.ends:
            self._armed = True
            asyncio.get_running_loop().call_later(RECHECK, self._recheck)

    def _recheck(self) -> None:
        self._armed = False
        self._engine.wake()

    def reservations(self) -> list[Reservation]:
        """What the running jobs found set aside, and attempts herd.db does not know, hold:
        their GPUs, whole."""
        held = [Reservation(job_id, gpus, exclusive=True) for job_id, gpus in self.held.items()]
        return held + self.unwatched.reservations() if self.unwatched.runs else held

    def found_running(self, damaged: dict[int, str]) -> None:
        """As the daemon starts: these running or paused jobs' rows cannot be read."""
        store = self._engine.store
        for job_id, why in damaged.items():
            gpus = store.gpus_held_by(job_id)
            if gpus is None:
                gpus = tuple(device.index for device in self._engine.device_listing())
                fate = "not watched; where it runs cannot be read: every GPU is held for it"
            else:
                listed = ", ".join(map(str, gpus)) or "none"
                fate = f"not watched; the GPUs its row says it runs on ({listed}) are held"
            self.held[job_id] = gpus
            self.running.note(job_id, why, fate + RESTART)

    def readable_ends(self, ends: Sequence[End]) -> tuple[list[End], dict[int, Job]]:
        """The ends to record now, with their jobs by id: `ends` and those kept before, but
        those whose jobs' rows cannot be read, kept (once the tick's changes are committed:
        a tick rolled back gives its ends back to the engine) and said once."""
        every = [*self.ends, *ends]
        if not every:
            return [], {}
        store = self._engine.store
        with store.passing_over_damaged() as damaged:
            jobs = store.get_jobs([live.job_id for live, _ in every])
        kept = [end for end in every if end[0].job_id in damaged]
        for live, _ in self.ends:
            if live.job_id not in damaged:
                self.running.mended(live.job_id)
        for live, _ in kept:
            self.running.note(live.job_id, damaged[live.job_id])
        if kept or self.ends:
            store.after_commit(partial(setattr, self, "ends", kept))
        return [end for end in every if end[0].job_id not in damaged], jobs
