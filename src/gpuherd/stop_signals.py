"""A stop's signals, and the note in the attempt's folder that its SIGTERM went.

A stop is committed to herd.db before its signals go (engine_stops.py), so a daemon killed in
between leaves a stored stop whose job never had its SIGTERM: the next daemon must send it, or
the job gets only the SIGKILL at the end of its grace, with no chance to save a checkpoint.
A daemon killed later in the grace, once the SIGTERM went, must not send a second one ("hurry,
skip the checkpoint" to some programs). herd.db cannot tell the two apart; the note can.

The note is written once the signal went (a Ray job's: once its actor took it, maybe after a
while the cluster was away): a crash in the instant between gives the job a second SIGTERM,
never none. It is a file of its own (not herd.db): no second commit per stop.
"""

from __future__ import annotations

import contextlib
import os
import time
from functools import partial
from pathlib import Path

from gpuherd.executors.base import Executor

SIGTERM_NOTE = "sigterm"
"""In the attempt's folder, once the attempt had its stop's SIGTERM (its time: the file's)."""
STOP_HOLD = "GPUHERD_TEST_STOP_HOLD"
"""A test knob, not for users: a file the daemon creates once it has handled a stop and before
that stop is committed; it then waits (30 s at most) until the file is gone, so a test can kill
it in between (tests/reliability/test_kill_crash.py). Read at each stop: a daemon forked from
the tests' fork server imported this module before the test set it."""
SIGTERM_HOLD = "GPUHERD_TEST_SIGTERM_HOLD"
"""A test knob, not for users: as STOP_HOLD, once the stop is committed and before its SIGTERM
goes (tests/integration/test_sigterm_after_a_crash.py)."""


def terminate(executor: Executor, pid: int, folder: Path, grace: float, begun: bool) -> None:
    """Executor.terminate, and the note that the SIGTERM went (`begun`: it went before, sent by
    this daemon or an earlier one; only the SIGKILL is armed)."""
    if begun:
        executor.terminate(pid, grace, begun=True)
        return
    hold_for_test(SIGTERM_HOLD)
    executor.terminate(pid, grace, sent=partial(_note_sigterm, folder))


def _note_sigterm(folder: Path) -> None:
    # Not a file of the job's: a planted link is not followed, a folder gone is no error (a
    # crash then gives the job a second SIGTERM).
    with contextlib.suppress(OSError):
        flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
        os.close(os.open(folder / SIGTERM_NOTE, flags, 0o644))


def sigterm_sent(folder: Path) -> bool:
    """Whether the attempt in `folder` had its stop's SIGTERM (a restarted daemon asks)."""
    return os.path.lexists(folder / SIGTERM_NOTE)


def hold_for_test(knob: str) -> None:
    """The wait a test asked for through `knob` (STOP_HOLD, SIGTERM_HOLD), where it did."""
    if not (mark := os.environ.get(knob)):
        return
    Path(mark).touch()
    until = time.monotonic() + 30
    while os.path.exists(mark) and time.monotonic() < until:
        time.sleep(0.01)
