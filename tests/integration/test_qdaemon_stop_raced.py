"""Two `daemon stop` (or a stop and a restart) at once: the daemon that the first one stops
closes the second one's connection before answering it, and the second failed, exit 1, with
`lost the connection to the daemon: ConnectionResetError(104, ...)`. A plain stop, whose ask
holds, says so and exits 0; one with --kill or --drain, which was not taken, says what to do.
The same when the daemon closes the connection of the stop's first question, its status."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from conftest import Herd
from gpuherd.cli import daemon_cmds
from gpuherd.client import Client
from gpuherd.errors import HerdError, LostConnection


class FirstStopWins(Client):
    """A client whose stop request meets a daemon another stop stops first: that one's is
    sent, and this one's connection is lost, as when the daemon closes it on its way out."""

    def post(self, path: str, body: Any = None) -> Any:
        assert path == "/daemon/stop"
        Client(self.home).post(path, {"mode": "leave"})
        raise LostConnection("lost the connection to the daemon: ConnectionResetError(104, '')")


def test_a_stop_that_another_stop_beat_says_the_daemon_stopped(
    daemon: Herd, capsys: pytest.CaptureFixture[str]
) -> None:
    job = daemon.submit("--", "sleep 60")
    daemon.wait_state(job, "running")
    pid = daemon.client.get("/daemon")["pid"]
    assert daemon_cmds.stop_daemon(FirstStopWins(daemon.home), pid, "leave") is None
    assert capsys.readouterr().out == (
        "stopping (another stop was stopping it already)\ndaemon stopped\n"
    )
    assert not daemon.is_up()
    daemon.start()  # its job went on, and is re-attached
    assert daemon.wait_state(job, "running")["attempt"] == 1


@pytest.mark.parametrize("mode", ["kill", "drain"])
def test_a_kill_or_drain_that_another_stop_beat_says_it_was_not_taken(
    daemon: Herd, mode: str
) -> None:
    pid = daemon.client.get("/daemon")["pid"]
    with pytest.raises(HerdError) as refused:
        daemon_cmds.stop_daemon(FirstStopWins(daemon.home), pid, mode)
    assert str(refused.value) == (
        f"the daemon (pid {pid}) was stopping already, as another `gpuherd daemon stop` asked, "
        f"and stopped without this one's --{mode}: running jobs may go on (`gpuherd ls`); "
        f"`gpuherd daemon start`, then `gpuherd daemon stop --{mode}`"
    )
    assert not daemon.is_up()


class StatusLost(Client):
    """A client whose first question, the daemon's status, meets a daemon another stop stops
    first: that stop is sent, and this one's connection is lost."""

    def get(self, path: str, **query: Any) -> Any:
        assert path == "/daemon"
        Client(self.home).post("/daemon/stop", {"mode": "leave"})
        raise LostConnection("lost the connection to the daemon: ConnectionResetError(104, '')")


@pytest.mark.parametrize("mode", ["leave", "kill"])
def test_a_stop_whose_status_another_stop_cut_short_says_the_daemon_stopped(
    daemon: Herd, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """It said `lost the connection to the daemon: ConnectionResetError(104, ...)`, exit 1."""
    pid = daemon.client.get("/daemon")["pid"]
    monkeypatch.setattr(daemon_cmds, "Client", StatusLost)
    monkeypatch.setenv("GPUHERD_HOME", str(daemon.home))
    result = CliRunner().invoke(daemon_cmds.stop, [] if mode == "leave" else ["--kill"])
    if mode == "leave":
        assert (result.exit_code, result.output) == (
            0,
            "stopping (another stop was stopping it already)\ndaemon stopped\n",
        ), result.exception
    else:  # (main() says it, exit 1)
        assert isinstance(result.exception, daemon_cmds.StoppedByAnother), result.output
        assert str(result.exception).startswith(
            f"the daemon (pid {pid}) was stopping already, as another `gpuherd daemon stop` "
            "asked, and stopped without this one's --kill"
        )
    assert not daemon.is_up()
