"""GPUHERD_SHELL: the shell a job's command runs in (default /bin/sh, dash on Debian, where
`source`, `[[ ]]` and `{1..3}` fail), taken from the submitter's environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Herd

BASHISMS = '[[ 1 == 1 ]] && echo "bash ${BASH_VERSION%%.*}" {1..3}'

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def bash_major() -> str:
    out = subprocess.run(["bash", "-c", "echo ${BASH_VERSION%%.*}"], capture_output=True)
    return out.stdout.decode().strip()


def test_a_job_runs_in_the_shell_its_submitter_names(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job = int(
        daemon.cli(
            "submit",
            "-q",
            "--gpus",
            "0",
            "--",
            BASHISMS,
            env={**daemon.env, "GPUHERD_SHELL": "bash"},
        ).stdout
    )
    assert daemon.wait_state(job, "succeeded", "failed")["state"] == "succeeded"
    assert daemon.cli("log", str(job)).stdout == f"bash {bash_major()} 1 2 3\n"


def test_a_shell_that_is_not_a_program_fails_the_job_with_the_reason(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    env = {**daemon.env, "GPUHERD_SHELL": "no-such-shell"}
    first = int(daemon.cli("submit", "-q", "--gpus", "0", "--", "true", env=env).stdout)
    after = int(daemon.cli("submit", "-q", "--gpus", "0", "--", "true").stdout)
    failed = daemon.wait_state(first, "succeeded", "failed")
    assert (failed["state"], failed["outcome"]) == ("failed", "spawn_error")
    assert failed["message"] == (
        "GPUHERD_SHELL=no-such-shell is not a program here: set it to a POSIX shell such as "
        "bash (or its path), or unset it for /bin/sh"
    )
    assert daemon.wait_state(after, "succeeded")["state"] == "succeeded"  # the queue goes on


def test_run_takes_the_shell_from_its_environment(tmp_path: Path) -> None:
    (tmp_path / "jobs.txt").write_text(BASHISMS + "\n")
    out = tmp_path / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpuherd",
            "run",
            "--gpus-per-job",
            "0",
            "--output-dir",
            str(out),
            str(tmp_path / "jobs.txt"),
        ],
        env={**os.environ, "GPUHERD_SHELL": shutil.which("bash") or "bash"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert (out / "job_0" / "stdout.log").read_text() == f"bash {bash_major()} 1 2 3\n"
