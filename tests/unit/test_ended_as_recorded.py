"""The end of a job the daemon spawned: its shell's exit line's moment (ended_as_recorded), not
the moment the daemon got to its exit, kept between its spawn and that moment. What the line
cannot tell (none written, another status, no plain file) leaves the moment seen. The daemon
stopped across a real job's end: tests/reliability/test_end_while_daemon_stopped.py."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from gpuherd.executors.base import ExitStatus
from gpuherd.executors.local_records import ended_as_recorded

SPAWNED = 1_000_000.0
REAPED = SPAWNED + 60.0
"""When the daemon got to the exit: a minute after the spawn, as after a long stop."""


def _seen(code: int | None = 0, signal: int | None = None) -> ExitStatus:
    return ExitStatus(exit_code=code, signal=signal, ended_at=REAPED)


def _process_file(folder: Path, text: str, written: float) -> None:
    (folder / "process").write_text(text)
    os.utime(folder / "process", (written, written))


@pytest.mark.parametrize(
    ("line", "seen"),
    [("exit 0", _seen(0)), ("exit 3", _seen(3)), ("exit 143", _seen(None, 15))],
)
def test_the_end_is_when_the_shell_wrote_its_exit_line(
    tmp_path: Path, line: str, seen: ExitStatus
) -> None:
    _process_file(tmp_path, f"pid 42\n{line}\n", SPAWNED + 1.0)
    ended = ended_as_recorded(seen, str(tmp_path), SPAWNED)
    assert ended.ended_at == SPAWNED + 1.0
    assert (ended.exit_code, ended.signal) == (seen.exit_code, seen.signal)


@pytest.mark.parametrize(("written", "kept"), [(SPAWNED - 5.0, SPAWNED), (REAPED + 5.0, REAPED)])
def test_a_line_written_out_of_the_run_is_kept_within_it(
    tmp_path: Path, written: float, kept: float
) -> None:
    """The clock set back or forward while the job ran: never ended before it was spawned,
    nor after the daemon saw it end."""
    _process_file(tmp_path, "pid 42\nexit 0\n", written)
    assert ended_as_recorded(_seen(0), str(tmp_path), SPAWNED).ended_at == kept


@pytest.mark.parametrize(
    ("text", "seen"),
    [
        ("pid 42\n", _seen(None, 9)),  # SIGKILLed: its shell could not write its end
        ("pid 42\n", _seen(0)),  # the shell replaced by its command (`exec prog`)
        ("pid 42\nexit 0\n", _seen(1)),  # a line the job wrote, not its shell's
    ],
)
def test_without_the_shells_line_of_that_status_the_moment_seen_stays(
    tmp_path: Path, text: str, seen: ExitStatus
) -> None:
    _process_file(tmp_path, text, SPAWNED + 1.0)
    assert ended_as_recorded(seen, str(tmp_path), SPAWNED) == seen


def test_no_file_a_link_or_a_fifo_in_its_place_leaves_the_moment_seen(tmp_path: Path) -> None:
    assert ended_as_recorded(_seen(), str(tmp_path), SPAWNED) == _seen()  # none
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("pid 42\nexit 0\n")
    (tmp_path / "process").symlink_to(elsewhere)
    assert ended_as_recorded(_seen(), str(tmp_path), SPAWNED) == _seen()
    (tmp_path / "process").unlink()
    os.mkfifo(tmp_path / "process")  # never opened for writing: a read would wait for ever
    answer: list[ExitStatus] = []
    reader = threading.Thread(
        target=lambda: answer.append(ended_as_recorded(_seen(), str(tmp_path), SPAWNED)),
        daemon=True,
    )
    reader.start()
    reader.join(10)
    assert answer == [_seen()]
