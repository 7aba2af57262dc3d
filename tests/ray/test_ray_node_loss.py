"""A node that dies mid-job: the attempt ends `lost`, gpuherd's retry policy runs a new attempt
on a node that is still there, and Ray never re-runs anything on its own.

A module of its own: removing a node changes the cluster, so it gets a fresh one.
"""

from __future__ import annotations

import pytest

from conftest import need, wait_for

need("ray.cluster_utils", "ray")

from ray_fixtures import (  # noqa: F401
    NODE_LOSS_CONFIG,
    RayHerd,
    cluster_fixture,
    rherd_fixture,
)

pytestmark = pytest.mark.timeout(90)
RAY_SYSTEM_CONFIG = NODE_LOSS_CONFIG  # Ray counts a lost node dead within seconds


def test_node_removed_mid_job_gives_a_new_attempt_on_the_other_node(rherd: RayHerd) -> None:
    # Attempt 1 runs until its node goes away; attempt 2 finishes at once.
    cmd = 'echo "attempt $GPUHERD_ATTEMPT"; [ "$GPUHERD_ATTEMPT" = 1 ] && exec sleep 300; exit 0'
    job = rherd.submit("--retries", "1", "--", cmd)
    rherd.wait_state(job, "running", timeout=30)
    first = rherd.attempt_dir(job, 1)
    wait_for(lambda: (first / "stdout.log").read_text() == "attempt 1\n", 30, "attempt 1 to run")
    doomed = rherd.placement(job, 1)["node_id"]
    node = rherd.ray.gpu_nodes()[doomed]
    rherd.ray.cluster.remove_node(node, allow_graceful=False)
    rherd.ray.nodes.remove(node)

    done = rherd.wait_state(job, "succeeded", timeout=60)
    assert done["attempt"] == 2
    shown = rherd.json("show", str(job))
    one, two = shown["attempts"]
    assert one["outcome"] == "lost"
    assert two["outcome"] == "exit"
    survivor = rherd.placement(job, 2)["node_id"]
    assert survivor != doomed
    assert (rherd.attempt_dir(job, 2) / "stdout.log").read_text() == "attempt 2\n"
    # The lost attempt says why in its stderr (`show` prints its tail).
    note = "gpuherd: the job's Ray actor ended without an exit status"
    assert note in (rherd.attempt_dir(job, 1) / "stderr.log").read_text()
    # The lost attempt's processes died with their node's worker: nothing runs unwatched.
    wait_for(lambda: rherd.job_processes() == [], 15, "no process of the job")
    # `gpus` no longer lists the dead node's GPUs.
    listing = rherd.json("gpus")
    gpus = listing["gpus"] if isinstance(listing, dict) else listing
    assert gpus and all(g["node"] != doomed for g in gpus), gpus
