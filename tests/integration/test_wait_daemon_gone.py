"""A wait whose daemon goes away for good (`gpuherd wait`, a Python `job.wait()`): it says to
start one, not the stopping daemon's last words ("the daemon is stopping; wait again once it
is back"), which it said a minute after that daemon had stopped for good."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import Herd
from gpuherd import client as client_module
from gpuherd.cli.wait_cmd import wait
from gpuherd.client import Client
from gpuherd.errors import DaemonError
from gpuherd.pyapi import connect

GONE = (
    "the daemon went away while this waited for jobs, and none came back for {home}: start it "
    "again (`gpuherd daemon start`, or gpuherd.connect()): jobs go on meanwhile, and the next "
    "daemon re-attaches to them. Then wait again"
)


@contextmanager
def stopped_once_waited_on(daemon: Herd, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The daemon stops for good as soon as a wait has reached it (this process's)."""
    monkeypatch.setenv("GPUHERD_HOME", str(daemon.home))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)  # as daemon.cli finds the daemon
    monkeypatch.setattr(client_module, "WAIT_POLL", 0.2)  # each long poll answers soon
    monkeypatch.setattr(client_module, "RESTART_GRACE", 1.0)
    asked = threading.Event()
    real_request = Client.request

    def request(self: Client, method: str, path: str, *args: Any) -> Any:
        answer = real_request(self, method, path, *args)
        if path.split("?")[0] == "/jobs/wait":  # (a POST; to an older daemon, a GET)
            asked.set()  # the wait reached the daemon: it goes away now
        return answer

    monkeypatch.setattr(Client, "request", request)
    stopper = threading.Thread(target=lambda: asked.wait(15) and daemon.cli("daemon", "stop"))
    stopper.start()
    try:
        yield
    finally:
        stopper.join(30)
    assert asked.is_set()


def test_gpuherd_wait_says_to_start_a_daemon(daemon: Herd, monkeypatch: pytest.MonkeyPatch) -> None:
    job = daemon.submit("--gpus", "0", "--", "sleep 30")
    with stopped_once_waited_on(daemon, monkeypatch):
        result = CliRunner().invoke(wait, [str(job), "-q"])
    assert result.exit_code == 3, result.output
    assert result.output == "gpuherd: error: " + GONE.format(home=daemon.home) + "\n"


def test_herd_wait_says_to_start_a_daemon_in_the_name_typed(
    daemon: Herd, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = daemon.submit("--gpus", "0", "--", "sleep 30")
    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/herd", "wait", str(job), "-q"])
    with stopped_once_waited_on(daemon, monkeypatch):
        result = CliRunner().invoke(wait, [str(job), "-q"])
    assert result.exit_code == 3, result.output
    said = GONE.format(home=daemon.home).replace("`gpuherd daemon", "`herd daemon")
    assert result.output == "herd: error: " + said + "\n"
    assert "gpuherd.connect()" in said  # the Python API's name stays


def test_a_python_wait_says_to_start_a_daemon(
    daemon: Herd, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = connect(daemon.home, start=False).submit("sleep 30", gpus=0)
    with stopped_once_waited_on(daemon, monkeypatch), pytest.raises(DaemonError) as caught:
        job.wait(timeout=60)
    assert str(caught.value) == GONE.format(home=daemon.home)
