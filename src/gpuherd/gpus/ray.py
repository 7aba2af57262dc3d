"""The GPUs of a Ray cluster, as one list of devices with stable gpuherd indices.

Every GPU of every live node becomes a device. Its index is gpuherd's own (kept in a small
JSON file in GPUHERD_HOME so that it survives daemon restarts and never names another GPU
once a node has left); its uuid `ray:<node id>:<gpu id on the node>`, its node (the Ray node
id, which placement keeps a job's GPUs within) and its host (the node's host name, with the
node id's first 8 characters when two nodes share a host name) tell where it is; its name
is `Ray GPU <gpu id on the node>`. Requires a connected Ray driver (`ray.init`).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray

from gpuherd.core.units import plural
from gpuherd.gpus.base import GpuReading, ProbeError

_ray: Any = ray  # parts of Ray's API are untyped (with or without Ray installed for mypy)

NODE_MAX_AGE = 0.5
"""Seconds a listing of the cluster's nodes may be reused before asking Ray again."""


@dataclass(frozen=True)
class Node:
    node_id: str
    host: str
    address: str
    gpus: int
    indices: tuple[int, ...]
    """gpuherd's indices of this node's GPUs, in Ray's GPU-id order (0, 1, ...)."""


class RayNodes:
    """The cluster's live nodes and the index map (node id -> gpuherd indices). `read(fresh)`
    lists the nodes as `ray.nodes()` does (the default): the daemon passes its watcher's
    (executors/ray_link.py), which gives its latest listing, or with `fresh` one read now
    within a deadline, never blocking for long."""

    def __init__(
        self, map_file: Path, read: Callable[[bool], list[dict[str, Any]]] | None = None
    ) -> None:
        self.map_file = map_file
        self.read = read or (lambda fresh: list(_ray.nodes()))
        self._map: dict[str, list[int]] = self._load()
        self._nodes: list[Node] = []
        self._read_at = -1e9
        self._lock = threading.Lock()

    def _load(self) -> dict[str, list[int]]:
        try:
            data = json.loads(self.map_file.read_text())
        except (OSError, ValueError):
            return {}
        return {str(k): [int(i) for i in v] for k, v in data.items()}

    def _save(self) -> None:
        tmp = self.map_file.with_name(self.map_file.name + ".tmp")
        tmp.write_text(json.dumps(self._map, indent=1) + "\n")
        os.replace(tmp, self.map_file)

    def _indices(self, node_id: str, count: int) -> tuple[int, ...]:
        known = self._map.get(node_id, [])
        if len(known) < count:
            top = max((i for v in self._map.values() for i in v), default=-1)
            known = known + list(range(top + 1, top + 1 + count - len(known)))
            self._map[node_id] = known
            self._save()
        return tuple(known[:count])

    def nodes(self, max_age: float = NODE_MAX_AGE) -> list[Node]:
        """Live nodes (with or without GPUs), read from Ray at most every `max_age` s."""
        with self._lock:
            if time.monotonic() - self._read_at <= max_age:
                return list(self._nodes)
        # Read without the lock: a fresh read (a Ray launch's, in its own thread) may wait
        # seconds on a slow GCS, and the loop's reads of the latest listing must not.
        began = time.monotonic()
        try:
            raw = self.read(max_age <= 0)
        except ProbeError:
            raise
        except Exception as exc:  # any failure of the GCS client
            raise ProbeError(f"reading the Ray cluster's nodes: {exc}") from exc
        with self._lock:
            found = []
            for n in raw:
                if not n.get("Alive"):
                    continue
                gpus = int(n.get("Resources", {}).get("GPU", 0))
                node_id = str(n["NodeID"])
                found.append(
                    Node(
                        node_id=node_id,
                        host=str(n.get("NodeManagerHostname") or n.get("NodeManagerAddress")),
                        address=str(n.get("NodeManagerAddress", "")),
                        gpus=gpus,
                        indices=self._indices(node_id, gpus) if gpus else (),
                    )
                )
            found.sort(key=lambda n: (n.indices or (1 << 30,), n.node_id))
            if began >= self._read_at:  # else a read begun later was kept meanwhile
                self._nodes, self._read_at = found, began
            return found

    def forget(self) -> None:
        """Have the next `nodes` read again, however recent the listing kept (a node gone)."""
        with self._lock:
            self._read_at = -1e9

    def locate(self, index: int) -> tuple[str, int] | None:
        """(node id, GPU id on that node) of gpuherd's GPU `index`; None if never seen."""
        with self._lock:  # (a launch's read, in its thread, may add a node to the map)
            for node_id, indices in self._map.items():
                if index in indices:
                    return node_id, indices.index(index)
        return None


def labels(nodes: list[Node]) -> dict[str, str]:
    """How to show each node: its host name, with its id's start when the name is shared."""
    hosts = Counter(n.host for n in nodes)
    return {
        n.node_id: n.host if hosts[n.host] == 1 else f"{n.host} ({n.node_id[:8]})" for n in nodes
    }


class RayProbe:
    """GpuProbe over a Ray cluster: no telemetry (Ray does not report GPU memory or use)."""

    def __init__(self, nodes: RayNodes, address: str) -> None:
        self.cluster = nodes
        self.address = address
        self.down: Callable[[], str | None] = lambda: None
        """Why the cluster does not answer now (the daemon's watcher says); None while it does."""

    def forget(self) -> None:
        """The next `read` asks for the cluster's nodes again (DeviceTable.mark_stale)."""
        self.cluster.forget()

    def read(self) -> list[GpuReading]:
        readings = []
        nodes = self.cluster.nodes()
        label = labels(nodes)
        for node in nodes:
            for gpu_id, index in enumerate(node.indices):
                readings.append(
                    GpuReading(
                        index=index,
                        uuid=f"ray:{node.node_id}:{gpu_id}",
                        name=f"Ray GPU {gpu_id}",
                        memory_total=None,
                        memory_used=None,
                        utilization=None,
                        processes=(),
                        node=node.node_id,
                        host=label[node.node_id],
                    )
                )
        return readings

    def describe(self) -> str:
        try:
            nodes = self.cluster.nodes()
        except ProbeError:
            return f"ray at {self.address}: unreachable"
        with_gpus = [n for n in nodes if n.gpus]
        total = sum(n.gpus for n in nodes)
        # `1 node, 0 GPUs` (a head alone), `2 nodes, 1 GPU on 1 of them` (the smallest ray-local)
        counts = f"{plural(len(nodes), 'node')}, {plural(total, 'GPU')}"
        return f"ray at {self.address}: {counts} on {len(with_gpus)} of them"
