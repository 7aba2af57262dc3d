"""A `gpuherd run` killed with SIGKILL (no code of its own runs) leaves no job running: its
watchdog stops them (runner_watchdog.py), holding the output folder until they are gone."""

from __future__ import annotations

import contextlib
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import psutil

from conftest import Runs
from waits import pidfd_ended, pinned, wait_for

# Each job notes its shell's pid, and the pid of what it leaves in the background.
STUBBORN = 'trap "" TERM; echo $$ > pid_{n}; sleep 300 & echo $! > bg_{n}; wait; wait'
"""Deaf to SIGTERM: only the SIGKILL after the grace ends it."""
PLAIN = "echo $$ > pid_{n}; setsid sleep 301 & echo $! > bg_{n}; wait"
"""What it leaves runs in a session of its own (setsid): found by its attempt key."""


def _pids(cwd: Path, count: int) -> list[int]:
    names = [f"{kind}_{n}" for n in range(count) for kind in ("pid", "bg")]
    wait_for(lambda: all((cwd / name).is_file() and (cwd / name).read_text() for name in names))
    return [int((cwd / name).read_text()) for name in names]


@contextlib.contextmanager
def killed_run(
    runs: Runs, lines: list[str], *options: str
) -> Iterator[tuple[psutil.Process, list[int]]]:
    """A `gpuherd run` of `lines` (each noting its pids, as STUBBORN and PLAIN do) into
    runs.root/out, SIGKILLed once they all run; yields its watchdog and pidfds of the jobs'
    processes (waits.pinned: these end long before the teardown, and their numbers are other
    tests' then), and kills what of them is left at the end."""
    run = runs.start(*options, "--output-dir", str(runs.root / "out"), "-")
    run.write("".join(f"{line}\n" for line in lines))
    run.close_stdin()
    with pinned(_pids(runs.cwd, len(lines))) as pidfds:
        watchdog = run.watchdog()
        run.proc.send_signal(signal.SIGKILL)
        run.proc.wait(10)
        yield watchdog, pidfds


def test_a_run_killed_with_sigkill_leaves_no_job_running(runs: Runs) -> None:
    out = runs.root / "out"
    lines = [STUBBORN.format(n=0), PLAIN.format(n=1)]
    with killed_run(runs, lines, "--fake-gpus", "2") as (watchdog, pidfds):
        # The folder stays held while the stubborn job has its grace: a rerun is refused, saying
        # why, and does not write into the killed run's job folders.
        lock = out / ".gpuherd-run.lock"
        wait_for(lambda: lock.read_text().endswith(" stopping\n"), what="the watchdog's word")
        rerun = runs.run("--fake-gpus", "1", "--output-dir", str(out), input="echo again\n")
        assert rerun.returncode == 1, rerun
        assert "stopping the jobs of a run that was killed" in rerun.stderr, rerun.stderr
        assert not (out / "job_0" / "stdout.log").read_text()
        wait_for(lambda: all(map(pidfd_ended, pidfds)), timeout=30, what="the jobs to end")
        # Its temporary state goes with it, as a run that ends by itself leaves none.
        wait_for(lambda: not list(runs.tmp.iterdir()), what="the run's state folder to go")
        # Once they are gone, and the watchdog with its lock, a rerun takes the folder over.
        watchdog.wait(timeout=30)
        again = runs.run("--fake-gpus", "1", "--output-dir", str(out), input="echo again\n")
        assert again.returncode == 0, again
        assert (out / "job_0" / "stdout.log").read_text() == "again\n"


def test_a_killed_run_with_keep_state_leaves_its_database_in_the_output_folder(
    runs: Runs,
) -> None:
    out = runs.root / "out"
    with killed_run(runs, [PLAIN.format(n=0)], "--fake-gpus", "1", "--keep-state") as (_, fds):
        wait_for(lambda: all(map(pidfd_ended, fds)), timeout=30, what="the job to end")
        wait_for(lambda: not list(runs.tmp.iterdir()), what="the run's state folder to go")
        with contextlib.closing(sqlite3.connect(out / "herd.db")) as db:
            ((command,),) = db.execute("SELECT command FROM jobs")
        assert command == PLAIN.format(n=0)


def test_a_rerun_after_a_run_killed_with_sigkill_starts_fresh_logs(runs: Runs) -> None:
    """The killed run's jobs left no marker, and the rerun (`--skip-succeeded`, as the README
    says to recover) appended to their logs: `first`, `Terminated`, then its own output."""
    out = runs.root / "out"
    first = "echo first; echo first >&2; echo $$ > pid_0; sleep 300 & echo $! > bg_0; wait"
    with killed_run(runs, [first], "--fake-gpus", "1") as (watchdog, _):
        watchdog.wait(timeout=30)  # (the jobs stopped: the folder is free)
        line = "echo second; echo second >&2\n"
        again = runs.run(
            "--fake-gpus", "1", "--output-dir", str(out), "--skip-succeeded", input=line
        )
        assert again.returncode == 0, again
        assert (out / "job_0" / "stdout.log").read_text() == "second\n"
        assert (out / "job_0" / "stderr.log").read_text() == "second\n"
