"""The node-side supervisor of one Ray job: owns every process the command starts.

Run by the job's actor as `python -m gpuherd.executors.ray_supervisor DIR PARENT_PID`, with
`DIR/spec.json` holding the command, working directory and environment. It

- asks the kernel for SIGUSR2 when its parent (the actor's worker) dies, and gives up at once
  if that parent is already gone: a worker killed by Ray (`ray.kill`, a dead raylet, a
  cancelled actor) never leaves the job running while Ray hands its GPUs to someone else;
- becomes a child subreaper, so that a process the command detaches (`setsid cmd &`, a double
  fork) is re-parented to the supervisor instead of init, and stays in reach;
- runs the command with `/bin/sh -c` in a session of its own, its output appended to
  `DIR/stdout.log` and `DIR/stderr.log` (the actor serves them to the daemon);
- on SIGTERM (a kill, a timeout) sends SIGCONT and SIGTERM to every descendant, then SIGKILL
  after the grace period written to `DIR/grace`; on SIGUSR2 kills everything at once;
- once the command has ended, kills what it left behind and writes `DIR/exit_status`
  (the code, or 128 + the signal number, as the local executor does), atomically.

Only the standard library and psutil: this runs on every node of the cluster.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
DEFAULT_GRACE = 10.0
_WATCHED = {signal.SIGCHLD, signal.SIGTERM, signal.SIGUSR2}


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def descendants() -> list[psutil.Process]:
    try:
        return list(psutil.Process().children(recursive=True))
    except psutil.Error:
        return []


def signal_tree(signum: int, leader: int | None) -> None:
    """Send `signum` to the command's group and to every descendant (also detached ones)."""
    if leader is not None:
        with contextlib.suppress(OSError):
            os.killpg(leader, signum)
    for proc in descendants():
        with contextlib.suppress(psutil.Error):
            proc.send_signal(signum)


def _reap(leader: int, status: list[int]) -> None:
    """Collect every exited child (adopted orphans too); remember the leader's wait status."""
    while True:
        try:
            pid, wait_status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid == leader:
            status.append(wait_status)


def _kill_all(leader: int, status: list[int]) -> None:
    for _ in range(100):  # a process forking in a loop needs more than one pass
        signal_tree(signal.SIGKILL, leader)
        time.sleep(0.01)
        _reap(leader, status)
        if not descendants():
            return


def _encode(wait_status: int) -> int:
    if os.WIFSIGNALED(wait_status):
        return 128 + os.WTERMSIG(wait_status)
    return os.WEXITSTATUS(wait_status)


def _write_status(folder: Path, code: int) -> None:
    tmp = folder / "exit_status.tmp"
    tmp.write_text(f"{code}\n")
    tmp.replace(folder / "exit_status")


def _grace(folder: Path) -> float:
    try:
        return max(0.0, float((folder / "grace").read_text().strip()))
    except (OSError, ValueError):
        return DEFAULT_GRACE


def _unblock() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _WATCHED)


def _spawn(folder: Path, spec: dict[str, object]) -> subprocess.Popen[bytes] | None:
    cwd = str(spec["cwd"])
    env = {str(k): str(v) for k, v in dict(spec["env"]).items()}  # type: ignore[call-overload]
    with (
        open(folder / "stdout.log", "ab") as out,
        open(folder / "stderr.log", "ab") as err,
    ):
        if not os.path.isdir(cwd):
            err.write(f"gpuherd: working directory {cwd} does not exist on this node\n".encode())
            return None
        return subprocess.Popen(
            ["/bin/sh", "-c", str(spec["command"])],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            restore_signals=True,
            preexec_fn=_unblock,  # the mask survives exec: the command must get its signals
        )


def supervise(folder: Path, parent: int) -> int:
    signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
    _prctl(PR_SET_PDEATHSIG, signal.SIGUSR2)
    if os.getppid() != parent:  # the worker died before we could ask to be told
        return 1
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    spec = json.loads((folder / "spec.json").read_text())
    try:
        child = _spawn(folder, spec)
    except OSError as exc:
        with open(folder / "stderr.log", "ab") as err:
            err.write(f"gpuherd: cannot start the command: {exc}\n".encode())
        child = None
    if child is None:
        _write_status(folder, 127)
        return 0
    leader = child.pid
    (folder / "pid").write_text(f"{leader}\n")
    status: list[int] = []
    kill_at: float | None = None
    while not status:
        timeout = None if kill_at is None else max(0.0, kill_at - time.monotonic())
        info = signal.sigtimedwait(_WATCHED, 3600 if timeout is None else timeout)
        if info is not None and info.si_signo == signal.SIGUSR2:
            _kill_all(leader, status)
        elif info is not None and info.si_signo == signal.SIGTERM and kill_at is None:
            kill_at = time.monotonic() + _grace(folder)
            signal_tree(signal.SIGCONT, leader)
            signal_tree(signal.SIGTERM, leader)
        elif kill_at is not None and time.monotonic() >= kill_at:
            _kill_all(leader, status)
        _reap(leader, status)
    # The command has ended. Being stopped, its stragglers get the rest of their grace
    # (saving a checkpoint); otherwise, or after that, nothing it started may outlive it.
    while kill_at is not None and descendants() and time.monotonic() < kill_at:
        signal.sigtimedwait(_WATCHED, 0.05)
        _reap(leader, status)
    _kill_all(leader, status)
    _write_status(folder, _encode(status[0]))
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m gpuherd.executors.ray_supervisor DIR PARENT_PID", file=sys.stderr)
        return 2
    return supervise(Path(argv[0]), int(argv[1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
