"""A restart re-attaches a job to the live process its attempt's folder names only if that
process is the attempt's own. Two jobs' runs may share a folder: a sweep point's, run again
after herd.db was restored from an older backup. The folder's `process` file then names the
other job's run, which carries that job's attempt key; it was taken for this job's run (the
folder's record alone, as for a job that replaced its environment), adopted as its attempt,
and its `attempt.json` rewritten. Real processes, in their own sessions, writing the folder's
logs as a job's shell does."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import wait_for
from gpuherd.executors.local import LocalExecutor
from gpuherd.jobfiles import KEY_VARIABLE

KEY = "home-1:3:1"
"""The attempt asked about: job 3's attempt 1."""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    attempt = tmp_path / "x=1" / "attempt-1"
    attempt.mkdir(parents=True)
    return attempt


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[bytes]]]:
    processes: list[subprocess.Popen[bytes]] = []
    yield processes
    for process in processes:
        process.kill()
        process.wait()


def run_in(folder: Path, env: dict[str, str], started: list[subprocess.Popen[bytes]]) -> int:
    """A process leading its own session, its output the folder's logs, named by the folder's
    `process` file (written after it started, as a job's shell writes it)."""
    with open(folder / "stdout.log", "ab") as out, open(folder / "stderr.log", "ab") as err:
        process = subprocess.Popen(
            ["sleep", "60"], env=env, stdout=out, stderr=err, start_new_session=True
        )
    started.append(process)
    # Until its exec, the child has Popen's environment (no attempt key): it was taken for
    # a run that replaced its environment, once in 5,000 tests (a fork not yet exec'd).
    wait_for(lambda: _execed(process.pid), what="the process to exec sleep")
    (folder / "process").write_text(f"pid {process.pid}\n")
    return process.pid


def test_another_attempts_run_in_the_folder_is_not_this_attempts(
    folder: Path, started: list[subprocess.Popen[bytes]]
) -> None:
    other = run_in(folder, {"PATH": os.environ["PATH"], KEY_VARIABLE: "home-1:4:1"}, started)
    assert not LocalExecutor().is_running(other, 3, 1, KEY, str(folder))


def test_this_attempts_run_is_found_by_its_key_or_by_the_folder_when_it_has_none(
    folder: Path, started: list[subprocess.Popen[bytes]]
) -> None:
    own = run_in(folder, {"PATH": os.environ["PATH"], KEY_VARIABLE: KEY}, started)
    assert LocalExecutor().is_running(own, 3, 1, KEY, str(folder))
    # A job whose shell replaced its environment (`exec env -i prog`): the folder tells.
    cleaned = run_in(folder, {"PATH": os.environ["PATH"]}, started)
    assert LocalExecutor().is_running(cleaned, 3, 1, KEY, str(folder))


def _execed(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep\0")
    except FileNotFoundError:
        return False
