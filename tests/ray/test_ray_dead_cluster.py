"""A Ray cluster that does not answer: `daemon start` refuses at once with one line saying what
to do, instead of a daemon hung in `ray.init` for ever (deaf to SIGTERM, out of the CLI's reach).

A module of its own: its cluster is stopped on purpose (a head only, no GPU node: cheap).
"""

from __future__ import annotations

import socket
import subprocess
from typing import Any

import psutil
import pytest

from conftest import Herd, need, wait_for

need("ray.cluster_utils", "ray")

from ray._private import ray_constants
from ray_fixtures import lone_head, shutdown

from gpuherd import paths
from gpuherd.store import Store

pytestmark = pytest.mark.timeout(180)  # (with its module's cluster start: ~30 s under load)

ADVICE = (
    "start it, give another cluster with `--address HOST:PORT`, or run jobs on this machine "
    "with `--executor local`"
)


def free_port() -> int:
    """A TCP port nobody listens on (on any address of this machine)."""
    with socket.socket() as s:
        s.bind(("", 0))
        return int(s.getsockname()[1])


def refused(herd: Herd, proc: subprocess.CompletedProcess[str], cluster: str) -> None:
    """`daemon start` failed with exactly one line naming `cluster`, and no daemon is left."""
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"gpuherd: error: the Ray cluster at {cluster} does not answer")
    assert lines[0].endswith(ADVICE)
    wait_for(lambda: not herd._daemons(), 10, "the daemon to exit")


def executor_setting(herd: Herd) -> str | None:
    store = Store(paths.database(herd.home))
    try:
        return store.get_setting("executor")
    finally:
        store.close()


def test_start_on_an_address_nobody_answers_refuses(herd: Herd) -> None:
    address = f"127.0.0.1:{free_port()}"
    proc = herd.cli("daemon", "start", "--address", address, check=False)
    refused(herd, proc, address)
    assert not herd.is_up()
    # A dead address never takes the place of the last start's choice (here: none).
    assert executor_setting(herd) is None


def test_plain_start_refuses_when_the_remembered_cluster_is_gone(herd: Herd) -> None:
    cluster: Any = lone_head()
    try:
        address = str(cluster.address)
        herd.start("--address", address)
        job = herd.submit("--hold", "--gpus", "0", "--", "true")
        herd.cli("daemon", "stop")
    finally:
        shutdown(cluster)

    proc = herd.cli("daemon", "start", check=False)
    refused(herd, proc, f"{address} (remembered from the last start)")
    assert address in (executor_setting(herd) or "")  # still remembered, for when it is back
    # What the line advises works, and the queue is as it was.
    herd.start("--executor", "local", "--fake-gpus", "1")
    assert herd.job(job)["state"] == "held"


def test_a_gone_cluster_with_jobs_running_there_names_the_whole_way_out(herd: Herd) -> None:
    """`--executor local`, advised alone, was refused in turn for the jobs still running on
    the cluster (pointing at --abandon-running): a second try. Now the first line says it all."""
    cluster: Any = lone_head()
    try:
        address = str(cluster.address)
        herd.start("--address", address)
        job = herd.submit("--gpus", "0", "--", "echo up; exec sleep 600")
        herd.wait_state(job, "running")
        # Its command runs (`running` comes at the launch, its actor still starting): its
        # supervisor removes its scratch folder as the cluster stops. Stopped while the actor
        # started, the folder stayed (with spec.json) until another actor swept it.
        log = herd.home / "jobs" / str(job) / "attempt-1" / "stdout.log"
        wait_for(lambda: log.exists() and log.read_text() == "up\n", 60, "the job to run")
        herd.cli("daemon", "stop")  # the job goes on, on the cluster
    finally:
        shutdown(cluster)

    proc = herd.cli("daemon", "start", check=False)
    assert proc.returncode == 1 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.endswith(
        ": start it, give another cluster with `--address HOST:PORT --abandon-running`, or "
        "run jobs on this machine with `--executor local --abandon-running`: either counts "
        "the 1 job still running there lost\n"
    )
    herd.start("--executor", "local", "--abandon-running", "--fake-gpus", "1")  # as said
    assert herd.job(job)["state"] == "lost"


def test_start_on_a_hung_gcs_refuses_in_one_line(herd: Herd) -> None:
    """A head whose GCS accepts connections but does not answer (hung, here frozen). Before:
    `ray.init` retried for about 4 minutes, and `daemon start` gave up after 30 s with `the
    daemon (pid …) did not answer within 30s: still starting, or stuck`."""
    cluster: Any = lone_head()
    [gcs] = cluster.head_node.all_processes[ray_constants.PROCESS_TYPE_GCS_SERVER]
    hung = psutil.Process(gcs.process.pid)
    try:
        address = str(cluster.address)
        hung.suspend()
        proc = herd.cli("daemon", "start", "--address", address, check=False)
        refused(herd, proc, address)
        assert "no answer from a Ray GCS: Timed out" in proc.stderr
    finally:
        hung.resume()
        shutdown(cluster)
