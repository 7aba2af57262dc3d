"""Jobs whose rows in herd.db cannot be read (a value gpuherd never writes: herd.db changed
by another program), each said once in the daemon's log.

One such row made every pass of the scheduler fail, and with it the whole queue: nobody's
job started until someone edited the database. Its job is set aside instead, and the others
go on. The daemon ticks often (every submission, every exit): the log says each job once,
with the way out (store_rows.job_from_row's words), and again only if its row changes to
another value that cannot be read either.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

log = logging.getLogger("gpuherd.engine")


class DamagedRows:
    """The jobs set aside for their rows, by id, with why (the StoreError's text)."""

    def __init__(self, fate: str) -> None:
        self.fate = fate
        """What setting a job aside means here (`not started until it is`), as said."""
        self.why: dict[int, str] = {}

    def __bool__(self) -> bool:
        return bool(self.why)

    def __contains__(self, job_id: object) -> bool:
        return job_id in self.why

    def note(self, job_id: int, why: str, fate: str | None = None) -> None:
        """Job `job_id`'s row cannot be read, for `why`: said once (per value), with what
        that means for the job (`fate`: this job's own, else self.fate)."""
        if self.why.get(job_id) != why:
            self.why[job_id] = why
            said = fate or self.fate
            log.warning("%s; job %d is set aside, %s; the other jobs go on", why, job_id, said)

    def mended(self, job_id: int) -> None:
        """Job `job_id`'s row reads again (set back by hand)."""
        if self.why.pop(job_id, None) is not None:
            log.info("job %d's row in herd.db reads again: it is no longer set aside", job_id)

    def forget(self, job_ids: set[int]) -> None:
        """Drop these jobs, said no more (removed, or no longer where they were set aside)."""
        for job_id in job_ids:
            self.why.pop(job_id, None)


def unlisted(found: Sequence[tuple[int, str]]) -> str | None:
    """The jobs a listing left out as their rows cannot be read (id, why), in one line with
    why and the way out (that of the first, for several); None if none was (`ls`, the
    Python API's jobs(), the dashboard's jobs page)."""
    if not found:
        return None
    if len(found) == 1:
        return f"{found[0][1]}; job {found[0][0]} is not listed"
    return (
        f"jobs {', '.join(str(job_id) for job_id, _ in found)} are not listed: their rows in"
        f" herd.db cannot be read (`gpuherd show ID` says why of each); {found[0][1]}"
    )
