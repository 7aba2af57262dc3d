"""The one line for an OSError that ended a command (main.py): mostly its output failing
(`> /dev/full`, a full disk), and then what the command had done before it failed.

`gpuherd submit -q -- true > /dev/full` queued the job, then could not print its id, and said
only "No space left on device (writing the output)", exit 1: a script that retries on
failure queued it twice. The line now says the jobs were queued all the same, by id (each
command that queues notes them as the daemon answers: note_queued).
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuherd.core.idspec import said_ids
from gpuherd.paths import folder_gone

_queued: list[int] = []
"""The jobs this command queued (note_queued): said should its output fail after."""


def note_queued(ids: Sequence[int]) -> None:
    """The daemon queued `ids` for this command (`submit`, `sweep`): said if its output fails."""
    _queued[:] = ids


def failed_output(exc: OSError) -> str:
    """What failed (the file named, else the output), and the jobs queued before it did."""
    where = f" ({exc.filename})" if exc.filename else " (writing the output)"
    # (os.getcwd(), or a relative path made absolute, in a folder removed since: no name)
    gone = folder_gone() if exc.filename is None else None
    said = gone or f"{exc.strerror or exc}{where}"
    if not _queued:
        return said
    queued = f"job {_queued[0]} was" if len(_queued) == 1 else f"jobs {said_ids(_queued)} were"
    return f"{said}: {queued} queued all the same"
