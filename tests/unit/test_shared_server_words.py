"""The words for a GPU shared with other users (pure): who holds it, as `gpuherd gpus` and the
dashboard say it (core/gpu_foreign.py), and which GPUs a waiting job's reason names
(core/reasons_gpus.py). With daemons: tests/{integration,e2e}/test_shared_server_*.py."""

from __future__ import annotations

from test_placement import job

from gpuherd.core.gpu_foreign import foreign_processes, not_listed
from gpuherd.core.model import Device, DeviceState, Policy, Reservation
from gpuherd.core.reasons import why_waiting

GIB = 2**30


def test_who_holds_a_gpu_in_the_clis_words() -> None:
    gpu = {
        "foreign_memory": 73 * GIB,  # 3 GiB listed, 70 GiB held by no listed process
        "processes": [
            {"pid": 4242, "memory": 3 * GIB, "job_id": None, "user": "alice"},
            {"pid": 4243, "memory": None, "job_id": None, "user": None},
            {"pid": 900, "memory": 5 * GIB, "job_id": 7, "user": None},  # a gpuherd job's
        ],
    }
    assert foreign_processes(gpu) == ["4242 (alice, 3.0 GiB)", "4243 (?)"]
    assert not_listed(gpu) == "70.0 GiB used by processes not listed (another container?)"
    assert not_listed({**gpu, "foreign_memory": 3 * GIB}) is None  # all of it listed
    assert not_listed({"processes": []}) is None  # an older daemon's GPU: nothing said


def test_gpus_full_of_gpuherd_jobs_are_named_only_beside_another_cause() -> None:
    devices = [Device(i) for i in range(3)]
    full = [Reservation(i, (i,)) for i in range(3)]
    assert why_waiting(job(10), devices, full, Policy()) == "waiting for a free GPU"
    busy = [Device(0, foreign_processes=1), *devices[1:]]
    assert why_waiting(job(10), busy, full[1:], Policy()) == (
        "waiting for a free GPU (GPU 0 is busy with other users' processes; "
        "GPUs 1, 2 are full of gpuherd jobs)"
    )


def test_an_exclusive_job_names_only_gpus_that_run_gpuherd_jobs() -> None:
    """A GPU without gpuherd jobs, but with too little memory left by other users (no listed
    process), is not said to run gpuherd jobs: its memory in use outside gpuherd is named
    (test_exclusive_reason_words.py)."""
    crowded = Device(0, memory_total=80 * GIB, foreign_memory=70 * GIB)
    draining = Device(2, memory_total=80 * GIB, state=DeviceState.DRAINING)
    devices = [crowded, Device(1, memory_total=80 * GIB), draining]
    wanted = job(10, exclusive=True, mem=20 * GIB)
    assert why_waiting(wanted, devices, [Reservation(1, (1,))], Policy()) == (
        "waiting for an empty GPU (GPU 1 runs gpuherd jobs; GPU 2 is draining; "
        "70.0 GiB of GPU 0 is in use outside gpuherd, by no listed process)"
    )
