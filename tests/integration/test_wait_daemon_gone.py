"""`gpuherd wait` whose daemon goes away for good: it says to start one (exit 3), not the
stopping daemon's last words ("the daemon is stopping; wait again once it is back")."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import Herd
from gpuherd import client as client_module
from gpuherd.cli.job_cmds import wait
from gpuherd.client import Client


def test_a_wait_whose_daemon_never_came_back_says_to_start_one(
    daemon: Herd, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = daemon.submit("--gpus", "0", "--", "sleep 30")
    monkeypatch.setenv("GPUHERD_HOME", str(daemon.home))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)  # as daemon.cli finds the daemon
    monkeypatch.setattr(client_module, "WAIT_POLL", 0.2)  # each long poll answers soon
    monkeypatch.setattr(client_module, "RESTART_GRACE", 1.0)
    asked = threading.Event()
    real_get = Client.get

    def get(self: Client, path: str, **query: Any) -> Any:
        answer = real_get(self, path, **query)
        if path == "/jobs/wait":
            asked.set()  # the wait reached the daemon: it goes away now
        return answer

    monkeypatch.setattr(Client, "get", get)
    stopper = threading.Thread(target=lambda: asked.wait(15) and daemon.cli("daemon", "stop"))
    stopper.start()
    try:
        result = CliRunner().invoke(wait, [str(job), "-q"])
    finally:
        stopper.join(30)
    assert asked.is_set()
    assert result.exit_code == 3, result.output
    assert result.output == (
        "gpuherd: error: the daemon went away while this waited for jobs, and none came back "
        f"for {daemon.home}: start it again (`gpuherd daemon start`, or gpuherd.connect()): "
        "jobs go on meanwhile, and the next daemon re-attaches to them. Then wait again\n"
    )
