"""Another tool's own name typed first, with the words its users type after it (`gpuherd pueue
add -- CMD`, `gpuherd tsp -S 4`, `gpuherd hog --job_file jobs.txt --gpus 0,1`): click said
"Did you mean 'pause'?" for pueue, 'log' for hog, nothing for tsp, and a tool installed here
was offered as a job to queue. Slurm's sbatch options with no word of their own here
(`--nodelist`, `--cpus-per-task`, ...) and the habits `delete` and `stop` were guessed at or
met with nothing too."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Herd


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["tsp", "-S", "4"], "'tsp': gpuherd config set max-running N (tsp -S)"),
        (["tsp"], "'tsp': gpuherd ls (tsp -l)"),
        (["tsp", "ls", "-l"], "'tsp': gpuherd submit -- ls -l queues it (tsp CMD)"),
        (["ts", "-K"], "'ts': gpuherd daemon stop --kill (tsp -K)"),
        (["pueue"], "'pueue': gpuherd ls lists the jobs, --json for scripts (pueue's status)"),
        (["pueue", "parallel", "4"], "'pueue': gpuherd config set max-running N caps the jobs"),
        (["pueue", "kill", "3"], "'pueue': leave it out: gpuherd kill 3 ("),
        (["pueue", "add", "-l", "x", "--", "true"], "'pueue': gpuherd submit --name x -- true"),
        (["gpulimit", "add", "python3", "main.py"], "gpuherd submit -- python3 main.py queues"),
        (["gpulimitc", "show", "3"], "'gpulimitc': leave it out: gpuherd show 3 ("),
        (["gpulimit_server"], "'gpulimit_server': gpuherd daemon start starts the daemon"),
        (["hog"], "'hog': gpuherd run --job_file FILE --gpus 0,1 runs them on those GPUs"),
        (["simple_gpu_scheduler", "--gpus", "0", "1"], "gpuherd run --gpus 0 1 runs the"),
        (["simple_hypersearch"], "gpuherd sweep 'CMD --lr {lr}' -p lr 0.1 0.01 queues a job"),
        (["pueue", "foo"], "'pueue': gpuherd --help lists the commands that do pueue's job"),
        # click guessed 'release' for both
        (["delete", "3"], "'delete': gpuherd rm IDS removes jobs that are not running, gpuherd"),
        (["del", "3"], "'del': gpuherd rm IDS removes jobs that are not running"),
        (["stop", "3"], "'stop': gpuherd kill IDS stops jobs, gpuherd pause IDS pauses them"),
        # sbatch's options: nothing was said of them
        (["submit", "--nodelist", "n1", "--", "true"], "use --only-gpus 0,2: the job runs only"),
        (["submit", "--partition=gpu", "--", "true"], "leave it out: a daemon has one queue"),
        (["submit", "-c", "4", "--", "true"], "leave it out: gpuherd neither counts nor limits"),
        (["submit", "--cpus-per-task=4", "--", "true"], "(Slurm's --cpus-per-task)"),
        (["submit", "--gpus-per-node=2", "--", "true"], "use --gpus N (Slurm's --gpus-per-node)"),
        (["submit", "--mem-per-gpu", "9G", "--", "true"], "use --mem SIZE, the GPU memory it"),
        (["submit", "--ntasks", "2", "--", "true"], "a job is one command, which starts its own"),
        (["sweep", "true {x}", "-p", "x", "1", "--nodelist", "n1"], "use --only-gpus 0,2"),
        # Another command's option: click guessed "Did you mean '--json'?"
        (["submit", "--slots", "2", "--", "true"], "gpuherd daemon start and gpuherd gpus add"),
        (["ui", "--fake-gpus", "2"], "'--fake-gpus': gpuherd daemon start and gpuherd run take"),
    ],
)
def test_another_tools_name_first_is_answered_with_what_its_words_are_here(
    herd: Herd, args: list[str], said: str
) -> None:
    line = herd.usage_error(*args)  # (no daemon: refused before asking one)
    assert said in line and "Did you mean" not in line, line


def test_a_tool_installed_here_is_not_offered_as_a_job(herd: Herd, tmp_path: Path) -> None:
    """With pueue on PATH, `gpuherd pueue add -- CMD` was answered `gpuherd submit -- pueue
    add -- CMD queues it`: a job that would ask pueue to run CMD."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("pueue", "tsp"):
        (bin_dir / tool).write_text("#!/bin/sh\n")
        (bin_dir / tool).chmod(0o755)
    env = {**herd.env, "PATH": f"{bin_dir}{os.pathsep}{herd.env.get('PATH', os.defpath)}"}
    refused = herd.cli("pueue", "add", "--", "python", "t.py", env=env, check=False)
    assert (refused.returncode, refused.stderr) == (
        2,
        "gpuherd: error: No such command 'pueue': gpuherd submit -- python t.py queues it "
        "(pueue add) (see gpuherd --help)\n",
    )
    refused = herd.cli("tsp", "-K", env=env, check=False)
    assert "No such command 'tsp': gpuherd daemon stop --kill (tsp -K)" in refused.stderr


def test_what_the_answers_name_does_the_tools_job(daemon: Herd, tmp_path: Path) -> None:
    """The `gpuherd run ...` said for gpu-hog's line runs its jobs file; the `gpuherd submit
    ...` said for pueue's `add` queues the command."""
    jobs = tmp_path / "jobs.txt"
    jobs.write_text("echo one\necho two\n")
    said = daemon.usage_error("hog", "--job_file", str(jobs), "--gpus", "0,1")
    words = re.search(r"'hog': gpuherd (run .*) runs them", said)
    assert words, said
    ran = daemon.cli(*shlex.split(words.group(1)), cwd=tmp_path)
    assert "2 succeeded, 0 failed" in ran.stdout, ran.stdout
    said = daemon.usage_error("pueue", "add", "--", "echo", "queued by pueue's words")
    words = re.search(r"'pueue': gpuherd (submit -- .*) queues it", said)
    assert words, said
    submit, *command = shlex.split(words.group(1))
    job = int(daemon.cli(submit, "-q", *command).stdout.split()[0])
    daemon.wait_state(job, "succeeded")
    assert daemon.cli("log", str(job)).stdout == "queued by pueue's words\n"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["pueue", "kill", "--all"], "'pueue': gpuherd kill $(gpuherd ls -q) stops every job ("),
        (["pueue", "kill", "-a"], "'pueue': gpuherd kill $(gpuherd ls -q) stops every job ("),
        (["gpulimit", "kill", "all"], "'gpulimit': gpuherd kill $(gpuherd ls -q) stops every"),
        (["gpulimitc", "log", "main"], "'gpulimitc': gpuherd daemon log shows the daemon's own"),
        (["pueue", "wait", "-g", "x"], "'pueue': leave it out, and for -g use --project NAME ("),
        (["pueue", "edit", "3", "--label=x"], "leave it out, and for --label use --name NAME ("),
        # after `--`, the job's own words: nothing of them is answered
        (["pueue", "add", "--", "kill", "--all"], "'pueue': gpuherd submit -- kill --all queues"),
    ],
)
def test_a_word_after_a_verb_of_ours_is_answered_at_once(
    herd: Herd, args: list[str], said: str
) -> None:
    """`pueue kill --all` was answered "leave it out: gpuherd kill --all", which is refused
    in turn ("gpuherd kill $(gpuherd ls -q) ..."): two errors for one answer."""
    line = herd.usage_error(*args)
    assert said in line and "leave it out: gpuherd" not in line, line


def test_the_command_said_for_pueue_kill_all_kills_every_job(daemon: Herd, tmp_path: Path) -> None:
    jobs = [daemon.submit("sleep 60") for _ in range(2)]
    for job in jobs:
        daemon.wait_state(job, "running")
    said = daemon.usage_error("pueue", "kill", "--all")
    words = re.search(r"'pueue': (gpuherd kill .*\)) stops every job", said)
    assert words, said
    # As a shell runs it: `python -m gpuherd` in the place of `gpuherd`, $(...) and all.
    gpuherd = f"{shlex.quote(sys.executable)} -m gpuherd"
    line = words.group(1).replace("gpuherd", gpuherd)
    ran = subprocess.run(
        ["bash", "-c", line], env=daemon.env, capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran
    for job in jobs:
        daemon.wait_state(job, "killed")
