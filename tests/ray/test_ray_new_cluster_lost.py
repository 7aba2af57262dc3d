"""A job whose cluster's head went away while it ran, the daemon stopped a while later, and the
head started again as a new cluster at the same address: the restarted daemon (as `daemon
status` asked: `gpuherd daemon stop; gpuherd daemon start`) records the attempt lost because
its cluster was started again, ended when its actor last answered. Before, its history said
it ran on a cluster "this daemon does not use (--abandon-running)", which no one had given,
and its end was the last daemon's stop, long after the job was last heard from.

A module of its own: its cluster loses its head on purpose (test_ray_head_lost's clusters).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from conftest import Herd, need, wait_dead, wait_for

need("ray.cluster_utils", "ray")

from ray_fixtures import reaping
from test_ray_head_lost import RECONNECT, clean_up, clusters_fixture, start_cluster  # noqa: F401

from gpuherd.executors.ray_files import HEARD_EVERY, HEARD_SLACK

pytestmark = pytest.mark.timeout(180)  # (with its clusters' starts: ~40 s under load)


def test_a_job_lost_with_its_cluster_is_said_so_and_ends_when_last_heard(
    clusters: list[Any], tmp_path: Path
) -> None:
    doomed = clusters[0]
    herd = Herd(tmp_path / "home")
    herd.env["RAY_gcs_rpc_server_reconnect_timeout_s"] = str(RECONNECT)
    herd.env["GPUHERD_RAY_LOST_AFTER"] = "600"  # not given up while this daemon runs
    address = str(doomed.address)
    try:
        herd.start("--address", address)
        job = herd.submit("--", "echo up; exec sleep 300")
        herd.wait_state(job, "running", timeout=30)
        out = herd.home / "jobs" / str(job) / "attempt-1" / "stdout.log"
        wait_for(lambda: out.exists() and out.read_text() == "up\n", 30, "the job to run")

        with reaping(doomed.head_node):
            doomed.remove_node(doomed.head_node, allow_graceful=False)
        gone = time.time()
        # Its node's raylet, and the job with it, end RECONNECT s later; the daemon runs on,
        # counting the job running, well past the last note of its actor's answers.
        quiet = gone + RECONNECT + HEARD_EVERY + HEARD_SLACK + 3
        wait_for(lambda: time.time() > quiet, quiet - gone + 5, "the daemon to run on")
        assert herd.job(job)["state"] == "running"
        daemon = psutil.Process(herd.pid)
        herd.cli("daemon", "stop")
        wait_dead(daemon)

        clusters.append(start_cluster(int(address.rsplit(":", 1)[1])))
        herd.start()  # as before: the address is remembered
        lost = herd.wait_state(job, "lost", timeout=30)
        assert lost["attempts"][0]["message"] == (
            "the Ray cluster it ran on was started again (a new cluster)"
        ), lost["attempts"][0]
        # When its actor last answered: by the time its node's raylet ended with the head,
        # not the last daemon's stop.
        assert lost["ended_at"] <= gone + RECONNECT + 3, (lost["ended_at"] - gone, RECONNECT)
    finally:
        clean_up(herd)
