"""`gpuherd run --yielder` stopped while yielder() still runs: SIGTERM stops it as Ctrl-C does
(exit 130, `gpuherd: interrupted`), SIGHUP with exit 129, and neither leaves the yielder's
process running, nor runs a job. (The run died of the signal's default, exit 143 or 129
saying nothing, and the yielder's process ran on.)
"""

from __future__ import annotations

import contextlib
import signal

import psutil
import pytest

from conftest import Runs, gone, wait_for

SLOW_YIELDER = """
import os, pathlib, time

def yielder():
    yield "touch ran"
    pathlib.Path("yielder.pid").write_text(str(os.getpid()))
    time.sleep(60)
    yield "touch ran"
"""


@pytest.mark.parametrize(
    ("signum", "status", "said"),
    [(signal.SIGTERM, 130, "gpuherd: interrupted\n"), (signal.SIGHUP, 129, "")],
    ids=["SIGTERM", "SIGHUP"],
)
def test_a_signal_during_the_yielder_stops_it_and_runs_nothing(
    runs: Runs, signum: signal.Signals, status: int, said: str
) -> None:
    (runs.cwd / "make_jobs.py").write_text(SLOW_YIELDER)
    out = runs.root / "out"
    run = runs.start("--fake-gpus", "1", "--output-dir", str(out), "--yielder", "make_jobs.py")
    pid_file = runs.cwd / "yielder.pid"
    wait_for(lambda: pid_file.exists() and pid_file.read_text(), what="the yielder to run")
    yielder_pid = int(pid_file.read_text())
    run.proc.send_signal(signum)
    code, rest, err = run.finish()
    assert (code, rest) == (status, ""), err
    assert err.strip("\n") + ("\n" if said else "") == said
    wait_for(lambda: gone(yielder_pid), timeout=5, what="the yielder's process to end")
    assert not (runs.cwd / "ran").exists()
    assert not out.exists()


SPAWNING_YIELDER = """
import pathlib, subprocess, time

def yielder():
    child = subprocess.Popen(["sleep", "60"])
    pathlib.Path("child.pid").write_text(str(child.pid))
    time.sleep(60)
    yield "touch ran"
"""


def test_an_interrupted_yielders_own_processes_end_with_it(runs: Runs) -> None:
    # The yielder's process was killed, but a `sleep` it started ran on (holding the caller's
    # stdout open).
    (runs.cwd / "make_jobs.py").write_text(SPAWNING_YIELDER)
    run = runs.start("--fake-gpus", "1", "--output-dir", "out", "--yielder", "make_jobs.py")
    pid_file = runs.cwd / "child.pid"
    wait_for(lambda: pid_file.exists() and pid_file.read_text(), what="the yielder's child")
    child = int(pid_file.read_text())
    try:
        run.proc.send_signal(signal.SIGINT)
        code, _, err = run.finish()
        assert code == 130, err
        wait_for(lambda: gone(child), timeout=5, what="the yielder's child to end")
    finally:  # (not left behind when the test fails: that very `sleep`, by its handle)
        with contextlib.suppress(psutil.Error):
            leftover = psutil.Process(child)
            if leftover.cmdline() == ["sleep", "60"]:
                leftover.kill()
