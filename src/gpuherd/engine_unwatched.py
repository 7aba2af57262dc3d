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
on any). A waiting job's reason and `gpuherd gpus` name the run. Nothing is written to
herd.db: the run's end is not the queue's to record, and a restart finds it again by the
same pass.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuherd.core.model import Reservation
from gpuherd.core.recovery import running_unwatched
from gpuherd.engine_taken import found_run, on_gpus
from gpuherd.layout import attempt_path

if TYPE_CHECKING:
    from gpuherd.engine import Engine

log = logging.getLogger("gpuherd.engine")

UNKNOWN = "unknown to herd.db"
"""What such a run is, where a job's state would be said (`gpuherd gpus`)."""

RunKey = tuple[int, int]


@dataclass(frozen=True)
class UnwatchedRun:
    job_id: int
    attempt: int
    pid: int
    """Its leader (as its folder recorded it), else its first process found."""
    held: Reservation

    @property
    def reason(self) -> str:
        """Why its GPUs are reserved, as `gpuherd gpus` says it of a held job's run."""
        return f"{UNKNOWN}: {running_unwatched(self.attempt, self.pid)}"


class UnwatchedRuns:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self.runs: dict[RunKey, UnwatchedRun] = {}
        """By (job id, attempt): those that run, with what is held for them."""

    def reservations(self) -> list[Reservation]:
        return [run.held for run in self.runs.values()]

    def seen(self, running: Mapping[RunKey, Sequence[int]]) -> None:
        """Told by the executor which still run (with their processes' pids): hold the GPUs
        of those found, free those of the others, and place jobs again."""
        for key in [key for key in self.runs if key not in running]:
            gone = self.runs.pop(key)
            log.info(
                "job %d attempt %d (pid %d), which herd.db does not know, has ended: %s free",
                gone.job_id,
                gone.attempt,
                gone.pid,
                on_gpus(gone.held.gpus),
            )
        for key, pids in running.items():
            if key not in self.runs and pids:
                self.runs[key] = self._hold(*key, pids)
        self._engine.wake()

    def _hold(self, job_id: int, attempt: int, pids: Sequence[int]) -> UnwatchedRun:
        engine, executor = self._engine, self._engine.executor
        with engine.store.passing_over_damaged():  # (a row that cannot be read: its default)
            job = engine.store.get_jobs([job_id]).get(job_id)
        # A sweep point's own folder is named in its row: where the database lacks the job,
        # its GPUs are read from its process's environment instead.
        folder = attempt_path(engine.layout, job_id, job.spec.folder if job else None, attempt)
        recorded = executor.recorded_pid(folder)
        pid = recorded if recorded is not None and recorded in pids else pids[0]
        gpus = found_run(attempt, pid, folder).gpus
        if gpus is None:
            gpus = executor.given_gpus(pid)
        if gpus is None:
            gpus = tuple(device.index for device in engine.device_listing())
            kept = "where it runs cannot be read: every GPU is held for it"
        else:
            kept = f"its {on_gpus(gpus)} held for it until all its processes have ended"
        run = f"{running_unwatched(attempt, pid)}, {UNKNOWN}"
        log.warning("job %d: its %s; %s", job_id, run, kept)
        held = Reservation(job_id, gpus, exclusive=True, run=run)
        return UnwatchedRun(job_id, attempt, pid, held)
