"""The --only-gpus warning (core/gpu_unknown.py) says where a GPU no probe sees is not: on
this machine, or, for a daemon whose jobs run on a Ray cluster, in the cluster (it said
"not on this machine" there too, of a machine that has none of the cluster's GPUs)."""

from __future__ import annotations

from gpuherd.core.gpu_unknown import unknown_only_gpus, unknown_said


def test_a_gpu_no_probe_sees_is_not_on_this_machine_or_not_in_the_cluster() -> None:
    here = unknown_said([0, 5], {0, 1, 2, 3})
    assert here == (
        "--only-gpus 0,5 names GPU 5, which is not configured (configured: 0,1,2,3) and not "
        "on this machine (the probe does not see it): the job runs only on GPU 0"
    )
    there = unknown_said([0, 5], {0, 1, 2, 3}, cluster=True)
    assert there == (
        "--only-gpus 0,5 names GPU 5, which is not configured (configured: 0,1,2,3) and not "
        "in the Ray cluster (no node of it has it now): the job runs only on GPU 0"
    )


def test_beside_a_gpu_to_add_the_others_are_said_not_in_the_cluster() -> None:
    (said,) = unknown_only_gpus([(3, [0, 1, 9, 10])], {0, 1, 2, 3}, seen={9}, cluster=True)
    assert said == (
        "job 3: --only-gpus 0,1,9,10 names GPUs 9, 10, which are not configured (configured: "
        "0,1,2,3): the job runs only on GPUs 0, 1 until GPU 9 is added (gpuherd gpus add 9); "
        "GPU 10 is not in the Ray cluster (no node of it has it now)"
    )
    (mine,) = unknown_only_gpus([(3, [0, 1, 9, 10])], {0, 1, 2, 3}, seen={9})
    assert mine.endswith("; GPU 10 is not on this machine (the probe does not see it)")
