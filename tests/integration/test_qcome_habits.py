"""The habits of a pueue or Slurm user the other tests of their words left unanswered: pueue's
callback written as the on-end hook, `reset` (a program, so it was offered as a job to queue),
`add -o N` (a priority there), its `-g GROUP`, `--all` and `--signal`, and Slurm's `srun`,
`sinfo`, `-u $USER` and `--name` of squeue and scancel."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from conftest import Herd, wait_for


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["reset"], "No such command 'reset': gpuherd kill $(gpuherd ls -q) ends every job, then"),
        (["srun", "python", "train.py"], "gpuherd submit --follow -- CMD queues a command"),
        (["sinfo"], "No such command 'sinfo': gpuherd gpus lists the GPUs"),
        (["kill", "-u", "me"], "gpuherd kill $(gpuherd ls -q) stops every job: a daemon's jobs"),
        (["kill", "--name=train"], "gpuherd kill $(gpuherd ls -q --name NAME) stops the jobs"),
        (["ls", "-u", "me"], "No such option '-u': leave it out: a daemon's jobs are all its"),
        (["ls", "--me"], "(Slurm's squeue --me)"),
        (["ls", "-n", "train"], "No such option '-n': use --name NAME, or a pattern"),
        (["submit", "-i", "--", "true"], "No such option '-i': use --priority P to put it first"),
        (["kill", "-g", "g"], "gpuherd kill $(gpuherd ls -q --project NAME) stops a project's"),
        (["kill", "--signal", "USR1", "3"], "gpuherd kill IDS sends SIGTERM, then SIGKILL after"),
        (["pause", "-g", "g"], "gpuherd hold $(gpuherd ls -q --project NAME --state queued)"),
        (["resume", "--all"], "leave it out: gpuherd resume starts the queue again"),
        (["wait", "-a"], "leave it out: gpuherd wait waits for every job queued, running or"),
        (["retry", "--all-failed"], "gpuherd retry $(gpuherd ls -q --all --state failed) runs"),
        (["log", "-l", "5", "3"], "No such option '-l': use --lines N (-n N): the last N lines"),
        # docker's and kubectl's: click guessed "Did you mean one of: 'log', 'ls'?"
        (["logs", "--tail", "5", "1"], "No such command 'logs': gpuherd log ID prints a job's"),
        # pueue's `add -o 10` is a priority: the job's output went to a file named 10.
        (["submit", "-o", "10", "--", "true"], "--output 10: -o names the file the output goes"),
    ],
)
def test_a_habit_is_answered_with_what_does_it_here(herd: Herd, args: list[str], said: str) -> None:
    assert said in herd.usage_error(*args)  # (no daemon: refused before asking one)


def test_an_on_end_written_as_pueues_callback_is_warned_of_with_the_command_that_works(
    daemon: Herd, tmp_path: Path
) -> None:
    """`{{ id }}` reached the hook's shell as written: every job's notice said `Task {{ id }}`."""
    ends = tmp_path / "ends.txt"
    callback = f'echo "Task {{{{ id }}}} {{{{result}}}}" >> {ends}'
    told = daemon.cli("config", "set", "on-end", callback)
    assert told.stdout == f"on-end = {callback}\n"  # set as asked
    warning = told.stderr.strip()
    assert warning.startswith(
        "gpuherd: warning: on-end: {{ id }}, {{result}}: pueue's callback placeholders are "
        "not filled in here (the hook's shell gets them as written); the hook is told of the "
        "job by variables: gpuherd config set on-end "
    ), warning
    # The command it gives, set as given, tells the hook the job's id and state.
    suggested = shlex.split(warning.split("gpuherd config set on-end ", 1)[1])
    assert suggested == [f'echo "Task $GPUHERD_JOB_ID $GPUHERD_JOB_STATE" >> {ends}']
    assert daemon.cli("config", "set", "on-end", *suggested).stderr == ""  # nothing to say
    job = daemon.submit("--", "exit 3")
    wait_for(lambda: ends.exists() and ends.read_text(), 30, "the hook's line")
    assert ends.read_text() == f"Task {job} failed\n"
    # One with no variable here is named so, and left as it is.
    told = daemon.cli("config", "set", "on-end", 'cd "{{ path }}" && echo {{ id }}')
    assert told.stderr.endswith(
        "the hook is told of the job by variables ({{ path }}: none here, leave it out): "
        """gpuherd config set on-end 'cd "{{ path }}" && echo $GPUHERD_JOB_ID'\n"""
    ), told.stderr


def test_a_command_that_sets_its_own_gpus_is_warned_of(shared_daemon: Herd) -> None:
    """`CUDA_VISIBLE_DEVICES=3 CMD`, by hand as with simple_gpu_scheduler, or pueue's
    `$PUEUE_WORKER_ID`: queued unsaid, the job ran on GPU 3 whatever GPU it was placed on."""
    told = shared_daemon.cli("submit", "--hold", "--", "CUDA_VISIBLE_DEVICES=3 python train.py")
    assert told.stderr.endswith(
        "gpuherd: warning: the command sets CUDA_VISIBLE_DEVICES=3, so the job would not run on "
        "the GPUs gpuherd places it on and holds for it, but on ones another job may hold: "
        "leave it out (gpuherd sets it), or submit with --only-gpus 3 to keep the job on those\n"
    ), told.stderr
    pueues = "export CUDA_VISIBLE_DEVICES=$PUEUE_WORKER_ID; python train.py"
    told = shared_daemon.cli("submit", "--hold", "--", pueues)
    assert "sets CUDA_VISIBLE_DEVICES=$PUEUE_WORKER_ID, so" in told.stderr
    assert told.stderr.strip().endswith("leave it out (gpuherd sets it)")
    for fine in (
        ["--only-gpus", "3", "--", "CUDA_VISIBLE_DEVICES=3 true"],  # (where it runs anyway)
        ["--gpus", "0", "--", "CUDA_VISIBLE_DEVICES=3 true"],  # (no GPU of gpuherd's)
        ["--", "CUDA_VISIBLE_DEVICES= true"],  # (hides the GPUs)
        ["--", "echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"],  # (a word, not set)
    ):
        assert "CUDA_VISIBLE_DEVICES" not in shared_daemon.cli("submit", "--hold", *fine).stderr
