"""A job whose shell a signal killed (the SIGKILL at the end of a stop's grace, a `kill -9`
of its group): the shell did not wait for its command, whose use its rusage lacks, so its host
usage is not measured (None), not a near-zero CPU time and a peak "too small to measure". A
command that dies of a signal itself is waited for by its shell: measured."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

from gpuherd.executors.base import ExitStatus, LaunchRequest
from gpuherd.executors.local import LocalExecutor

BURN = "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"
"""About 0.1 s of CPU in a POSIX sh."""


async def status_of(tmp_path: Path, command: str, kill: str = "") -> ExitStatus:
    """How `command` ended: by itself, or (once it printed `ready`) by a stop whose grace
    runs out (`kill="stop"`) or a `kill -9` of its group (`kill="-9"`)."""
    folder = tmp_path / "attempt-1"
    folder.mkdir(parents=True)
    key = f"usage{os.getpid()}:7:1"
    env = {**os.environ, "GPUHERD_ATTEMPT_KEY": key}
    executor = LocalExecutor()
    pid = executor.launch(LaunchRequest(7, 1, command, str(tmp_path), env, str(folder)))
    ended: asyncio.Future[ExitStatus] = asyncio.get_running_loop().create_future()
    executor.watch(pid, str(folder), key, ended.set_result)
    deadline, log = time.monotonic() + 10, folder / "stdout.log"
    while kill and not (log.exists() and "ready" in log.read_text()):
        assert time.monotonic() < deadline, "the job did not start"
        await asyncio.sleep(0.01)
    if kill == "stop":
        executor.terminate(pid, grace=0.2)
    elif kill:
        os.killpg(pid, signal.SIGKILL)
    status = await asyncio.wait_for(ended, 10)
    executor.close()
    return status


def test_a_shell_killed_while_it_waits_for_its_command_is_not_measured(tmp_path: Path) -> None:
    # The command (a second sh, the shell's child) burns CPU then sleeps, deaf to SIGTERM.
    command = f"trap '' TERM; sh -c '{BURN}; echo ready; sleep 100'"
    status = asyncio.run(status_of(tmp_path / "stopped", command, kill="stop"))
    assert status.signal == signal.SIGKILL
    assert status.usage is None, status.usage  # (was: CPU 0.0s, peak too small to measure)
    command = f"sh -c '{BURN}; echo ready; sleep 100'"
    status = asyncio.run(status_of(tmp_path / "kill9", command, kill="-9"))
    assert status.signal == signal.SIGKILL and status.usage is None, status.usage


def test_a_command_killed_by_a_signal_its_shell_waited_for_is_measured(tmp_path: Path) -> None:
    status = asyncio.run(status_of(tmp_path, f"sh -c '{BURN}; kill -9 $$'"))
    assert status.signal == signal.SIGKILL  # (the shell's `exit 137`, read as such)
    assert status.usage is not None and status.usage.cpu_time >= 0.05, status.usage
