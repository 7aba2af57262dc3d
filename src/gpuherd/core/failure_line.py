"""The one line that says why a job failed, from the end of its stderr (pure).

The error a Python traceback ends with (`ValueError: loss diverged`), not whatever was
written after it: an atexit hook's line (wandb's `wandb: Find logs at: ...`), or the second
line of a message of many (a state_dict's `Missing key(s) ...`, its error's type lost).
"""

from __future__ import annotations

from collections.abc import Sequence

TRACEBACK = "Traceback (most recent call last):"
SYS_EXIT_NOTE = "gpuherd worker: the task called sys.exit("
"""How the line a task's job writes last when the task called sys.exit(N) begins
(worker_endings.py): the task's own last words, above it, say more of why."""


def failure_line(lines: Sequence[str]) -> str | None:
    """The first line of the error the last traceback in `lines` ends with, else the last
    line that is not blank (above the worker's line saying the task called sys.exit, if the
    task wrote any); None when there is none."""
    written = [line.rstrip() for line in lines if line.strip()]
    if len(written) > 1 and written[-1].startswith(SYS_EXIT_NOTE):
        written.pop()  # ("sys.exit(3)" alone, when the task wrote nothing: that much, then)
    headers = [i for i, line in enumerate(written) if line.endswith(TRACEBACK)]
    if headers:  # (endswith: a progress bar not ended by a newline can start its line)
        # Its frames and their code are indented; the error is the first line that is not.
        after = written[headers[-1] + 1 :]
        if errors := [line for line in after if not line[0].isspace()]:
            return errors[0]
    return written[-1].strip() if written else None
