"""A job lost with its node is placed again on a live node only: the daemon reads the
cluster's nodes again before it places the retry, so the dead node's GPUs, which its
readings listed a moment longer, are never chosen for it (before, the retry went to the
dead node, once or twice, and came back "not started, queued again: Ray node … left the
cluster before this attempt started").

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


def test_a_job_lost_with_its_node_is_retried_on_a_live_node_only(rherd: RayHerd) -> None:
    job, doomed = rherd.retried_job_running()  # attempt 1 runs until its raylet is killed
    # The first job takes the lowest GPUs: the dead node's are the ones a stale reading
    # offers the retry first.
    assert rherd.job(job)["gpus"] == [0], rherd.job(job)
    node = rherd.ray.gpu_nodes()[doomed]
    with reaping(node):
        node.kill_raylet()  # as a node that dies: Ray counts it dead within seconds
    rherd.ray.nodes.remove(node)

    done = rherd.wait_state(job, "succeeded", timeout=60)
    assert done["attempt"] == 2
    events = [(e["event"], e.get("detail") or "") for e in done["events"]]
    # (attempt 1's own loss may say "its Ray node left the cluster": the node died under it)
    assert not [e for e in events if "before this attempt started" in e[1]], events
    assert [e for e, _ in events].count("start") == 2, events
    one, two = rherd.json("show", str(job))["attempts"]
    assert one["outcome"] == "lost"
    assert two["outcome"] == "exit"
    assert rherd.placement(job, 2)["node_id"] != doomed
    assert (rherd.attempt_dir(job, 2) / "stdout.log").read_text() == "attempt 2\n"
    wait_for(lambda: rherd.ray.total_gpus() == 2, 45, "Ray to count the node dead")
