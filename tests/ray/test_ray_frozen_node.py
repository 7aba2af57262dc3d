"""A node whose raylet is frozen (SIGSTOP: a stuck machine) while its job runs: Ray counts
the node dead once its raylet misses its health checks, gpuherd counts the attempt lost and
`--retries` runs it again on a live node, while the job's Ray worker, alive, kept the job
running on the frozen node. Before: attempt 1 ran on there, beside attempt 2, until the
raylet ran again (for ever, frozen for good). Now the node fences itself: the job's actor
asks the GCS whether it still counts its node alive (ray_actor.JobActor._fence), and the
job's processes are killed once it does not; the daemon waits for that before it counts
the attempt lost (ray_follow.FENCE_WAIT), so the two attempts never run at once.

A module of its own: the frozen node is dead to the cluster, which is stopped after it.
"""

from __future__ import annotations

import time

import psutil
import pytest

from conftest import need, wait_for

need("ray.cluster_utils", "ray")

from ray._private import ray_constants
from ray_fixtures import RayHerd, cluster_fixture, rherd_fixture  # noqa: F401

from gpuherd.executors.ray_actor import scratch_root

pytestmark = pytest.mark.timeout(240)  # (with its module's cluster start: ~30 s under load)
# A frozen raylet does not answer its health checks: each waits for its timeout (Ray's 10 s),
# 5 of them with NODE_LOSS_CONFIG (~55 s). 3 checks of 3 s each count it dead in ~12 s; a
# raylet slow under load answers within 3 s, three times in a row.
RAY_SYSTEM_CONFIG = {
    "health_check_period_ms": 1000,
    "health_check_failure_threshold": 3,
    "health_check_timeout_ms": 3000,
}
FENCE_SLACK = 1.0
"""Seconds attempt 1's processes may outlive attempt 2's start by (none expected: the daemon
waits FENCE_WAIT, a second more than the node's check takes): a loaded machine's delays."""


def _runs(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_frozen_nodes_job_is_killed_there_before_its_retry_runs(rherd: RayHerd) -> None:
    job, frozen = rherd.retried_job_running()  # attempt 1 runs until its node goes
    first = rherd.job_processes(job)
    assert first, "attempt 1's processes"
    actor = str(rherd.placement(job, 1)["actor"])
    assert (scratch_root() / actor).is_dir()
    node = rherd.ray.gpu_nodes()[frozen]
    raylet = psutil.Process(node.all_processes[ray_constants.PROCESS_TYPE_RAYLET][0].process.pid)
    raylet.suspend()  # SIGSTOP: its workers, the job's among them, run on
    try:
        gone_at = wait_for(
            lambda: not any(map(_runs, first)) and time.time(),
            60,
            "attempt 1's processes to be killed on the frozen node",
        )
        done = rherd.wait_state(job, "succeeded", timeout=60)
        assert done["attempt"] == 2
        assert rherd.placement(job, 2)["node_id"] != frozen
        started = rherd.json("show", str(job))["attempts"][1]["started_at"]
        print(f"attempt 1 gone {started - gone_at:.2f}s before attempt 2 started")
        assert gone_at <= started + FENCE_SLACK, (gone_at, started)  # never both at once
        assert raylet.status() == psutil.STATUS_STOPPED  # (killed by the node's own fence)
        err = (rherd.attempt_dir(job, 1) / "stderr.log").read_text()
        assert "because its node has died" in err, err
        assert "the node kills them itself once it sees it was counted dead" in err, err
        assert "gcs_rpc_server_reconnect_timeout_s" in err, err  # (what is left)
        lost = [e["detail"] for e in done["events"] if e["event"] == "retry"]
        assert lost == ["lost: its Ray node left the cluster"], done["events"]
        # Its folder on the node (the job's whole environment) goes with it.
        wait_for(lambda: not (scratch_root() / actor).exists(), 15, "attempt 1's folder to go")
    finally:
        raylet.resume()  # it finds itself dead to the cluster, and ends
        rherd.ray.nodes.remove(node)
