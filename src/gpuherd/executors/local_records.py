"""What a local job's shell records in its attempt folder, read back after a restart: its
pid and exit status (the `process` file), and when it last wrote there (its last sign of
life, if it is found gone without a status); whether a live pid is still that attempt, and
which process leads it when no pid was recorded; and the status of a shell that is still
our own child, from its wait status, with what its processes used of the host."""

from __future__ import annotations

import contextlib
import os
import resource
import stat
import sys
import time
from collections.abc import Mapping
from dataclasses import replace

from gpuherd.core.model import HostUsage
from gpuherd.errors import Forbidden
from gpuherd.executors.base import ExitStatus, SignsOfLife
from gpuherd.jobfiles import HOOK_VARIABLE, KEY_VARIABLE, RAY_NODE_VARIABLE, open_job_file

PROCESS_FILE = "process"
"""`pid N` once the job's shell runs, then `exit N` once its command has ended."""
OLD_FILES = ("pid", "exit_status")
"""What attempts started by gpuherd before 0.2 recorded instead (still read after a restart)."""

BOOT_TIME_VARIABLE = "GPUHERD_TEST_BOOT_TIME"
"""A test knob, not for users: the machine's boot time to take (epoch seconds), as a test
cannot reboot the machine to see what a restart after a reboot finds."""

_MAX_SIGNAL = 64

_MAX_PROCESS_FILE = 4096
"""A `process` file holds two short lines; a job may have made it anything."""

_MOST = {b"pid": 1 << 22, b"exit": 255}
"""The largest pid (Linux's PID_MAX_LIMIT) and exit status a job's shell can write: a larger
number is not its (a job wrote `exit 99999999999999999999` there, which SQLite could not store
and which stopped every daemon start after)."""


def read_process_file(attempt_dir: str) -> tuple[int | None, ExitStatus | None]:
    """What the job's shell recorded: its pid (None if it never got that far) and, once
    the command ended, its exit status."""
    try:
        with open_job_file(os.path.join(attempt_dir, PROCESS_FILE)) as f:
            lines = _ends_of(f.fileno())
            ended_at = os.fstat(f.fileno()).st_mtime
    except FileNotFoundError:
        return _read_old_files(attempt_dir)
    except (OSError, Forbidden):  # the job replaced it: its status is lost
        return None, None
    return _said(lines, ended_at)


def _said(lines: list[bytes], ended_at: float) -> tuple[int | None, ExitStatus | None]:
    """The pid and exit status the shell's lines of a `process` file say (read_process_file),
    the file written last at `ended_at`."""
    said: dict[bytes, int] = {}
    for line in lines:
        key, _, value = line.partition(b" ")
        if key in _MOST and value.isdigit() and int(value) <= _MOST[key]:
            # The shell's pid is the first line, before its command ran; its exit the last,
            # after: what the job wrote in between is neither.
            said[key] = said.get(key, int(value)) if key == b"pid" else int(value)
    code = said.get(b"exit")
    return said.get(b"pid") or None, None if code is None else decode(code, ended_at)


def _ends_of(fd: int) -> list[bytes]:
    """The lines at the start and at the end of a `process` file: the shell's two. A job that
    wrote more than _MAX_PROCESS_FILE there pushed the shell's exit line past what was read,
    and its end was taken for lost."""
    head = os.read(fd, 2 * _MAX_PROCESS_FILE)
    if len(head) < 2 * _MAX_PROCESS_FILE:
        return head.split(b"\n")
    tail = os.pread(fd, _MAX_PROCESS_FILE, max(0, os.fstat(fd).st_size - _MAX_PROCESS_FILE))
    # (the lines cut where the two parts end are not the shell's: left out)
    return head[:_MAX_PROCESS_FILE].split(b"\n")[:-1] + tail.split(b"\n")[1:]


def signs_of_life(attempt_dir: str) -> SignsOfLife:
    """When the attempt's processes last wrote to its folder, and when this machine booted.
    Only the job writes its logs and its process file (the daemon writes neither), so
    their last change is a moment it was alive."""
    last_seen = None
    for name in (PROCESS_FILE, *OLD_FILES, "stdout.log", "stderr.log"):
        # lstat: what a job planted there is not followed. But the logs may be gpuherd's links
        # to the files of --output and --error, whose writes are the signs: followed (a stat
        # opens nothing, and a later time than the job's is bounded by core.recovery.lost_end).
        look = os.stat if name.endswith(".log") else os.lstat
        with contextlib.suppress(OSError):
            written = look(os.path.join(attempt_dir, name)).st_mtime
            last_seen = written if last_seen is None else max(last_seen, written)
    return SignsOfLife(last_seen, boot_time())


def boot_time() -> float | None:
    """When this machine last booted (None where that cannot be read)."""
    pretend = os.environ.get(BOOT_TIME_VARIABLE)
    if pretend:
        return float(pretend)
    import psutil  # deferred, as in leaders: needed only for an attempt found lost

    try:
        return float(psutil.boot_time())
    except (OSError, psutil.Error):
        return None


def _read_old_files(attempt_dir: str) -> tuple[int | None, ExitStatus | None]:
    found: list[tuple[int, float] | None] = []
    for name, most in zip(OLD_FILES, _MOST.values(), strict=True):
        try:
            with open_job_file(os.path.join(attempt_dir, name)) as f:
                number, written = int(f.read(64).strip()), os.fstat(f.fileno()).st_mtime
                found.append((number, written) if 0 <= number <= most else None)
        except (OSError, ValueError, Forbidden):
            found.append(None)
    pid, code = found
    return (pid[0] or None) if pid else None, decode(*code) if code else None


def reap(pid: int, spawner_peak: int = 0) -> ExitStatus | None:
    """Collect our own child's status, with what it and the processes it waited for used of
    the host (wait4's rusage: free with the wait); None if `pid` is not our child
    (re-attached). `spawner_peak`: own_peak() as it was spawned (own_peak says why)."""
    try:
        reaped, wait_status, rusage = os.wait4(pid, os.WNOHANG)
    except ChildProcessError:
        return None
    if reaped != pid:
        return None
    now = time.time()
    peak = rusage.ru_maxrss * _MAXRSS_UNIT
    usage = HostUsage(
        peak_rss=peak if peak > spawner_peak else None,
        cpu_time=round(rusage.ru_utime + rusage.ru_stime, 6),  # (to the microsecond it counts)
    )
    if os.WIFSIGNALED(wait_status):
        # The shell (or what it exec'd) died of a signal it did not trap (the SIGKILL that
        # ends a stop's grace, a `kill -9`): it may not have waited for the processes it ran,
        # whose use its rusage then lacks. Not measured, rather than a CPU time of 0.0s.
        signum = os.WTERMSIG(wait_status)
        return ExitStatus(exit_code=None, signal=signum, ended_at=now)
    if os.WIFEXITED(wait_status):
        # The job's shell exits with the same (encoded) status it writes to the file.
        return replace(decode(os.WEXITSTATUS(wait_status), now), usage=usage)
    return None


def ended_as_recorded(status: ExitStatus, attempt_dir: str, spawned_at: float) -> ExitStatus:
    """Our own child's status (reap's), ended when its shell's exit line says: that line's
    write (the `process` file's mtime), kept between its spawn and reap's moment (a clock set
    back meanwhile). Reap's moment is when the daemon got to the exit: as late as the daemon
    was stopped (SIGSTOP, a debugger) or its event loop held, and a 1 s job that ended while
    the daemon was stopped for 10 s was recorded as a run of 10.3 s, while a restart after a
    crash, which reads the line, recorded 1.0 s. Kept as it is where the file has no exit line
    of that status: the shell was killed by a signal it cannot trap, or replaced (`exec`).
    Read with one open, fstat, read and close (~5 us; open_job_file's checks ~14 us): on the
    path from every job's exit to the next start. Without open_job_file's look at the folder:
    a job that swapped it for a link moves its own end within those bounds, no further."""
    try:
        fd = os.open(os.path.join(attempt_dir, PROCESS_FILE), _LEAN_READ)
    except OSError:
        return status
    try:
        found = os.fstat(fd)
        lines = _ends_of(fd) if stat.S_ISREG(found.st_mode) else []  # (never a job's FIFO)
    except OSError:
        return status
    finally:
        os.close(fd)
    recorded = _said(lines, found.st_mtime)[1]
    if recorded is None or (recorded.exit_code, recorded.signal) != (
        status.exit_code,
        status.signal,
    ):
        return status
    return replace(status, ended_at=min(max(recorded.ended_at, spawned_at), status.ended_at))


_LEAN_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
"""O_NONBLOCK: a FIFO a job put in the file's place never holds the daemon (no effect on a
plain file's reads); O_NOFOLLOW: nor is a link the job put there followed."""

_MAXRSS_UNIT = 1 if sys.platform == "darwin" else 1024
"""Bytes per unit of ru_maxrss: KiB on Linux, bytes on macOS."""


def own_peak() -> int:
    """The most resident memory this process has held since its own start, in bytes. Its
    children's ru_maxrss starts from it: the job shell is spawned by vfork and exec, and the
    exec counts the memory it left (this process's, shared until then) as the shell's peak.
    So a job's measured peak is its own only above this value, read just after the spawn (a
    peak only grows); `true` measured 54 MiB, the daemon's peak. The kernel's VmHWM, of this
    process's memory alone: getrusage's own ru_maxrss also holds what its parent had at this
    process's start (the same inheritance), so under a pytest worker or a notebook that
    started it, every job below their hundreds of MiB read as too small to measure."""
    global _status_fd
    try:
        if _status_fd is None:
            _status_fd = os.open("/proc/self/status", os.O_RDONLY | os.O_CLOEXEC)
        status = os.pread(_status_fd, 4096, 0)  # (~4 us: kept open, read again from 0)
        at = status.index(b"VmHWM:")
        return int(status[at + 6 : status.index(b"kB", at)]) * 1024
    except (OSError, ValueError):  # no /proc (macOS): the process's whole count
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * _MAXRSS_UNIT


_status_fd: int | None = None
"""/proc/self/status, opened at the first spawn and kept for the process's life."""


def decode(code: int, ended_at: float) -> ExitStatus:
    # The shell reports death by signal N as 128+N; an explicit `exit 130` looks the same,
    # and reading it as a signal is the shell's own convention.
    if code > 128 and 1 <= code - 128 <= _MAX_SIGNAL:
        return ExitStatus(exit_code=None, signal=code - 128, ended_at=ended_at)
    return ExitStatus(exit_code=code, signal=None, ended_at=ended_at)


def is_attempt(env: Mapping[str, str], key: str) -> bool:
    """A process's environment is this attempt's: by its key, as GPUHERD_JOB_ID and
    GPUHERD_ATTEMPT are the same in another home's (or `gpuherd run`'s) job of that number.
    An on-end hook carries the job's key too, but is not the job; nor is a process the Ray
    executor started (a daemon's home switched from Ray with --abandon-running)."""
    return (
        env.get(KEY_VARIABLE) == key and HOOK_VARIABLE not in env and RAY_NODE_VARIABLE not in env
    )


def attempt_says(env: Mapping[str, str], key: str) -> bool | None:
    """Whether a process's environment says it is this attempt's: None when it says nothing
    (a job's shell that replaced it, `exec env -i prog`: its folder's records tell then). One
    carrying another attempt's key is not this one's, whatever the folder says: two jobs'
    runs may share a folder (a sweep point's, run again after herd.db was restored from an
    older backup), and the other job's live run was taken for this job's, adopted as its."""
    if is_attempt(env, key):
        return True
    return False if KEY_VARIABLE in env else None


def visible_gpus(env: Mapping[str, str]) -> tuple[int, ...] | None:
    """The GPU indices a job's environment names (gpuherd sets CUDA_VISIBLE_DEVICES in every
    job's: empty for none); None without it, or with what gpuherd never sets (UUIDs)."""
    text = env.get("CUDA_VISIBLE_DEVICES")
    if text is None:
        return None
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        return None


def leaders() -> dict[str, int]:
    """The live processes that lead attempts, by attempt key: a job's shell leads its own
    session, and its key says which attempt it is. One pass over /proc for all the jobs a
    restart finds no pid of: a pass for each cost a restart after a crash amid 500 starts
    14 s (and 1,000 took longer than `daemon start` waits)."""
    import psutil  # deferred: needed only when a restart finds a job with no recorded pid

    found: dict[str, int] = {}
    for proc in psutil.process_iter():
        try:
            if os.getsid(proc.pid) == proc.pid:
                environment = proc.environ()
                key = environment.get(KEY_VARIABLE)
                if key is not None and is_attempt(environment, key):
                    found.setdefault(key, int(proc.pid))
        except (OSError, psutil.Error):
            continue
    return found


def recorded_leader(pid: int, created: float, attempt_dir: str) -> bool:
    """A job whose shell replaced its environment (`exec env -i prog`) is still this attempt
    when the attempt's process file names it, has no exit, and the process already existed
    when the file was written (a pid taken again is created after the job's shell ended);
    it also still leads the session its shell began, and writes to the attempt's logs."""
    recorded, status = read_process_file(attempt_dir)
    try:
        written = _pid_written(attempt_dir)
        leads = os.getsid(pid) == pid
    except OSError:
        return False
    # Process start times are counted from a boot time in whole seconds: allow for that.
    # Within that slack a pid taken again can pass for the job (a job that died young while
    # no daemon ran, its number given to a program that leads a session of its own); the
    # logs tell them apart.
    if recorded != pid or status is not None or not leads or created > written + 2.0:
        return False
    return _writes_logs(pid, attempt_dir)


def _pid_written(attempt_dir: str) -> float:
    """When the file that named the attempt's pid was written: the `process` file, or the
    `pid` file of an attempt a gpuherd before 0.2 started (its jobs carry no attempt key, so
    this is all that knows them: without it, an upgrade's restart took every job the older
    daemon ran for lost, and left its processes running unwatched)."""
    try:
        return os.stat(os.path.join(attempt_dir, PROCESS_FILE)).st_mtime
    except FileNotFoundError:
        return os.stat(os.path.join(attempt_dir, OLD_FILES[0])).st_mtime


def _writes_logs(pid: int, attempt_dir: str) -> bool:
    """Whether the process's stdout or stderr is the attempt's log: the job's shell opens
    them first thing, and what it execs keeps them; another program that got its number does
    not. Compared by inode: the home's path may go through a symlink."""
    logs = set()
    for name in ("stdout.log", "stderr.log"):
        with contextlib.suppress(OSError):  # (stat only: a planted FIFO is never opened)
            found = os.stat(os.path.join(attempt_dir, name))
            logs.add((found.st_dev, found.st_ino))
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            found = os.stat(f"/proc/{pid}/fd/{fd}")
            if (found.st_dev, found.st_ino) in logs:
                return True
    return False


def another_homes_run(pid: int, key: str) -> bool:
    """Whether `pid` is alive as this attempt's run (the same job and attempt numbers) of
    another home: a home copied (`cp -a`) and used beside its original, which still runs the
    job the copy's queue was told of. Its daemon watches it: gone from this one's, not killed."""
    import psutil  # deferred, as in leaders: asked only of an attempt found lost

    try:
        carried = psutil.Process(pid).environ().get(KEY_VARIABLE)
    except (OSError, psutil.Error):
        return False
    theirs, ours = (carried or "").split(":", 1), key.split(":", 1)
    return len(theirs) == 2 and theirs[0] != ours[0] and theirs[1:] == ours[1:]
