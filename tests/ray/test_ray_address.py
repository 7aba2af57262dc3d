"""`--address auto` is remembered as the cluster it found, not as "auto": a later plain
`daemon start` must join that cluster, never whichever one Ray finds then (another user's).

A module of its own with a head-only cluster (no GPU node: cheap), as test_ray_dead_cluster.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import Herd, need

need("ray.cluster_utils", "ray")

from ray.cluster_utils import Cluster

from gpuherd import paths
from gpuherd.store import Store

pytestmark = pytest.mark.timeout(120)


def remembered(herd: Herd) -> dict[str, Any]:
    store = Store(paths.database(herd.home))
    try:
        return dict(json.loads(store.get_setting("executor") or "{}"))
    finally:
        store.close()


def test_auto_is_remembered_as_the_cluster_it_found(herd: Herd) -> None:
    cluster: Any = Cluster(
        initialize_head=True, connect=False, head_node_args={"num_cpus": 1, "num_gpus": 0}
    )
    try:
        address = str(cluster.address)
        herd.env["RAY_ADDRESS"] = address  # what `auto` finds (as after `ray start --head`)
        herd.start("--executor", "ray", "--address", "auto")
        assert remembered(herd) == {"kind": "ray", "address": address}  # before: "auto"
        status = herd.cli("daemon", "status").stdout
        assert f"ray at {address} (found by --address auto):" in status, status
        herd.cli("daemon", "stop")

        del herd.env["RAY_ADDRESS"]  # `auto` would find another cluster, or none, now
        herd.start()
        status = herd.cli("daemon", "status").stdout
        assert f"ray at {address} (remembered from the last start):" in status, status
        herd.cli("daemon", "stop")
    finally:
        herd.cleanup()
        cluster.shutdown()
