"""failure_line: the error a job's last traceback ends with, not the line written after it."""

from __future__ import annotations

from gpuherd.core.failure_line import failure_line

FRAMES = [
    "Traceback (most recent call last):",
    '  File "/home/me/train.py", line 8, in train',
    '    raise RuntimeError("Error(s) in loading state_dict for Net:\\n\\tMissing key(s)")',
]


def test_the_error_not_an_atexit_line_after_it() -> None:
    lines = [*FRAMES, "ValueError: loss diverged", "wandb: Find logs at: ./wandb/run-1/logs", ""]
    assert failure_line(lines) == "ValueError: loss diverged"


def test_the_first_line_of_a_message_of_many() -> None:
    lines = [*FRAMES, "RuntimeError: Error(s) in loading state_dict for Net:", "\tMissing key(s)"]
    assert failure_line(lines) == "RuntimeError: Error(s) in loading state_dict for Net:"
    lines = [*FRAMES, "MyError: line one", "line two: the reason"]
    assert failure_line(lines) == "MyError: line one"


def test_the_last_of_chained_tracebacks() -> None:
    first = [*FRAMES, "ZeroDivisionError: division by zero", ""]
    cause = "The above exception was the direct cause of the following exception:"
    lines = [*first, cause, "", *FRAMES, "RuntimeError: wrapper"]
    assert failure_line(lines) == "RuntimeError: wrapper"


def test_a_traceback_after_an_unended_progress_bar() -> None:
    bar = " 50%|█████     | 5/10 [00:01<00:01, 4.99it/s]"
    lines = [bar + FRAMES[0], *FRAMES[1:], "KeyboardInterrupt"]
    assert failure_line(lines) == "KeyboardInterrupt"


def test_no_traceback_the_last_line_written() -> None:
    assert failure_line(["starting", "  cannot open data/train.csv  ", "", " "]) == (
        "cannot open data/train.csv"
    )
    assert failure_line(["", "  "]) is None
    assert failure_line([]) is None
    # A traceback cut above its error (its end not in the lines): the last line, as before.
    assert failure_line(FRAMES) == FRAMES[-1].strip()


def test_the_tasks_own_line_above_the_workers_sys_exit_line() -> None:
    # The worker says that a task called sys.exit(3) on the last line: the task's own line
    # above it says more of why; without one, that line is all there is.
    said = "gpuherd worker: the task called sys.exit(3)"
    assert failure_line(["no data in data/train.csv", said]) == "no data in data/train.csv"
    assert failure_line([*FRAMES, "OSError: disk full", said]) == "OSError: disk full"
    assert failure_line(["", said, ""]) == said
