"""A task-spooler (tsp) user's and a gflow user's first day: their commands, typed to gpuherd
from habit, are answered with what they are called here, and what the answer names does what
their tool did: `tsp CMD` queues CMD, `tsp -D ID` runs after ID however it ended, `-W ID` only
after it succeeded, and gflow's `gbatch --array` script gets its index in the variable."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from conftest import Herd


def _ran(herd: Herd, words: list[str], cwd: Path | None = None) -> tuple[str, str]:
    """Run a `gpuherd submit ...` an answer named (its words after `gpuherd`), quietly; once
    its job ended, its state and output."""
    assert words[0] == "submit", words
    submitted = herd.cli("submit", "-q", *words[1:], cwd=cwd)
    job = int(submitted.stdout.split()[0])
    state = herd.wait_state(job, "succeeded", "failed", "cancelled")["state"]
    return state, herd.cli("log", str(job), check=False).stdout


def _named_submit(said: str) -> list[str]:
    """The `gpuherd submit -- CMD` a `No such command` answer names, as words."""
    found = re.search(r"No such command '[^']*': gpuherd (submit -- .*) queues it \(tsp CMD", said)
    assert found, said
    return shlex.split(found.group(1))


def test_a_command_typed_as_tsp_queues_it_is_answered_with_the_submit_that_queues_it(
    shared_daemon: Herd,
) -> None:
    """`tsp sh -c ...` queues the command: gpuherd said only "No such command 'sh'."."""
    herd = shared_daemon
    said = herd.usage_error("sh", "-c", 'echo "queued: $1"', "sh", "a b")
    assert "(tsp CMD, gflow's gbatch CMD)" in said
    assert _ran(herd, _named_submit(said)) == ("succeeded", "queued: a b\n")


def test_a_script_of_this_folder_typed_as_tsp_queues_it_is_answered_as_dot_slash_script(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    """`tsp job.sh 7`: a script named without ./, which sh would look up on PATH."""
    herd = shared_daemon
    script = tmp_path / "job.sh"
    script.write_text('#!/bin/sh\necho "step $1"\n')
    script.chmod(0o755)
    refused = herd.cli("job.sh", "7", check=False, cwd=tmp_path)
    assert refused.returncode == 2, refused
    words = _named_submit(refused.stderr)
    assert words == ["submit", "--", "./job.sh", "7"]
    assert _ran(herd, words, cwd=tmp_path) == ("succeeded", "step 7\n")


def test_a_word_that_names_no_program_is_still_no_such_command(herd: Herd) -> None:
    said = herd.usage_error("no-such-program-h7", "x")
    assert "No such command 'no-such-program-h7'." in said
    assert "submit" not in said


@pytest.mark.parametrize("flag", ["-D", "-d"])
def test_tsp_D_and_d_are_answered_with_the_option_that_runs_after_a_failure_too(
    shared_daemon: Herd, flag: str
) -> None:
    """task-spooler 1.1 on (and its GPU version): -D ID and -d run the job once ID (the last
    job) ended, however it ended; the answer named --after, which cancelled it instead."""
    herd = shared_daemon
    failed = herd.submit("--", "exit 3")
    herd.wait_state(failed, "failed")
    said = herd.usage_error(flag, str(failed), "true") if flag == "-D" else herd.usage_error(flag)
    found = re.search(r"gpuherd submit (--after\S*) (IDS|last) -- CMD", said)
    assert found, said
    option, which = found.groups()
    ids = str(failed) if which == "IDS" else "last"
    assert _ran(herd, ["submit", option, ids, "--", "echo ran"]) == ("succeeded", "ran\n")


def test_tsp_W_is_answered_with_the_option_that_waits_for_success(shared_daemon: Herd) -> None:
    herd = shared_daemon
    said = herd.usage_error("-W", "1", "true")
    found = re.search(r"gpuherd submit (--after\S*) IDS -- CMD", said)
    assert found, said
    failed, good = herd.submit("--", "exit 3"), herd.submit("--", "true")
    option = found.group(1)
    assert _ran(herd, ["submit", option, str(failed), "--", "true"])[0] == "cancelled"
    assert _ran(herd, ["submit", option, str(good), "--", "echo ran"]) == ("succeeded", "ran\n")


def test_gflows_array_answer_gives_a_script_its_index_in_the_variable(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    """`gbatch --array 1-3 ./job.sh`, whose script reads $GFLOW_ARRAY_TASK_ID: the answer's
    sweep sets it for each point (the {i} of a sweep is in the command, not the environment)."""
    herd = shared_daemon
    said = herd.usage_error("submit", "--array", "1-3", "./job.sh")
    found = re.search(r"gpuherd sweep ('GFLOW_ARRAY_TASK_ID=\{i\} [^']*') -p i", said)
    assert found, said
    (template,) = shlex.split(found.group(1))
    script = tmp_path / "job.sh"
    script.write_text('#!/bin/sh\necho "task $GFLOW_ARRAY_TASK_ID"\n')
    script.chmod(0o755)
    out = herd.cli(
        "sweep", template, "-p", "i", "1", "2", "3", "--name", "array", "-q", cwd=tmp_path
    )
    jobs = [int(word) for word in out.stdout.split()]
    for job in jobs:
        herd.wait_state(job, "succeeded")
    logs = sorted(herd.cli("log", str(job)).stdout for job in jobs)
    assert logs == ["task 1\n", "task 2\n", "task 3\n"]


def test_a_placeholder_in_a_sweeps_env_is_warned_of_with_the_command_that_sets_it(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    """`--env GFLOW_ARRAY_TASK_ID={i}`: the points got '{i}' itself, and nothing said so."""
    herd = shared_daemon
    script = tmp_path / "job.sh"
    script.write_text('#!/bin/sh\necho "task $GFLOW_ARRAY_TASK_ID"\n')
    script.chmod(0o755)
    given = ("-p", "i", "1", "2", "--env", "GFLOW_ARRAY_TASK_ID={i}", "--name", "env", "-q")
    out = herd.cli("sweep", "./job.sh", *given, cwd=tmp_path)
    found = re.search(
        r"set the variable in the command instead: gpuherd sweep ('[^']*')", out.stderr
    )
    assert found, out.stderr
    assert shlex.split(found.group(1)) == ["GFLOW_ARRAY_TASK_ID={i} ./job.sh"]
    jobs = [int(word) for word in out.stdout.split()]
    for job in jobs:
        herd.wait_state(job, "succeeded")
    assert {herd.cli("log", str(job)).stdout for job in jobs} == {"task {i}\n"}  # as warned


@pytest.mark.parametrize(
    ("args", "said"),
    [
        # task-spooler's flags given to gpuherd itself
        (["-G", "2", "true"], "No such option '-G': gpuherd submit --gpus N -- CMD (tsp -G)"),
        (["-N", "2", "true"], "a job counts as one against gpuherd config set max-running N"),
        (["-n", "true"], "gpuherd submit --output /dev/null -- CMD keeps none of its output"),
        (["-E", "true"], "a job's stderr is always kept apart from its stdout; gpuherd log ID"),
        (["-p", "3"], "gpuherd show ID prints its pid, gpuherd ls --columns id,pid"),
        (["-o", "3"], "gpuherd show ID names its stdout and stderr files"),
        (["-s", "3"], "gpuherd show ID prints its state"),
        (["-T"], "gpuherd kill $(gpuherd ls -q --state running) stops every running job"),
        (["-V"], "No such option '-V': gpuherd --version (tsp -V)"),
        (["submit", "-D", "3", "--", "true"], "No such option '-D': use --after-any IDS: once"),
        (["submit", "-W", "3", "--", "true"], "No such option '-W': use --after IDS: only once"),
        (["submit", "-G", "2", "--", "true"], "No such option '-G': use --gpus N (tsp -G)"),
        # gflow's commands and options
        (["gbatch", "--gpus", "1", "true"], "'gbatch': gpuherd submit --gpus 1 -- true queues"),
        (["gqueue"], "No such command 'gqueue': gpuherd ls lists the jobs"),
        (["gcancel", "3"], "No such command 'gcancel': gpuherd kill IDS stops jobs"),
        (["cancel", "3"], "No such command 'cancel': gpuherd kill IDS stops jobs"),
        (["ginfo"], "No such command 'ginfo': gpuherd gpus lists the GPUs"),
        (["gjob", "show", "3"], "No such command 'gjob': gpuherd show ID tells everything"),
        (["gflowd", "up"], "No such command 'gflowd': gpuherd daemon start"),
        (["submit", "--depends-on", "3", "true"], "use --after IDS: once they all succeeded"),
        (["submit", "--depends-on-any", "3,4", "true"], "none here starts a job once the first"),
        (["submit", "--no-auto-cancel", "true"], "is cancelled (dependency_failed)"),
        (["submit", "--max-retries", "2", "true"], "No such option '--max-retries': use --retries"),
        (["submit", "--gpu-memory", "20G", "true"], "use --mem SIZE, the GPU memory it needs"),
        (["submit", "--shared", "true"], "use --mem SIZE: jobs with --mem share GPUs"),
        (["submit", "--memory", "8G", "true"], "No such option '--memory': use --ram SIZE"),
        (["submit", "--conda-env", "ml", "true"], "conda run --no-capture-output -n ENV CMD"),
        (["submit", "--time", "30", "true"], "a bare number is seconds here, not minutes: --time"),
        (["sweep", "true {i}", "-p", "i", "1", "--max-concurrent", "2"], "use --max-parallel N"),
        (["ls", "-P", "ml"], "No such option '-P': use --project NAME (gflow's gqueue -P)"),
        (["ls", "-s", "Running"], "No such option '-s': use --state STATE (gflow's gqueue -s)"),
        (["ls", "-t"], "No such option '-t': gpuherd show ID names the jobs it waits for"),
        (["ls", "-f", "JOBID,ST"], "No such option '-f': use --columns id,name,state,time"),
    ],
)
def test_a_tsp_or_gflow_word_is_answered_with_what_it_is_called_here(
    herd: Herd, args: list[str], said: str
) -> None:
    assert said in herd.usage_error(*args)  # (no daemon: refused before asking one)


def test_tsp_maxfinished_is_answered_with_clean(shared_daemon: Herd) -> None:
    said = shared_daemon.usage_error("config", "set", "TS_MAXFINISHED", "10")
    assert "finished jobs stay until gpuherd clean removes them" in said
