"""Stops and restarts that meet another one, or a daemon of another version. A plain stop
during a `stop --kill` ended the daemon at once (the kill's grace cut short, its job left
running, and both stops said "daemon stopped"); of two restarts at once, one failed (also
one during the other's `--kill`), or said that no daemon was running; and
`daemon restart` warned that the daemon it replaced ran another version, and to restart it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest
from click.testing import CliRunner

from conftest import Herd, gone, wait_for
from gpuherd import __version__
from gpuherd.api.system import _stopping_already
from gpuherd.cli.daemon_restart import restart
from gpuherd.client import Client
from gpuherd.errors import Conflict, DaemonError, HerdError
from waits import read_line

STUBBORN = 'trap "" TERM; while true; do sleep 0.05; done'
"""A job that ignores SIGTERM: only a kill's SIGKILL, after its grace, ends it."""


def test_a_plain_stop_during_a_stop_kill_waits_for_the_kill(daemon: Herd) -> None:
    job = daemon.submit("--", STUBBORN)
    daemon.wait_state(job, "running")
    pid = wait_for(lambda: daemon.job(job)["pid"], what="the job's pid")
    killing = daemon.popen("daemon", "stop", "--kill", "--grace", "2")
    try:
        wait_for(lambda: daemon.client.get("/daemon")["stopping"] == "kill", what="the kill")
        second = daemon.cli("daemon", "stop")
        assert second.stdout == (
            "stopping already after killing 1 running job, as another stop asked: waiting for "
            "it\ndaemon stopped\n"
        )
        assert gone(pid)  # killed at the end of its grace, not left running
        out, err = killing.communicate(timeout=30)
    finally:
        killing.kill()
    assert (killing.returncode, err) == (0, b""), err
    assert out == b"stopping after killing 1 running job\ndaemon stopped\n"
    daemon.start()
    assert daemon.job(job)["state"] == "killed"


@pytest.mark.parametrize(
    ("asked", "mode", "joins"),
    [
        ("kill", "leave", True),  # the kill (and its grace) goes on: waited for
        ("kill", "kill", True),
        ("drain", "drain", True),
        ("leave", "leave", True),
        ("drain", "leave", False),  # a plain stop ends a drain now (README: Draining)
        ("drain", "kill", False),  # a --kill hastens it
        (None, "leave", False),
    ],
)
def test_which_stops_join_the_one_in_progress(asked: str | None, mode: str, joins: bool) -> None:
    assert (_stopping_already(asked, mode, 1) is not None) == joins


def test_a_kill_asked_of_a_daemon_a_plain_stop_is_ending_is_refused() -> None:
    """It is on its way out and can no longer kill: said, where "daemon stopped" hid it."""
    with pytest.raises(Conflict) as refused:
        _stopping_already("leave", "kill", 1)
    assert "without --kill: running jobs go on" in str(refused.value)


def restart_together(herd: Herd) -> list[subprocess.CompletedProcess[str]]:
    """Two `daemon restart` started at the same moment, both waited for."""
    calls = [
        subprocess.Popen(
            [sys.executable, "-m", "gpuherd", "daemon", "restart"],
            env=herd.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    done = []
    for call in calls:
        out, err = call.communicate(timeout=60)
        done.append(subprocess.CompletedProcess(call.args, call.returncode, out, err))
    return done


def test_two_restarts_at_once_both_succeed(daemon: Herd) -> None:
    for _ in range(2):  # (the race goes one way or another: each round is one more chance)
        old = daemon.pid
        done = restart_together(daemon)
        for call in done:
            assert (call.returncode, call.stderr) == (0, ""), call
        new = daemon.pid
        assert new != old and gone(old)
        others = [c.stdout for c in done if "by another call at the same time" in c.stdout]
        for said in others:
            assert said.endswith(f"by another call at the same time (pid {new})\n"), said
        daemons = [p for p in daemon._daemons() if p.status() != psutil.STATUS_ZOMBIE]
        assert [p.pid for p in daemons] == [new]


STOPPING = """
import fcntl, os, sys
home = sys.argv[1]
lock = open(os.path.join(home, "daemon.lock"), "a+")
fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
lock.truncate(0)
lock.write(f"{os.getpid()}\\n")
lock.flush()
note = os.path.join(home, "daemon.socket")
os.mkfifo(note)
print("held", flush=True)
for look in range(2):
    with open(note, "w"):  # returns once a client opens the note to read it
        os.unlink(note)  # (a new one for the next read: this one's reader has it open yet)
        if look:
            lock.close()
        else:
            os.mkfifo(note)
"""
"""A daemon on its way out for another call, as the second of two restarts finds it: its
socket gone, its lock held until it exits. Here a process that holds the home's lock, and
lets go of it once the client has seen it held and waits: a client that finds no socket
reads the home's socket note, here a FIFO, whose open waits for this process. The first
read comes before the client's first look at the lock, the second after it."""


def while_stopping(herd: Herd, verb: str) -> subprocess.CompletedProcess[str]:
    """`gpuherd daemon VERB` while the home's daemon is on its way out (STOPPING)."""
    herd.start("--fake-gpus", "1")
    herd.cli("daemon", "stop")
    (herd.home / "daemon.socket").unlink(missing_ok=True)
    stopping = subprocess.Popen(
        [sys.executable, "-c", STOPPING, str(herd.home)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert stopping.stdout is not None and stopping.stdout.readline() == "held\n"
        done = herd.cli("daemon", verb, check=False)
        assert stopping.wait(timeout=10) == 0  # (it let go: the client read the note twice)
    finally:
        stopping.kill()
        stopping.communicate()
    return done


def test_a_restart_that_finds_the_daemon_stopping_for_another_call_joins_that_stop(
    herd: Herd,
) -> None:
    """Its socket gone, its lock let go while the restart waited for its socket: the restart
    said "no daemon was running ...: starting one", though one was, stopping for the other
    of two restarts at once."""
    done = while_stopping(herd, "restart")
    assert (done.returncode, done.stderr) == (0, ""), done
    assert done.stdout.splitlines() == [
        "stopping (another call was stopping it already)",
        "daemon stopped",
        # (no next daemon came from the other call: this one starts it, as that one would)
        f"daemon started (pid {herd.pid}, fake: 1 GPU); socket {herd.client.socket_path}",
    ]


def test_a_stop_that_finds_the_daemon_stopping_for_another_call_says_so(herd: Herd) -> None:
    """As the restart above: it said "no gpuherd daemon is running ...: nothing to stop",
    though one was, stopping for another call."""
    done = while_stopping(herd, "stop")
    assert (done.returncode, done.stderr) == (0, ""), done
    assert done.stdout == "daemon stopped by another call at the same time\n"


@pytest.mark.parametrize("kill", [False, True])
def test_a_restart_during_a_restart_kill_waits_for_the_kill_and_succeeds(
    daemon: Herd, kill: bool
) -> None:
    """It was refused, exit 1 (`is stopping after killing its running jobs: gpuherd daemon
    start once it has stopped`), while the other restart brought the daemon back."""
    job = daemon.submit("--", STUBBORN)
    daemon.wait_state(job, "running")
    pid, old = wait_for(lambda: daemon.job(job)["pid"], what="the job's pid"), daemon.pid
    killing = daemon.popen("daemon", "restart", "--kill", "--grace", "2")
    try:
        wait_for(lambda: daemon.client.get("/daemon")["stopping"] == "kill", what="the kill")
        second = daemon.cli("daemon", "restart", *(["--kill"] if kill else []), check=False)
        assert (second.returncode, second.stderr) == (0, ""), second
        assert gone(pid)  # killed at the end of the first one's grace, not left running
        out, err = killing.communicate(timeout=30)
    finally:
        killing.kill()
        killing.communicate()
    assert (killing.returncode, err) == (0, b""), err
    assert out.decode().startswith("stopping after killing 1 running job\ndaemon stopped\n")
    new = daemon.pid
    lines = second.stdout.splitlines()
    assert lines[:2] == [
        "stopping already after killing 1 running job, as another stop asked: waiting for it",
        "daemon stopped",
    ]
    assert lines[2:] == [f"daemon restarted by another call at the same time (pid {new})"] or (
        len(lines) == 3 and lines[2].startswith(f"daemon started (pid {new}, ")
    ), lines
    assert new != old and gone(old)
    daemons = [p for p in daemon._daemons() if p.status() != psutil.STATUS_ZOMBIE]
    assert [p.pid for p in daemons] == [new]
    assert daemon.job(job)["state"] == "killed"


def start_older(herd: Herd, tmp_path: Path) -> None:
    """A daemon as one left running by an upgrade (`pip install -U`): started here with its
    version changed at its start (a sitecustomize on PYTHONPATH, which it inherits)."""
    older = tmp_path / "older"
    older.mkdir()
    (older / "sitecustomize.py").write_text("import gpuherd\ngpuherd.__version__ = '0.0.9'\n")
    herd.cli("daemon", "start", "--fake-gpus", "2", env={**herd.env, "PYTHONPATH": str(older)})
    assert herd.json("daemon", "status")["version"] == "0.0.9"


def test_stop_of_a_daemon_of_another_version_warns_not_to_restart_it(
    herd: Herd, tmp_path: Path
) -> None:
    """(It warned: "the daemon runs gpuherd 0.0.9 and this is ...: restart it", of the
    daemon it was stopping.)"""
    start_older(herd, tmp_path)
    done = herd.cli("daemon", "stop")
    assert (done.stdout.splitlines()[-1], done.stderr) == ("daemon stopped", "")


def test_restart_of_a_daemon_of_another_version_says_the_upgrade_without_a_warning(
    herd: Herd, tmp_path: Path
) -> None:
    start_older(herd, tmp_path)
    done = herd.cli("daemon", "restart")
    assert done.stderr == ""  # (a warning to run `daemon restart`, from `daemon restart`)
    assert done.stdout.splitlines()[-1] == (
        f"upgraded: the daemon ran gpuherd 0.0.9; the new one runs {__version__}"
    )
    status = herd.cli("daemon", "status", "--json")
    assert (status.stderr, '"version": "' + __version__ + '"' in status.stdout) == ("", True)


@pytest.mark.parametrize(
    "lost",
    [
        DaemonError("lost the connection to the daemon: ConnectionResetError(104, '')"),
        Conflict("the daemon is stopping already, as another `gpuherd daemon stop` asked"),
    ],
)
def test_a_restart_kill_that_a_plain_restart_beat_says_how_to_kill_the_jobs_now(
    daemon: Herd, monkeypatch: pytest.MonkeyPatch, lost: HerdError
) -> None:
    """Its kill was said not done, with `gpuherd daemon start` to do: pointless, the other
    restart had started the next daemon, which re-attached the jobs still to kill."""
    job = daemon.submit("--", "sleep 60")
    daemon.wait_state(job, "running")
    real_post = Client.post

    def post(self: Client, path: str, body: Any = None) -> Any:
        if path != "/daemon/stop":
            return real_post(self, path, body)
        daemon.cli("daemon", "restart")  # the other call's plain restart gets there first
        raise lost  # (this one's connection closed on the way out, or its kill refused)

    monkeypatch.setattr(Client, "post", post)
    monkeypatch.setenv("GPUHERD_HOME", str(daemon.home))
    result = CliRunner().invoke(restart, ["--kill"])
    new = daemon.pid
    assert isinstance(result.exception, HerdError), result.output  # (main() says it, exit 1)
    assert str(result.exception) == (
        "--kill not done: another call was stopping the daemon already, without"
        f" --kill; the daemon running now (pid {new}) re-attached 1 running job: `gpuherd daemon"
        " restart --kill` kills them now, or `gpuherd kill $(gpuherd ls -q --state"
        " running,paused)`"
    )
    assert daemon.job(job)["state"] == "running"


START_AS_A_RESTART = """
import sys
from pathlib import Path
from gpuherd.cli.main import main
from gpuherd.restart_marker import restart_under_way

with restart_under_way(Path(sys.argv[1])):
    main(["daemon", "start", *sys.argv[2:]])
"""
"""`gpuherd daemon start ARGS` in the home $1, made by a process that keeps a restart's note."""


def test_a_restart_between_another_restarts_stop_and_start_joins_that_restart(
    herd: Herd,
) -> None:
    """No daemon runs between a restart's stop and the next daemon's start: a restart that
    came then said "no daemon was running ...: starting one", though one had just run and the
    other restart was starting the next (restart_marker.py). The other restart is played by
    a process of the test, its note in the home, and its start by the test's."""
    herd.start("--fake-gpus", "1")
    herd.cli("daemon", "stop")
    other = subprocess.Popen(["sleep", "60"])  # (the other restart, alive)
    (herd.home / f"restarting.{other.pid}").touch()
    joining = herd.popen("daemon", "restart")
    try:
        assert joining.stdout is not None
        said = bytearray()
        lines = [read_line(joining.stdout.fileno(), said) for _ in range(2)]
        assert lines == [b"stopping (another call was stopping it already)", b"daemon stopped"]
        # The other restart's start, made as a restart makes it: by the process that keeps
        # a restart's note (a `daemon start` of another process waits for the restarts
        # under way, this one's too: client_restart.py).
        subprocess.run(
            [sys.executable, "-c", START_AS_A_RESTART, str(herd.home), "--fake-gpus", "1"],
            env=herd.env,
            check=True,
            capture_output=True,
            timeout=60,
        )
        out, err = joining.communicate(timeout=30)
    finally:
        other.kill()
        other.wait()
        if joining.poll() is None:
            joining.kill()
            joining.communicate()
    assert (joining.returncode, err) == (0, b""), out
    assert out.decode().splitlines() == [
        f"daemon restarted by another call at the same time (pid {herd.pid})"
    ]
    assert bytes(said) == b""
