"""A local Ray cluster for a test module (head without GPUs + 2 nodes x 2 fake GPUs) and a
daemon on it per test. Starting a cluster takes 9-25 s (a head, then each node's raylet
waits for its Python agents): never one per test, and one per module only when needed. A
module that leaves its cluster as it found it (the same nodes, all alive, nothing frozen, no
actor, every GPU free) hands it on to the next module of this xdist worker that asks for the
same RAY_SYSTEM_CONFIG; one that damaged it (a node removed, a raylet killed) stops it.

Everything started here is stopped by handle (Cluster.shutdown, the daemon's pid, the
actors of the test's own namespace), never by name: other Ray users on the machine are
left alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
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


def _reap_what_ray_dropped() -> None:
    """A handle of a process Ray started that Ray drops still running (a kill it saw no end
    of, on a path `reaping` does not cover: its source was not found) is reaped as it is
    collected, its process SIGKILLed first: its `subprocess N is still running` warning, an
    error here, failed whatever unrelated test of the worker was running at that
    collection (two CI runs of one session, in an e2e and a reliability test). Ray's own
    class only: a Popen of the tests' own still warns."""
    from ray._private.services import ConsolePopen

    def reaped(self: subprocess.Popen[bytes]) -> None:
        if self.returncode is None and self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.wait(timeout=10)

    ConsolePopen.__del__ = reaped  # type: ignore[method-assign]


_reap_what_ray_dropped()

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
# Every module's, unless it sets its own: a module that takes a node away can then take over
# the cluster a module before it left intact (then it stops it), where it started its own.
# (test_ray_unreachable freezes the raylets with the GCS: no check of them fails meanwhile.)
DEFAULT_CONFIG = NODE_LOSS_CONFIG


IDLE: dict[str, LocalCluster] = {}
"""The cluster a module left intact (at most one), by RAY_SYSTEM_CONFIG (as JSON), for the
next module of this worker (this process) that asks for that config; stopped after IDLE_FOR
seconds unused, or at the end of the session. This process is no driver of an idle cluster
(ray.shutdown). IDLE_LOCK: the main thread takes, the idle timer stops."""
IDLE_LOCK = threading.Lock()
IDLE_FOR = 90.0
"""An idle cluster costs ~6% of a core (its GCS, raylets, agents) and ~1 GB: kept for the
worker's next Ray modules (here one after another, as collected), not for the rest of the
session's tests, which follow tests/ray. A start it saves costs 9-25 s."""


def start_cluster(system_config: dict[str, Any] | None) -> LocalCluster:
    head: dict[str, Any] = {"num_cpus": 1, "num_gpus": 0}
    if system_config:  # (a copy: Ray adds its spilling folder, of this cluster's session)
        head["_system_config"] = dict(system_config)
    c = Cluster(initialize_head=True, connect=False, head_node_args=head)
    try:
        nodes = [c.add_node(num_cpus=1, num_gpus=GPUS_PER_NODE) for _ in range(NODES)]
        c.wait_for_nodes()
    except BaseException:
        shutdown(c)
        raise
    return LocalCluster(c, nodes)


def lone_head(num_gpus: int = 0) -> Any:
    """A cluster of a head alone (1 CPU, `num_gpus` fake GPUs: cheap), not connected to; the
    caller stops it with `shutdown`."""
    return Cluster(
        initialize_head=True, connect=False, head_node_args={"num_cpus": 1, "num_gpus": num_gpus}
    )


def shutdown(cluster: Cluster) -> None:
    """Stop the cluster by its handle (never `ray stop`), reaping what it gives up on."""
    with reaping(cluster.head_node, *cluster.worker_nodes):
        cluster.shutdown()


@contextlib.contextmanager
def reaping(*nodes: Any) -> Iterator[None]:
    """Reap what Ray gives up on meanwhile: a kill of a node's processes (shutdown,
    remove_node, kill_raylet) drops the handle of one it signalled but saw no end of within
    its wait (a slow exit under load), and its garbage collection, in whatever test runs
    then, warns `subprocess N is still running` (a ResourceWarning, an error here: CI runs
    had it in a sweep test after an idle cluster's timer stopped it, and in an e2e test).
    Each handle the nodes held that they no longer hold is waited for, SIGKILLed first if
    its process still runs."""
    held = _handles(nodes)
    try:
        yield
    finally:
        kept = {id(handle) for handle in _handles(nodes)}
        for handle in held:
            if id(handle) in kept:
                continue
            if handle.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    handle.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                handle.wait(timeout=10)


def _handles(nodes: tuple[Any, ...]) -> list[subprocess.Popen[bytes]]:
    return [
        info.process
        for node in nodes
        if node is not None
        for infos in node.all_processes.values()
        for info in infos
    ]


def cluster_processes(local: LocalCluster) -> list[psutil.Process]:
    """The processes the cluster's nodes started (GCS, raylets, ...), as they were started."""
    return [
        psutil.Process(info.process.pid)
        for node in [local.cluster.head_node, *local.cluster.worker_nodes]
        for infos in node.all_processes.values()
        for info in infos
    ]


def running(local: LocalCluster) -> bool:
    """Every process the cluster's nodes started runs, none frozen (SIGSTOP)."""
    try:
        return all(
            p.status() not in (psutil.STATUS_STOPPED, psutil.STATUS_ZOMBIE)
            for p in cluster_processes(local)
        )
    except psutil.Error:
        return False


def intact(local: LocalCluster, node_ids: set[str]) -> bool:
    """The cluster is as it was started (`node_ids`: its head's and nodes'): every process
    it started runs (none frozen), every node is alive and no other ever joined, no actor is
    alive, every GPU is free. Checked while this process is still its driver."""
    try:
        if {n.node_id for n in local.nodes} != node_ids - {local.cluster.head_node.node_id}:
            return False
        if not running(local):
            return False
        listed = ray.nodes()
        if {n["NodeID"] for n in listed} != node_ids or not all(n["Alive"] for n in listed):
            return False
        total = NODES * GPUS_PER_NODE

        def settled() -> bool:
            actors = ray._private.state.actors().values()
            alive = [a for a in actors if a["State"] != "DEAD"]
            return not alive and local.total_gpus() == total == local.free_gpus()

        deadline = time.monotonic() + 10
        while not settled():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.2)
        return True
    except (ray.exceptions.RayError, OSError):
        return False


IDLE_STOPPED_AT_END: list[bool] = []


def stop_idle_clusters() -> None:
    with IDLE_LOCK:
        stopping = list(IDLE.values())
        IDLE.clear()
    for local in stopping:
        shutdown(local.cluster)


def stop_if_still_idle(key: str, local: LocalCluster) -> None:
    with IDLE_LOCK:
        if IDLE.get(key) is not local:
            return  # taken over since
        del IDLE[key]
    try:
        shutdown(local.cluster)
    except Exception as e:  # (in a thread: said here, not as another test's failure)
        print(f"stopping an idle Ray cluster: {e!r}", file=sys.stderr)


def keep_idle(key: str, local: LocalCluster) -> None:
    stop_idle_clusters()  # (another config's: at most one idle cluster a worker)
    with IDLE_LOCK:
        IDLE[key] = local
    timer = threading.Timer(IDLE_FOR, stop_if_still_idle, (key, local))
    timer.daemon = True  # (pytest's end stops it first: stop_idle_clusters)
    timer.start()


@pytest.fixture(scope="module", name="cluster")
def cluster_fixture(request: pytest.FixtureRequest) -> Iterator[LocalCluster]:
    started = time.monotonic()
    if not IDLE_STOPPED_AT_END:  # (pytest's end in this worker: after every module's)
        request.config.add_cleanup(stop_idle_clusters)
        IDLE_STOPPED_AT_END.append(True)
    system_config = getattr(request.module, "RAY_SYSTEM_CONFIG", DEFAULT_CONFIG)
    key = json.dumps(system_config, sort_keys=True)
    with IDLE_LOCK:
        local = IDLE.pop(key, None)
    if local is not None and not running(local):  # (something ended one of its processes)
        shutdown(local.cluster)
        local = None
    how = "taken over"
    if local is None:
        local, how = start_cluster(system_config), "up"
    keep = False
    try:
        ray.init(address=local.address, log_to_driver=False, configure_logging=False)
        forget_rays_breakpoint_hook()  # (the module's daemons and CLI calls: forked again)
        node_ids = {str(n["NodeID"]) for n in ray.nodes()}
        print(f"Ray cluster {how} in {time.monotonic() - started:.1f}s", file=sys.stderr)
        yield local
        keep = intact(local, node_ids)
    finally:
        ray.shutdown()
        if keep:
            keep_idle(key, local)
        else:
            shutdown(local.cluster)


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
