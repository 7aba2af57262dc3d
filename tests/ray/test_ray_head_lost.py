"""The cluster's head goes away under a running daemon (its machine reboots, `ray stop`): the
daemon keeps answering and says why nothing starts, counts the running job lost after a
bounded time, and is not ended by Ray's client when the head stays away; when a new head
(a new cluster) answers at the address, it says to restart it, and a restart joins it. Nor
does `ls` of a job held for its unwatched run wait for it.

A module of its own: its cluster loses its head on purpose (a head and one node, 2 fake GPUs).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from conftest import Herd, need, wait_dead, wait_for
from reliability.test_restored_database import (
    as_if_never_paused,
    attempt_json,
    backup,
    job_command,
    restore,
    running,
)

need("ray.cluster_utils", "ray")

from ray._private import ray_constants
from ray.cluster_utils import Cluster
from ray_fixtures import reaping

from gpuherd.executors.ray import home_tag
from gpuherd.executors.ray_actor import scratch_root

pytestmark = pytest.mark.timeout(180)  # (with its module's cluster start: ~30 s under load)

RECONNECT = 5
"""Ray's gcs_rpc_server_reconnect_timeout_s (60 s by default), lowered for every Ray process
of this test, the daemon's environment included: Ray ends a process whose GCS has not
answered for that long. The node's raylet (and the job with it) does end; the daemon, which
sets its own Ray client's timeout, must not. The test waits it out (and the job's
LOST_AFTER after it), so it is kept short."""
LOST_AFTER = 4
"""GPUHERD_RAY_LOST_AFTER: seconds a job's actor may go unheard while the head is away."""
ANSWER_WITHIN = 5.0
"""Seconds `ls` and `daemon status` may take while the head is away."""


def start_cluster(port: int = 0) -> Any:
    """A head without GPUs (its GCS on `port`, if given) and a node with 2 fake GPUs."""
    head: dict[str, Any] = {"num_cpus": 1, "num_gpus": 0}
    if port:
        head["gcs_server_port"] = port
    cluster: Any = Cluster(initialize_head=True, connect=False, head_node_args=head)
    cluster.add_node(num_cpus=1, num_gpus=2)
    cluster.wait_for_nodes()
    # Each raylet's agents (dashboard, runtime env): a raylet killed outright (the head
    # removed, the node's raylet ended by the head's absence) leaves them running for good,
    # ~90 MB each; Ray's shutdown knows only the processes it started itself.
    cluster.test_agents = [
        agent
        for node in [cluster.head_node, *cluster.worker_nodes]
        for raylet in node.all_processes[ray_constants.PROCESS_TYPE_RAYLET]
        for agent in psutil.Process(raylet.process.pid).children(recursive=True)
    ]
    return cluster


def stop_cluster(cluster: Any) -> None:
    with reaping(cluster.head_node, *cluster.worker_nodes):
        for node in list(cluster.worker_nodes):  # by handle: never `ray stop`
            cluster.remove_node(node, allow_graceful=False)
        cluster.shutdown()
    for agent in cluster.test_agents:  # (psutil checks that the pid is still that process)
        with contextlib.suppress(psutil.NoSuchProcess):
            agent.kill()


@pytest.fixture(name="clusters")
def clusters_fixture(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """The test's clusters (the first started here), each stopped at the end; their
    processes read RECONNECT."""
    monkeypatch.setenv("RAY_gcs_rpc_server_reconnect_timeout_s", str(RECONNECT))
    clusters = [start_cluster()]
    try:
        yield clusters
    finally:
        for cluster in clusters:
            stop_cluster(cluster)


def answered(herd: Herd, *args: str) -> str:
    """The output of `gpuherd ARGS`, which must come within ANSWER_WITHIN seconds."""
    began = time.monotonic()
    out = herd.cli(*args, timeout=ANSWER_WITHIN * 2).stdout
    took = time.monotonic() - began
    assert took < ANSWER_WITHIN, f"`gpuherd {' '.join(args)}` took {took:.1f}s"
    return out


def clean_up(herd: Herd) -> None:
    """Stop the test's daemon and its jobs; remove its actors' scratch folders (a lost
    attempt's stays on its dead node: here, this machine)."""
    herd.cleanup()
    namespace = f"gpuherd-{home_tag(herd.home)}"
    for folder in scratch_root().glob(f"{namespace}-*"):
        shutil.rmtree(folder, ignore_errors=True)
    os.environ.pop("GPUHERD_HOME", None)


def test_the_daemon_outlives_its_clusters_head(clusters: list[Any], tmp_path: Path) -> None:
    doomed = clusters[0]
    herd = Herd(tmp_path / "home")
    herd.env["RAY_gcs_rpc_server_reconnect_timeout_s"] = str(RECONNECT)
    herd.env["GPUHERD_RAY_LOST_AFTER"] = str(LOST_AFTER)
    address = str(doomed.address)
    try:
        herd.start("--address", address)
        job = herd.submit("--", "echo up; exec sleep 300")
        herd.wait_state(job, "running", timeout=30)
        out = tmp_path / "home" / "jobs" / str(job) / "attempt-1" / "stdout.log"
        wait_for(lambda: out.exists() and out.read_text() == "up\n", 30, "the job to run")
        daemon = psutil.Process(herd.pid)

        with reaping(doomed.head_node):
            doomed.remove_node(doomed.head_node, allow_graceful=False)  # GCS, raylet, all of it
        gone = time.monotonic()
        cause = f"the Ray cluster at {address} does not answer (since "
        wait_for(lambda: cause in answered(herd, "daemon", "status"), 20, "status to say so")
        queued = herd.submit("--", "true")
        listing = answered(herd, "ls")
        assert f"waiting: {cause}" in listing, listing
        assert herd.job(queued)["state"] == "queued"
        assert answered(herd, "log", str(job)) == "up\n"  # what the daemon has pulled
        assert "echo up" in answered(herd, "show", str(job))
        # The running job is not given up at once: its node (and actor) live on for RECONNECT
        # s, and the head may come back...
        state = herd.job(job)["state"]
        assert state == "running" or time.monotonic() - gone > RECONNECT + LOST_AFTER, state
        # ...but once its actor has gone unheard for LOST_AFTER s, it is lost, and says why.
        ended = herd.wait_state(job, "lost", "failed", timeout=40)
        assert ended["state"] == "lost", ended
        stderr = (out.parent / "stderr.log").read_text()
        assert "does not answer" in stderr and "lost" in stderr, stderr
        assert herd.job(queued)["state"] == "queued"  # nothing started meanwhile

        # Ray's client would have ended the daemon RECONNECT s after the head went away.
        wait_for(lambda: time.monotonic() - gone > RECONNECT + 5, RECONNECT + 10, "Ray's timeout")
        assert daemon.is_running() and daemon.status() != psutil.STATUS_ZOMBIE
        assert cause in answered(herd, "daemon", "status")
        log = (herd.home / "daemon.log").read_text()
        assert f"the Ray cluster at {address} does not answer" in log, log[-2000:]

        # A new head at the address (`ray start --head` again): a new cluster, which Ray's
        # GCS keeps this daemon's client out of. (Its `ray.nodes()` aborted the process.)
        clusters.append(start_cluster(int(address.rsplit(":", 1)[1])))
        restart = (
            f"the Ray cluster at {address} was started again (a new cluster): restart the "
            "daemon to join it (`gpuherd daemon stop; gpuherd daemon start`)"
        )
        wait_for(lambda: restart in answered(herd, "daemon", "status"), 20, "a restart asked")
        assert daemon.is_running() and daemon.status() != psutil.STATUS_ZOMBIE
        assert f"waiting: {restart}" in answered(herd, "show", str(queued))
        # It stops when asked, and a new daemon joins the new cluster, where the job runs.
        answered(herd, "daemon", "stop")
        wait_dead(daemon)
        herd.start()  # as before: the address is remembered
        assert herd.wait_state(queued, "succeeded", timeout=30)["attempt"] == 1
        assert herd.job(job)["state"] == "lost"
    finally:
        clean_up(herd)


def test_a_job_held_for_its_run_ends_with_it_and_ls_never_waits_on_the_cluster(
    clusters: list[Any], tmp_path: Path
) -> None:
    """Jobs held because their attempts run unwatched (herd.db restored from an older backup;
    no attempt.json: their GPUs, on the cluster's node, are not known): the daemon watches
    each run through its Ray actor, and a run's end is its job's (before: the job stayed
    held, and `ls` asked the actor whether the run still ran). So `ls` never asks the
    cluster about them: while the head is away, it answers at once. (It asked the actor on
    the daemon's event loop with no deadline: every client waited for as long as the head
    was away; then, bounded, it said it could not tell.)"""
    doomed = clusters[0]
    address = str(doomed.address)
    herd = Herd(tmp_path / "home")
    copy = tmp_path / "backup.db"
    try:
        herd.start("--address", address)
        herd.cli("pause")  # the queue, so that the backup has the jobs queued
        jobs = [
            herd.submit("--", job_command(tmp_path / f"runs-{n}", tmp_path / f"go-{n}"))
            for n in (1, 2)
        ]
        backup(herd, copy)
        herd.cli("resume")
        pids = [running(herd, job, 1)["pid"] for job in jobs]
        restore(herd, copy)
        for job in jobs:
            attempt_json(herd, job, 1).unlink()  # its GPUs unknown: held, not adopted
        as_if_never_paused(herd)
        herd.start()
        assert answered(herd, "ls")
        for job, pid in zip(jobs, pids, strict=True):
            assert herd.job(job)["state"] == "held"
            assert herd.job(job)["reason"] == f"held: attempt 1 runs unwatched (pid {pid})"

        (tmp_path / "go-1").touch()  # its job ends: as its actor tells, the job has succeeded
        assert herd.wait_state(jobs[0], "succeeded", timeout=30)["attempt"] == 1

        with reaping(doomed.head_node):
            doomed.remove_node(doomed.head_node, allow_graceful=False)
        held = f"held: attempt 1 runs unwatched (pid {pids[1]})"
        assert held in answered(herd, "ls")
        assert held in answered(herd, "show", str(jobs[1]))
    finally:
        clean_up(herd)
