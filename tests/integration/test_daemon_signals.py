"""Signals to the daemon other than SIGTERM. SIGHUP (a foreground daemon's terminal closed, or
`kill -HUP` for a reload gpuherd does not have) and SIGUSR1 ended it on the spot: nothing in
its log, its socket and herd.db's write-ahead log left behind. SIGHUP now stops it cleanly, as
SIGTERM does, and SIGUSR1/2 are ignored; the log says which signal came, and what it did."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Herd, gone, wait_for


def logged(herd: Herd) -> str:
    return (herd.home / "daemon.log").read_text()


def test_sighup_stops_a_foreground_daemon_cleanly_and_its_job_goes_on(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "1")  # the GPUs a foreground start reuses
    herd.cli("daemon", "stop")
    go = tmp_path / "go"
    with (tmp_path / "terminal.txt").open("ab") as terminal:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gpuherd", "daemon", "start", "--foreground"],
            env=herd.env,
            stdout=subprocess.DEVNULL,
            stderr=terminal,
        )
    try:
        wait_for(herd.is_up, what="the foreground daemon to answer")
        job = herd.running_until(go)
        proc.send_signal(signal.SIGHUP)  # as its terminal closing
        assert proc.wait(timeout=20) == 0  # (-1: killed by it)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    log = logged(herd)
    assert re.search(
        rf"daemon {proc.pid} got SIGHUP: stopping\n(.*\n)*.*daemon {proc.pid} stopped", log
    )
    assert not herd.client.socket_path.exists()
    assert not (herd.home / "herd.db-wal").exists()  # the store closed, its log folded in
    herd.start()
    assert herd.job(job)["state"] == "running"  # re-attached, as after a `daemon stop`
    go.touch()
    herd.wait_state(job, "succeeded")


@pytest.mark.parametrize("signum", [signal.SIGUSR1, signal.SIGUSR2])
def test_sigusr_is_ignored_and_logged(daemon: Herd, signum: signal.Signals) -> None:
    pid = daemon.pid
    marker = f"daemon {pid} got {signum.name}: ignored (it means nothing to gpuherd)"
    os.kill(pid, signum)
    wait_for(lambda: marker in logged(daemon) or gone(pid), what="the signal's line in the log")
    assert not gone(pid)  # (it ended the daemon)
    assert daemon.pid == pid  # still the one serving
    daemon.submit("true")
