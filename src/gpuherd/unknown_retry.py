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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from gpuherd.core.model import Job
from gpuherd.core.states import WAITING_STATES
from gpuherd.sweep_unwatched import folder_runs

if TYPE_CHECKING:
    from gpuherd.engine import Engine

RetryBeside = Callable[[Job], str | None]
"""Why a retry of the job would run it beside such a run (None: it would not)."""


def retry_beside(engine: Engine) -> RetryBeside:
    """What tells, for each job of one retry, why it is refused (runs read once; none, the
    usual case: nothing more to do per job)."""
    runs = folder_runs(engine)
    if not runs:
        return lambda job: None

    def refused(job: Job) -> str | None:
        if job.state in WAITING_STATES:
            return None  # (refused as a waiting job: retry_refused_waiting)
        folder = str(engine.layout.job_dir(job))
        if (run := runs.get(folder)) is None:
            return None
        listed = " (gpuherd daemon status lists it until then)" if run.state is None else ""
        return (
            f"job {job.id}: not queued again: {run.who} runs in its folder {folder},"
            f" {run.what()}; a new attempt would run beside it, in the same folder. Retry it"
            f" once that run has ended{listed}, or end it first: kill -TERM -{run.pid}"
        )

    return refused
