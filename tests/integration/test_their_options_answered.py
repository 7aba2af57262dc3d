"""Other tools' words answered by what they say, not by a guess or another tool's meaning:
pueue's short `add -l`, `-s` (a generic "No such option") and `-d 2h` (its --delay: it was
answered as task-spooler's `-d`, which takes no time); gflow's `gbatch` with its options,
and Slurm's `scancel --name`, `squeue -u`, answered with the command alone before."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Herd


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["submit", "-l", "lr0.1", "--", "true"], "'-l': use --name NAME (pueue's -l, --label)"),
        (["submit", "-s", "--", "true"], "'-s': use --hold (pueue's -s, --stashed)"),
        (["submit", "-d", "2h", "--", "true"], "'-d': use --begin +2h (pueue's -d, --delay)"),
        (["submit", "-d", "23:30", "--", "true"], "'-d': use --begin 23:30 (pueue's -d,"),
        # No time after it: task-spooler's -d, whose job's command follows.
        (["submit", "-d", "python", "x.py"], "'-d': use --after-any last: after the job"),
        (["submit", "-d", "3", "--", "true"], "'-d': use --after-any last: after the job"),
        (["submit", "-d"], "'-d': use --after-any last: after the job"),
        (
            ["scancel", "--name", "foo"],
            "'scancel': gpuherd kill $(gpuherd ls -q --name foo) stops the jobs of that name",
        ),
        (["scancel", "-u", "me"], "'scancel': gpuherd kill $(gpuherd ls -q) stops every job"),
        (
            ["squeue", "-u", "me"],
            "(Slurm's squeue); -u: leave it out: a daemon's jobs are all its user's",
        ),
        (["gqueue", "-s", "Running"], "; -s: use --state STATE (gflow's gqueue -s)"),
        (["scancel", "3"], "'scancel': gpuherd kill IDS stops jobs (Slurm's scancel)"),
        (["gbatch", "--conda-env", "ml", "x"], "'gbatch': --conda-env: gpuherd submit -- conda"),
        (["gbatch", "--unknown-h7", "x"], "'gbatch': gpuherd submit -- CMD queues a command"),
    ],
)
def test_their_words_are_answered_by_what_they_mean(herd: Herd, args: list[str], said: str) -> None:
    assert said in herd.usage_error(*args)


def test_gbatch_with_its_options_is_answered_with_the_submit_that_does_it(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    said = shared_daemon.usage_error(
        "gbatch", "--gpus", "1", "--time", "2:00:00", "--name", "r1", "python", "train.py"
    )
    assert said == (
        "gpuherd: error: No such command 'gbatch': gpuherd submit --gpus 1 --timeout 2:00:00 "
        "--name r1 -- python train.py queues it (gflow's gbatch) (see gpuherd --help)\n"
    )
    # Its other options by their names here: a bare --time is minutes there, @ the last job.
    said = shared_daemon.usage_error(
        "gbatch", "--time=30", "--max-retries", "2", "--depends-on", "@", "--memory", "1G",
        "echo", "hi",
    )  # fmt: skip
    command = "submit --timeout 30m --retries 2 --after last --ram 1G -- echo hi"
    assert f"'gbatch': gpuherd {command} queues it" in said
    first = shared_daemon.submit("--", "true")
    shared_daemon.wait_state(first, "succeeded")
    job = shared_daemon.submit(*command.split()[1:])
    done = shared_daemon.wait_state(job, "succeeded")
    assert (done["timeout"], done["retries"], done["after"]) == (1800, 2, [first])
