"""What the job and queue verbs answer at their rough edges: a job file with no command, a
queue paused or resumed twice, `priority` without its value. Each said something another
verb would not: a file unnamed, `queue paused` again as if it had changed, click's own
"Missing argument 'PRIORITY'."."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Herd


@pytest.mark.parametrize("text", ["", "# only a comment\n\n   \n"])
def test_a_job_file_with_no_command_is_named_and_nothing_is_queued(
    daemon: Herd, tmp_path: Path, text: str
) -> None:
    (tmp_path / "empty.txt").write_text(text)
    proc = daemon.cli("submit", "--file", "empty.txt", check=False, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == (
        "gpuherd: error: empty.txt holds no command (only comments or blank lines): put in "
        "it one command a line, as python train.py --lr 0.1\n"
    )
    piped = daemon.cli("submit", "--file", "-", input=text, check=False)
    assert piped.returncode == 1
    assert piped.stderr.startswith("gpuherd: error: standard input holds no command ")
    assert daemon.ls_all() == []


def test_pausing_or_resuming_the_queue_twice_says_it_already_was(daemon: Herd) -> None:
    def said(verb: str) -> str:
        proc = daemon.cli(verb)  # exit 0: the state asked for holds
        assert proc.stderr == ""
        return proc.stdout

    assert said("resume") == "queue was not paused: nothing to resume\n"
    assert said("pause") == "queue paused: running jobs go on, nothing new starts\n"
    assert said("pause") == "queue already paused: running jobs go on, nothing new starts\n"
    assert daemon.json("daemon", "status")["queue_paused"] is True
    assert said("resume") == "queue resumed\n"
    assert said("resume") == "queue was not paused: nothing to resume\n"
    assert daemon.json("daemon", "status")["queue_paused"] is False


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ("priority", "last"),
            "no priority given: gpuherd priority IDS P takes job ids, then a whole number P",
        ),
        (
            ("priority",),
            "no job id given: gpuherd priority IDS P takes job ids, then a whole number P",
        ),
    ],
)
def test_priority_without_its_values_says_what_to_give_in_one_line(
    herd: Herd, args: tuple[str, ...], said: str
) -> None:
    proc = herd.cli(*args, check=False)  # refused before any daemon is asked
    assert (proc.returncode, proc.stdout) == (2, "")
    job = args[1] if len(args) > 1 else "7"  # the example names the job given
    assert proc.stderr == (
        f"gpuherd: error: {said} (higher runs first), e.g. gpuherd priority {job} 10 "
        "(see gpuherd priority --help)\n"
    )
    usage = herd.cli("priority", "--help").stdout.splitlines()[0]
    assert usage == "Usage: gpuherd priority [OPTIONS] IDS... PRIORITY"


def test_a_verb_on_jobs_that_do_not_exist_says_so_as_log_does(shared_daemon: Herd) -> None:
    """The verbs on several jobs said `no job 99` alone, where log, show, wait, priority and
    move add where to find the jobs there are; ids that name no job share that one line."""
    missing = "99999"
    said = shared_daemon.cli("log", missing, check=False).stderr
    assert said == (
        f"gpuherd: error: no job {missing}: `gpuherd ls --all` lists the jobs there are\n"
    )
    for verb in ("kill", "pause", "resume", "hold", "release", "retry", "rm"):
        proc = shared_daemon.cli(verb, missing, check=False)
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", said), verb
    edit = shared_daemon.cli("edit", missing, "--name", "x", check=False)
    assert (edit.returncode, edit.stdout, edit.stderr) == (1, "", said)

    held = shared_daemon.submit("--hold", "--", "true")
    mixed = shared_daemon.cli("hold", str(held), "99990", "99998-99999", check=False)
    assert (mixed.returncode, mixed.stdout) == (1, f"job {held}: already held\n")
    assert mixed.stderr == (
        "gpuherd: error: no job 99990, 99998-99999: `gpuherd ls --all` lists the jobs there are\n"
    )
