"""Attempts that run while herd.db does not know them: it was moved aside, deleted, or restored
from a backup taken before they started, most often before their job was submitted (a job
it knows whose later attempt runs is adopted, or held for it: engine_restored.py). The
daemon start's pass over /proc finds them by the attempt key their processes carry and
leaves them running, unwatched (executors/local_escaped.py); the executor tells this part of
the engine which of them still run (Executor.end_leftovers), before anything is placed.

Their GPUs are held for them, whole, while any of their processes runs, as for a running job
whose row cannot be read (engine_damaged.py): before, the next job was placed on them,
beside the run. Which GPUs: those the attempt's folder recorded (attempt.json), else those
its process was given (CUDA_VISIBLE_DEVICES, as gpuherd set it), else every GPU (it may run
on any). A waiting job's reason, `gpuherd gpus` and `gpuherd daemon status` name the run.
The run's end is not the queue's to record, and a restart finds it again by the same pass.

Its job's id is another matter: a new job given it would share the run's attempt key, the
mark that finds a job's processes, so a `gpuherd kill` of the new job killed the run too, and
a restart once the new job had ended took the run for what that job left, and killed it. New
jobs are numbered after every such run, as after the job folders on disk (daemon_home.py):
those cover the runs in the home's jobs/ folder, not a sweep point's, whose folder is its
sweep's. The run's own folder is read from its environment where herd.db cannot name it.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuherd.core.model import Reservation
from gpuherd.core.recovery import running_unwatched
from gpuherd.engine_taken import found_run, on_gpus
from gpuherd.errors import HerdError
from gpuherd.executors.local_unwatched import given_folder
from gpuherd.layout import attempt_path

if TYPE_CHECKING:
    from gpuherd.engine import Engine

log = logging.getLogger("gpuherd.engine")

UNKNOWN = "unknown to herd.db"
"""What such a run is, where a job's state would be said (`gpuherd gpus`)."""

RunKey = tuple[int, int]

_ATTEMPT_FOLDER = re.compile(r"attempt-[0-9]+")


@dataclass(frozen=True)
class UnwatchedRun:
    job_id: int
    attempt: int
    pid: int
    """Its leader (as its folder recorded it), else its first process found."""
    held: Reservation
    folder: str
    """Its attempt folder, where its logs are."""
    started_at: float | None
    """When it started, as its folder recorded it (None: it recorded nothing)."""

    @property
    def job_dir(self) -> str:
        """Its job's folder, that of its attempt folders (a sweep point's: the point's)."""
        head, tail = os.path.split(self.folder)
        return head if _ATTEMPT_FOLDER.fullmatch(tail) else self.folder

    @property
    def reason(self) -> str:
        """Why its GPUs are reserved, as `gpuherd gpus` says it of a held job's run."""
        return f"{UNKNOWN}: {running_unwatched(self.attempt, self.pid)}"

    def view(self) -> dict[str, Any]:
        """As `gpuherd daemon status --json` gives it (`unknown_runs`)."""
        return {
            "job_id": self.job_id,
            "attempt": self.attempt,
            "pid": self.pid,
            "gpus": list(self.held.gpus),
            "folder": self.folder,
            "started_at": self.started_at,
        }


class UnwatchedRuns:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self.runs: dict[RunKey, UnwatchedRun] = {}
        """By (job id, attempt): those that run, with what is held for them."""

    def reservations(self) -> list[Reservation]:
        return [run.held for run in self.runs.values()]

    def view(self) -> list[dict[str, Any]]:
        """Those that run, by job and attempt, for `gpuherd daemon status`."""
        return [self.runs[key].view() for key in sorted(self.runs)]

    def by_job_dir(self) -> dict[str, UnwatchedRun]:
        """Those that run, by their job's folder (the first of a job's two runs): a sweep's
        submission must not run a point again in a folder one of them writes in
        (sweep_unwatched.py)."""
        found: dict[str, UnwatchedRun] = {}
        for key in sorted(self.runs):
            found.setdefault(self.runs[key].job_dir, self.runs[key])
        return found

    def seen(self, running: Mapping[RunKey, Sequence[int]]) -> None:
        """Told by the executor which still run (with their processes' pids): hold the GPUs
        of those found, free those of the others, and place jobs again."""
        for key in [key for key in self.runs if key not in running]:
            gone = self.runs.pop(key)
            gpus = gone.held.gpus
            log.info(
                "job %d attempt %d (pid %d), which herd.db does not know, has ended%s",
                gone.job_id,
                gone.attempt,
                gone.pid,
                f": {on_gpus(gpus)} free" if gpus else " (it used no GPU)",
            )
        found = [key for key, pids in running.items() if key not in self.runs and pids]
        for key in found:
            self.runs[key] = self._hold(*key, running[key])
        if found:
            self._number_past(max(found))
        self._engine.wake()

    def _number_past(self, key: RunKey) -> None:
        """New jobs get ids above this run's job's: one given it would share its attempt key
        (see the module's docstring). Told before anything is submitted: the daemon start's
        pass is waited for (local_escaped.LeftoverSweeper.begin)."""
        job_id, attempt = key
        try:
            moved = self._engine.store.number_jobs_after(job_id)
        except (HerdError, sqlite3.Error) as exc:  # (a full disk, a lock held too long)
            log.warning(
                "job %d: cannot number new jobs after it (%s): a new job numbered %d would "
                "share its attempt key, and a `gpuherd kill` of that job would stop this run",
                job_id,
                exc,
                job_id,
            )
            return
        if moved:
            log.warning(
                "the database knew no job numbered %d, whose attempt %d runs: new jobs are "
                "numbered after it",
                job_id,
                attempt,
            )

    def _hold(self, job_id: int, attempt: int, pids: Sequence[int]) -> UnwatchedRun:
        engine, executor = self._engine, self._engine.executor
        with engine.store.passing_over_damaged():  # (a row that cannot be read: its default)
            job = engine.store.get_jobs([job_id]).get(job_id)
        folder = attempt_path(engine.layout, job_id, job.spec.folder if job else None, attempt)
        recorded = executor.recorded_pid(folder)
        if recorded not in pids and job is None:
            # A sweep point's own folder is named in its row alone: where the database lacks
            # the job, the folder gpuherd gave its processes (their environment) is its own.
            named = next(filter(None, map(given_folder, pids)), None)
            if named is not None:
                folder, recorded = named, executor.recorded_pid(named)
        pid = recorded if recorded is not None and recorded in pids else pids[0]
        found = found_run(attempt, pid, folder)
        gpus = found.gpus
        if gpus is None:
            gpus = executor.given_gpus(pid)
        if gpus is None:
            gpus = tuple(device.index for device in engine.device_listing())
            kept = "where it runs cannot be read: every GPU is held for it"
        elif gpus:
            kept = f"its {on_gpus(gpus)} held for it until all its processes have ended"
        else:  # (a CPU-only run: "its no GPU held for it", it said)
            kept = "it uses no GPU"
        run = f"{running_unwatched(attempt, pid)}, {UNKNOWN}"
        log.warning("job %d: its %s; %s", job_id, run, kept)
        held = Reservation(job_id, gpus, exclusive=True, run=run)
        return UnwatchedRun(job_id, attempt, pid, held, folder, found.started_at)
