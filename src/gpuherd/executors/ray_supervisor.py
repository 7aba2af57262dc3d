"""The node-side supervisor of one Ray job: owns every process the command starts.

Run by the job's actor as `python -m gpuherd.executors.ray_supervisor DIR PARENT_PID`, with
`DIR/spec.json` holding the command, working directory and environment. It

- leaves the worker's process tree and group (Ray SIGKILLs a dead worker's children and
  process group, which would orphan the job) and watches the worker and its raylet through
  pidfds instead: a worker killed by Ray (`ray.kill`, a lost node), one that ends itself as
  the GCS counts its node dead (a frozen raylet: ray_actor.JobActor._fence), or one that
  outlives its raylet, never leaves the job running while Ray hands its GPUs to someone else;
- becomes a child subreaper, so that a process the command detaches (`setsid cmd &`, a double
  fork) is re-parented to the supervisor instead of init, and stays in reach;
- runs the command with `/bin/sh -c` (or $GPUHERD_SHELL) in a session of its own, its output
  appended to `DIR/stdout.log` and `DIR/stderr.log` (the actor serves them to the daemon);
- on SIGTERM (a kill, a timeout) sends SIGCONT and SIGTERM to every descendant, then SIGKILL
  after the grace period written to `DIR/grace` (read again at each later SIGTERM: a stop
  that shortens, or lengthens, the grace); when the worker dies, kills everything, also
  while the command's stragglers have the rest of their grace, and removes DIR;
  when the raylet dies, kills everything too, and ends the worker (which no raylet will reap
  now) if it does not end within seconds, then removes DIR and exits;
- once the command has ended, kills what it left behind and writes `DIR/exit_status`
  (the code, or 128 + the signal number, as the local executor does), atomically.

Only the standard library, psutil and gpuherd's executor port: this runs on every node.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from gpuherd.executors.base import SpawnError, job_shell
from gpuherd.executors.ray_errors import RAYLET_DIED

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PF_EXITING = 0x4
DEFAULT_GRACE = 10.0
WORKER_LINGER = 5.0
"""Seconds the worker of a dead raylet is given to end on its own, after the job's processes
are killed, before the supervisor ends it: meanwhile it still answers the daemon's pulls,
which bring it the note that the raylet died (the daemon's in-flight pull, within 0.05 s)."""
WORKER_GRACE = 5.0
"""Seconds from the SIGTERM the supervisor sends such a worker to its SIGKILL, and from that
to the supervisor's own exit, whether or not the worker has ended."""
START_DELAY = "GPUHERD_RAY_START_DELAY"
"""In a job's environment: seconds the supervisor waits before it starts the command, for
tests of what a pause or a stop sent meanwhile does (docs/cluster.md)."""
_WATCHED = {signal.SIGCHLD, signal.SIGTERM}


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def descendants() -> list[psutil.Process]:
    try:
        return list(psutil.Process().children(recursive=True))
    except psutil.Error:
        return []


def signal_tree(signum: int, leader: int | None, procs: list[psutil.Process] | None = None) -> None:
    """Send `signum` once to every process of the command: its group, then the descendants
    outside it (detached ones). `procs`: those descendants, if not the caller's own."""
    if leader is not None:
        with contextlib.suppress(OSError):
            os.killpg(leader, signum)
    for proc in descendants() if procs is None else procs:
        with contextlib.suppress(psutil.Error, OSError):
            # A second SIGTERM would interrupt a checkpoint its first one began.
            if leader is None or os.getpgid(proc.pid) != leader:
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


def _in_child() -> None:
    # Should the supervisor itself be killed outright, the command's shell dies with it.
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _note(folder: Path, line: str) -> None:
    """Tell the job's user something in its stderr."""
    with open(folder / "stderr.log", "ab") as err:
        err.write(f"gpuherd: {line}\n".encode())


def _start_delay(folder: Path, env: dict[str, str]) -> float:
    text = env.get(START_DELAY, "")
    try:
        return max(0.0, float(text or 0))
    except ValueError:
        _note(folder, f"{START_DELAY}={text} is not a number of seconds: ignored")
        return 0.0


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
        try:
            shell = job_shell(env)
        except SpawnError as exc:
            err.write(f"gpuherd: {exc}\n".encode())
            return None
        return subprocess.Popen(
            [shell, "-c", str(spec["command"])],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            restore_signals=True,
            preexec_fn=_in_child,
        )


def _detach(folder: Path, parent: int) -> list[int] | None:
    """Leave the worker's process tree; return pidfds of the worker and of its raylet (None:
    the worker is gone).

    Ray kills a dead worker's children and process group outright (SIGKILL), which would
    leave the job orphaned. So the supervisor forks once more and lets the first process
    exit: re-parented away from the worker, it watches the worker through a pidfd instead,
    and the node's raylet too: a worker can outlive its raylet (adopted by init) while Ray
    counts the node, and the job with it, as lost and runs the job again elsewhere.
    """
    try:
        pidfd = os.pidfd_open(parent)
    except ProcessLookupError:
        return None
    if os.getppid() != parent:  # the worker died (and its pid was reused) before we looked
        return None
    watched = [pidfd, *_raylet_pidfd(parent)]
    pid = os.fork()
    if pid:
        (folder / "supervisor.pid").write_text(f"{pid}\n")
        os._exit(0)
    os.setsid()  # out of the worker's process group too, which Ray kills as a whole
    return watched


def _raylet_pidfd(worker: int) -> list[int]:
    """A pidfd of the worker's parent if that is a raylet (none if it is not, or gone)."""
    with contextlib.suppress(psutil.Error, OSError):
        raylet = psutil.Process(worker).parent()
        if raylet is not None and "raylet" in raylet.name():
            return [os.pidfd_open(raylet.pid)]
    return []


def _ending(pidfd: int) -> bool:
    """Whether the process behind `pidfd` has ended or is ending. A raylet SIGKILLed is told
    ended through its pidfd only once all its threads are, and its worker, which sees the
    raylet's socket close, can end before that; but every thread is then in exit already
    (the sockets close with the last one's files): PF_EXITING in the leader's flags."""
    try:
        with open(f"/proc/self/fdinfo/{pidfd}") as info:
            pid = next(int(line.split()[1]) for line in info if line.startswith("Pid:"))
        if pid <= 0:  # (-1: it has been reaped)
            return True
        with open(f"/proc/{pid}/stat") as stat:
            state, *fields = stat.read().rpartition(")")[2].split()
    except FileNotFoundError:
        return True
    except (OSError, StopIteration, ValueError, IndexError):  # (a kernel without Pid: lines)
        return False
    return state in ("Z", "X") or bool(int(fields[5]) & PF_EXITING)


def _wakeup() -> int:
    """Signals as bytes on a pipe, so that one select() waits for them and the worker."""
    r, w = os.pipe()
    os.set_blocking(r, False)
    os.set_blocking(w, False)
    for signum in _WATCHED:
        signal.signal(signum, lambda *_: None)
    signal.set_wakeup_fd(w)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _WATCHED)
    return r


def _signals(fd: int) -> set[int]:
    try:
        return set(os.read(fd, 512))
    except BlockingIOError:
        return set()


def supervise(folder: Path, parent: int) -> int:
    signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
    lifelines = _detach(folder, parent)
    if lifelines is None:  # the actor died as it started us: no one else will remove it
        _forget(folder)
        return 1
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    wake = _wakeup()
    spec = json.loads((folder / "spec.json").read_text())
    time.sleep(_start_delay(folder, spec["env"]))
    try:
        child = _spawn(folder, spec)
    except OSError as exc:
        _note(folder, f"cannot start the command: {exc}")
        child = None
    if child is None:
        _write_status(folder, 127)
        return 0
    leader = child.pid
    (folder / "pid").write_text(f"{leader}\n")
    status: list[int] = []
    kill_at: float | None = None
    orphaned = False  # the actor is gone: no one is left to collect the status or the logs
    watching = [wake, *lifelines]
    # Until the command has ended; then, being stopped, while its stragglers get the rest of
    # their grace (saving a checkpoint). The actor and the raylet are watched throughout, and
    # a later stop's grace (`kill --grace 0` of a job stopping already) is read again: the
    # stragglers outlived both, the job recorded killed and its GPUs given to the next job.
    while not status or (kill_at is not None and time.monotonic() < kill_at and descendants()):
        left = None if kill_at is None else max(0.0, kill_at - time.monotonic())
        # (no signal says that a straggler that is no child of ours has ended: looked at)
        timeout = min(0.05, left) if status and left is not None else left
        ready, _, _ = select.select(watching, [], [], timeout)
        got = _signals(wake) if wake in ready else set()
        if set(ready) & set(lifelines):  # the actor or its raylet is gone: so is the job
            if lifelines[1:] and (lifelines[1] in ready or _ending(lifelines[1])):
                _note(folder, RAYLET_DIED)
                _kill_all(leader, [])
                _after_raylet(folder, lifelines[0])
                return 0
            orphaned = True
            watching = [wake]
            _kill_all(leader, status)
            kill_at = None  # (nothing is left to wait for)
        elif signal.SIGTERM in got:
            kill_at = _stop(folder, leader, kill_at)
        elif kill_at is not None and time.monotonic() >= kill_at:
            _kill_all(leader, status)
        _reap(leader, status)
    # The command has ended: nothing it started may outlive it.
    _kill_all(leader, status)
    if orphaned or _ended(lifelines[0], 0):
        _forget(folder)
    else:
        _write_status(folder, _encode(status[0]))
    return 0


def _stop(folder: Path, leader: int, kill_at: float | None) -> float:
    """A stop (the actor's `terminate`, which wrote its grace first): the first one sends the
    command SIGCONT and SIGTERM; each sets the SIGKILL `grace` s from now, sooner or later
    than an earlier stop's (the daemon sends the grace it has left, or one chosen anew). A
    second SIGTERM is never sent: it means "hurry, skip the checkpoint" to some programs."""
    if kill_at is None:
        signal_tree(signal.SIGCONT, leader)
        signal_tree(signal.SIGTERM, leader)
    return time.monotonic() + _grace(folder)


def _after_raylet(folder: Path, worker: int) -> None:
    """Once the raylet is dead and the job's processes killed: remove the folder and see the
    worker (`worker`: its pidfd) end, within seconds, before the supervisor exits.

    No exit status: the attempt ends `lost` once Ray counts the node dead, so a retry is placed
    only then (ending it now put the retry on this dead node again). And the worker goes first:
    an actor whose supervisor is gone reports the job ended (status -1) to its next pull.
    The worker ends on its own once its raylet is reaped; a raylet left a zombie (its parent
    does not reap it: `gpuherd ray-local`, a container whose init does not) looks alive to it,
    and it stayed, ~90 MB, with the supervisor that waited for it and the folder, until the
    cluster was stopped. No raylet will reap it now, so it is ended here: through its pidfd,
    so that a signal never reaches a process that has taken its pid since."""
    # The job's whole environment (API keys and all), read already: it goes at once. The logs
    # stay while the worker may still serve the daemon the note just written.
    with contextlib.suppress(OSError):
        (folder / "spec.json").unlink()
    ended = _ended(worker, WORKER_LINGER)
    _forget(folder)
    for signum in (signal.SIGTERM, signal.SIGKILL):
        if ended:
            return
        with contextlib.suppress(OSError):  # (ProcessLookupError: reaped meanwhile)
            signal.pidfd_send_signal(worker, signum)
        ended = _ended(worker, WORKER_GRACE)


def _ended(pidfd: int, timeout: float) -> bool:
    """Wait up to `timeout` s for the process behind `pidfd` to end; whether it has."""
    ready, _, _ = select.select([pidfd], [], [], timeout)
    return bool(ready)


def _forget(folder: Path) -> None:
    """Remove the folder of a job whose actor is gone. Ray never starts an actor again
    (max_restarts=0), so nothing would read it, and it holds the job's whole environment
    (spec.json: API keys and all): it stayed on the node for good, one per lost attempt."""
    shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m gpuherd.executors.ray_supervisor DIR PARENT_PID", file=sys.stderr)
        return 2
    return supervise(Path(argv[0]), int(argv[1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
