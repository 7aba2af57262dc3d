"""`daemon start --address` of another Ray cluster while jobs still run on the last start's:
refused, as a switch of executor is. Before, the daemon on the new cluster found none of
their actors, counted the jobs lost and, with --retries, ran them again there while they
went on on the old cluster (whose actors nobody would kill, holding its GPUs). The same
cluster named another way (`localhost` for the head's IP, as Ray takes it) is no other.

Two clusters of a head each (no GPU node: cheap); the job asks for no GPU, so it runs on
the head.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Herd, need, wait_for

need("ray.cluster_utils", "ray")

from ray.cluster_utils import Cluster
from ray_fixtures import shutdown

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(name="clusters")
def clusters_fixture() -> Iterator[list[Any]]:
    started: list[Any] = []
    try:
        for _ in range(2):
            head = {"num_cpus": 1, "num_gpus": 0}
            started.append(Cluster(initialize_head=True, connect=False, head_node_args=head))
        yield started
    finally:
        for cluster in started:  # by handle: never `ray stop`
            shutdown(cluster)


def test_another_cluster_is_refused_while_jobs_run_on_the_last_one(
    herd: Herd, clusters: list[Any]
) -> None:
    first, other = (str(c.address) for c in clusters)
    herd.start("--address", first)
    job = herd.submit("--gpus", "0", "--retries", "1", "--", "exec sleep 600")
    herd.wait_state(job, "running", timeout=60)
    herd.cli("daemon", "stop")  # the job goes on, on the first cluster

    proc = herd.cli("daemon", "start", "--address", other, check=False)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == (
        f"gpuherd: error: 1 job still runs on the Ray cluster at {first}, which a daemon on "
        f"the Ray cluster at {other} cannot reach: it would count it lost and run its "
        "retries while it goes on. Start as before (`gpuherd daemon start` without options), "
        "let it end or kill it, then switch; or add --abandon-running to count it lost "
        "(its processes may go on there)\n"
    )
    wait_for(lambda: not herd._daemons(), 30, "the refused daemon to exit")

    # The first cluster named through `localhost` (its head is on this machine) is no other:
    # the job is found there, still in its first attempt.
    herd.start("--address", "localhost:" + first.rpartition(":")[2])
    assert herd.wait_state(job, "running")["attempt"] == 1
    herd.cli("daemon", "stop")

    herd.start("--address", other, "--abandon-running")  # for a cluster gone for good
    wait_for(lambda: herd.job(job)["attempt"] == 2, 60, "the job's retry on the other cluster")
