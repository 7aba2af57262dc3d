"""What a task's script sees, and says, as its job loads it (worker.load_target).

The job loads the script as multiprocessing's spawn loads the main script in a child, and
spawn gives the child the parent's sys.argv: so the job's sys.argv is the script's path and
the arguments it was submitted with (tasks_script_args.py put them on the job's command line,
`--script-args JSON`, or in a file, `--script-args-file FILE`). It was the worker's own, and a
script that parses its arguments at its top level failed in every job (`error: unrecognized
arguments: /home/me/demo.py:train --params {...}`).

A script (or module) whose top level exits as it loads (argparse's error, `sys.exit("no
GPU")`) fails the job with one line saying so, after what it wrote: argparse's usage text
alone was the job's failure, naming no task and no reason the script ran again.

Standard library only, as worker.py: it runs before the user's code.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from gpuherd import own_files

SHOWN_MAX = 300
"""The most characters of sys.argv, and of the last line written, the line of an exit shows."""


class ScriptError(Exception):
    """The script's arguments cannot be read, or its top level exited: one line says why."""


def script_args(inline: str | None, file: str | None) -> list[str]:
    """The arguments the task's script was submitted with (none if neither is given)."""
    text = inline
    if file is not None:
        try:  # (its JSON decides what the script parses: a file only this user could write)
            text = own_files.read_own_file(file).decode()
        except own_files.NotYourOwnFile as exc:
            raise ScriptError(f"refusing the script's arguments: {exc}") from None
        except OSError as exc:
            raise ScriptError(
                f"cannot read the script's arguments {file}: {exc.strerror or exc} (the home's "
                "task-params/ keeps them for the task's jobs); submit the task again"
            ) from None
    if text is None:
        return []
    try:
        args = json.loads(text)
    except ValueError as exc:
        raise ScriptError(f"the script's arguments are not valid JSON: {exc}") from None
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ScriptError("the script's arguments must be a JSON list of strings")
    return args


@contextmanager
def exit_said(where: str, qualname: str, script: bool) -> Iterator[None]:
    """Load the task's module in this block: a SystemExit from its top level is a
    ScriptError naming it, the exit, the last line it wrote on stderr before (argparse's
    error), and for a script the sys.argv it ran with."""
    seen = _LastLine(sys.stderr)
    sys.stderr = seen  # (it writes through to the stream)
    try:
        yield
    except SystemExit as exc:
        called = "sys.exit()" if exc.code is None else f"sys.exit({exc.code!r})"
        after = f", after writing {_cut(repr(seen.last))}" if seen.last else ""
        how = "imported it"
        if script:
            argv = _cut(repr(sys.argv))
            how = f"loaded it with sys.argv {argv} (the arguments it was submitted with)"
        raise ScriptError(
            f"{where} exited ({called}{after}) as the job {how} to find {qualname}: its top "
            "level runs again in every job of its tasks; put what may exit under "
            '`if __name__ == "__main__":`'
        ) from None
    finally:
        if sys.stderr is seen:  # (unless the script put a stream of its own there)
            sys.stderr = seen.stream


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN_MAX else text[: SHOWN_MAX - 3] + "..."


class _LastLine:
    """sys.stderr as it was, remembering the last line written through it that is not blank."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.last = ""

    def write(self, text: str) -> int:
        if lines := [line.strip() for line in str(text).splitlines() if line.strip()]:
            self.last = lines[-1]
        written: int = self.stream.write(text)
        return written

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding...
        return getattr(self.stream, name)


__all__ = ["ScriptError", "exit_said", "script_args"]
