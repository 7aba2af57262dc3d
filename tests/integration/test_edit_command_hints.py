"""`edit` of a job's command, folder or environment warns, as `submit` does, of a program the
job's shell will not find as written: a file of its folder named without `./` (`job.sh`: the
shell looks on PATH alone, `not found`, exit 127), or one name with a space in it. Judged from
the job's folder and environment as it will run, with the fix as an edit of its command. An
edit to `job.sh` said nothing, and the job failed as it started."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from conftest import Herd
from gpuherd.pyapi import connect


def script(folder: Path, name: str = "job.sh", executable: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text('#!/bin/sh\necho ran "$@"\n')
    path.chmod(0o755 if executable else 0o644)
    return path


def not_on_path(word: str, folder: Path, fix: str) -> str:
    return (
        f'{word} is a file in {folder} but not on PATH: the job will fail with "not found"; {fix}'
    )


def held(herd: Herd, cwd: Path, *options: str, count: int = 1) -> list[int]:
    return herd.submit_lines(["true"] * count, "--hold", "--gpus", "0", "--cwd", str(cwd), *options)


def test_an_edit_to_a_script_named_without_dot_slash_warns_and_its_fix_runs(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    script(tmp_path)
    [job] = held(herd, tmp_path)
    edited = herd.cli("edit", str(job), "--command", "job.sh --lr 0.1 > out.txt")
    assert (edited.returncode, edited.stdout) == (0, f"job {job}: edited (command)\n")
    fix = f"gpuherd edit {job} --command './job.sh --lr 0.1 > out.txt' (or sh job.sh)"
    assert edited.stderr == f"gpuherd: warning: job {job}: {not_on_path('job.sh', tmp_path, fix)}\n"
    # The fix, as said (its redirection kept, not quoted into a word), is right: no warning,
    # and the job runs.
    mended = herd.cli("edit", str(job), "--command", "./job.sh --lr 0.1 > out.txt")
    assert (mended.stdout, mended.stderr) == (f"job {job}: edited (command)\n", "")
    herd.cli("release", str(job))
    assert herd.wait_state(job, "succeeded", "failed")["state"] == "succeeded"
    assert (tmp_path / "out.txt").read_text() == "ran --lr 0.1\n"


def test_a_script_not_executable_is_told_to_run_with_sh(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    script(tmp_path, executable=False)
    [job] = held(herd, tmp_path)
    edited = herd.cli("edit", str(job), "--command", "job.sh")
    fix = (
        f"gpuherd edit {job} --command 'sh job.sh' (or chmod +x job.sh, then gpuherd edit {job}"
        " --command ./job.sh)"
    )
    assert edited.stderr == f"gpuherd: warning: job {job}: {not_on_path('job.sh', tmp_path, fix)}\n"


def test_an_edit_of_the_folder_to_one_holding_the_script_warns_of_that_folder(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    there = tmp_path / "there"
    script(there)
    [job] = herd.submit_lines(["job.sh"], "--hold", "--gpus", "0", "--cwd", str(tmp_path))
    moved = herd.cli("edit", str(job), "--cwd", str(there))
    fix = f"gpuherd edit {job} --command ./job.sh (or sh job.sh)"
    assert moved.stderr == f"gpuherd: warning: job {job}: {not_on_path('job.sh', there, fix)}\n"


def test_the_jobs_own_path_is_what_is_looked_at_not_the_daemons(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    work, bin_ = tmp_path / "work", tmp_path / "bin"
    script(work)
    script(bin_)  # (a job.sh of the job's PATH: the one its shell runs)
    path = f"{bin_}{os.pathsep}{os.environ.get('PATH', os.defpath)}"
    [on_path] = held(herd, work, "--env", f"PATH={path}")
    assert herd.cli("edit", str(on_path), "--command", "job.sh").stderr == ""
    # An --env PATH of the edit itself counts too: without the folder, the shell finds none.
    dropped = herd.cli("edit", str(on_path), "--env", "PATH=/usr/bin:/bin")
    fix = f"gpuherd edit {on_path} --command ./job.sh (or sh job.sh)"
    assert dropped.stderr == (
        f"gpuherd: warning: job {on_path}: {not_on_path('job.sh', work, fix)}\n"
    )


def test_jobs_edited_alike_are_warned_of_once_with_one_fix_for_them_all(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    script(tmp_path)
    first, _, third = held(herd, tmp_path, count=3)  # (one submission: ids in a row)
    ids = f"{first}-{third}"
    edited = herd.cli("edit", ids, "--command", "job.sh")
    fix = f"gpuherd edit {ids} --command ./job.sh (or sh job.sh)"
    assert edited.stderr == (
        f"gpuherd: warning: jobs {ids}: {not_on_path('job.sh', tmp_path, fix)}\n"
    ), edited.stderr


def test_a_program_name_with_a_space_is_told_apart(shared_daemon: Herd, tmp_path: Path) -> None:
    herd = shared_daemon
    [job] = held(herd, tmp_path)
    edited = herd.cli("edit", str(job), "--command", "'python3 train.py' --lr 0.1")
    assert edited.returncode == 0
    assert edited.stderr == (
        f"gpuherd: warning: job {job}: the command's program is 'python3 train.py', one name "
        'with spaces in it, which names no program: the job will fail with "not found"; give '
        f"its words apart (gpuherd edit {job} --command 'python3 train.py --lr 0.1')\n"
    )


def test_the_python_api_warns_of_it_as_a_user_warning(shared_daemon: Herd, tmp_path: Path) -> None:
    herd = shared_daemon
    script(tmp_path)
    [job] = held(herd, tmp_path)
    api = connect(herd.home, start=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert api.job(job).edit(command="job.sh") == "edited (command)"
    fix = f"gpuherd edit {job} --command ./job.sh (or sh job.sh)"
    said = [(w.category, str(w.message)) for w in caught]
    assert said == [(UserWarning, f"job {job}: {not_on_path('job.sh', tmp_path, fix)}")]
