"""SIGTERM (or SIGINT) to the daemon: it stops cleanly, running jobs go on running and are
re-attached by the next daemon, and every queued job runs after the next start, once.

(`daemon stop`, `--drain` and `--kill` are in tests/integration/test_restart.py.)
"""

from __future__ import annotations

import os
import signal

import psutil
import pytest
from faults import query

from conftest import Herd, Recorder, wait_dead, wait_for


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_the_daemon_and_leaves_the_jobs(
    herd: Herd, recorder: Recorder, signum: int
) -> None:
    herd.start("--fake-gpus", "2")
    running = herd.submit_lines([recorder.cmd("runs", wait="go")] * 2)
    queued = herd.submit_lines([recorder.cmd("runs")] * 3)
    pids = {j: wait_for(lambda j=j: herd.job(j)["pid"], what=f"job {j} running") for j in running}
    assert [herd.job(j)["state"] for j in queued] == ["queued"] * 3

    daemon = psutil.Process(herd.pid)
    os.kill(daemon.pid, signum)
    wait_dead(daemon, timeout=15)
    for pid in pids.values():  # the running jobs were left running
        assert psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    states = dict(query(herd.home / "herd.db", "SELECT id, state FROM jobs"))
    assert [states[j] for j in running] == ["running"] * 2
    assert [states[j] for j in queued] == ["queued"] * 3  # none lost, none started

    herd.start()
    assert {j: herd.job(j)["pid"] for j in running} == pids  # re-attached, same processes
    assert [herd.job(j)["state"] for j in queued] == ["queued"] * 3
    recorder.go()
    for job_id in running + queued:
        assert herd.wait_state(job_id, "succeeded", "failed", "lost")["state"] == "succeeded"
    ran = sorted((r["id"], r["attempt"]) for r in recorder.lines("runs"))
    assert ran == [(j, 1) for j in running + queued]  # each once
    assert {r["pgid"] for r in recorder.lines("runs") if r["id"] in running} == set(pids.values())


@pytest.mark.parametrize(
    "signum",
    [
        pytest.param(
            signal.SIGTERM,
            id="SIGTERM",
        ),
        pytest.param(
            signal.SIGINT,
            id="SIGINT",
        ),
    ],
)
def test_a_signal_stops_the_daemon_as_cleanly_as_daemon_stop(herd: Herd, signum: int) -> None:
    herd.start("--fake-gpus", "1", "--listen", "127.0.0.1:0")
    socket_path = herd.client.socket_path
    token = herd.home / "ui_token"
    assert socket_path.exists() and token.exists()
    daemon = psutil.Process(herd.pid)
    os.kill(daemon.pid, signum)
    wait_dead(daemon, timeout=15)
    log = (herd.home / "daemon.log").read_text()
    assert token.stat().st_mode & 0o077 == 0  # kept, private, for the next daemon
    assert "Traceback" not in log, log[-2000:]
    assert f"daemon {daemon.pid} stopped" in log, log[-2000:]
    assert not socket_path.exists()  # a clean exit removes its socket
    assert not (herd.home / "herd.db-wal").exists()  # the store was closed (checkpointed)
