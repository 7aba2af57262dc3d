"""Waits on conditions, and the processes tests start and end (shared by every test: conftest.py
re-exports them)."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil


def load_stretch() -> float:
    """How much longer than a test says a wait for something that will happen may take now:
    1 up to a load average of twice the cores, then the load over that, at most 3. CI runs
    beside other suites on 2 cores (load 4-12, and up to 39 seen); a wait is a guard against
    a hang, not a measure of speed (benchmarks/ measures), so a loaded machine gets longer."""
    cores = os.cpu_count() or 1
    return min(3.0, max(1.0, os.getloadavg()[0] / (2 * cores)))


def wait_for(predicate: Callable[[], Any], timeout: float = 15.0, what: str = "condition") -> Any:
    """Poll `predicate` until it returns something truthy; fail the test after `timeout`
    (stretched on a loaded machine: load_stretch)."""
    stretch = load_stretch()
    deadline = time.monotonic() + timeout * stretch
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            waited = (
                f"{timeout * stretch:.0f}s (load {os.getloadavg()[0]:.1f})"
                if stretch > 1
                else f"{timeout}s"
            )
            raise AssertionError(f"timed out after {waited} waiting for {what}")
        time.sleep(0.02)


def wait_for_long_poll(process: psutil.Process, held: float = 2.0) -> None:
    """Until `process` (a `gpuherd wait`, a `submit --wait`) holds its long poll open: a
    connection to the daemon it has held for `held` seconds. Any connection did not do: the
    command's asks before its wait (the held jobs' listing, the submission) are connections
    too, and a daemon stopped during one was gone before the wait began (its "went away" note
    never came: 2 in 12 of test_restart's, at a load of 12)."""
    seen: dict[str, float] = {}

    def held_open() -> bool:
        now, sockets = time.monotonic(), set()
        for connection in process.net_connections(kind="unix"):
            with contextlib.suppress(OSError):  # (closed meanwhile)
                sockets.add(os.readlink(f"/proc/{process.pid}/fd/{connection.fd}"))
        for closed in set(seen) - sockets:
            del seen[closed]
        for socket_ in sockets:
            seen.setdefault(socket_, now)
        return any(now - since >= held for since in seen.values())

    wait_for(held_open, what="the wait's long poll")


def stays(predicate: Callable[[], Any], seconds: float = 0.5, what: str = "condition") -> None:
    """Check that `predicate` holds throughout a short window (for "nothing happens" claims).

    Use only where no event can tell that the thing did not happen; prefer a witness job.
    """
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert predicate(), f"{what} stopped holding within {seconds}s"
        time.sleep(0.05)


def exited(process: psutil.Process) -> bool:
    """Has `process` exited: gone, or a zombie (its files and locks are released)?

    A zombie counts: in a container the reaper (pid 1) may take seconds to reap it. But only
    once it is its last thread: a SIGKILLed daemon's main thread is shown a zombie while its
    other threads still exit, its files (its socket, which still took a connection) open
    until the last one has.
    """
    try:
        return process.status() == psutil.STATUS_ZOMBIE and process.num_threads() <= 1
    except psutil.NoSuchProcess:
        return True


def communicated(proc: subprocess.Popen[bytes], timeout: float = 30) -> tuple[bytes, bytes]:
    """`proc.communicate(timeout=timeout)`; a process still running then is killed, never left
    past the test, and TimeoutExpired raised."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise


def wait_dead(process: psutil.Process, timeout: float = 10.0) -> None:
    """Wait until `process` has exited (see `exited`)."""
    wait_for(lambda: exited(process), timeout, f"process {process.pid} to exit")


def shell_stopped(process: psutil.Process, procs: list[psutil.Process] | None = None) -> bool:
    """A job's shell stopped by a SIGSTOP to its group, or as good as: a shell that vforked
    (dash does, for each command) waits in the kernel (`disk-sleep`) until its child execs,
    and takes its own SIGSTOP only then; with that child stopped it runs nothing (about 1
    pause in 80 of a `while :; do sleep 0.05; done` job: CI failures, a test that asked for
    `stopped` alone). `procs`: where to look for that child (default: its children now)."""
    try:
        status = process.status()
        if status != psutil.STATUS_DISK_SLEEP:
            return status == psutil.STATUS_STOPPED
        children = process.children() if procs is None else procs
        return any(
            child.ppid() == process.pid and child.status() == psutil.STATUS_STOPPED
            for child in children
        )
    except psutil.Error:  # (gone meanwhile: looked at again at the next poll)
        return False


def gone(pid: int) -> bool:
    """Has `pid` exited (gone, or a zombie nobody reaped yet: see `exited`)?"""
    try:
        return exited(psutil.Process(pid))
    except psutil.NoSuchProcess:
        return True


def _proc_files(name: str) -> Iterator[tuple[int, bytes]]:
    """(pid, /proc/PID/NAME) of every process that can be read. Read directly: psutil parsed
    each process's whole environment into a dict (and made a Process of each) where these
    look for one word, in each test's cleanup, on a machine running the suite's hundreds of
    processes: ~3 times the CPU (28 against 10 ms a cleanup, 422 processes)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fd = os.open(f"/proc/{entry}/{name}", os.O_RDONLY)
            except OSError:  # (ended meanwhile)
                continue
            try:
                chunks = [os.read(fd, 1 << 16)]
                while len(chunks[-1]) == 1 << 16:  # (a long one: the rest)
                    chunks.append(os.read(fd, 1 << 16))
            except OSError:
                continue
            finally:
                os.close(fd)
            yield int(entry), b"".join(chunks)


def jobs_under(root: Path) -> list[int]:
    """Pids of the processes whose GPUHERD_JOB_DIR lies under `root` (starts with it)."""
    wanted = b"\0GPUHERD_JOB_DIR=" + os.fsencode(str(root))
    return [pid for pid, environ in _proc_files("environ") if wanted in b"\0" + environ]


def with_words(*words: str) -> list[int]:
    """Pids of the processes whose command line has each of `words` as one of its words."""
    wanted = [os.fsencode(word) for word in words]
    found = []
    for pid, cmdline in _proc_files("cmdline"):
        said = cmdline.split(b"\0")
        if all(word in said for word in wanted):
            found.append(pid)
    return found


PIDFD_SIGNAL_PROCESS_GROUP = 1 << 2
"""pidfd_send_signal's flag: the group the pidfd's process numbers (linux/pidfd.h; 6.9)."""


def pin(pid: int) -> int | None:
    """A pidfd of `pid` (None: gone). This machine's pid_max is 32,768 and the suite forks tens
    of thousands of processes, so a number seen even a second ago may be another test's
    process now: a kill by number once SIGKILLed two other workers' CLI calls at once (a
    teardown killing the pids its jobs had had). Signals go through a pidfd, which names
    the process it was opened on for good."""
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None


def pidfd_ended(pidfd: int) -> bool:
    """Has the pidfd's process exited (a zombie too)?"""
    return bool(select.select([pidfd], [], [], 0)[0])


def kill_pinned(pidfd: int, *, group: bool = True) -> None:
    """SIGKILL the pidfd's process and, with `group`, the group its pid numbers (if it led
    one: a job's shell leads the job's group); never whatever has taken either number since.
    Older kernels (before 6.9) have no group flag: there the group is killed by number while
    its leader is seen alive, as before."""
    with contextlib.suppress(ProcessLookupError):
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    if not group:
        return
    try:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL, None, PIDFD_SIGNAL_PROCESS_GROUP)
    except ProcessLookupError:
        pass
    except OSError:  # (EINVAL: no such flag)
        with contextlib.suppress(OSError):
            pid = pidfd_pid(pidfd)
            if pid > 0 and os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)


def pidfd_pid(pidfd: int) -> int:
    """The pid a pidfd was opened on (/proc/self/fdinfo: `Pid:`; -1 once it has been reaped)."""
    for line in Path(f"/proc/self/fdinfo/{pidfd}").read_text().splitlines():
        if line.startswith("Pid:"):
            return int(line.split()[1])
    raise OSError(f"fd {pidfd} is no pidfd")


@contextlib.contextmanager
def pinned(pids: list[int]) -> Iterator[list[int]]:
    """pidfds of those of `pids` alive now, SIGKILLed (with the groups they lead) and closed
    at the end: for a test's own jobs, killed at its teardown however long after."""
    pidfds = [pidfd for pid in pids if (pidfd := pin(pid)) is not None]
    try:
        yield pidfds
    finally:
        for pidfd in pidfds:
            kill_pinned(pidfd)
            os.close(pidfd)


def _job_under(pid: int, wanted: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return wanted in b"\0" + f.read()
    except OSError:
        return False


def kill_jobs_under(root: Path, *, reap: bool = True) -> None:
    """SIGKILL every job process whose GPUHERD_JOB_DIR lies under `root`, and the groups they
    lead; each pinned (a pidfd), then seen again to be one, before its signal. With `reap`,
    reap those that are this process's children (an engine run in-process spawned them): a
    job left to die later would be a zombie child of this pytest process, which a later test
    counting its children finds."""
    wanted = b"\0GPUHERD_JOB_DIR=" + os.fsencode(str(root))
    for pid in jobs_under(root):
        pidfd = pin(pid)
        if pidfd is None:
            continue
        try:
            if not _job_under(pid, wanted):  # (its number taken since the scan)
                continue
            kill_pinned(pidfd)
            if reap and _parent(pid) == os.getpid():  # (a zombie of ours: its number is ours)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)
        finally:
            os.close(pidfd)


def _parent(pid: int) -> int:
    try:
        return psutil.Process(pid).ppid()
    except psutil.Error:
        return -1


def group_members(pgid: int) -> list[int]:
    """Pids of the live (non-zombie) processes of process group `pgid`.

    Zombies are left out: they are dead, and in a container nobody may ever reap them.
    """
    found = []
    for proc in psutil.process_iter(["status"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and os.getpgid(proc.pid) == pgid:
                found.append(proc.pid)
        except (psutil.Error, OSError):
            continue
    return found


def read_line(fd: int, buffer: bytearray, timeout: float = 15.0) -> bytes:
    """One line from a pipe's file descriptor, or fail after `timeout` (no blocking forever)."""
    deadline = time.monotonic() + timeout
    while b"\n" not in buffer:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise AssertionError(f"no full line within {timeout}s; got {bytes(buffer)!r}")
        chunk = os.read(fd, 4096)
        if not chunk:
            raise AssertionError(f"end of output before a full line; got {bytes(buffer)!r}")
        buffer += chunk
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return line
