"""`gpuherd run`'s jobs end with the run, however it ends: `kill -9` and the OOM killer too.

A run that ends by itself stops what its jobs leave (Ctrl-C twice, SIGHUP, its scheduler's
failure: runner.py). A run killed runs no code: its jobs ran on, unwatched, holding their
GPUs, and a rerun into the same folder took the folder's lock over and reused their job
folders (job_0's `process` file got the orphan's end as well as its own job's).

So each run starts a watchdog: a small process in a session of its own (the terminal's SIGHUP
and a kill of the run's process group do not reach it) that reads a pipe only the run writes
to. The kernel closes the run's end when the run ends, however it ends. A run whose jobs all
ended says `done` first, and the watchdog goes. Otherwise it stops every process that carries
one of the run's attempt keys (executors/local_escaped.py) and its process group: SIGTERM,
then SIGKILL to what is left KILL_GRACE later, as the run's hangup does; then it removes the
run's temporary folder, as the run does at its end (with --keep-state, once its database has
moved to OUTPUT/herd.db).
It holds the output folder's lock too (inherited): a rerun into the folder is refused until
the killed run's jobs are gone, then takes the lock over.

Run as `python -m gpuherd.runner_watchdog HOME_ID STATE_DIR KEEP_STATE`; it imports nothing
of gpuherd until the run is gone, so that it costs a run little while it waits.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

DONE = b"done"
KILL_GRACE = 3.0
"""Seconds between the SIGTERM and the SIGKILL, as for a run's hangup (runner.KILL_GRACE)."""
SWEEP_ROUNDS = 5
"""SIGKILL passes while each still finds something: a process that forked meanwhile."""
STOPPING = "stopping"
"""The word the watchdog adds to the output folder's lock (runner_output._holder)."""


class Watchdog:
    """The run's side: started with the run, told `done` once every job has ended."""

    def __init__(self, home_id: str, state_dir: Path, kept_in: Path | None, lock: int | None):
        """`kept_in`: the output folder, with --keep-state (its herd.db goes there)."""
        kept, held = "" if kept_in is None else str(kept_in), "" if lock is None else str(lock)
        args = [sys.executable, "-m", __name__, home_id, str(state_dir), kept, held]
        self.all_ended = False
        """Set once no job of the run runs: then `close` tells the watchdog to go."""
        self._process = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            pass_fds=() if lock is None else (lock,),
        )

    def close(self) -> None:
        """Tell the watchdog the run is over, and wait for it: at once when every job ended,
        else once it has stopped what is left (the run's exit then means its jobs are gone)."""
        assert self._process.stdin is not None
        with contextlib.suppress(OSError):  # (gone already: killed by someone)
            if self.all_ended:
                self._process.stdin.write(DONE)
            self._process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(1.0 if self.all_ended else KILL_GRACE + 5.0)


def _wait_for_the_run() -> bytes:
    told = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(0, 64):
            told += chunk
    return told


def _say_stopping(lock: int) -> None:
    """A rerun refused meanwhile names the watchdog, and why the folder is still held."""
    import socket

    with contextlib.suppress(OSError):
        os.ftruncate(lock, 0)
        os.pwrite(lock, f"{os.getpid()} {socket.gethostname()} {STOPPING}\n".encode(), 0)


def stop_jobs(home_id: str, grace: float) -> int:
    """Stop every process of a job of this run (its attempt keys) and their groups:
    SIGTERM, then SIGKILL once `grace` has passed; return how many were found at first."""
    import signal

    from gpuherd.executors.local_escaped import home_processes

    found = home_processes(home_id)
    _signal(found, signal.SIGTERM)
    deadline = time.monotonic() + grace
    left = found
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = home_processes(home_id)
    for _ in range(SWEEP_ROUNDS):
        if not left:
            break
        _signal(left, signal.SIGKILL)
        left = home_processes(home_id)
    return len(found)


def _signal(found: dict[int, str], signum: int) -> None:
    """The group of each job's shell (its members that cleared their environment too), then
    the processes that left it (setsid)."""
    from gpuherd.executors.local_escaped import signal_processes

    leaders = set()
    for pid in found:
        with contextlib.suppress(OSError):  # (ended meanwhile)
            if os.getpgid(pid) == pid:
                os.killpg(pid, signum)
                leaders.add(pid)
    others = {}
    for pid, key in found.items():
        with contextlib.suppress(OSError):
            if os.getpgid(pid) not in leaders:
                others[pid] = key
    signal_processes(others, (signum,))


def main(argv: list[str]) -> int:
    home_id, state_dir, kept_in, lock = argv
    if _wait_for_the_run() == DONE:
        return 0
    if lock:
        _say_stopping(int(lock))
    stop_jobs(home_id, KILL_GRACE)
    from gpuherd.runner_state import put_away

    with contextlib.suppress(OSError):  # (nobody is left to tell: as it is, then)
        put_away(Path(state_dir), Path(kept_in), keep=bool(kept_in))
    return 0  # (the lock goes with this process)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
