"""A home switched from the local executor to a Ray cluster and back: the local start gets its
own GPUs back, as they were (slots, drains, removals), and a GPU removed on one executor is
neither out nor "in use again" on the other. Before, the cluster's GPU table stayed: a start
with the last local start's options, taken as a plain restart, kept the cluster's 2 GPUs where
`--fake-gpus 4` named 4, and the removed GPUs of both executors were one list.

A cluster of a head alone with 2 fake GPUs, started for the module's one test.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Herd, need

need("ray.cluster_utils", "ray")

from ray_fixtures import lone_head, shutdown

from gpuherd.cli.gpu_cmds import configured

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(name="head")
def head_fixture() -> Iterator[Any]:
    cluster = lone_head(2)
    try:
        yield cluster
    finally:
        shutdown(cluster)  # by handle: never `ray stop`


def gpus(herd: Herd) -> dict[int, tuple[int, str]]:
    """The GPUs the daemon has: (slots, state) by index."""
    answer = herd.json("gpus")
    have = configured(answer)
    return {g["index"]: (g["slots"], g["state"]) for g in answer["gpus"] if g["index"] in have}


def test_a_local_start_after_a_cluster_gets_its_own_gpus_back(herd: Herd, head: Any) -> None:
    herd.start("--fake-gpus", "4")
    herd.cli("gpus", "remove", "3")
    herd.cli("gpus", "drain", "2")
    herd.cli("daemon", "stop")

    herd.start("--address", str(head.address))
    assert set(gpus(herd)) == {0, 1}  # the cluster's
    herd.cli("gpus", "remove", "1")
    herd.cli("daemon", "stop")

    started = herd.cli("daemon", "start", "--fake-gpus", "4").stdout
    assert "GPU 1" not in started, started  # (removed on the cluster: nothing to say here)
    assert "GPU 3 is removed, as before this start" in started, started
    have = gpus(herd)
    assert set(have) == {0, 1, 2}, have  # 3 removed here; 1 only on the cluster
    assert have[2][1] == "draining", have
    herd.cli("daemon", "stop")
