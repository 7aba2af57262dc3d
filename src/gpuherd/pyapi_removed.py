"""What `Job.result()` (pyapi.py) raises for a job that did not succeed: JobFailed, or for a
job removed (`gpuherd rm`, `clean`) before or while it was waited for, JobRemoved.

A job removed while `result()` waited raised `NotFound` (`no job 7`) from the wait's next
ask, or `JobFailed` with `cancelled` (a queued one: its removal cancels it first) whose making
raised `NotFound` in turn, as it reads the job. Now the wait answers it `removed`
(wait_removed.py), and `result()` raises JobRemoved, which is both:

- a JobFailed (`state` "removed"): the job did not succeed, and `except gpuherd.JobFailed`
  around `result()`, the way the docs catch a job that did not, catches it too;
- a NotFound: the job is gone, as every call on its handle now says (`job.info()`), and
  code that caught the NotFound a removal raised before still catches it.

    try:
        job.result()
    except gpuherd.JobFailed as failed:
        print(failed.job.id, failed.state)    # 7 removed
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuherd.errors import NotFound
from gpuherd.pyapi_failed import JobFailed
from gpuherd.wait_removed import REMOVED, REMOVED_MESSAGE

if TYPE_CHECKING:
    from gpuherd.pyapi import Job


class JobRemoved(JobFailed, NotFound):
    """Job.result() of a job removed before it was seen to end: `job`, and `state`
    "removed"."""

    def __init__(self, job: Job) -> None:
        self.job, self.state = job, REMOVED
        # Not JobFailed's __init__: it reads how the job ended from the daemon, which knows
        # the job no longer (NotFound, raised in place of this).
        super(JobFailed, self).__init__(f"job {job.id}: {REMOVED_MESSAGE}, so it has no result")


def check_succeeded(job: Job, state: str) -> None:
    """Raise JobRemoved, or JobFailed, unless the wait for `job` answered `state` succeeded."""
    if state == REMOVED:
        raise JobRemoved(job)
    if state != "succeeded":
        raise JobFailed(job, state)
