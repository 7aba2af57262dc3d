"""Wiring for a daemon that runs its jobs on a Ray cluster (`--executor ray`).

`connect` joins the cluster as a driver (Ray's token authentication: the daemon uses the
same RAY_AUTH_MODE / RAY_AUTH_TOKEN / ~/.ray/auth_token as the cluster's nodes), and
`ClusterDeviceTable` configures the GPUs of nodes that join after the daemon started.
"""

from __future__ import annotations

import logging
from pathlib import Path

import ray

from gpuherd.core.model import DeviceState
from gpuherd.devices import DeviceTable
from gpuherd.executors.ray import RayExecutor, home_tag
from gpuherd.gpus.base import ProbeError
from gpuherd.gpus.ray import RayNodes, RayProbe
from gpuherd.store import DeviceConfig, Store

log = logging.getLogger("gpuherd.ray")

MAP_FILE = "ray-gpus.json"


class ClusterDeviceTable(DeviceTable):
    """A device table whose GPUs follow the cluster: a new node's GPUs are enabled at once."""

    def cores(self) -> int | None:
        return None  # CPU-only jobs go to any node: Ray places them, the daemon's cores say nothing

    def refresh(self) -> bool:
        changed = super().refresh()
        new = sorted(set(self._readings) - set(self._config))
        for index in new:
            cfg = DeviceConfig(index, 1, DeviceState.ENABLED)
            self.store.put_device(cfg)
            self._config[index] = cfg
        if new:
            log.info("GPUs %s joined the cluster", ",".join(map(str, new)))
        return changed or bool(new)


def connect(address: str, home: Path) -> tuple[RayProbe, RayExecutor]:
    """Join the cluster at `address` ("auto", "host:port") as this home's driver."""
    tag = home_tag(home)
    namespace = f"gpuherd-{tag}"
    try:
        ray.init(
            address=address,
            namespace=namespace,
            log_to_driver=False,
            logging_level=logging.WARNING,
            configure_logging=False,
        )
    except Exception as exc:  # ConnectionError, auth failures, bad addresses...
        raise ProbeError(
            f"connecting to the Ray cluster at {address}: {exc}; check the address "
            "(`ray status` on the head node shows it) and that this machine shares the "
            "cluster's auth token (RAY_AUTH_TOKEN or ~/.ray/auth_token)"
        ) from exc
    nodes = RayNodes(home / MAP_FILE)
    return RayProbe(nodes, address), RayExecutor(nodes, namespace, tag)


def configure(store: Store, probe: RayProbe) -> None:
    """Configure exactly the GPUs the cluster has now (one slot each)."""
    store.replace_devices(dict.fromkeys((r.index for r in probe.read()), 1))


def disconnect() -> None:
    if ray.is_initialized():
        ray.shutdown()
