"""failure_line: why a job failed, when stderr's last traceback is not what failed it: one
Python printed as it exited (`Exception ignored in: ...`), one the task logged and went on
from, an exception group's box; and the worker's line naming the error (raised_line)."""

from __future__ import annotations

import traceback

from gpuherd.core.failure_line import failure_line
from gpuherd.worker_endings import raised_line

FRAMES = ["Traceback (most recent call last):", '  File "/home/me/train.py", line 8, in train']
IGNORED = [
    "Exception ignored in: <function Conn.__del__ at 0x7f3a2c1d5e40>",
    *FRAMES,
    "OSError: socket already closed",
]
LOGGED = ["ERROR:root:batch 3 skipped", *FRAMES, "ZeroDivisionError: division by zero"]
GROUP = [
    "  + Exception Group Traceback (most recent call last):",
    '  |   File "/home/me/train.py", line 3, in main',
    "  |     async with asyncio.TaskGroup() as tg:",
    "  | ExceptionGroup: 2 workers failed (2 sub-exceptions)",
    "  +-+---------------- 1 ----------------",
    "    | ValueError: a",
    "    +---------------- 2 ----------------",
    "    | TypeError: b",
    "    +------------------------------------",
]


def test_an_exception_ignored_as_python_exited_is_not_why() -> None:
    # Before: `OSError: socket already closed`, the __del__'s, for the task's ValueError.
    lines = [*FRAMES, "ValueError: loss diverged at step 7", *IGNORED, ""]
    assert failure_line(lines) == "ValueError: loss diverged at step 7"
    flushed = ["Exception ignored in: <_io.TextIOWrapper name='<stdout>'>", "BrokenPipeError: x"]
    assert failure_line(["cannot open data/train.csv", *flushed]) == "cannot open data/train.csv"


def test_an_exception_groups_own_line_not_its_box() -> None:
    # Before: `+------------------------------------`, the box's last border.
    assert failure_line(GROUP) == "ExceptionGroup: 2 workers failed (2 sub-exceptions)"
    assert failure_line([*GROUP, *IGNORED]) == GROUP[3].removeprefix("  | ")


def test_the_workers_line_names_the_error_whatever_was_printed_after_it() -> None:
    said = "gpuherd worker: the task raised ValueError: loss diverged at step 7"
    lines = [*LOGGED, *FRAMES, "ValueError: loss diverged at step 7", said, *IGNORED]
    assert failure_line(lines) == "ValueError: loss diverged at step 7"


def test_a_sys_exit_after_a_logged_traceback_names_the_tasks_own_line() -> None:
    # Before: the logged `ZeroDivisionError: division by zero`, handled and gone on from.
    said = "gpuherd worker: the task called sys.exit('fatal: dataset /data/x is empty')"
    lines = [*LOGGED, "fatal: dataset /data/x is empty", said, *IGNORED]
    assert failure_line(lines) == "fatal: dataset /data/x is empty"
    status = "gpuherd worker: the task called sys.exit(4)"
    assert failure_line([*LOGGED, "error: checkpoint corrupt", status]) == (
        "error: checkpoint corrupt"
    )


def test_raised_line_is_the_error_the_traceback_ends_with() -> None:
    group = ExceptionGroup("2 workers failed", [ValueError("a"), TypeError("b")])
    assert raised_line(group) == (
        "gpuherd worker: the task raised ExceptionGroup: 2 workers failed (2 sub-exceptions)"
    )
    many = RuntimeError("Error(s) in loading state_dict for Net:\n\tMissing key(s)")
    assert raised_line(many).endswith(
        " raised RuntimeError: Error(s) in loading state_dict for Net:"
    )
    try:
        compile("x = (", "model.py", "exec")
    except SyntaxError as exc:  # (its file, code and caret come first, indented)
        shown = traceback.format_exception_only(exc)[-1].strip()
        assert raised_line(exc) == f"gpuherd worker: the task raised {shown}"
        assert shown.startswith("SyntaxError: ")

    class Unprintable(Exception):
        def __str__(self) -> str:
            raise ValueError("no text")

    assert raised_line(Unprintable()).startswith("gpuherd worker: the task raised ")
    assert failure_line([raised_line(KeyboardInterrupt())]) == "KeyboardInterrupt"
