"""`submit job.sh`: a script named without `./` is not on the job's PATH, so its shell says
`job.sh: not found` (exit 127). submit warns on stderr, and still queues the job."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import Herd
from gpuherd.cli.job_cmds import submit
from gpuherd.cli.submit_hints import stray_values


def script(folder: Path, name: str = "job.sh", executable: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\necho ran $1\n")
    path.chmod(0o755 if executable else 0o644)
    return path


def warning(word: str, folder: Path, fix: str) -> str:
    return (
        f"gpuherd: warning: {word} is a file in {folder} but not on PATH: the job will fail "
        f'with "not found"; {fix}\n'
    )


def test_a_script_named_without_dot_slash_is_warned_of_and_still_submitted(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    daemon = shared_daemon
    work = tmp_path / "work"
    script(work)
    proc = daemon.cli("submit", "--gpus", "0", "job.sh", cwd=work)
    assert proc.stderr == warning("job.sh", work, "submit ./job.sh (or sh job.sh)")
    job = int(proc.stdout.split()[-1])
    # The warning is right: the job fails as it said.
    ended = daemon.wait_state(job, "succeeded", "failed")
    assert (ended["state"], ended["exit_code"]) == ("failed", 127)
    assert "not found" in daemon.cli("log", str(job), "--stderr").stdout

    fixed = daemon.cli("submit", "-q", "--gpus", "0", "./job.sh", cwd=work)
    assert fixed.stderr == ""
    assert daemon.wait_state(int(fixed.stdout), "succeeded", "failed")["state"] == "succeeded"


def test_a_script_that_is_not_executable_is_told_to_run_with_sh(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    daemon = shared_daemon
    work = tmp_path / "work"
    script(work, executable=False)
    proc = daemon.cli("submit", "-q", "--gpus", "0", "--", "job.sh", "1", cwd=work)
    assert proc.stderr == warning(
        "job.sh", work, "submit sh job.sh (or chmod +x job.sh, then submit ./job.sh)"
    )
    assert daemon.wait_state(int(proc.stdout), "succeeded", "failed")["exit_code"] == 127


def test_the_job_folder_and_the_job_path_are_the_ones_looked_at(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    daemon = shared_daemon
    here, there = tmp_path / "here", tmp_path / "there"
    script(here)
    script(there)
    # --cwd: the file is looked for in the job's folder, not the submitter's.
    proc = daemon.cli("submit", "-q", "--gpus", "0", "--cwd", str(there), "job.sh", cwd=here)
    assert proc.stderr == warning("job.sh", there, "submit ./job.sh (or sh job.sh)")
    # A PATH that holds the folder (".", or an --env PATH=...) finds it: no warning, and it runs.
    env = {**daemon.env, "PATH": f".:{daemon.env['PATH']}"}
    dot = daemon.cli("submit", "-q", "--gpus", "0", "job.sh", "a", cwd=here, env=env)
    assert dot.stderr == ""
    assert daemon.wait_state(int(dot.stdout), "succeeded", "failed")["state"] == "succeeded"
    assert daemon.cli("log", dot.stdout.strip()).stdout == "ran a\n"
    on_path = daemon.cli(
        "submit", "-q", "--env", f"PATH={here}:{daemon.env['PATH']}", "job.sh", cwd=here
    )
    assert on_path.stderr == ""
    assert daemon.wait_state(int(on_path.stdout), "succeeded", "failed")["state"] == "succeeded"


def test_nothing_is_said_of_commands_the_shell_finds(shared_daemon: Herd, tmp_path: Path) -> None:
    daemon = shared_daemon
    work = tmp_path / "work"
    for name in ("echo", "cd", "python3", "notes.txt", "job.sh"):  # (./job.sh: found too)
        script(work, name)
    commands = [
        "echo hi",  # a builtin, whatever lies in the folder
        "cd . && true",
        "python3 -c pass",  # on PATH too
        "./job.sh",
        "sh job.sh",
        "X=1 echo hi",
        "notes.txt' unbalanced",  # not a command the shell can read at all
    ]
    proc = daemon.cli(
        "submit", "-q", "--gpus", "0", "--file", "-", input="\n".join(commands) + "\n", cwd=work
    )
    assert proc.stderr == ""
    assert len(proc.stdout.split()) == len(commands)


def test_a_file_of_jobs_warns_once_per_script(shared_daemon: Herd, tmp_path: Path) -> None:
    daemon = shared_daemon
    work = tmp_path / "work"
    script(work)
    script(work, "other.sh")
    lines = [f"job.sh {n}" for n in range(5)] + ["other.sh", "X=1 job.sh 9", "./job.sh 0"]
    proc = daemon.cli(
        "submit", "-q", "--gpus", "0", "--file", "-", input="\n".join(lines) + "\n", cwd=work
    )
    fix = "submit ./{0} (or sh {0})"
    assert proc.stderr == warning("job.sh", work, fix.format("job.sh")) + warning(
        "other.sh", work, fix.format("other.sh")
    )
    assert len(proc.stdout.split()) == len(lines)


STRAY = [
    (["-a", "3", "5", "7", "--", "x"], "'5 7 --': --after takes its ids comma-sep"),
    (["-a", "3", "5", "7", "--", "x"], "--after takes its ids comma-separated (--after 3,5,7)"),
    (["--after=3", "5-6", "--", "x"], "'5-6 --': --after takes its ids comma-separated"),
    (["--after=3", "5-6", "--", "x"], "--after takes its ids comma-separated (--after 3,5-6)"),
    (["--after-any", "3", "5", "--", "x"], "'5 --': --after-any takes its ids comma-separated"),
    (["-g", "2", "3", "--", "x"], "'3 --': --gpus takes one value (--gpus 2); the command goes"),
    (["--", "3", "--", "x"], "'3 --': --after and --only-gpus take their values comma-separated"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "said"), STRAY)
def test_ids_given_space_separated_are_named_with_their_option(args: list[str], said: str) -> None:
    result = CliRunner().invoke(submit, args)  # refused before any daemon is asked
    assert result.exit_code == 2
    assert "Error: the command starts '" in result.output and said in result.output


@pytest.mark.parametrize(
    ("given", "command"),
    [
        (["--"], ["torchrun", "--nproc", "2", "--", "train.py"]),  # a `--` of its own
        (["--after", "3", "--"], ["echo", "5", "--", "x"]),
        (["--after", "3"], ["5", "x"]),  # no `--` after the ids: not surely a mistake
    ],
)
def test_commands_that_do_not_start_with_stray_ids_are_left_alone(
    given: list[str], command: list[str]
) -> None:
    assert stray_values(command, given, submit) is None
