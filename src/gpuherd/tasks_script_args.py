"""The arguments the script a task is defined in was run with, kept for the task's jobs.

A job loads the task's script as multiprocessing's spawn loads the main script in a child,
which sees the parent's sys.argv; so the job sets sys.argv to the script and these arguments
before it loads it (worker_script.py). A script that parses its arguments at its top level
(`args = parser.parse_args()` above its tasks, which read `args.lr`) failed in every job, the
worker's own arguments given to its parser.

They are the submitter's own command line, as a CLI job's command is: kept as the job's, on
its command line (`--script-args '["--lr", "0.5"]'`, what `gpuherd ls` shows). Longer ones (a
shell glob of many files) go in a file under the home's task-params/ named by its content, so
that a sweep of 10,000 points, or every submit run from one command line, stores them once
(`--script-args-file FILE`); it stays there for the jobs' retries, as a sweep's pickled task
does. A script run without arguments adds nothing: its jobs' command lines are as they were.

Only a script's task: a module's is imported by the job, not run as the main script, and the
submitter's arguments are not its own (a notebook's name its kernel's file, which would make
each kernel's sweep of a task "another command" than the one before).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from gpuherd import paths
from gpuherd.errors import HerdError

INLINE_MAX = 1024
"""The most bytes (as JSON) kept on each job's command line; more go in a file, once."""


def script_args(home: Path) -> tuple[list[str], Path | None]:
    """The worker's arguments that give a script's task this process's arguments (none when
    it has none), and the file made for them now, to remove if the submission fails."""
    args = list(getattr(sys, "argv", None) or [])[1:]
    if not args:
        return [], None
    text = json.dumps(args)  # (ASCII: an argument's undecodable bytes as \\udcXX escapes)
    if len(text) <= INLINE_MAX:
        return ["--script-args", text], None
    folder = paths.task_params(home)
    path = folder / f"script-args-{hashlib.sha256(text.encode()).hexdigest()[:32]}.json"
    if path.is_file():  # the same command line: the same file
        return ["--script-args-file", str(path)], None
    write_task_text(path, text, "the script's arguments", "too many for each job's")
    return ["--script-args-file", str(path)], path


def write_task_text(path: Path, text: str, what: str, why: str) -> None:
    """Write `text` to `path` under the home's task-params/ (readable by this user alone);
    HerdError naming `what`, and `why` it is not on the job's command line, if it cannot."""
    try:
        paths.write_task_file(path, text.encode())
    except OSError as exc:
        raise HerdError(
            f"cannot write {what} ({len(text)} bytes as JSON, {why} command line) under "
            f"{path.parent}: {exc.strerror or exc}"
        ) from None


__all__ = ["INLINE_MAX", "script_args"]
