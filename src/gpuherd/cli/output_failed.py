"""The one line for an OSError that ended a command (main.py): mostly its output failing
(`> /dev/full`, a full disk), and then what the command had done before it failed.

`gpuherd submit -q -- true > /dev/full` queued the job, then could not print its id, and said
only "No space left on device (writing the output)", exit 1: a script that retries on
failure queued it twice. The line now says the jobs were queued all the same, by id. Kept out
of main.py, which every command imports: this runs on the error path alone.
"""

from __future__ import annotations

import traceback
from types import TracebackType

from gpuherd.core.idspec import said_ids
from gpuherd.paths import folder_gone

QUEUEING = frozenset(
    {("gpuherd.cli.job_cmds", "submit"), ("gpuherd.cli.sweep_cmds", "submit_sweep")}
)
"""The commands that queue jobs (module, function): each names the daemon's answer `answer`,
which its frame holds once the daemon has queued them (a refusal raises before)."""


def failed_output(exc: OSError) -> str:
    """What failed (the file named, else the output), and the jobs queued before it did."""
    where = f" ({exc.filename})" if exc.filename else " (writing the output)"
    # (os.getcwd(), or a relative path made absolute, in a folder removed since: no name)
    gone = folder_gone() if exc.filename is None else None
    said = gone or f"{exc.strerror or exc}{where}"
    queued = queued_before(exc.__traceback__)
    return f"{said}: {queued} all the same" if queued else said


def queued_before(failure: TracebackType | None) -> str | None:
    """ "job 86 was queued" (or "jobs 86-90 were queued") when the failure came in a command
    that had queued them (QUEUEING); None otherwise. Read from the traceback's frames: the
    handler has nothing else, and no command is changed for it."""
    for frame, _ in traceback.walk_tb(failure):
        if (frame.f_globals.get("__name__"), frame.f_code.co_name) not in QUEUEING:
            continue
        answer = frame.f_locals.get("answer")
        ids = answer.get("ids") if isinstance(answer, dict) else None
        if isinstance(ids, list) and len(ids) == 1:
            return f"job {ids[0]} was queued"
        if isinstance(ids, list) and ids:
            return f"jobs {said_ids(ids)} were queued"
    return None
