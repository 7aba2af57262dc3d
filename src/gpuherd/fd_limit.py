"""The open-file limit: raised to its hard limit in the daemon (and `gpuherd run`), left as
it was in their jobs.

The daemon holds a pidfd per running job, a socket per `log -f` follower and dashboard stream:
the soft RLIMIT_NOFILE a login gives (often 1024) runs out with a few hundred of them. Its jobs
must not inherit the raised limit: some programs misbehave under a huge one (they close every
fd up to it, or size a table by it). posix_spawn cannot set a limit, so the job's own shell
sets it back with its `ulimit` builtin (no fork or exec: ~0.5 us a job under dash), and only
when it was raised."""

from __future__ import annotations

import resource

_original_soft: int | None = None
"""The soft limit this process started with, once raised; None while it is not."""


def raise_fd_limit() -> None:
    """Raise this process's soft open-file limit to its hard limit, at its start."""
    global _original_soft
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or (hard != resource.RLIM_INFINITY and soft >= hard):
        return
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError):
        return  # (a hard limit the kernel refuses as a soft one): the process works as before
    if _original_soft is None:
        _original_soft = soft


def restore_in_shell() -> str:
    """The line a job's (or hook's) shell script starts with: the soft limit set back to the
    one this process was started with. Empty when it was not raised."""
    return "" if _original_soft is None else f"ulimit -S -n {_original_soft}\n"
