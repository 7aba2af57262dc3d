"""`gpuherd daemon restart` given an option of `daemon start` (`--fake-gpus 4`): a restart
brings back the daemon as it was, so it takes none of them; it says so on one line, with
the stop and the start that make the change, instead of click's bare "No such option"."""

from __future__ import annotations

import click
import pytest

from conftest import Herd
from gpuherd.cli.main import load_command

DAEMON = load_command("daemon")
assert isinstance(DAEMON, click.Group)
START, RESTART = DAEMON.commands["start"], DAEMON.commands["restart"]
TAKEN = {flag for param in RESTART.params for flag in getattr(param, "opts", ())}
START_ONLY = sorted(
    flag
    for param in START.params
    if isinstance(param, click.Option)
    for flag in param.opts
    if flag not in TAKEN
)


def said(option: str, start: str) -> str:
    return (
        f"gpuherd: error: daemon restart takes no {option}: it starts the daemon as it was; "
        f"to change that, gpuherd daemon stop, then gpuherd daemon start {start} "
        "(see gpuherd daemon restart --help)\n"
    )


def test_a_running_daemon_is_left_as_it_was(daemon: Herd) -> None:
    pid = daemon.pid
    assert daemon.usage_error("daemon", "restart", "--fake-gpus", "4") == said(
        "--fake-gpus", "--fake-gpus 4"
    )
    assert daemon.pid == pid  # (refused before anything stopped)


@pytest.mark.parametrize("option", START_ONLY)
def test_every_option_of_start_is_answered(herd: Herd, option: str) -> None:
    assert {"--gpus", "--fake-gpus", "--slots", "--listen", "--executor"} <= set(START_ONLY)
    error = herd.usage_error("daemon", "restart", option)
    assert error.startswith(f"gpuherd: error: daemon restart takes no {option}: "), error
    assert f"then gpuherd daemon start {option}" in error


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (["--fake-gpus=2x24GiB,1x80GiB"], "--fake-gpus 2x24GiB,1x80GiB"),
        (["--kill", "--listen", "127.0.0.1:8888"], "--listen 127.0.0.1:8888"),
        (["--listen"], "--listen HOST:PORT"),  # (no value given: its metavar)
        (["--fake-gpus", "/tmp/my gpus.json"], "--fake-gpus '/tmp/my gpus.json'"),
        (["--foreground"], "--foreground"),
    ],
)
def test_the_start_says_what_was_typed(herd: Herd, args: list[str], start: str) -> None:
    option = start.split()[0]
    assert herd.usage_error("daemon", "restart", *args) == said(option, start)


def test_an_option_no_command_takes_is_still_clicks(herd: Herd) -> None:
    assert herd.usage_error("daemon", "restart", "--bogus") == (
        "gpuherd: error: No such option '--bogus'. (see gpuherd daemon restart --help)\n"
    )


def test_drain_is_answered_with_the_stop_that_drains(daemon: Herd) -> None:
    """`stop --drain` waits for the running jobs; a restart keeps them running, so it takes
    no --drain, and says how to let them end first (it said "No such option")."""
    pid = daemon.pid
    assert daemon.usage_error("daemon", "restart", "--drain") == (
        "gpuherd: error: daemon restart takes no --drain: running jobs go on through a restart "
        "(the next daemon re-attaches to them); to let them end first, gpuherd daemon stop "
        "--drain, then gpuherd daemon start (see gpuherd daemon restart --help)\n"
    )
    assert daemon.pid == pid  # (refused before anything stopped)
