"""`gpuherd retry` (Python's `job.retry()`, the HTTP verb, the dashboard's buttons) of a job
whose folder a run writes in that no job of the queue watches: herd.db was restored from a
backup that has the job ended (a sweep point's job failed, say), and a later run in the same
folder (the point resubmitted since) goes on, unknown to the restored queue; or a run the
job was held for goes on after the job was cancelled (sweep_unwatched.folder_runs lists
both).

Before, the retry queued the job again, and its next attempt started in that folder beside
the run: two processes writing one folder's job.json, metrics.json and files. It is refused
now, the job left as it was, in one line that names the run and how to end it, as a sweep's
resubmission says of such a point (sweep_unwatched.not_rerun). `--hold` too: a release would
start it beside the run all the same.

So are `gpuherd release` of a held job (the backup had it held) whose folder such a run
writes in, and a submission over HTTP whose `folder` is one (`"folder": "/…/x=1"`): each
started the job in that folder beside the run, as the retry did. Not a job's release while
its own attempt runs unwatched (the run it was held for, engine_held_runs.py): the engine
keeps that run's GPUs for it, and its next attempt gets a folder of its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Literal

from gpuherd.core.model import Job
from gpuherd.core.states import WAITING_STATES, JobState
from gpuherd.sweep_unwatched import FolderRun, folder_runs

if TYPE_CHECKING:
    from gpuherd.engine import Engine

RetryBeside = Callable[[Job], str | None]
"""Why a retry of the job would run it beside such a run (None: it would not)."""


def retry_beside(engine: Engine) -> RetryBeside:
    """What tells, for each job of one retry, why it is refused (runs read once; none, the
    usual case: nothing more to do per job)."""
    return _beside(engine, "retry")


def release_beside(engine: Engine) -> RetryBeside:
    """The same for each held job of one release."""
    return _beside(engine, "release")


def submitted_beside(engine: Engine, folders: Iterable[str | None]) -> str | None:
    """Why a submission whose jobs have their own `folders` (None: the daemon's jobs/<id>) is
    refused: the first of them such a run writes in; None for none."""
    named = [os.path.normpath(folder) for folder in folders if folder]
    runs = folder_runs(engine) if named else {}
    for folder in named if runs else ():
        if (run := runs.get(folder)) is not None:
            return (
                f"folder {folder}: {run.who} runs in it, {run.what()}; a job submitted into it"
                f" would run beside it, in the same folder. Submit it once that run has"
                f" ended{_listed(run)}, give another folder, or end the run first:"
                f" kill -TERM -{run.pid}"
            )
    return None


def _beside(engine: Engine, verb: Literal["retry", "release"]) -> RetryBeside:
    runs = folder_runs(engine)
    if not runs:
        return lambda job: None

    def refused(job: Job) -> str | None:
        if verb == "retry" and job.state in WAITING_STATES:
            return None  # (refused as a waiting job: retry_refused_waiting)
        if verb == "release" and job.state is not JobState.HELD:
            return None  # (queued already, or refused as it is: the release's own words)
        folder = str(engine.layout.job_dir(job))
        if (run := runs.get(folder)) is None:
            return None
        if verb == "release" and run.job_id == job.id:
            return None  # (its own attempt: see the module's docstring)
        done, again = ("queued again", "Retry") if verb == "retry" else ("released", "Release")
        return (
            f"job {job.id}: not {done}: {run.who} runs in its folder {folder},"
            f" {run.what()}; a new attempt would run beside it, in the same folder. {again} it"
            f" once that run has ended{_listed(run)}, or end it first: kill -TERM -{run.pid}"
        )

    return refused


def _listed(run: FolderRun) -> str:
    return " (gpuherd daemon status lists it until then)" if run.state is None else ""
