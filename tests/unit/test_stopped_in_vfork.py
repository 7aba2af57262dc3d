"""A job's group SIGSTOPped while its shell vforks a command (dash does, for each one): the
child is stopped before its exec, and the shell waits for it in state D, not T. A restart
took such a job for running (not stopped) and left it stopped for ever, holding its GPUs,
where it resumes one found stopped though herd.db says it runs (engine_recovery.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest

from conftest import wait_for
from gpuherd.executors.local_escaped import stopped

Start = Callable[[str], "subprocess.Popen[bytes]"]

# A shell's vfork, made plain: the child stops itself before it could exec.
VFORK_THEN_STOP = """
import ctypes, signal
libc = ctypes.CDLL(None, use_errno=True)
if libc.vfork() == 0:
    getattr(libc, "raise")(signal.SIGSTOP)
    libc._exit(0)
"""


def state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rpartition(")")[2].split()[0]


def first_child(pid: int) -> int:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        children = f.read().split()
    return int(children[0]) if children else 0


@pytest.fixture
def start() -> Iterator[Start]:
    """Python code run in a session of its own, killed with its group at the end."""
    procs: list[subprocess.Popen[bytes]] = []

    def run(code: str) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
        procs.append(proc)
        return proc

    yield run
    for proc in procs:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_a_shell_waiting_in_vfork_for_a_stopped_child_is_stopped(start: Start) -> None:
    shell = start(VFORK_THEN_STOP)
    child = wait_for(lambda: first_child(shell.pid), what="the vfork child")
    wait_for(lambda: state(child) == "T", what="the child to stop")
    assert state(shell.pid) == "D"  # (what /proc says of the shell: not T)
    assert stopped(shell.pid)


def test_a_sleeping_process_is_not_stopped_and_a_stopped_one_is(start: Start) -> None:
    proc = start("import time; time.sleep(100)")
    wait_for(lambda: state(proc.pid) == "S", what="the process to sleep")
    assert not stopped(proc.pid)
    os.kill(proc.pid, signal.SIGSTOP)
    wait_for(lambda: state(proc.pid) == "T", what="the stop")
    assert stopped(proc.pid)
