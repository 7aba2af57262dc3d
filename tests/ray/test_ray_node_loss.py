"""Nodes that come and go: a node that dies mid-job (the attempt ends `lost`, gpuherd's retry
policy runs a new attempt on a node that is still there, and Ray never re-runs anything on its
own), and a node that joins (its GPUs are used at once, a GPU removed stays removed).

A module of its own: adding and removing nodes changes the cluster, so no module after it gets
that one (ray_fixtures: a cluster is handed on only as it was started).
"""

from __future__ import annotations

from typing import Any

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


def test_node_removed_mid_job_gives_a_new_attempt_on_the_other_node(rherd: RayHerd) -> None:
    job, doomed = rherd.retried_job_running()  # attempt 1 runs until its node goes away
    node = rherd.ray.gpu_nodes()[doomed]
    with reaping(node):
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

    # `gpus` no longer lists the dead node's GPUs, once Ray counts the node dead: its actor's
    # end (which the retry follows) can come before that, on a loaded machine by seconds.
    def gpus() -> list[dict[str, Any]]:
        listing = rherd.json("gpus")
        return list(listing["gpus"] if isinstance(listing, dict) else listing)

    wait_for(lambda: all(g["node"] != doomed for g in gpus()), 30, "the node's GPUs to go")
    assert gpus(), "the surviving node's GPUs are listed"


def test_a_removed_gpu_stays_removed_while_a_node_that_joins_is_used(rherd: RayHerd) -> None:
    def gpus() -> dict[str, Any]:
        listing: dict[str, Any] = rherd.json("gpus")
        return {"used": {g["index"] for g in listing["gpus"]}, "unused": set(listing["unused"])}

    seen = gpus()["used"]
    joining = {max(seen) + 1, max(seen) + 2}  # the indices the next node's GPUs get
    # GPUs removed on the local executor are other GPUs: they must not keep the node out.
    rherd.cli("daemon", "stop")
    rherd.start("--fake-gpus", str(max(joining) + 1))
    for index in sorted(joining):
        rherd.cli("gpus", "remove", str(index))
    rherd.cli("daemon", "stop")
    rherd.start("--address", rherd.ray.address)
    assert gpus() == {"used": seen, "unused": set()}

    rherd.cli("gpus", "remove", "0")
    node = rherd.ray.cluster.add_node(num_cpus=1, num_gpus=2)
    try:
        # The refresh that takes the new node's GPUs in (after the removal) leaves GPU 0 out.
        wait_for(lambda: joining <= gpus()["used"], 30, "the new node's GPUs to be used")
        assert gpus() == {"used": seen - {0} | joining, "unused": {0}}
        rherd.cli("daemon", "stop")
        rherd.start()  # a new daemon reads the cluster at once: GPU 0 is still out
        assert gpus() == {"used": seen - {0} | joining, "unused": {0}}
        rherd.cli("gpus", "add", "0")
        assert gpus() == {"used": seen | joining, "unused": set()}
    finally:
        with reaping(node):
            rherd.ray.cluster.remove_node(node)
