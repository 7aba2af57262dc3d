"""The --only-gpus warning of a daemon whose jobs run on a Ray cluster says a GPU no node
has is not in the cluster: it said "not on this machine (the probe does not see it)", of a
machine that has none of the cluster's GPUs. No cluster is started: the nodes are listings
as Ray gives them (RayNodes' `read`), under the daemon's own device table and service."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from conftest import need

need("ray", "ray")

from gpuherd.core.model import JobSpec, Policy
from gpuherd.engine import Engine
from gpuherd.executors.local import LocalExecutor
from gpuherd.executors.ray_cluster import ClusterDeviceTable
from gpuherd.gpus.ray import RayNodes, RayProbe
from gpuherd.jobfiles import Layout
from gpuherd.service import Service
from gpuherd.store import Store


def node(node_id: str, gpus: int) -> dict[str, Any]:
    return {
        "Alive": True,
        "NodeID": node_id,
        "Resources": {"GPU": gpus},
        "NodeManagerHostname": f"host-{node_id}",
        "NodeManagerAddress": "10.0.0.1",
    }


def test_a_gpu_no_node_has_is_said_not_in_the_cluster(tmp_path: Path) -> None:
    async def warned() -> list[str]:
        store = Store(tmp_path / "herd.db")
        try:
            listed = RayNodes(tmp_path / "ray-gpus.json", read=lambda fresh: [node("a", 2)])
            devices = ClusterDeviceTable(store, RayProbe(listed, "10.0.0.1:6379"))
            devices.refresh()
            executor = LocalExecutor(known=store.attempt_known)
            engine = Engine(store, devices, executor, Layout.for_home(tmp_path), Policy())
            spec = JobSpec(command="true", cwd=str(tmp_path), only_gpus=(0, 5))
            return Service(engine, tmp_path).unknown_gpus_named([(1, spec)])
        finally:
            store.close()

    assert asyncio.run(warned()) == [
        "job 1: --only-gpus 0,5 names GPU 5, which is not configured (configured: 0,1) and not "
        "in the Ray cluster (no node of it has it now): the job runs only on GPU 0"
    ]
