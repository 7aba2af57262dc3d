"""A command whose program the job's shell will not find (`pyhton train.py`, `nvidia-smix`)
was queued without a word: the shell's `eval: pyhton: not found` came only as the job
started, maybe hours later behind other jobs, and every point of a sweep failed with it.
`submit`, `sweep`, the Python API and the dashboard's form now warn at once, naming the
program, and queue the jobs all the same (an earlier job may install it). Real daemon, fake
GPUs, real jobs."""

from __future__ import annotations

import html
import re
import warnings
from pathlib import Path

from test_dashboard_pages import post

import gpuherd
from conftest import Herd


def warned(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("gpuherd: warning: ")]


ONE = (
    "pyhton is no program on the job's PATH nor a shell builtin: the job will fail with 'not"
    " found' unless installed before it starts; check the spelling"
)


def test_submit_warns_of_a_program_not_found_and_the_job_fails_as_said(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    proc = herd.cli("submit", "--gpus", "0", "-q", "--", "pyhton", "train.py", cwd=shared_work)
    assert warned(proc.stderr) == [f"gpuherd: warning: {ONE}"]
    job = herd.wait_state(int(proc.stdout), "succeeded", "failed")  # queued all the same
    assert (job["state"], job["exit_code"]) == ("failed", 127)  # as the warning said


def test_what_the_shell_finds_is_not_warned_of(shared_daemon: Herd, shared_work: Path) -> None:
    herd = shared_daemon
    (shared_work / "bin").mkdir(exist_ok=True)
    tool = shared_work / "bin" / "mytool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    for command in (
        ["true"],  # a builtin
        ["sh", "-c", "exit 0"],  # on PATH
        ["if", "true;", "then", "x;", "fi"],  # the shell's own words
        ["FOO=1", "true"],  # after assignments
        ["$HOME/x"],  # expanded: unsure, so nothing is said
        ["mytool"],  # on the PATH the job gets (--env PATH=...)
    ):
        proc = herd.cli(
            "submit", "--gpus", "0", "--hold", "--env", f"PATH={tool.parent}:/usr/bin:/bin",
            "--", *command, cwd=shared_work,
        )  # fmt: skip
        assert warned(proc.stderr) == [], command


def test_file_lines_and_sweeps_say_it_once(shared_daemon: Herd, shared_work: Path) -> None:
    herd = shared_daemon
    lines = "pyhton a.py\npyhton b.py\necho ok\nnvidia-smix\n"
    proc = herd.cli("submit", "--gpus", "0", "--hold", "--file", "-", input=lines, cwd=shared_work)
    assert warned(proc.stderr) == [
        "gpuherd: warning: pyhton or nvidia-smix are no programs on the jobs' PATH nor shell"
        " builtins: the 3 jobs that run them will fail with 'not found' unless installed before"
        " they start; check the spelling"
    ]
    swept = herd.cli(
        "sweep", "pyhton train.py --lr {lr}", "-p", "lr", "0.1", "0.2", "--name", "typo",
        "--gpus", "0", "--hold", cwd=shared_work,
    )  # fmt: skip
    assert warned(swept.stderr) == [
        "gpuherd: warning: pyhton is no program on the points' PATH nor a shell builtin: every"
        " point will fail with 'not found' unless installed before they start; check the"
        " spelling"
    ]


def test_the_python_api_and_the_form_warn_alike(shared_daemon: Herd, shared_work: Path) -> None:
    herd = shared_daemon
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gpuherd.connect(herd.home).submit("pyhton train.py", gpus=0, hold=True, cwd=shared_work)
    assert [str(w.message) for w in caught] == [ONE]

    answer = post(herd, "/submit", htmx=False, gpus="0", cwd=str(shared_work), commands="pyhton")
    assert answer.status == 303, answer.body
    (job,) = re.findall(r"submitted=(\d+)", answer.headers["location"])
    assert answer.headers["location"].endswith(f"&missing={job}")
    page = herd.page(answer.headers["location"])
    shown = re.findall(r'class="flash warning missing-script-warning">(.*?)</div>', page)
    assert [html.unescape(w) for w in shown] == [f"warning: {ONE}"]


LOCKED = (
    "./train.sh is not executable: the job will fail with 'Permission denied' (exit 126)"
    " unless made so before it starts: chmod +x {}/train.sh"
)


def test_a_script_that_is_not_executable_is_warned_of(herd: Herd, tmp_path: Path) -> None:
    # `./train.sh` saved without chmod +x was queued unsaid, and failed as it started: `eval:
    # ./train.sh: Permission denied`, exit 126. Said by submit, sweep and the form alike.
    herd.start("--fake-gpus", "1")
    script = tmp_path / "train.sh"
    script.write_text("#!/bin/sh\necho trained\n")
    script.chmod(0o644)
    proc = herd.cli("submit", "--gpus", "0", "-q", "--", "./train.sh", cwd=tmp_path)
    locked = LOCKED.format(tmp_path)  # (its whole path: typed from elsewhere, `--cwd`)
    assert warned(proc.stderr) == [f"gpuherd: warning: {locked}"]
    job = herd.wait_state(int(proc.stdout), "succeeded", "failed")
    assert (job["state"], job["exit_code"]) == ("failed", 126)  # as the warning said
    swept = herd.cli("sweep", "./train.sh {x}", "-p", "x", "1", "2", "--hold", cwd=tmp_path)
    assert warned(swept.stderr) == [
        "gpuherd: warning: ./train.sh is not executable: every point will fail with 'Permission"
        f" denied' (exit 126) unless made so before they start: chmod +x {tmp_path}/train.sh"
    ]
    answer = post(herd, "/submit", htmx=False, gpus="0", cwd=str(tmp_path), commands="./train.sh")
    page = herd.page(answer.headers["location"])
    shown = re.findall(r'class="flash warning missing-script-warning">(.*?)</div>', page)
    assert [html.unescape(w) for w in shown] == [f"warning: {locked}"]
    script.chmod(0o755)  # made executable: nothing said, and it runs
    proc = herd.cli("submit", "--gpus", "0", "-q", "--", "./train.sh", cwd=tmp_path)
    assert warned(proc.stderr) == []
    assert herd.wait_state(int(proc.stdout), "succeeded", "failed")["state"] == "succeeded"


def test_a_job_file_or_a_py_given_as_the_command_is_not_told_to_chmod(
    herd: Herd, tmp_path: Path
) -> None:
    """`gpuherd submit examples/commands.txt` was told `chmod +x`, which ran its lines as one
    sh script (one job, not four), and `submit train.py` (no #! line) the same, which ran
    Python as sh code: a file with no #! line is told the way that runs it."""
    herd.start("--fake-gpus", "1")
    (tmp_path / "jobs.txt").write_text("echo one\necho two\n")
    (tmp_path / "train.py").write_text("print('trained')\n")
    listed = herd.cli("submit", "--hold", "-q", "--", "./jobs.txt", cwd=tmp_path)
    assert warned(listed.stderr) == [
        "gpuherd: warning: ./jobs.txt is not executable, and made so would run as sh code (no"
        " #! line): the job will fail with 'Permission denied' (exit 126); to queue each of its"
        " lines as a job: gpuherd submit --file ./jobs.txt; to run it as one shell script: sh"
        " ./jobs.txt"
    ]
    python = herd.cli("submit", "--hold", "-q", "--", "./train.py", cwd=tmp_path)
    assert warned(python.stderr) == [
        "gpuherd: warning: ./train.py is not executable, and made so would run as sh code (no"
        " #! line): the job will fail with 'Permission denied' (exit 126); run it with Python:"
        " python3 ./train.py"
    ]
    done = herd.cli("submit", "-q", "--gpus", "0", "--file", "./jobs.txt", cwd=tmp_path)
    ran = [herd.wait_state(int(i), "succeeded", "failed")["state"] for i in done.stdout.split()]
    assert ran == ["succeeded", "succeeded"]  # as the warning said: one job a line
