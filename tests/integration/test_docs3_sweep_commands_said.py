"""Following docs/sweeps.md and docs/switching.md literally (real daemon): a task's sweep
submitted again from the same venv, its script run by `python3` once and `python` the next
time, said every done point "ran another command" (--force runs them again), as the worker
line names the interpreter the script was started by; and an `--env NAME={i}` given beside a
command that sets NAME itself was told to set it in the command, once more."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import Herd

SCRIPT = """
import json
import sys

import gpuherd


@gpuherd.task(gpus=0)
def square(n):
    return n * n


if __name__ == "__main__":
    sweep = square.sweep(n=[1, 2], results_dir="squares")
    assert sweep.wait(timeout=60)
    print(json.dumps(sweep.submission))
"""


def _two_names_of_this_python() -> tuple[str, str]:
    """`python` and `python3` of this interpreter's folder (a venv has both), if they are one
    program."""
    folder = Path(sys.executable).parent
    python, python3 = folder / "python", folder / "python3"
    if not (python.exists() and python3.exists()) or python.resolve() != python3.resolve():
        pytest.skip(f"{folder} has no python and python3 of one interpreter")
    return str(python3), str(python)


def test_a_tasks_sweep_run_again_by_another_name_of_its_python_ran_no_other_command(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    (tmp_path / "demo.py").write_text(textwrap.dedent(SCRIPT))
    answers = []
    for python in _two_names_of_this_python():
        done = subprocess.run(
            [python, "demo.py"],
            cwd=tmp_path,
            env=shared_daemon.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "SweepWarning" not in done.stderr, done.stderr
        answers.append(json.loads(done.stdout.splitlines()[-1]))
    first, again = answers
    assert (first["new"], again["new"], again["skipped_done"]) == (2, 0, 2)
    assert again["warnings"] == []  # was: 2 done points ran another command (.../python3 ...)
    status = shared_daemon.json("sweep", "status", again["name"])
    assert [row["other_command"] for row in status["rows"]] == [None, None]


def test_an_env_placeholder_the_command_sets_itself_is_not_set_there_twice(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    script = tmp_path / "task.sh"
    script.write_text('#!/bin/sh\necho "task $GFLOW_ARRAY_TASK_ID"\n')
    script.chmod(0o755)
    out = shared_daemon.cli(
        "sweep",
        "GFLOW_ARRAY_TASK_ID={i} ./task.sh",
        *("-p", "i", "1", "2", "--env", "GFLOW_ARRAY_TASK_ID={i}", "--name", "both", "-q"),
        cwd=tmp_path,
    )
    assert out.stderr == (
        "gpuherd: warning: --env GFLOW_ARRAY_TASK_ID={i}: placeholders are filled in the "
        "command only, so the environment gets '{i}' as it is; the command sets "
        "GFLOW_ARRAY_TASK_ID itself already, with each point's value: drop --env "
        "GFLOW_ARRAY_TASK_ID\n"
    )  # was: ... gpuherd sweep 'GFLOW_ARRAY_TASK_ID={i} GFLOW_ARRAY_TASK_ID={i} ./task.sh'
    jobs = [int(word) for word in out.stdout.split()]
    for job in jobs:
        shared_daemon.wait_state(job, "succeeded")
    logs = {shared_daemon.cli("log", str(job)).stdout for job in jobs}
    assert logs == {"task 1\n", "task 2\n"}  # the command's values, as the warning says
