"""`gpuherd daemon restart [--kill]`: `daemon stop`, then `daemon start` as the daemon was:
its GPUs, its executor and its --listen address (which a plain start does not take). Running
jobs go on and the new daemon re-attaches to them; with no daemon running, one is started,
listening where the last one did."""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import socket
import sqlite3
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import psutil

from conftest import Herd, gone, group_members, wait_for


def restarted(herd: Herd, *options: str) -> list[str]:
    """`daemon restart OPTIONS`, which succeeds: the lines it printed (nothing on stderr)."""
    done = herd.cli("daemon", "restart", *options)
    assert done.stderr == "", done
    return done.stdout.splitlines()


def started_line(herd: Herd, gpus: str) -> str:
    """What `daemon start` prints first, for the daemon that runs now (`gpus`: `4 GPUs`)."""
    return f"daemon started (pid {herd.pid}, fake: {gpus}); socket {herd.client.socket_path}"


def refused(herd: Herd, *options: str) -> str:
    """`daemon restart OPTIONS`, refused: its one line (exit 1, nothing on stdout)."""
    proc = herd.cli("daemon", "restart", *options, check=False)
    assert (proc.returncode, proc.stdout) == (1, ""), proc
    assert proc.stderr.startswith("gpuherd: error: ") and proc.stderr.count("\n") == 1, proc
    return proc.stderr.removeprefix("gpuherd: error: ").rstrip("\n")


def test_a_running_job_goes_on_through_a_restart_and_ends_succeeded(
    daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    job = daemon.running_until(go)
    before = wait_for(lambda: daemon.job(job)["pid"], what="the job's pid")
    old = daemon.pid
    assert restarted(daemon) == [
        "stopping; 1 running job goes on and the next daemon re-attaches",
        "daemon stopped",
        started_line(daemon, "4 GPUs"),
    ]
    assert daemon.pid != old and gone(old)
    assert [g["index"] for g in daemon.json("gpus")["gpus"]] == [0, 1, 2, 3]  # remembered
    now = daemon.job(job)
    assert (now["state"], now["pid"]) == ("running", before)  # re-attached, not run again
    go.touch()
    ended = daemon.wait_state(job, "succeeded", "failed", "killed", "lost")
    assert (ended["state"], ended["attempt"]) == ("succeeded", 1)


def test_restart_kill_kills_the_running_jobs_first(daemon: Herd, tmp_path: Path) -> None:
    job = daemon.running_until(tmp_path / "go")
    pgid = wait_for(lambda: daemon.job(job)["pid"], what="the job's pid")
    assert restarted(daemon, "--kill") == [
        "stopping after killing 1 running job",
        "daemon stopped",
        started_line(daemon, "4 GPUs"),
    ]
    assert not group_members(pgid)
    assert (daemon.job(job)["state"], daemon.job(job)["outcome"]) == ("killed", "killed")


def answered(url: str) -> int:
    """The status of GET /api/v1/daemon over TCP, with the token of the dashboard's `url`."""
    parts = urlsplit(url)
    token = parse_qs(parts.query)["token"][0]
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        conn.request("GET", "/api/v1/daemon", headers={"Authorization": f"token {token}"})
        return conn.getresponse().status
    finally:
        conn.close()


def test_a_listening_daemon_comes_back_listening_at_the_same_address(herd: Herd) -> None:
    herd.start("--fake-gpus", "1", "--listen", "127.0.0.1:0")  # a port of the system's choice
    address = herd.client.get("/daemon/listen")["address"]
    lines = restarted(herd)
    assert lines[:3] == ["stopping", "daemon stopped", started_line(herd, "1 GPU")]
    listening = herd.client.get("/daemon/listen")
    assert (listening["listening"], listening["address"]) == (True, address)
    assert lines[3:] == [f"dashboard: {listening['url']}"]  # what `start --listen` says
    assert listening["url"].startswith(f"http://{address}/?token=")
    assert answered(listening["url"]) == 200
    # What the daemon does, not what it was started with: a listener stopped stays stopped,
    # and one `gpuherd ui` started is kept.
    herd.cli("ui", "--stop")
    assert restarted(herd)[3:] == []
    assert not herd.client.get("/daemon/listen")["listening"]
    herd.cli("ui", "--listen", "127.0.0.1:0")
    address = herd.client.get("/daemon/listen")["address"]
    assert restarted(herd)[3:] == [f"dashboard: {herd.client.get('/daemon/listen')['url']}"]
    assert herd.client.get("/daemon/listen")["address"] == address


def test_with_no_daemon_running_it_starts_one_as_the_last_one_started(herd: Herd) -> None:
    herd.start("--fake-gpus", "2")
    herd.cli("daemon", "stop")
    assert restarted(herd) == [
        f"no daemon was running for {herd.home}: starting one",
        started_line(herd, "2 GPUs"),
    ]


def test_with_no_daemon_running_it_listens_where_the_last_one_did_as_it_stopped(
    herd: Herd,
) -> None:
    """After a reboot, say. Before: the new daemon did not listen, though the help said "as
    the last one started". Where the last one listened as it stopped: a listener `gpuherd ui`
    started is kept, one `ui --stop` stopped stays stopped; a plain start still never listens."""
    herd.start("--fake-gpus", "1", "--listen", "127.0.0.1:0")  # a port of the system's choice
    address = herd.client.get("/daemon/listen")["address"]
    herd.cli("daemon", "stop")
    lines = restarted(herd)
    listening = herd.client.get("/daemon/listen")
    assert (listening["listening"], listening["address"]) == (True, address)
    assert lines == [
        f"no daemon was running for {herd.home}: starting one",
        started_line(herd, "1 GPU"),
        f"dashboard: {listening['url']}",  # what `start --listen` says
    ]
    assert answered(listening["url"]) == 200
    herd.cli("ui", "--stop")
    herd.cli("daemon", "stop")
    assert len(restarted(herd)) == 2  # (no dashboard line)
    assert not herd.client.get("/daemon/listen")["listening"]
    herd.cli("ui", "--listen", "127.0.0.1:0")
    address = herd.client.get("/daemon/listen")["address"]
    herd.cli("daemon", "stop")
    restarted(herd)
    assert herd.client.get("/daemon/listen")["address"] == address
    herd.cli("daemon", "stop")
    herd.cli("daemon", "start")
    assert not herd.client.get("/daemon/listen")["listening"]


def test_after_a_crash_it_listens_where_gpuherd_ui_left_the_dashboard(herd: Herd) -> None:
    """`ui` and `ui --stop` were saved at a clean stop only: after a crash (kill -9) a restart
    listened where the daemon had started listening (a listener the user had closed, open to
    the network again), and not where `gpuherd ui` had started one."""
    herd.start("--fake-gpus", "1", "--listen", "127.0.0.1:0")
    herd.cli("ui", "--stop")
    herd.kill9()
    assert restarted(herd)[2:] == []  # (no dashboard line)
    assert not herd.client.get("/daemon/listen")["listening"]
    herd.cli("ui", "--listen", "127.0.0.1:0")
    address = herd.client.get("/daemon/listen")["address"]
    herd.kill9()
    lines = restarted(herd)
    listening = herd.client.get("/daemon/listen")
    assert (listening["listening"], listening["address"]) == (True, address)
    assert lines[2:] == [f"dashboard: {listening['url']}"]


def test_a_listener_change_herd_db_cannot_save_is_made_and_said(herd: Herd) -> None:
    """herd.db locked by another program (an open `sqlite3` shell): `ui --stop` stops the
    listener all the same, and warns that a restart after a crash would not know it."""
    herd.env["GPUHERD_TEST_BUSY_TIMEOUT"] = "1"  # the daemon's wait for the lock: 1 s, not 5 s
    herd.start("--fake-gpus", "1", "--listen", "127.0.0.1:0")
    address = herd.client.get("/daemon/listen")["address"]
    with contextlib.closing(sqlite3.connect(herd.home / "herd.db")) as other:
        other.execute("BEGIN IMMEDIATE")  # what an open shell's write transaction holds
        done = herd.cli("ui", "--stop")
    assert done.stdout == "dashboard listener stopped\n"
    assert done.stderr == (
        "gpuherd: warning: where the dashboard listens is not saved in herd.db (database is "
        "locked): a clean stop saves it; after a crash, `gpuherd daemon restart` listens as "
        "before this change\n"
    )
    assert not herd.client.get("/daemon/listen")["listening"]
    herd.kill9()
    restarted(herd)  # as it said
    assert herd.client.get("/daemon/listen")["address"] == address


def test_a_port_taken_since_the_last_daemon_listened_there_is_one_line_with_the_way_out(
    herd: Herd,
) -> None:
    herd.start("--fake-gpus", "1", "--listen", "127.0.0.1:0")
    address = herd.client.get("/daemon/listen")["address"]
    herd.cli("daemon", "stop")
    host, _, port = address.rpartition(":")
    with socket.create_server((host, int(port))):  # another program took the port meanwhile
        proc = herd.cli("daemon", "restart", check=False)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc
    assert proc.stderr == (
        f"gpuherd: error: cannot listen on {address}: Address already in use (where the last "
        "daemon listened): free that port, or `gpuherd daemon start` starts one that does not "
        "listen (`gpuherd ui` then listens on a free port)\n"
    )
    herd.cli("daemon", "start")  # as it says
    assert not herd.client.get("/daemon/listen")["listening"]


def test_a_draining_daemon_is_left_to_drain(daemon: Herd, tmp_path: Path) -> None:
    go = tmp_path / "go"
    daemon.running_until(go)
    pid = daemon.pid
    drain = daemon.popen("daemon", "stop", "--drain")
    try:
        wait_for(lambda: daemon.client.get("/daemon")["stopping"] == "drain", what="a drain")
        assert refused(daemon) == (
            f"the daemon (pid {pid}) is draining: it stops once its 1 running job ends, then "
            "`gpuherd daemon start` starts the next; or `gpuherd daemon stop` stops it now "
            "(its jobs go on, and the next daemon re-attaches to them)"
        )
        assert daemon.client.get("/daemon")["stopping"] == "drain"  # untouched
        go.touch()
        assert drain.wait(timeout=30) == 0
    finally:
        drain.kill()
        drain.communicate()


def test_a_daemon_that_does_not_answer_is_named_and_left_alone(daemon: Herd) -> None:
    pid = daemon.pid
    daemon.env["GPUHERD_TEST_ANSWER_WITHIN"] = "1"
    os.kill(pid, signal.SIGSTOP)
    try:
        wait_for(lambda: psutil.Process(pid).status() == psutil.STATUS_STOPPED, what="stopped")
        assert refused(daemon) == (
            f"a daemon (pid {pid}) holds {daemon.home} but did not answer within 1s: it is "
            f"stopped (SIGSTOP, or Ctrl-Z): `kill -CONT {pid}` resumes it; `kill -9 {pid}` ends "
            "it (its running jobs go on, and the next `gpuherd daemon start` re-attaches to them)"
        )
    finally:
        os.kill(pid, signal.SIGCONT)
    assert daemon.pid == pid  # neither stopped nor replaced


def test_a_new_daemon_that_does_not_start_is_one_line(daemon: Herd, tmp_path: Path) -> None:
    # The new daemon inherits the restart's environment: a socket it cannot make (under a
    # file). The restart reaches the old one where it noted its socket.
    blocker = tmp_path / "a-file"
    blocker.touch()
    env = {**daemon.env, "GPUHERD_SOCKET": str(blocker / "herd.sock")}
    proc = daemon.cli("daemon", "restart", check=False, env=env)
    assert proc.returncode == 1, proc
    assert proc.stdout.splitlines() == ["stopping", "daemon stopped"]
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(
        "gpuherd: error: the daemon stopped, but the new one did not start (running jobs go "
        "on: the next `gpuherd daemon start` re-attaches to them): "
    ), proc.stderr
    assert not daemon.is_up()
