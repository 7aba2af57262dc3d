"""Setting values that were taken, or answered 500, and could never work: a NUL byte or more
than 128 KiB in `on-end`, a NUL byte in a project name, a count in digits `submit` refuses
(`1_000`, `٣`), a `keep-ram` that leaves no memory to start a job with. Each is now refused
when set, in one line, and the setting kept as it was. And `config set` to a daemon that
does not answer says what shows whether it was set, not the jobs."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from typing import Any

import psutil
import pytest

from conftest import Herd, started_once, wait_for


@pytest.fixture(scope="module")
def settings_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    """A daemon of this module's own: its tests change settings (each sets back what it
    changed: a refused value changes nothing)."""
    with started_once(tmp_path_factory, "--fake-gpus", "1") as herd:
        yield herd


def _post_config(herd: Herd, name: str, value: str) -> tuple[int, Any]:
    status, _, body = herd.request(
        "POST", "/api/v1/config", json.dumps({"name": name, "value": value})
    )
    return status, json.loads(body)


def _value(herd: Herd, name: str) -> str:
    return str(herd.cli("config", "get", name).stdout.strip())


@pytest.mark.parametrize("value", ["echo a\0b", "\0"])
def test_an_on_end_with_a_nul_byte_is_a_422_not_a_500(settings_daemon: Herd, value: str) -> None:
    status, answer = _post_config(settings_daemon, "on-end", value)
    assert (status, answer) == (  # was 500, `internal error (ValueError: embedded null byte)`
        422,
        {"error": "on-end: a NUL byte in the command: remove it (no program can receive it)"},
    )
    assert _value(settings_daemon, "on-end") == "none"


def test_an_on_end_longer_than_a_program_may_be_given_is_refused(settings_daemon: Herd) -> None:
    command = "echo " + "x" * 300_000  # was taken, then failed at every job's end (E2BIG)
    status, answer = _post_config(settings_daemon, "on-end", command)
    assert (status, answer) == (
        422,
        {
            "error": "on-end: the command is 300,005 bytes, over the 128 KiB a program's "
            "argument may hold: put it in a script file and set on-end to run that"
        },
    )
    assert _value(settings_daemon, "on-end") == "none"


def test_a_project_name_with_a_nul_byte_is_refused(settings_daemon: Herd) -> None:
    status, answer = _post_config(settings_daemon, "project-limits", "a\0b=1")
    assert (status, answer) == (  # was taken: a limit no project could ever match
        422,
        {
            "error": "project-limits: invalid limit: a NUL byte in a project name: remove it "
            "(no job's project can hold one)"
        },
    )
    assert _value(settings_daemon, "project-limits") == "none"


@pytest.mark.parametrize(
    ("name", "value"),
    [("retries", "1_000"), ("max-running", "٣"), ("cpu-jobs", "١٠"), ("retries", "3.0")],
)
def test_a_count_is_refused_where_submit_refuses_it(
    settings_daemon: Herd, name: str, value: str
) -> None:
    # `submit --retries 1_000` (or ٣) is refused: the setting took them as 1000 and 3.
    before = _value(settings_daemon, name)
    refused = settings_daemon.cli("submit", "--retries", value, "--", "true", check=False)
    assert refused.returncode == 2 and "is not a whole number" in refused.stderr, refused
    said = settings_daemon.usage_error("config", "set", name, value)
    assert said.startswith(f"gpuherd: error: {name}: invalid count '{value}': use a number "), said
    status, answer = _post_config(settings_daemon, name, value)
    assert status == 422 and answer["error"].startswith(f"{name}: invalid count"), answer
    assert _value(settings_daemon, name) == before


def test_a_project_count_in_other_digits_is_refused(settings_daemon: Herd) -> None:
    said = settings_daemon.usage_error("config", "set", "project-limits", "p=٣")
    assert said.startswith("gpuherd: error: project-limits: invalid limit 'p=٣': use PROJECT=N")


def test_a_count_submit_takes_is_taken(settings_daemon: Herd) -> None:
    for value in ("+3", " 3 ", "03"):  # as `submit --retries +3` takes them
        said = settings_daemon.cli("config", "set", "retries", value).stdout
        assert said == "retries = 3\n"
    settings_daemon.cli("config", "unset", "retries")


def test_a_keep_ram_that_leaves_the_daemon_nothing_is_refused_as_all_of_it_is(
    settings_daemon: Herd,
) -> None:
    # 99.99% was taken; then no job at all started, with --ram or without.
    said = settings_daemon.usage_error("config", "set", "keep-ram", "99.99%")
    assert said.startswith("gpuherd: error: keep-ram: "), said
    assert " the daemon itself holds: no job could start (none starts while less than " in said
    assert said.endswith(
        "keep-ram is available); give less, or a share like 20% (see gpuherd config set --help)\n"
    )
    every = settings_daemon.usage_error("config", "set", "keep-ram", "1000GiB")
    assert ": no job could start (none starts while less than keep-ram is available); " in every
    assert "with --ram" not in every  # (it said "no job with --ram could start")
    assert _value(settings_daemon, "keep-ram") == "0"


def test_a_setting_sent_to_a_stopped_daemon_says_to_look_at_the_setting(
    settings_daemon: Herd,
) -> None:
    """It said to look at `ls --all` (were the jobs queued? killed?)."""
    herd = settings_daemon
    env = {**herd.env, "GPUHERD_TEST_ANSWER_WITHIN": "2"}
    pid = herd.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        process = psutil.Process(pid)
        wait_for(lambda: process.status() == psutil.STATUS_STOPPED, what="the daemon stopped")
        set_ = herd.cli("config", "set", "retries", "4", check=False, env=env, timeout=30)
        unset = herd.cli("config", "unset", "grace", check=False, env=env, timeout=30)
    finally:
        os.kill(pid, signal.SIGCONT)
    for proc, name in ((set_, "retries"), (unset, "grace")):
        assert proc.returncode == 1, proc
        assert proc.stderr.endswith(
            "; the request was sent, so the daemon may still carry it out once it answers: "
            f"look with `gpuherd config get {name}` (was it set?) before asking again\n"
        ), proc.stderr
        assert "were the jobs queued" not in proc.stderr
    assert wait_for(lambda: _value(herd, "retries") == "4", what="the setting made once resumed")
    herd.cli("config", "unset", "retries")
