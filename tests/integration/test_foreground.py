"""`gpuherd daemon start --foreground`, as a service manager (systemd) runs it: the process it
started is the daemon, it logs to stderr and to daemon.log, and SIGTERM stops it as `daemon
stop` does: the running job goes on, and the next daemon re-attaches to it."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

from conftest import Herd, Recorder, wait_for


def foreground(herd: Herd, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gpuherd", "daemon", "start", "--foreground"],
            env=herd.env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    wait_for(herd.is_up, what="the foreground daemon to answer")
    return proc


def test_sigterm_stops_a_foreground_daemon_and_its_job_goes_on(
    herd: Herd, recorder: Recorder, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "1")  # the GPU configuration a service's later starts reuse
    herd.cli("daemon", "stop")
    journal = tmp_path / "journal.txt"
    first = foreground(herd, journal)
    try:
        assert herd.pid == first.pid  # the service's main process is the daemon itself
        job_id = herd.submit("--", recorder.cmd("out", wait="go"))
        wait_for(lambda: recorder.waiting("out") == 1, what="the job to start")
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=20) == 0
    finally:
        if first.poll() is None:
            first.kill()
    assert not herd.is_up()
    assert f"daemon {first.pid} stopped" in journal.read_text()
    assert f"daemon {first.pid} serving" in (herd.home / "daemon.log").read_text()

    second = foreground(herd, journal)
    try:
        assert herd.job(job_id)["state"] == "running"  # re-attached, not lost
        recorder.go()
        herd.wait_state(job_id, "succeeded")
        assert len(recorder.lines("out")) == 1  # it ran once, through the restart
        second.send_signal(signal.SIGTERM)
        assert second.wait(timeout=20) == 0
    finally:
        if second.poll() is None:
            second.kill()


def test_a_foreground_daemon_that_cannot_start_says_why_in_daemon_log_too(herd: Herd) -> None:
    # A service restarted on failure: `gpuherd daemon log` is where its user looks.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = herd.cli(
            "daemon",
            "start",
            "--foreground",
            "--fake-gpus",
            "1",
            "--listen",
            f"127.0.0.1:{port}",
            check=False,
        )
    assert proc.returncode == 1
    said = [line for line in proc.stderr.splitlines() if line.startswith("gpuherd daemon:")]
    assert len(said) == 1 and "cannot listen" in said[0], proc.stderr
    assert said[0] in (herd.home / "daemon.log").read_text()
    assert herd.cli("daemon", "log").stdout.strip().endswith(said[0])
