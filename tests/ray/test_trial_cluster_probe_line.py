"""The probe line of the smallest `gpuherd ray-local` (one node with one GPU), as `daemon
start`, `daemon status` and `gpuherd gpus` print it: `1 GPU`, not `1 GPUs`. No cluster:
the nodes are listed as Ray lists them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import need

need("ray", "ray")

from gpuherd.gpus.ray import RayNodes, RayProbe


def node(node_id: str, gpus: int) -> dict[str, Any]:
    return {
        "Alive": True,
        "NodeID": node_id,
        "NodeManagerHostname": "vm",
        "NodeManagerAddress": "192.0.2.2",
        "Resources": {"GPU": gpus} if gpus else {},
    }


def test_one_gpu_is_not_written_gpus(tmp_path: Path) -> None:
    listing = [node("head", 0), node("n1", 1)]  # `gpuherd ray-local --nodes 1 --gpus-per-node 1`
    probe = RayProbe(RayNodes(tmp_path / "ray-gpus.json", lambda fresh: listing), "192.0.2.2:1")
    assert probe.describe() == "ray at 192.0.2.2:1: 2 nodes, 1 GPU on 1 of them"  # was 1 GPUs


def test_a_head_alone_is_one_node(tmp_path: Path) -> None:
    probe = RayProbe(RayNodes(tmp_path / "ray-gpus.json", lambda fresh: [node("head", 0)]), "h:1")
    assert probe.describe() == "ray at h:1: 1 node, 0 GPUs on 0 of them"  # was 1 nodes


def test_ray_locals_line_says_each_of_several_nodes_only() -> None:
    from gpuherd.cli.ray_cmds import cluster_said

    assert cluster_said(2, 2) == "a head without GPUs and 2 nodes with 2 fake GPUs each"
    assert cluster_said(1, 2) == "a head without GPUs and 1 node with 2 fake GPUs"  # was `each`
    assert cluster_said(1, 1) == "a head without GPUs and 1 node with 1 fake GPU"
