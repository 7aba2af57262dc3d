"""`gpuherd run --yielder` while yielder() still runs. A run killed outright then (`kill -9`,
the OOM killer) takes the yielder's process and what it started with it: both ran on, orphans
(an endless yielder growing). A yielder still running after a moment is said once on stderr
(not with -q): it was silence, then every job at once.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

import forks_popen
from conftest import Runs, communicated, gone, read_line, wait_for

SPAWNING_YIELDER = """
import os, pathlib, subprocess, time

def yielder():
    child = subprocess.Popen(["sleep", "60"])
    pathlib.Path("child.pid").write_text(str(child.pid))
    pathlib.Path("yielder.pid").write_text(str(os.getpid()))
    {wait}
    yield "touch ran"
"""
WAITS = {
    "sleeping": "time.sleep(60)",
    "busy": "end = time.monotonic() + 60\n    while time.monotonic() < end: pass",
}


def _pid(file: Path) -> int:
    return int(wait_for(lambda: file.exists() and file.read_text(), what=f"{file.name}"))


@pytest.mark.parametrize("wait", list(WAITS), ids=list(WAITS))
def test_a_run_killed_outright_takes_its_yielder_and_what_it_started(runs: Runs, wait: str) -> None:
    (runs.cwd / "make_jobs.py").write_text(SPAWNING_YIELDER.format(wait=WAITS[wait]))
    run = runs.start("--fake-gpus", "1", "--output-dir", "out", "--yielder", "make_jobs.py")
    child = psutil.Process(_pid(runs.cwd / "child.pid"))
    yielder = psutil.Process(_pid(runs.cwd / "yielder.pid"))
    try:
        run.proc.kill()  # SIGKILL: the run runs no code of its own to stop them
        run.proc.wait(timeout=10)
        wait_for(lambda: gone(yielder.pid), timeout=5, what="the yielder's process to end")
        wait_for(lambda: gone(child.pid), timeout=5, what="the yielder's child to end")
        assert not (runs.cwd / "ran").exists()
    finally:  # (not left behind when the test fails: these very processes, by their handles)
        for process in (child, yielder):
            with contextlib.suppress(psutil.Error):
                process.kill()


WAITING_YIELDER = """
import os, pathlib, time

def yielder():
    yield "touch ran"
    pathlib.Path("yielder.pid").write_text(str(os.getpid()))
    while not pathlib.Path("go").exists():
        time.sleep(0.02)
"""


@contextlib.contextmanager
def ending_its_yielders(runs: Runs) -> Iterator[None]:
    """The block's WAITING_YIELDERs return at its end, also when it fails: not left waiting."""
    try:
        yield
    finally:
        (runs.cwd / "go").touch()


def test_a_slow_yielder_is_said_once_and_its_jobs_start_when_it_returns(runs: Runs) -> None:
    (runs.cwd / "make_jobs.py").write_text(WAITING_YIELDER)
    run = runs.start("--fake-gpus", "1", "--output-dir", "out", "--yielder", "make_jobs.py")
    assert run.proc.stderr is not None
    with ending_its_yielders(runs):
        line = read_line(run.proc.stderr.fileno(), bytearray(), timeout=15).decode()
        assert line == (
            "--yielder make_jobs.py: waiting for yielder() to return; its jobs start once it "
            "has (Ctrl-C stops the run)"
        )
        assert not (runs.cwd / "ran").exists()  # (what the line says: nothing has started)
    code, out, err = run.finish()
    assert (code, err) == (0, ""), out + err  # (said once: the rest of stderr is empty)
    assert (runs.cwd / "ran").exists()


def test_quiet_says_nothing_of_a_slow_yielder(runs: Runs) -> None:
    # Witness: a run without -q, started once the quiet one's yielder runs, says its line;
    # by then the quiet run has waited as long, and said nothing.
    (runs.cwd / "make_jobs.py").write_text(WAITING_YIELDER)
    quiet = runs.start("--fake-gpus", "1", "-q", "--output-dir", "q", "--yielder", "make_jobs.py")
    with ending_its_yielders(runs):
        _pid(runs.cwd / "yielder.pid")
        said = runs.start("--fake-gpus", "1", "--output-dir", "s", "--yielder", "make_jobs.py")
        assert said.proc.stderr is not None
        read_line(said.proc.stderr.fileno(), bytearray(), timeout=15)
    code, out, err = quiet.finish()
    assert (code, err) == (0, ""), out + err
    assert said.finish()[0] == 0


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_slow_yielders_line_to_a_stderr_that_takes_nothing_stops_nothing(runs: Runs) -> None:
    # The line is a note: its write error is no reason to refuse the run (exit 1, nothing run).
    # (A yielder slower than the line's wait, by its own design: the line has no witness here.)
    (runs.cwd / "make_jobs.py").write_text(
        'import time\n\ndef yielder():\n    time.sleep(3)\n    yield "touch ran"\n'
    )
    with open("/dev/full", "wb") as full:
        proc = forks_popen.popen(
            "gpuherd",
            ["run", "--fake-gpus", "1", "--output-dir", "out", "--yielder", "make_jobs.py"],
            env=runs.env,
            cwd=runs.cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=full,
        )
        out, _ = communicated(proc)
    assert proc.returncode == 0, out
    assert (runs.cwd / "ran").exists()
