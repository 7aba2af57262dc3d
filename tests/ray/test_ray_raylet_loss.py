"""A node whose raylet dies while its workers live on (adopted by init): Ray counts the node
lost and gpuherd may run the job elsewhere, so the job's processes must end with the raylet.

A module of its own: killing a raylet changes the cluster, so no module after it gets that one
(ray_fixtures: a cluster is handed on only as it was started).
"""

from __future__ import annotations

import pytest

from conftest import need, wait_for

need("ray.cluster_utils", "ray")

from ray_fixtures import (  # noqa: F401
    NODE_LOSS_CONFIG,
    RayHerd,
    cluster_fixture,
    reaping,
    rherd_fixture,
)

pytestmark = pytest.mark.timeout(180)  # (with its module's cluster start: ~30 s under load)
RAY_SYSTEM_CONFIG = NODE_LOSS_CONFIG  # Ray counts a lost node dead within seconds


def test_a_job_ends_with_its_nodes_raylet(rherd: RayHerd) -> None:
    job = rherd.submit("--", "echo up; sleep 300 & sleep 300; wait")
    rherd.wait_state(job, "running", timeout=30)
    log = rherd.attempt_dir(job) / "stdout.log"
    wait_for(lambda: log.exists() and log.read_text() == "up\n", 30, "the job to run")
    wait_for(lambda: len(rherd.job_processes()) >= 3, 30, "the job's processes")
    node = rherd.ray.gpu_nodes()[rherd.placement(job)["node_id"]]
    with reaping(node):
        node.kill_raylet()  # SIGKILL to the raylet alone: its workers stay
    wait_for(lambda: rherd.job_processes() == [], 20, "no process of the job left")
    ended = rherd.wait_state(job, "lost", "failed", timeout=60)  # (retries: run elsewhere)
    assert ended["state"] in ("lost", "failed"), ended
    # Ray's verdict, which the daemon waits for (ray_verdict.py); the supervisor's note that
    # the raylet died comes before it only if a pull brought it before the worker ended.
    err = (rherd.attempt_dir(job) / "stderr.log").read_text()
    verdict = "gpuherd: the job's Ray actor ended without an exit status: The actor died "
    assert f"{verdict}because its node has died" in err, err
    lost = [e["detail"] for e in ended["events"] if e["event"] in ("retry", "lose", "fail")]
    assert lost and lost[-1].startswith("lost: its Ray node"), ended["events"]
    rherd.ray.nodes.remove(node)
    wait_for(lambda: rherd.ray.total_gpus() == 2, 45, "Ray to count the node dead")
