"""GPUs of Ray nodes that left before the daemon started (configured, never seen by it) are on
the nodes the index map (ray-gpus.json) says: a restarted daemon took them for one node
(they had none), and accepted a job no node could ever hold, which waited for them for ever
(`waiting for GPUs 2-5, configured but not seen now`). No cluster is started: the nodes are
listings as Ray gives them (RayNodes' `read`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import need

need("ray", "ray")

from gpuherd.core.model import JobSpec, Policy
from gpuherd.executors.ray_cluster import ClusterDeviceTable
from gpuherd.gpus.ray import RayNodes, RayProbe
from gpuherd.store import Store
from gpuherd.submission import never_runs


def node(node_id: str, gpus: int) -> dict[str, Any]:
    """A live node as ray.nodes() lists it."""
    return {
        "Alive": True,
        "NodeID": node_id,
        "Resources": {"GPU": gpus},
        "NodeManagerHostname": f"host-{node_id}",
        "NodeManagerAddress": "10.0.0.1",
    }


def table(home: Path, store: Store, nodes: list[dict[str, Any]]) -> ClusterDeviceTable:
    """A daemon's GPUs as it starts on a cluster of `nodes` (the map file kept in `home`)."""
    listed = RayNodes(home / "ray-gpus.json", read=lambda fresh: nodes)
    devices = ClusterDeviceTable(store, RayProbe(listed, "10.0.0.1:6379"))
    devices.refresh()
    return devices


def test_a_restarted_daemon_knows_the_nodes_of_gpus_it_never_saw(tmp_path: Path) -> None:
    store = Store(tmp_path / "herd.db")
    try:
        first = table(tmp_path, store, [node("a", 2), node("b", 2), node("c", 2)])
        assert sorted(first.configured()) == [0, 1, 2, 3, 4, 5]  # each node's GPUs joined
        later = table(tmp_path, store, [node("a", 2)])  # b and c left; the daemon restarted
        missing = later.missing()
        assert [(d.index, d.node) for d in missing] == [(2, "b"), (3, "b"), (4, "c"), (5, "c")]
        seen, policy = later.listing(), Policy()
        assert never_runs(JobSpec(command="true", cwd="/tmp", gpus=4), seen, policy, missing) == (
            "asks for 4 GPUs on one node: the largest node has 2: give fewer gpus (--gpus), "
            "at most 2"
        )
        # What the nodes that left could run still waits for them (a node may be away a while).
        five = JobSpec(command="true", cwd="/tmp", gpus=2, only_gpus=(4, 5))
        assert never_runs(five, seen, policy, missing) is None
    finally:
        store.close()
