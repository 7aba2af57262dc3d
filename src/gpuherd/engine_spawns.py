"""Starting the attempts a tick recorded, and what follows them: their pids recorded, the
ended jobs' files written once the GPUs have their next jobs. A part of the engine (a mixin of
Engine, which sets the attributes below)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import PurePath
from typing import TYPE_CHECKING, cast

from gpuherd.attempts import Attempts
from gpuherd.core.log_names import FOLDER_LOGS
from gpuherd.core.model import Attempt, Job
from gpuherd.core.output_files import recorded_or_named
from gpuherd.engine_unspawned import fail_unspawned
from gpuherd.executors.base import SpawnError, checked_workdir
from gpuherd.layout import Layout
from gpuherd.store import Store
from gpuherd.unwritten_ends import UnwrittenEnds, note_waiter

if TYPE_CHECKING:
    from gpuherd.engine import Engine

Paperwork = Callable[[], OSError | None]
"""Writes a job's files: the first error, if any."""

PID_RECORD_DELAY = 0.05
"""Seconds a spawned job's pid may wait to be written with the next tick's changes (a busy
queue ticks sooner); a daemon killed before that takes it from the job's process file."""


class Spawns:
    """Part of `Engine` (which sets these attributes)."""

    attempts: Attempts
    clock: Callable[[], float]
    layout: Layout
    store: Store
    wake_later: Callable[[float], None]
    _paperwork: list[tuple[int, Paperwork]]
    _unrecorded_pids: list[tuple[int, int, int, float]]
    _spawn: Callable[[Job, Attempt, float], int | None]

    unwritten: dict[int, OSError] | None = None
    """Set ({}) by `gpuherd run`, whose record the files are: the jobs whose last files could
    not be written, and why (a full disk). The daemon's record is herd.db: it says these in
    daemon.log and the job's history, and writes them again later (_unwritten_ends)."""

    _unwritten: UnwrittenEnds | None = None

    @property
    def _unwritten_ends(self) -> UnwrittenEnds:
        """Made at its first use, the daemon's first tick: it reads those a daemon before left."""
        if self._unwritten is None:
            self._unwritten = UnwrittenEnds(cast("Engine", self))
        return self._unwritten

    def add_paperwork(self, job_id: int, write: Paperwork) -> None:
        """Write a job's files at the end of this tick, once the GPUs have their next jobs."""
        self._paperwork.append((job_id, write))

    def _write(self, job_id: int, write: Paperwork) -> OSError | None:
        failed = write()
        if self.unwritten is not None:
            if failed is None:
                self.unwritten.pop(job_id, None)  # (its retry's end, written)
            else:
                self.unwritten[job_id] = failed
        elif failed is not None:
            self._unwritten_ends.failed(job_id, failed)
        return failed

    def _spawn_all(self, started: list[tuple[Job, Attempt]], now: float) -> None:
        spawned = [
            (job.id, attempt.number, pid)
            for job, attempt in started
            if (pid := self._spawn_after_files(job, attempt, now))
        ]
        if spawned:  # recorded by the next tick's transaction, not one of their own
            if not self._unrecorded_pids:
                self.wake_later(PID_RECORD_DELAY)
            at = self.clock()  # after the start events, which the spawns follow
            self._unrecorded_pids += [(job_id, number, pid, at) for job_id, number, pid in spawned]

    def record_spawns(self) -> None:
        """Record now the pids spawned since the last tick: a verb on a job just started (a
        kill within PID_RECORD_DELAY) then sees its pid, and its events follow the spawn's."""
        if not self._unrecorded_pids:  # (most calls: nothing spawned since the last tick)
            return
        pids, self._unrecorded_pids = self._unrecorded_pids, []
        try:
            self.store.record_pids(pids)
        except sqlite3.Error:  # kept for the next tick, as _record_exits_and_starts keeps them
            self._unrecorded_pids = pids + self._unrecorded_pids
            raise

    def record_spawns_for_a_read(self) -> None:
        """record_spawns before a read of jobs (`show`, `ls`): a job started within the last
        PID_RECORD_DELAY shows its pid. A write that fails (a full disk) leaves them to the
        next tick, and the read answers without them."""
        with contextlib.suppress(sqlite3.Error):
            self.record_spawns()

    def _do_paperwork(self) -> None:
        """Write the human-readable job files, after the GPUs got their next jobs: copies of
        what the store holds, kept off the path from one job's exit to the next one's start."""
        work, self._paperwork = self._paperwork, []
        for job_id, write in work:
            self._write(job_id, write)
        if self.unwritten is None:  # (the daemon's: those that could not be, when due)
            self._unwritten_ends.retry()

    def _spawn_after_files(self, job: Job, attempt: Attempt, now: float) -> int | None:
        """_spawn; for a job that waited for others (`--after`), once the files of those that
        ended in this tick are written: it may read their SUCCESS or FAILURE."""
        if waited := {*job.spec.after, *job.spec.after_any, *job.spec.after_fail}:
            ended = [(j, write) for j, write in self._paperwork if j in waited]
            self._paperwork = [(j, write) for j, write in self._paperwork if j not in waited]
            unwritten = {j: failed for j, write in ended if (failed := self._write(j, write))}
            if self.unwritten is None:  # (the daemon's: ends written later, tried now)
                unwritten |= self._unwritten_ends.retry(waited - unwritten.keys())
                if unwritten:  # (herd.db has their ends: the job starts all the same)
                    note_waiter(cast("Engine", self), job, unwritten)
        if gone := self._working_folder_gone(job, attempt):
            fail_unspawned(cast("Engine", self), job, attempt, gone, now)
            return None
        return self._spawn(job, attempt, now)

    def _working_folder_gone(self, job: Job, attempt: Attempt) -> SpawnError | None:
        """Why a job whose folder is inside its working folder (a sweep's results_dir in its
        --cwd) cannot start, that working folder gone: said before its folder is made, which
        makes the missing folders above it (jobfiles.prepare), the working folder with them:
        the executor's check then found it there, and the job ran in it, new and empty. Its
        words are the executor's (checked_workdir), as for any job whose working folder is
        gone. Not `gpuherd run`'s (it knows its folder by identity: runner_executor.py), nor
        a cluster's (its nodes' folders are not the daemon's: they check their own)."""
        cwd = job.spec.cwd
        if self.layout.one_shot or not self.attempts.executor.user_files:
            return None
        if not PurePath(attempt.dir).is_relative_to(cwd):
            return None  # (made on its own: the executor's check comes after it)
        try:
            checked_workdir(cwd, job.id, one_shot=False)
        except SpawnError as gone:
            return gone
        return None

    def _written(self, job: Job, attempt: Attempt) -> set[str]:
        """The files of the user's choosing the job's earlier attempts wrote: the attempt adds
        to those, and empties a file new to the job (one an edit named, say). Read only for a
        retry that writes such a file."""
        if not job.attempt or attempt.files in (None, FOLDER_LOGS):
            return set()
        return {
            path
            for earlier in self.store.attempts(job.id)
            if earlier.number != attempt.number
            for path in recorded_or_named(job.spec, job.id, earlier.number, earlier.files)
        }
