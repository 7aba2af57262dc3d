"""A job whose actor dies after it wrote `spec.json` (the job's whole environment, API keys and
all) and before its supervisor took over (`gpuherd kill` of a job just launched, a stop's
`ray.kill`, a cluster stopped: Ray SIGKILLs the worker and its children, the supervisor still
starting among them) leaves no folder on its node: the next actor there sweeps it
(ray_scratch.py). Before, the folder, with its spec.json and an empty supervisor.log, stayed
for good: no process of that attempt was left to remove it (one after each full test run).

The moment is made by freezing the supervisor as it starts (SIGSTOP) and killing its actor.
"""

from __future__ import annotations

import contextlib
import signal
from pathlib import Path

import psutil
import pytest

from conftest import need, wait_for

need("ray.cluster_utils", "ray")

import ray
from ray_fixtures import RayHerd, cluster_fixture, rherd_fixture  # noqa: F401

from gpuherd.executors.ray_actor import scratch_root

pytestmark = pytest.mark.timeout(240)  # (with its module's cluster start: ~30 s under load)


def starting_supervisor(folder: Path) -> psutil.Process | None:
    """The supervisor the actor started for `folder`, still in the actor's process tree."""
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            argv = proc.cmdline()
            if "gpuherd.executors.ray_supervisor" in argv and str(folder) in argv:
                return proc
    return None


def test_an_actor_killed_before_its_supervisor_took_over_leaves_no_folder(
    rherd: RayHerd,
) -> None:
    job = rherd.submit("--gpus", "0", "--", "exec sleep 300")
    name = f"{rherd.namespace}-{job}-1"
    folder = scratch_root() / name
    supervisor = wait_for(lambda: starting_supervisor(folder), 60, "the supervisor to start")
    try:
        supervisor.suspend()  # (before it leaves the actor's tree: its startup takes ~0.2 s)
    except psutil.NoSuchProcess:
        pytest.fail("the supervisor had detached already: no moment to test")
    assert (folder / "spec.json").exists()
    assert not (folder / "supervisor.pid").exists(), "the supervisor had detached already"

    ray.kill(ray.get_actor(name, namespace=rherd.namespace), no_restart=True)
    rherd.wait_state(job, "lost", "failed", "killed", timeout=60)
    with contextlib.suppress(psutil.NoSuchProcess):  # (Ray SIGKILLs it with its worker)
        supervisor.resume()
        supervisor.send_signal(signal.SIGKILL)  # (Ray's kill, had it not been)
    wait_for(lambda: not supervisor.is_running(), 20, "the frozen supervisor to end")
    assert (folder / "spec.json").exists()  # no process of the attempt is left to remove it

    # The next actor on the node (every node of this test cluster shares this machine's /tmp).
    other = rherd.submit("--gpus", "0", "--", "echo up")
    assert rherd.wait_state(other, "succeeded", "failed", timeout=60)["state"] == "succeeded"
    assert not folder.exists(), sorted(p.name for p in folder.iterdir())
