"""The one line that says why a job failed, from the end of its stderr (pure).

A task's worker says it in a line of its own (TASK_RAISED, or SYS_EXIT_NOTE below the task's
last words): it caught the exception, so its line names the one that ended the task, not one
the task logged and went on from, nor one Python printed as it exited after it (`Exception
ignored in: <function Conn.__del__ ...>` and its traceback). Anything else (a command, a
worker killed before it could say it) is read from the end: the error a Python traceback ends
with (`ValueError: loss diverged`), an exception group's too, not whatever was written after
it: an atexit hook's line (wandb's `wandb: Find logs at: ...`), the second line of a message
of many (a state_dict's `Missing key(s) ...`, its error's type lost), an exception ignored as
Python exits.
"""

from __future__ import annotations

from collections.abc import Sequence

TRACEBACK = "Traceback (most recent call last):"
GROUP_TRACEBACK = "+ Exception Group Traceback (most recent call last):"
"""An exception group's header: every line of its traceback, the group's error among them,
is drawn in a box below it (`  | ExceptionGroup: 2 workers failed (2 sub-exceptions)`)."""
IGNORED = "Exception ignored "
"""How Python begins what it prints of an exception it could not raise (a `__del__`'s, an
atexit flush's: `Exception ignored in: ...`), with the traceback after it: never why the
process failed."""
SYS_EXIT_NOTE = "gpuherd worker: the task called sys.exit("
"""How the line a task's job writes last when the task called sys.exit(N) begins
(worker_endings.py): the task's own last words, above it, say more of why."""
TASK_RAISED = "gpuherd worker: the task raised "
"""How the line the worker writes below the traceback of the exception that ended the task
begins (worker.py): the error line of that exception follows."""


def failure_line(lines: Sequence[str]) -> str | None:
    """Why the job failed, from `lines` (the end of its stderr): the error the worker's line
    names, or the task's last line above its sys.exit line; else the first line of the error
    the last traceback ends with, else the last line that is not blank; None when there is
    none. What Python printed of exceptions it ignored never stands for it."""
    written = [line.rstrip() for line in lines if line.strip()]
    for i in range(len(written) - 1, -1, -1):  # (the worker's last word; after it, exit noise)
        if written[i].startswith(TASK_RAISED):
            return written[i][len(TASK_RAISED) :].strip() or written[i]
        if written[i].startswith(SYS_EXIT_NOTE):
            # ("sys.exit(3)" alone, when the task wrote nothing: that much, then)
            return written[i - 1].strip() if i else written[i]
    written = _without_ignored(written)
    headers = [i for i, line in enumerate(written) if line.endswith(TRACEBACK)]
    if headers:  # (endswith: a progress bar not ended by a newline can start its line)
        found = _error_of(written, headers[-1])
        if found is not None:
            return found[1]
    return written[-1].strip() if written else None


def _error_of(lines: list[str], header: int) -> tuple[int, str] | None:
    """Where the error the traceback headed at `header` ends with is, and its line: the first
    line under it that is not indented (its frames and their code are), in an exception
    group's box the first such line in it (`  | ExceptionGroup: ...`); None if cut off."""
    head, margin = lines[header], ""
    if head.endswith(GROUP_TRACEBACK):
        before = head[: -len(GROUP_TRACEBACK)]
        margin = " " * (len(before) - len(before.rstrip(" "))) + "| "
    for i in range(header + 1, len(lines)):
        if not lines[i].startswith(margin):
            continue
        rest = lines[i][len(margin) :]
        if rest and not rest[0].isspace():
            return i, rest
    return None


def _without_ignored(lines: list[str]) -> list[str]:
    """`lines` without what Python printed of each exception it ignored: its `Exception
    ignored in: ...` line, the traceback under it if any, and the error that ends it."""
    kept: list[str] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith(IGNORED):
            kept.append(lines[i])
            i += 1
            continue
        i += 1  # its error next, or a traceback ending with it
        if i < len(lines) and lines[i].endswith(TRACEBACK):
            found = _error_of(lines, i)
            i = len(lines) if found is None else found[0]
        i += 1
    return kept
