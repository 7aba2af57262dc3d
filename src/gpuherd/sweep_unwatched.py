"""Sweep points whose folder a run writes in that no job of the queue runs: herd.db was
restored from a backup taken before that run started (or moved aside), and the daemon's
start found the run going on, unwatched (engine_unwatched.py: its job unknown to herd.db;
engine_held_runs.py: a run its job was held for, the job cancelled or ended meanwhile).

Before, a resubmission of the sweep ran such a point again, as no job the queue knows ran
there: the run's files were moved to previous-runs/<n>/ while it wrote them, a new job
started in the same folder beside it, and when the old run ended its shell appended its
`exit 0` to the new job's `process` file (it writes by path): the new job's record was
corrupted. Such a point now counts as running: not submitted, --force or not (sweep_plan.py;
no later word of the user's makes a second run in one folder safe), and said so, with how
to end the run; `sweep status` shows it running, its job that run's (sweep_table.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuherd.core.sweep import Point
from gpuherd.core.units import first_named, plural

if TYPE_CHECKING:
    from gpuherd.engine import Engine


@dataclass(frozen=True)
class FolderRun:
    """A run found going on in a job's folder that is no job's watched attempt."""

    job_id: int
    attempt: int
    pid: int
    started_at: float | None
    state: str | None = None
    """Its job's state; None: herd.db does not know the job."""

    @property
    def who(self) -> str:
        return f"job {self.job_id} attempt {self.attempt} (pid {self.pid})"

    def what(self, short: bool = False) -> str:
        if self.state is not None:
            return f"its job {self.state}" if short else f"unwatched, its job {self.state}"
        return "unknown to herd.db" + ("" if short else " (restored from an older backup?)")


def folder_runs(engine: Engine) -> dict[str, FolderRun]:
    """Those runs by their job's folder (a sweep point's: the point's)."""
    runs = {
        folder: FolderRun(run.job_id, run.attempt, run.pid, run.started_at)
        for folder, run in engine.set_aside.unwatched.by_job_dir().items()
    }
    held = sorted(engine.attempts.held_runs.items())
    if held:  # (rare: read only when a restart found such runs)
        jobs = engine.store.get_jobs(sorted({key[0] for key, _ in held}))
        for (job_id, attempt), run in held:
            job = jobs.get(job_id)
            state = job.state.value if job is not None else "removed"
            found = FolderRun(job_id, attempt, run.pid, run.started_at, state)
            runs.setdefault(run.job_dir, found)
    return runs


def not_rerun(points: Sequence[Point], runs: Mapping[str, FolderRun], force: bool) -> list[str]:
    """The warning of a submission that left out `points` (Plan.unwatched) for the runs in
    their folders: which, why, and what to do (one line)."""
    if not points:
        return []
    forced = ", --force or not" if force else ""
    why = (
        "run again now, the new job would have that run's files moved aside under it, and the"
        " run's end written into the new job's record"
    )
    if len(points) == 1:
        point, run = points[0], runs[points[0].run_dir]
        listed = " (gpuherd daemon status lists it until then)" if run.state is None else ""
        return [
            f"point {point.folder} not submitted{forced}: {run.who} runs in its folder,"
            f" {run.what()}; {why}. Submit it again once that run has ended{listed}, or end it"
            f" first: kill -TERM -{run.pid}"
        ]
    named = first_named(
        points, lambda p: f"{p.folder}: {runs[p.run_dir].who}, {runs[p.run_dir].what(short=True)}"
    )
    return [
        f"{plural(len(points), 'point')} not submitted{forced}: runs gpuherd does not watch"
        f" write in their folders ({named}); {why}. Submit them again once those runs"
        " have ended (gpuherd daemon status lists those herd.db does not know), or end them"
        " first (kill -TERM -PID: the run's process group)"
    ]


def runs_under(results_dir: str, runs: Mapping[str, FolderRun]) -> dict[str, FolderRun]:
    """Those of `runs` in a folder under `results_dir` (a sweep's points' folders)."""
    under = results_dir + os.sep
    return {folder: run for folder, run in runs.items() if folder.startswith(under)}


def shown_running(folder: str, run: FolderRun) -> str:
    """`sweep status`'s line on a point it shows running (sweep_table.py): whose run, and
    what its end will do (a run herd.db does not know: unknown_ended.py)."""
    if run.state is None:
        end = (
            "once it has ended, the exit it writes there judges the point, as a job's would,"
            " unless herd.db has a job of the point"
        )
    else:
        end = "its end does not decide the point: once it has ended, a submission of the sweep"
        end += " runs the point again"
    return (
        f"point {folder} is shown running: {run.who} runs in its folder, {run.what()}; no job"
        f" of the queue runs it, and {end}"
    )
