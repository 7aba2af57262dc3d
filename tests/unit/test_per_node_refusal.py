"""A job that asks for more GPUs than a node of the cluster has is refused in per-node words,
also when the cluster's GPUs together are too few: a job's GPUs are all on one node, so that
is what matters there (docs/cluster.md). A sweep's refusal, and any batch's, gives the same
words as `gpuherd submit`'s. Before: a sweep's `--gpus 2` on a cluster of one GPU per node
was refused with `gpuherd has only 1`. One machine keeps its words."""

from __future__ import annotations

from test_placement import job
from test_placement_nodes import cluster

from gpuherd.core.model import Device, JobSpec, Policy
from gpuherd.submission import never_runs
from gpuherd.submission_batch import Batch


def gpus(count: int) -> JobSpec:
    return job(1, gpus=count).spec


def test_a_cluster_of_one_gpu_per_node_refuses_in_per_node_words() -> None:
    for nodes in (cluster(1), cluster(1, 1)):
        reason = never_runs(gpus(2), nodes, Policy())
        assert reason == (
            "asks for 2 GPUs on one node: the largest node has 1"
            ": give fewer gpus (--gpus), at most 1"
        ), nodes
        assert Batch(1, "lr").never_runs(1, reason) == (
            "sweep 'lr' can never run: each of its points asks for 2 GPUs on one node: "
            "the largest node has 1: give fewer gpus (--gpus), at most 1"
        )
        assert Batch(3).never_runs(None, reason) == (
            "this submission can never run: each of its 3 jobs asks for 2 GPUs on one node: "
            "the largest node has 1: give fewer gpus (--gpus), at most 1"
        )
    assert never_runs(gpus(3), cluster(2, 2), Policy()) == (
        "asks for 3 GPUs on one node: the largest node has 2"  # (as before)
        ": give fewer gpus (--gpus), at most 2"
    )
    assert never_runs(gpus(1), cluster(1, 1), Policy()) is None


def test_one_machine_keeps_its_words() -> None:
    assert never_runs(gpus(2), [Device(0)], Policy()) == (
        "asks for 2 GPUs but gpuherd has only 1: give fewer gpus (--gpus), at most 1"
    )
    assert never_runs(gpus(1), [], Policy()) == (
        "asks for 1 GPU but gpuherd has none: give gpus 0 (--gpus 0) for a CPU-only job"
    )
