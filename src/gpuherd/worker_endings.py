"""How a task's call ends, in its job (worker.py): a coroutine it returned (an `async def`
task, or a function that hands one back) is run to its value; a generator is refused, its
values would be lost; and `sys.exit(N)` ends the job with status N, said in one line.

Standard library only, as worker.py (asyncio is imported only for an awaitable returned).
"""

from __future__ import annotations

import inspect
import sys
import traceback
from typing import Any

from gpuherd.core.failure_line import TASK_RAISED


class ReturnedGenerator(Exception):
    """The task returned a generator: what it would yield is no return value a job keeps."""


def settled(result: Any, name: str) -> Any:
    """The value a call ends with: an awaitable it returned is run (`asyncio.run`, as a
    script runs its `async def main()`) until it is a value; a generator (sync or async) is
    ReturnedGenerator, naming `name`. It was stored as its text, `<coroutine object ...>`,
    the job succeeded, and its body never ran."""
    while inspect.isawaitable(result):  # (a coroutine may return another: run that too)
        import asyncio

        result = asyncio.run(_awaited(result))
    if inspect.isgenerator(result) or inspect.isasyncgen(result):
        kind = "an async generator" if inspect.isasyncgen(result) else "a generator"
        raise ReturnedGenerator(
            f"{name} returned {kind}: a job keeps a return value, and a generator's values "
            "come only as it is iterated (nothing iterated it); return a list instead "
            "(return list(...))"
        )
    return result


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def exit_status(code: Any) -> int:
    """The job's exit status for the task's `sys.exit(code)`, with one line on stderr saying
    it (the job failed without a word of why: `job 7 failed (exit 3)`). 0 (or None) is a
    success without a return value: `job.result()` is None. A status no process can exit
    with (256 was 0 to the shell: a success) is 1. Text is written as Python writes it, and
    is 1, as Python's own exit with it is, the line saying it below (JobFailed names the text
    above it, not a traceback the task logged before: core/failure_line.py)."""
    called = "sys.exit()" if code is None else f"sys.exit({code!r})"
    status = 0 if code is None else code
    if not isinstance(status, int):  # (what Python itself does with text, or any object)
        try:
            print(status, file=sys.stderr)
        except Exception:
            print(f"<{type(status).__qualname__} object>", file=sys.stderr)
        _say(f"the task called {called}")
        return 1
    if status == 0:
        _say(
            f"the task called {called} before it returned: the job succeeds, with no return "
            "value (job.result() is None)"
        )
        return 0
    if not 0 < status <= 255:
        _say(f"the task called {called}, which no process can exit with (0 to 255): exit 1")
        return 1
    # (JobFailed says it, `job 7 (train) failed (exit 3): gpuherd worker: the task called
    # sys.exit(3)`, unless the task wrote a line of its own above it: core/failure_line.py)
    _say(f"the task called {called}")
    return int(status)


def raised_line(exc: BaseException) -> str:
    """The line the worker writes below the traceback of the exception that ended the task:
    its error line (`ValueError: loss diverged`; an exception group's, `ExceptionGroup: 2
    workers failed (2 sub-exceptions)`), which JobFailed names (core/failure_line.py). Read
    from stderr's end, that was a traceback printed later: an exception ignored as Python
    exited, or a box's border."""
    try:
        shown = "".join(traceback.format_exception_only(exc)).splitlines()
    except Exception:  # (its __str__ raised: format_exception_only says so, or this)
        shown = []
    # (a SyntaxError's file, code and caret come first, indented)
    error = next((line for line in shown if line and not line[0].isspace()), None)
    return f"{TASK_RAISED}{error or type(exc).__qualname__}"


def _say(text: str) -> None:
    print(f"gpuherd worker: {text}", file=sys.stderr)
