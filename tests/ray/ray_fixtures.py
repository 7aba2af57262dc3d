"""A local Ray cluster for a test module (head without GPUs + 2 nodes x 2 fake GPUs) and a
daemon on it per test. Starting a cluster takes seconds: one per module, never per test.

Everything started here is stopped by handle (Cluster.shutdown, the daemon's pid, the
actors of the test's own namespace), never by name: other Ray users on the machine are
left alone.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from conftest import Herd, forget_rays_breakpoint_hook, need, wait_for

need("ray.cluster_utils", "ray")

import ray
from ray.cluster_utils import Cluster

from gpuherd.executors.ray import home_tag
from gpuherd.executors.ray_actor import scratch_root

NODES = 2
GPUS_PER_NODE = 2


@dataclass
class LocalCluster:
    cluster: Any
    nodes: list[Any]

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    def gpu_nodes(self) -> dict[str, Any]:
        return {n.node_id: n for n in self.nodes}

    def free_gpus(self) -> float:
        return float(ray.available_resources().get("GPU", 0.0))

    def total_gpus(self) -> float:
        return float(ray.cluster_resources().get("GPU", 0.0))

    def kill_actors(self, namespace: str) -> None:
        for entry in ray.util.list_named_actors(all_namespaces=True):
            if entry["namespace"] == namespace:
                try:
                    ray.kill(ray.get_actor(entry["name"], namespace=namespace), no_restart=True)
                except ValueError:
                    pass


# For the modules that take a node away (RAY_SYSTEM_CONFIG = NODE_LOSS_CONFIG): the GCS checks
# each raylet every second and counts its node dead after 5 failed checks, ~5 s after its
# raylet died, where Ray's defaults (every 3 s, 5 failures) took ~15 s of each such test. A
# raylet that is slow but alive still answers within Ray's 10 s timeout: no false deaths.
NODE_LOSS_CONFIG = {"health_check_period_ms": 1000, "health_check_failure_threshold": 5}


@pytest.fixture(scope="module", name="cluster")
def cluster_fixture(request: pytest.FixtureRequest) -> Iterator[LocalCluster]:
    started = time.monotonic()
    head: dict[str, Any] = {"num_cpus": 1, "num_gpus": 0}
    system_config = getattr(request.module, "RAY_SYSTEM_CONFIG", None)
    if system_config:
        head["_system_config"] = system_config
    c = Cluster(initialize_head=True, head_node_args=head)
    try:
        nodes = [c.add_node(num_cpus=1, num_gpus=GPUS_PER_NODE) for _ in range(NODES)]
        c.wait_for_nodes()
        ray.init(address=c.address, log_to_driver=False, configure_logging=False)
        forget_rays_breakpoint_hook()  # (the module's daemons and CLI calls: forked again)
        print(f"Ray cluster up in {time.monotonic() - started:.1f}s", file=sys.stderr)
        yield LocalCluster(c, nodes)
    finally:
        ray.shutdown()
        c.shutdown()


class RayHerd(Herd):
    def __init__(self, home: Path, cluster: LocalCluster) -> None:
        super().__init__(home)
        self.ray = cluster
        self.namespace = f"gpuherd-{home_tag(home)}"

    def attempt_dir(self, job_id: int, attempt: int = 1) -> Path:
        return self.home / "jobs" / str(job_id) / f"attempt-{attempt}"

    def placement(self, job_id: int, attempt: int = 1) -> dict[str, Any]:
        path = self.attempt_dir(job_id, attempt) / "ray.json"
        return dict(json.loads(path.read_text()))

    def retried_job_running(self) -> tuple[int, str]:
        """A job with one retry whose attempt 1 runs until its node goes (attempt 2 ends at
        once), once attempt 1 runs: its id, and the id of the node attempt 1 runs on."""
        cmd = 'echo "attempt $GPUHERD_ATTEMPT"; [ "$GPUHERD_ATTEMPT" = 1 ] && exec sleep 300; true'
        job = self.submit("--retries", "1", "--", cmd)
        self.wait_state(job, "running", timeout=30)
        log = self.attempt_dir(job, 1) / "stdout.log"
        wait_for(lambda: log.read_text() == "attempt 1\n", 30, "attempt 1 to run")
        return job, str(self.placement(job, 1)["node_id"])

    def job_processes(self, job_id: int | None = None) -> list[psutil.Process]:
        """Live processes of this home's jobs (or of job `job_id`), found by their
        environment (any parent)."""
        found = []
        for proc in psutil.process_iter():
            try:
                if proc.status() == psutil.STATUS_ZOMBIE:
                    continue
                env = proc.environ()
                if job_id is not None and env.get("GPUHERD_JOB_ID") != str(job_id):
                    continue
                if env.get("GPUHERD_JOB_DIR", "").startswith(str(self.home)):
                    found.append(proc)
            except psutil.Error:
                continue
        return found


@pytest.fixture(name="rherd")
def rherd_fixture(tmp_path: Path, cluster: LocalCluster) -> Iterator[RayHerd]:
    herd = RayHerd(tmp_path / "home", cluster)
    herd.start("--address", cluster.address)
    try:
        yield herd
    finally:
        herd.cleanup()
        cluster.kill_actors(herd.namespace)
        # A lost attempt's scratch folder stays on its (dead) node: here, this machine.
        for folder in scratch_root().glob(f"{herd.namespace}-*"):
            shutil.rmtree(folder, ignore_errors=True)
        total = cluster.total_gpus()
        wait_for(lambda: cluster.free_gpus() == total, 30, "the cluster's GPUs to be free")
        os.environ.pop("GPUHERD_HOME", None)
