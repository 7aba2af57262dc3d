"""The warning of a submit that a stopping daemon took (job_cmds.py, which has no room for it):
its jobs start after the next `daemon start`, and which stop it is.

The submit's answer says only that the daemon is stopping (`draining`), for every kind of
stop, and the warning named a drain whatever the stop: a submit during a `daemon stop --kill`
sent the user looking for a `--drain` nobody had started. The kind is asked of the daemon
(GET /daemon's `stopping`, as `daemon status` says it), only when it is stopping."""

from __future__ import annotations

from gpuherd.client import Client
from gpuherd.daemon_presence import answer_within
from gpuherd.errors import DaemonError
from gpuherd.typed_name import prefixed, typed_name

STOPS = {
    "drain": " (daemon stop --drain)",
    "kill": ", killing its running jobs (--kill)",
}
"""What the warning says of each kind of stop, after "the daemon is stopping"; a plain stop's
(running jobs go on) needs no word."""


def stopping_warning(client: Client, jobs: int) -> str:
    """`warning: the daemon is stopping (daemon stop --drain): this job starts after the next
    `gpuherd daemon start``, of the `jobs` submitted to the stopping daemon of `client`."""
    # Not waited for: a daemon gone since (its stop done) or silent leaves the kind unsaid.
    look = Client(client.home, timeout=answer_within(), waits_for_socket=False)
    try:
        mode = look.get("/daemon").get("stopping")
    except DaemonError:
        mode = None
    start = f"`{typed_name()} daemon start`"
    them = "this job starts" if jobs == 1 else "these jobs start"
    said = f"the daemon is stopping{STOPS.get(mode, '')}: {them} after the next {start}"
    return prefixed("warning", said)
