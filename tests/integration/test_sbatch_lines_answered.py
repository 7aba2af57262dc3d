"""A Slurm script's `#SBATCH` lines that have no option of the same name here: a script of
`--array=1-3` alone ran once with `$SLURM_ARRAY_TASK_ID` empty, and nothing was said; with
other lines too, the warning offered a plain submit (one job) and called `--array`,
`--requeue`, `--signal` and `--mem-per-gpu` "not used here". Now the array is answered with
the sweep that runs it, the others with their options; a sweep's template that runs such a
script, and `cd DIR && ./job.sh`, are warned of as `submit -- ./job.sh` is."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from conftest import Herd

HEAD = "gpuherd: warning: {} has #SBATCH lines, which gpuherd does not read: "


def _script(folder: Path, name: str, *directives: str) -> Path:
    script = folder / name
    lines = [f"#SBATCH {line}" for line in directives]
    script.write_text("\n".join(["#!/bin/sh", *lines, 'echo "idx=$SLURM_ARRAY_TASK_ID"', ""]))
    script.chmod(0o755)
    return script


def _words(suggested: str) -> list[str]:
    """The words the shell makes of a suggested command line (its `$(seq 1 3)` expanded)."""
    said = subprocess.run(
        ["bash", "-c", f"printf '%s\\n' {suggested}"], capture_output=True, text=True, check=True
    )
    return said.stdout.splitlines()


def test_an_array_is_answered_with_the_sweep_that_runs_it_once_per_index(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    _script(tmp_path, "arr2.sh", "--array=1-3", "--signal=B:USR1@90")
    told = shared_daemon.cli("submit", "--hold", "--", "./arr2.sh", cwd=tmp_path)
    sweep = "gpuherd sweep 'SLURM_ARRAY_TASK_ID={i} ./arr2.sh' -p i $(seq 1 3) --grace 90s"
    assert told.stderr == (
        HEAD.format("arr2.sh") + "--array=1-3 runs it once per index, as a sweep does here "
        f"(submitted, it runs once, with no $SLURM_ARRAY_TASK_ID): {sweep}; "
        "--signal=B:USR1@90: the job gets SIGTERM at its --timeout, and SIGKILL --grace "
        "later: trap TERM, not USR1\n"
    )
    # The sweep said runs it as sbatch would: once per index, each told its own.
    words = _words(sweep.removeprefix("gpuherd "))
    shared_daemon.cli(*words, "--name", "arr2", cwd=tmp_path)
    shared_daemon.cli("wait", "-q", "--sweep", "arr2")
    ids = shared_daemon.cli("ls", "-q", "--all", "--sweep", "arr2").stdout.split()
    logs = sorted(shared_daemon.cli("log", job).stdout for job in ids)
    assert logs == ["idx=1\n", "idx=2\n", "idx=3\n"]


def test_a_script_of_lines_with_no_option_of_the_same_name_is_not_silent(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    _script(tmp_path, "dep.sh", "--dependency=afterok:3:4", "-p gpu")
    told = shared_daemon.cli("submit", "--hold", "--", "./dep.sh", cwd=tmp_path)
    assert told.stderr == (
        HEAD.format("dep.sh")[:-2] + " (-p: not used here): --dependency=afterok:3:4: use "
        "--after 3,4, naming this queue's jobs (not Slurm's)\n"
    )
    # What the submission gave itself is what it meant: nothing more to say.
    given = shared_daemon.cli("submit", "--hold", "--after", "last", "--", "./dep.sh", cwd=tmp_path)
    assert given.stderr == ""


def test_every_line_is_answered_with_its_option_or_said_unused(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    _script(
        tmp_path,
        "s1.sh",
        "-J myjob --time=30 --mem=16G --mem-per-gpu=20G",
        "--array=0-9:3%2 --requeue --cpus-per-task=4",
    )
    told = shared_daemon.cli("submit", "--hold", "--", "./s1.sh", cwd=tmp_path)
    assert told.stderr == (
        HEAD.format("s1.sh") + "--array=0-9:3%2 runs it once per index, as a sweep does here "
        "(submitted, it runs once, with no $SLURM_ARRAY_TASK_ID): gpuherd sweep "
        "'SLURM_ARRAY_TASK_ID={i} ./s1.sh' -p i $(seq 0 3 9) --max-parallel 2 --name myjob "
        "--timeout 30m --ram 16G --mem 20G (--cpus-per-task: not used here); --requeue: use "
        "--retries N: an attempt that failed, timed out or was lost runs again, up to N times "
        "(Slurm's --requeue)\n"
    )
    # Without an array: submit's options, --mem-per-gpu's as `submit --mem-per-gpu` says.
    _script(tmp_path, "mpg.sh", "--mem-per-gpu=20G", "--gres=gpu:2")
    told = shared_daemon.cli("submit", "--hold", "--", "./mpg.sh", cwd=tmp_path)
    assert told.stderr == (
        HEAD.format("mpg.sh") + "give their options to submit: gpuherd submit --mem 20G "
        "--gpus 2 -- ./mpg.sh\n"
    )
    said = shared_daemon.usage_error("submit", "--mem-per-gpu", "20G", "--", "true")
    assert "use --mem SIZE" in said
    # A command that sets the index itself is one of the array's jobs, meant so.
    one = shared_daemon.cli(
        "submit", "--hold", "--retries", "1", "--", "SLURM_ARRAY_TASK_ID=4 ./s1.sh", cwd=tmp_path
    )
    assert "sweep" not in one.stderr and "--requeue" not in one.stderr
    assert "give their options to submit: gpuherd submit --name myjob" in one.stderr


def test_a_sweep_and_a_cd_first_that_run_such_a_script_are_warned_of(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    _script(tmp_path, "job.sh", "--gres=gpu:2 --time=2:00:00", "--array=0-9%4")
    sweep = shared_daemon.cli(
        "sweep", "./job.sh {i}", "-p", "i", "7", "8", "--hold", "--name", "jobs", cwd=tmp_path
    )
    assert sweep.stderr == (
        HEAD.format("job.sh") + "give their options to the sweep: --gpus 2 --timeout 2:00:00 "
        "--max-parallel 4\n"
    )
    given = ("--gpus", "2", "--timeout", "2h", "--max-parallel", "4", "--name", "jobs2")
    quiet = shared_daemon.cli("sweep", "./job.sh {i}", "-p", "i", "7", *given, cwd=tmp_path)
    assert quiet.stderr == ""
    # `cd DIR && ./job.sh`: the script is looked for from DIR (a plain path only).
    moved = f"cd {shlex.quote(str(tmp_path))} && ./job.sh"
    told = shared_daemon.cli("submit", "--hold", "--", moved)
    assert told.stderr.startswith(HEAD.format(tmp_path / "job.sh"))
    assert f"gpuherd sweep 'cd {tmp_path} && SLURM_ARRAY_TASK_ID={{i}} ./job.sh'" in told.stderr
    unsure = shared_daemon.cli("submit", "--hold", "--", "cd $HOME/x && ./job.sh", cwd=tmp_path)
    assert unsure.stderr == ""
