"""Refusals a review found inconsistent, through the real CLI: job ids and GPU indices in
other scripts' digits (`rm ٢` removed job 2, where `show ٢` called the id invalid), numbers
in them, `priority` of one word showing an example that then failed, an empty job file's
name, `ui --listen ''` taken for no --listen, and dates in 9999 said to be after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Herd

IDS_HINT = "use ids like 5, 3-7,9 or 1 2 3"


def refused(herd: Herd, *args: str) -> str:
    """The one line of a usage error (exit 2), its `(see ... --help)` tail left off."""
    said = herd.usage_error(*args)
    return said.removeprefix("gpuherd: error: ").rpartition(" (see gpuherd ")[0]


def test_job_ids_in_other_digits_are_refused_by_every_verb_and_touch_no_job(
    daemon: Herd,
) -> None:
    assert daemon.submit("--hold", "--", "true") == 1
    assert daemon.submit("--hold", "--priority", "4", "--", "true") == 2
    # `show` refused it; the verbs that change jobs took it for job 2.
    assert refused(daemon, "show", "٢").startswith("invalid job id '٢': give a number")
    for verb in (["kill"], ["rm"], ["hold"], ["release"], ["retry"], ["wait"]):
        assert refused(daemon, *verb, "٢") == f"invalid job id '٢': {IDS_HINT}", verb
    assert refused(daemon, "priority", "٢", "9") == f"invalid job id '٢': {IDS_HINT}"
    assert refused(daemon, "kill", "1,٢") == f"invalid job id '٢' in '1,٢': {IDS_HINT}"
    assert refused(daemon, "submit", "--after", "٢", "--", "true") == (
        "--after: invalid job id '٢': use ids like 5 or 3-7,9 (comma-separated)"
    )
    # Numbers too: Python's int() takes `٢` for 2.
    assert refused(daemon, "submit", "--gpus", "٢", "--", "true") == (
        "--gpus: '٢' is not a whole number: use a whole number from 0 to 64"
    )
    assert refused(daemon, "submit", "--retries", "٤", "--", "true") == (
        "--retries: '٤' is not a whole number: use a whole number from 0 up"
    )
    assert refused(daemon, "submit", "--priority", "٣", "--", "true") == (
        "--priority takes a whole number, not '٣': higher runs first (the default is 0), e.g. -p 10"
    )
    assert refused(daemon, "priority", "2", "١") == (
        "a priority is a whole number, not '١': higher runs first (the default is 0), "
        "e.g. gpuherd priority 2 10"
    )
    assert refused(daemon, "log", "-n", "٢", "1") == (
        "--lines: '٢' is not a whole number: use a whole number from 0 up"
    )
    assert refused(daemon, "log", "--attempt", "٢", "1") == (
        "--attempt takes a whole number, not '٢': attempts are numbered from 1 (gpuherd show "
        "lists them), e.g. --attempt 2"
    )
    jobs = {job["id"]: (job["state"], job["priority"]) for job in daemon.ls_all()}
    assert jobs == {1: ("held", 0), 2: ("held", 4)}  # none removed, released or submitted


def test_gpu_indices_in_other_digits_are_refused_and_drain_nothing(daemon: Herd) -> None:
    hint = "use GPU indices like 0, 0-3 or 0,2"
    assert refused(daemon, "gpus", "drain", "٢") == f"invalid GPU index '٢': {hint}"
    assert refused(daemon, "gpus", "drain", "0-٢") == f"invalid GPU index '0-٢': {hint}"
    assert refused(daemon, "submit", "--only-gpus", "٢", "--", "true") == (
        f"--only-gpus: invalid GPU index '٢': {hint}"
    )
    assert [gpu["draining"] for gpu in daemon.json("gpus")["gpus"]] == [False] * 4
    daemon.cli("gpus", "drain", "2")
    assert refused(daemon, "gpus", "enable", "٢") == f"invalid GPU index '٢': {hint}"
    assert [gpu["draining"] for gpu in daemon.json("gpus")["gpus"]] == [False, False, True, False]
    assert daemon.ls_all() == []


@pytest.mark.parametrize(
    ("word", "example"),
    [
        # (A whole number, `priority 3` or `-3`, is the priority without its ids: nothing to
        # change, exit 0, test_cli_cover_fixes.py.)
        ("abc", "7"),
        ("3-", "7"),
        ("٢", "7"),
        ("1-3,9", "1-3,9"),  # jobs: their priority was left out
        ("last", "last"),
    ],
)
def test_priority_of_one_word_shows_an_example_that_works(
    herd: Herd, word: str, example: str
) -> None:
    assert refused(herd, "priority", word) == (
        "no priority given: gpuherd priority IDS P takes job ids, then a whole number P "
        f"(higher runs first), e.g. gpuherd priority {example} 10"
    )
    # The example as given is a valid command line: it goes on to ask the daemon (none here).
    tried = herd.cli("priority", example, "10", check=False)
    assert tried.returncode == 3, tried.stderr
    assert tried.stderr.startswith("gpuherd: error: no gpuherd daemon is running"), tried.stderr


def test_an_empty_job_file_name_is_said_to_be_empty(herd: Herd, tmp_path: Path) -> None:
    # It was `cannot read : No such file or directory: ...`, and `run ''` probed the GPUs
    # first (without a driver: `no NVIDIA driver found`).
    given = "give a file of commands, one a line, or - to read the jobs from standard input"
    assert refused(herd, "submit", "--file", "") == f"--file is empty: {given}"
    for args in ([""], ["--fake-gpus", "2", ""], ["--gpus", "0", ""], ["--", ""]):
        assert refused(herd, "run", *args) == f"FILE is empty: {given}", args
    assert sorted(path.name for path in tmp_path.iterdir()) == []  # no herd_runs, no home


def test_ui_listen_is_checked_as_daemon_start_checks_it(daemon: Herd) -> None:
    # '' was taken for no --listen: the dashboard started on the default address, exit 0;
    # `x` was the daemon's refusal, exit 1.
    for address in ("", "x"):
        for command in (["ui"], ["daemon", "start"]):
            assert refused(daemon, *command, "--listen", address) == (
                f"--listen: invalid listen address '{address}': use HOST:PORT, e.g. 127.0.0.1:8888"
            ), command
    assert refused(daemon, "ui", "--listen", "127.0.0.1:99999") == (
        "--listen: invalid port in listen address '127.0.0.1:99999': use 0-65535"
    )
    not_listening = daemon.cli("ui", "--url", check=False)
    assert (not_listening.returncode, not_listening.stderr) == (
        1,
        "gpuherd: error: the daemon is not listening on TCP: `gpuherd ui` starts the dashboard\n",
    )
    started = daemon.cli("ui", "--listen", "127.0.0.1:0")  # (a good one still starts it)
    assert started.stdout.startswith("dashboard: http://127.0.0.1:"), started.stdout


def test_a_date_in_9999_past_the_latest_names_the_latest(herd: Herd) -> None:
    # Both said `that is after the year 9999`, of dates in 9999.
    latest = "that is after 9999-12-30 00:00, the latest time gpuherd takes"
    assert refused(herd, "ls", "--since", "9999-12-31T00:00") == (
        f"--since: invalid time '9999-12-31T00:00': {latest}"
    )
    assert refused(herd, "submit", "--begin", "9999-12-31T23:59", "--", "true") == (
        f"--begin: invalid time '9999-12-31T23:59': {latest}"
    )
