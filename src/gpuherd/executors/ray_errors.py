"""What Ray says when a job's actor dies, as one line a user can act on (the attempt's
stderr and the daemon's log get it)."""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_ERROR_LINE = re.compile(r"^[A-Za-z_.]*(Error|Exception): .+")
MISSING_GPUHERD = (
    "gpuherd is not installed on that node: install the same gpuherd version, with its "
    "[ray] extra, on every node of the cluster (docs/cluster.md)"
)


def actor_died_note(exc: BaseException) -> str:
    """The line a lost attempt's stderr gets: why Ray says its actor died, and what to do."""
    lines = [_ANSI.sub("", line).strip() for line in str(exc).splitlines()]
    errors = [line for line in lines if _ERROR_LINE.match(line)]
    reason = errors[-1] if errors else first_line(exc)
    if "No module named 'gpuherd" in reason:
        reason += f"; {MISSING_GPUHERD}"
    return f"gpuherd: the job's Ray actor ended without an exit status: {reason[:500]}\n"


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
