"""The number of a job's next attempt: past every attempt folder a run of it left on disk.

herd.db restored from an older backup may say a job is queued at attempt 0 (or k) while
attempt 1 (k+1) ran since and ended: its folder holds that run's logs and process file, and
starting attempt 1 again there would wipe them, or append a second run to them. A new
attempt is numbered past the highest attempt folder of the job instead, and its start event
says which numbers it skipped, and why (docs/reliability.md, section 24).

One `access` per start, on the folder the next attempt would use: only where it exists is
it read, and the job's folder listed.
"""

from __future__ import annotations

import logging
import os

from gpuherd import jobfiles
from gpuherd.core.model import Job
from gpuherd.executors.base import Executor
from gpuherd.layout import Layout

log = logging.getLogger("gpuherd.engine")

PREFIX = "attempt-"


def next_number(layout: Layout, executor: Executor, job: Job) -> tuple[int, str, str | None]:
    """The job's next attempt: (its number, its folder, why it skips numbers or None)."""
    number = job.attempt + 1
    folder = str(layout.attempt_dir(job, number))  # as the engine recorded it before
    # `gpuherd run` starts from a fresh database in an earlier run's output by design: its
    # folders are replaced (jobfiles.prepare). os.access: no exception for a missing folder.
    if layout.first_attempt_in_job_dir or not os.access(folder, os.F_OK):
        return number, folder, None
    if not ran_there(executor, folder, job.id):
        return number, folder, None  # see ran_there: such a folder is used again, as before
    last = max(number, highest(os.path.dirname(folder)))
    skipped = (
        f"attempt {number}'s folder exists (a run herd.db does not know)"
        if last == number
        else f"attempt folders {number}-{last} exist (runs herd.db does not know)"
    )
    why = f"{skipped}: this is attempt {last + 1}"
    log.warning("job %d: %s", job.id, why)
    return last + 1, str(layout.attempt_dir(job, last + 1)), why


def ran_there(executor: Executor, folder: str, job_id: int) -> bool:
    """The folder holds a run of this job: its attempt.json names the job (written a second
    after a start, and at the end), or, without one, an exit status is recorded there.

    Used again, as before: another job's folder (a sweep point run again by a new job: the
    old run's files are replaced; those of one herd.db does not know that ended there are
    moved aside first, unknown_ended.set_aside), and one where nothing ran (a daemon stopped between
    recording a start and spawning it; a Ray node that left before the start)."""
    info = jobfiles.attempt_info(folder)
    if info is None or "id" not in info:
        return executor.recorded_exit(folder) is not None
    return bool(info["id"] == job_id)


def highest(job_folder: str) -> int:
    """The highest N of the `attempt-N` entries in a job's folder (0: none). Of any kind:
    where one is, a folder cannot be made."""
    try:
        with os.scandir(job_folder) as entries:
            numbers = [
                int(number)
                for entry in entries
                if (number := entry.name.removeprefix(PREFIX)) != entry.name
                and number.isascii()
                and number.isdigit()
            ]
    except OSError:
        return 0
    return max(numbers, default=0)
