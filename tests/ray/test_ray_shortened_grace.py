"""A Ray job being stopped whose processes save a checkpoint (they handle SIGTERM) while its
shell has already ended: a later stop with a shorter grace, or the death of the job's actor,
ends them at once, and the job's folder on the node (`spec.json`: its whole environment) goes.
Before, the supervisor read the grace once and, the shell gone, watched neither the actor nor
later stops: after `kill --grace 0` the job was recorded killed and its GPUs given to the next
job while its processes ran on for the rest of the first grace, and its folder stayed for good.
"""

from __future__ import annotations

import shlex
import sys

import pytest

from conftest import need, wait_for

need("ray.cluster_utils", "ray")

import ray
from ray_fixtures import (  # noqa: F401
    RayHerd,
    cluster_fixture,
    rherd_fixture,
)

from gpuherd.executors.ray_actor import scratch_root

pytestmark = pytest.mark.timeout(180)  # (with its module's cluster start: ~30 s under load)

CHECKPOINT = r"""
import signal, time
signal.signal(signal.SIGTERM, lambda *_: print("saving", flush=True))
print("ready", flush=True)
while True:
    time.sleep(0.2)
"""


def stopping_job(rherd: RayHerd) -> int:
    """A job whose shell ends at a kill's SIGTERM while its Python child, saving a checkpoint,
    would take all of its 120 s grace; killed once (its SIGTERM taken)."""
    python = shlex.join([sys.executable, "-c", CHECKPOINT])
    job = rherd.submit("--grace", "120", "--", f"{python} & wait")
    rherd.wait_state(job, "running", timeout=30)
    log = rherd.attempt_dir(job) / "stdout.log"
    wait_for(lambda: log.read_text() == "ready\n", 30, "the job to run")
    rherd.cli("kill", str(job))
    wait_for(lambda: log.read_text() == "ready\nsaving\n", 30, "the job's SIGTERM")
    assert rherd.job_processes(job), "its checkpoint goes on"
    return job


def test_a_kill_with_a_shorter_grace_ends_the_checkpoint_at_once(rherd: RayHerd) -> None:
    job = stopping_job(rherd)
    folder = scratch_root() / rherd.placement(job)["actor"]
    rherd.cli("kill", "--grace", "0", str(job))
    rherd.wait_state(job, "killed", timeout=30)
    wait_for(lambda: rherd.job_processes(job) == [], 10, "no process of the job left")
    wait_for(lambda: not folder.exists(), 10, "its folder on the node to go")


def test_the_actors_death_ends_the_checkpoint_and_removes_the_folder(rherd: RayHerd) -> None:
    job = stopping_job(rherd)
    folder = scratch_root() / rherd.placement(job)["actor"]
    assert (folder / "spec.json").exists()
    ray.kill(ray.get_actor(rherd.placement(job)["actor"], namespace=rherd.namespace))
    wait_for(lambda: rherd.job_processes(job) == [], 15, "no process of the job left")
    wait_for(lambda: not folder.exists(), 10, "its folder on the node to go")
