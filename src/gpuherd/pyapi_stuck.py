"""What the Python API's waits (`herd.wait`, `job.wait()`, `job.result()`, `sweep.wait()`,
`as_completed`) say of jobs that cannot end by themselves: the queue paused, a job paused or
held, a job waiting for a held or paused one. `gpuherd wait` says it on stderr; these waited in
silence, and a script whose queue was paused by accident sat for minutes with no hint.

Said as a `WaitWarning`, as the API says its other notes (SweepWarning, a daemon with other
GPUs: UserWarning): on stderr, at the caller's line, once per line and text (a loop of
waits, or a wait retried after a TimeoutError, says it once), and a script can silence it
(`warnings.simplefilter("ignore", gpuherd.WaitWarning)`) or catch it, which a print could
not be."""

from __future__ import annotations

from collections.abc import Sequence

from gpuherd.client import Client
from gpuherd.errors import HerdError
from gpuherd.pyapi_values import warn_at_caller
from gpuherd.stuck_jobs import why_stuck


class WaitWarning(UserWarning):
    """A wait's note that a job it waits for cannot end by itself (the queue is paused, the
    job is paused, or it waits for a held job), with what lets it run (`gpuherd resume`)."""


def warn_stuck(client: Client, ids: Sequence[int]) -> None:
    """Warn of the jobs among `ids` that wait for a resume or a release, or are held
    (stuck_jobs.py: one look per job for up to 20, else the paused and held ones' listing
    and the queue's state). A daemon that does not answer says nothing here: the wait
    itself says what became of it."""
    try:
        notes = why_stuck(client, ids, held=True)
    except HerdError:
        return
    for note in notes:
        warn_at_caller(note, WaitWarning)
