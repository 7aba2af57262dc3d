"""A job whose Ray actor dies (`ray.kill`, a dead raylet, a lost node) leaves no folder on its
node: the supervisor, which kills the job then, removes the job's scratch folder too. Before,
the folder stayed for good, one per lost attempt, with the job's whole environment in its
spec.json (API keys and all): no actor would ever read it again (Ray never restarts one).
"""

from __future__ import annotations

import pytest

from conftest import need, wait_for

need("ray.cluster_utils", "ray")

import ray
from ray_fixtures import RayHerd, cluster_fixture, rherd_fixture  # noqa: F401

from gpuherd.executors.ray_actor import scratch_root

pytestmark = pytest.mark.timeout(180)  # (with its module's cluster start: ~30 s under load)


def test_a_killed_actor_leaves_no_folder_on_its_node(rherd: RayHerd) -> None:
    job = rherd.submit("--", "echo up; exec sleep 300")
    rherd.wait_state(job, "running", timeout=30)
    log = rherd.attempt_dir(job) / "stdout.log"
    wait_for(lambda: log.read_text() == "up\n", 30, "the job to run")
    name = rherd.placement(job)["actor"]
    folder = scratch_root() / name
    assert (folder / "spec.json").exists()

    ray.kill(ray.get_actor(name, namespace=rherd.namespace), no_restart=True)
    assert rherd.wait_state(job, "lost", timeout=60)["state"] == "lost"
    wait_for(lambda: rherd.job_processes(job) == [], 20, "no process of the job left")
    wait_for(lambda: not folder.exists(), 20, "the job's folder on its node to go")
