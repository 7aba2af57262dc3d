"""A gpulimit or GPUPeasy user's habits: their commands (`add`, `set`, `debug`, `log main`,
`move ID INDEX`, `kill all`), options (`--logpath`, GPUPeasy's `outfile` and `jobname`) and
scheduling parameters (`set MAX_ERR_TIMES 3`) are answered with what they are called here,
and what the answers offer works."""

from __future__ import annotations

import pytest

from conftest import Herd


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["add", "--priority=1", "python3", "main.py"], "here a higher one does"),
        (["status"], "gpuherd daemon status and gpuherd gpus show the daemon and the GPUs"),
        (["set"], "No such command 'set': gpuherd config lists the settings"),
        (["set", "MAX_ERR_TIMES", "3"], "gpuherd config set NAME VALUE changes one"),
        (["debug", "3"], "No such command 'debug': gpuherd show ID prints a failed job's last"),
        (["start", "3"], "gpuherd retry IDS runs killed or failed jobs again"),
        # click guessed "Did you mean '--file'?": a file read as the jobs' commands.
        (["submit", "--outfile", "out.txt", "--", "true"], "(GPUPeasy's outfile)"),
        (["submit", "--logpath=./", "true"], "'--logpath': use --output DIR/%j.log: the job"),
        (["submit", "--jobname", "a", "--", "true"], "use --name NAME (GPUPeasy's jobname)"),
        # Job-id arguments: click said "invalid job id 'main'", "Got unexpected extra argument".
        (["log", "main"], "'main' is no job id: gpuherd daemon log shows the daemon's own log"),
        (["kill", "all"], "'all' is no job id: gpuherd kill $(gpuherd ls -q) stops every job"),
        (["rm", "3", "all"], "'all' is no job id: gpuherd clean removes every finished job"),
        (["move", "3", "0"], "gpuherd move 3 --first puts it at the front (gpulimit's move 3 0)"),
    ],
)
def test_a_gpulimit_or_gpupeasy_word_is_answered_with_what_it_is_called_here(
    herd: Herd, args: list[str], said: str
) -> None:
    line = herd.usage_error(*args)  # (no daemon: refused before asking one)
    assert said in line and "Did you mean" not in line


def test_gpulimits_parameters_name_the_setting_that_does_their_job(daemon: Herd) -> None:
    for name, said in [
        ("MAX_ERR_TIMES", "use retries: MAX_ERR_TIMES 3 (three runs in all) is retries 2"),
        ("safety_keep_memory", "use keep-ram: SAFETY_KEEP_MEMORY 0.2 is keep-ram 20%"),
        ("SAFETY_KEEP_GPU_MEMORY", "use keep-free for the share of each GPU's memory kept"),
    ]:
        refused = daemon.cli("config", "set", name, "0.2", check=False)
        assert refused.returncode == 2
        assert f"unknown setting '{name}': {said}" in refused.stderr, refused.stderr
    polling = daemon.cli("config", "get", "TIMER_POLLING_TIME", check=False)
    assert "leave it out: gpuherd starts a job as soon as a GPU frees" in polling.stderr
    # What the answers offer is taken as shown.
    assert daemon.cli("config", "set", "retries", "2").stdout == "retries = 2\n"
    assert daemon.cli("config", "set", "keep-ram", "20%").stdout.startswith("keep-ram = 20%")


def test_what_the_answers_offer_does_what_gpulimits_commands_did(daemon: Herd) -> None:
    daemon.cli("pause")  # nothing starts: the queue stays as submitted
    first = daemon.submit("--", "true")
    second = daemon.submit("--", "true")
    # gpulimit's `move ID 0`, as the answer words it.
    moved = daemon.cli("move", str(second), "--first")
    assert moved.stdout.startswith(f"job {second}: moved")
    assert daemon.cli("ls", "-q").stdout.split() == [str(second), str(first)]
    daemon.cli("resume")
    # gpulimit's `debug ID`: a failed job's traceback.
    crash = daemon.submit("--", "echo 'ZeroDivisionError: division by zero' >&2; exit 1")
    daemon.wait_state(crash, "failed")
    assert "ZeroDivisionError: division by zero" in daemon.cli("show", str(crash)).stdout
    # gpulimit's `log main`: the daemon's own log.
    assert daemon.cli("daemon", "log").stdout.strip()
