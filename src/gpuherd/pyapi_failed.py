"""JobFailed: what `Job.result()` (pyapi.py) raises for a job that did not succeed, saying
how it ended (`job 7 (train) failed (exit 3)`) and the last line of its stderr that says why
(a traceback's error), read from the daemon.

    try:
        job.result()
    except gpuherd.JobFailed as failed:
        print(failed.job.id, failed.state, failed)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuherd.core.failure_line import failure_line
from gpuherd.core.states import GPUHERD_STOPS
from gpuherd.errors import HerdError

if TYPE_CHECKING:
    from gpuherd.pyapi import Job

STDERR_LINES_READ = 200
"""The end of a failed job's stderr JobFailed looks in for the error its traceback ends with."""


class JobFailed(HerdError):
    """Job.result() of a job that did not succeed: `job`, its `state`, and why in the text
    (`message`; left out, read from the daemon). It pickles (errors.py), job handle and all,
    so a ProcessPoolExecutor's worker hands it on as it is."""

    def __init__(self, job: Job, state: str, message: str | None = None) -> None:
        self.job, self.state = job, state
        super().__init__(how_it_ended(job, state) if message is None else message)


def how_it_ended(job: Job, state: str) -> str:
    """`job 7 (train) failed (exit 3): ValueError: ...`: how the job ended (`state`), and the
    line of its stderr that says why, read from the daemon."""
    info = job.info()
    said = {"exit": f"exit {info.get('exit_code')}", "signal": f"signal {info.get('signal')}"}
    why = said.get(info.get("outcome") or "", info.get("message") or info.get("outcome"))
    text = f"job {job.id}" + (f" ({info['name']})" if info.get("name") else "") + f" {state}"
    text += f" ({why})" if why and why != state else ""
    # (stopped by gpuherd, a kill or --timeout is why: not its stderr's "Terminated")
    read = 0 if info.get("outcome") in GPUHERD_STOPS else STDERR_LINES_READ
    try:  # (a traceback's error, which a deep one has many lines above its end)
        why_line = failure_line(job.logs("stderr", lines=read).splitlines()) if read else None
    except HerdError:
        why_line = None
    return text + (f": {why_line}" if why_line else "")
