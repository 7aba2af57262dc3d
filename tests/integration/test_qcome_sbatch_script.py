"""`gpuherd submit -- ./job.sh` of a script written for Slurm: sbatch reads its `#SBATCH`
lines as options, gpuherd reads none. It ran on one GPU, with no time limit, its output not
in the file it named, and nothing said; now submit warns, with the options to give."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd

SCRIPT = """#!/bin/sh
#SBATCH --job-name=train
#SBATCH --gres=gpu:2 --time=90 -p gpu
echo trained
"""


def _script(folder: Path) -> Path:
    script = folder / "job.sh"
    script.write_text(SCRIPT)
    script.chmod(0o755)
    return script


def test_a_scripts_sbatch_lines_are_warned_of_with_submits_options(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    _script(tmp_path)
    told = shared_daemon.cli("submit", "--hold", "--", "./job.sh", cwd=tmp_path)
    assert told.stderr == (
        "gpuherd: warning: job.sh has #SBATCH lines, which gpuherd does not read: give their "
        "options to submit: gpuherd submit --name train --gpus 2 --timeout 90m -- ./job.sh "
        "(-p: not used here)\n"
    )
    job = shared_daemon.json("show", told.stdout.split()[-1])
    assert (job["name"], job["gpus_requested"]) == (None, 1)  # queued as given, all the same


def test_what_the_submission_gives_itself_is_not_asked_again(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    _script(tmp_path)
    some = shared_daemon.cli(
        "submit", "--hold", "--gpus", "3", "--name", "x", "--", "sh", "job.sh", cwd=tmp_path
    )
    assert "give their options to submit: gpuherd submit --timeout 90m -- sh job.sh" in some.stderr
    given = ("--name", "train", "--gpus", "2", "--timeout", "90m")
    every = shared_daemon.cli("submit", "--hold", *given, "--", "./job.sh", cwd=tmp_path)
    assert every.stderr == ""
    # Lines after the script's first command are no directives (sbatch reads none there).
    late = tmp_path / "late.sh"
    late.write_text("#!/bin/sh\necho hi\n#SBATCH --gres=gpu:2\n")
    assert shared_daemon.cli("submit", "--hold", "--", f"sh {late}").stderr == ""
