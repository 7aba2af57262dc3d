"""The request of an --oom-retry attempt (grow_request) and the largest one a job may ask for
(most_mem): bounded by the GPUs the job may use, never one it could never run with."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuherd.core.capacity import margin
from gpuherd.core.lifecycle import grow_request
from gpuherd.core.model import Device, DeviceState, Policy
from gpuherd.core.reasons_never import cannot_fit, most_mem

GIB = 2**30
MACHINE = [
    Device(0, memory_total=24 * GIB),
    Device(1, memory_total=24 * GIB),
    Device(2, memory_total=80 * GIB),
]
"""2x24GiB,1x80GiB, as `--fake-gpus` gives them."""


def test_a_grown_request_that_fits_stays_shared() -> None:
    assert grow_request(8 * GIB, 0, 80 * GIB) == (12 * GIB, False)
    assert grow_request(8 * GIB, 20 * GIB, 80 * GIB) == (20 * GIB, False)  # the measured peak
    assert grow_request(None, 20 * GIB, 80 * GIB) == (20 * GIB, False)
    assert grow_request(60 * GIB, 0, None) == (90 * GIB, False)  # no size bounds it


def test_a_grown_request_beyond_what_the_job_may_use_is_that_most_on_gpus_of_its_own() -> None:
    # Its --mem stays (the largest it may ask for): never a smaller GPU than it ran out on.
    assert grow_request(60 * GIB, 0, 80 * GIB) == (80 * GIB, True)
    assert grow_request(20 * GIB, 0, 24 * GIB) == (24 * GIB, True)
    assert grow_request(None, 30 * GIB, 24 * GIB) == (24 * GIB, True)
    # Out of memory again at that most: the same request, still exclusive.
    assert grow_request(24 * GIB, 0, 24 * GIB) == (24 * GIB, True)


def test_with_nothing_known_the_retry_gets_a_gpu_to_itself() -> None:
    assert grow_request(None, 0, 80 * GIB) == (None, True)
    # ...as large as the GPU it ran out of memory on, where its size is known
    assert grow_request(None, 0, 80 * GIB, 24 * GIB) == (24 * GIB, True)
    assert grow_request(None, 0, None) == (None, True)


def test_most_mem_is_the_largest_gpu_the_job_may_use() -> None:
    assert most_mem(1, MACHINE) == 80 * GIB
    assert most_mem(1, MACHINE, only=(0,)) == 24 * GIB  # --only-gpus 0
    assert most_mem(1, MACHINE, only=(0, 2)) == 80 * GIB
    # --gpus N: the N-th largest, so N GPUs hold it.
    assert most_mem(2, MACHINE) == 24 * GIB
    assert most_mem(3, MACHINE) == 24 * GIB
    assert most_mem(2, MACHINE, only=(1, 2)) == 24 * GIB


def test_most_mem_leaves_the_keep_free_margin() -> None:
    policy = Policy(keep_free=0.1)
    most = most_mem(1, MACHINE, policy)
    assert most == 80 * GIB - margin(80 * GIB, 0.1)
    assert cannot_fit(1, most, MACHINE, policy, True, ()) is None
    assert cannot_fit(1, (most or 0) + 1, MACHINE, policy, True, ()) is not None


def test_most_mem_counts_the_gpus_that_may_take_a_job_on_one_node() -> None:
    nodes = [
        Device(0, memory_total=24 * GIB, node="a"),
        Device(1, memory_total=80 * GIB, node="a"),
        Device(2, memory_total=48 * GIB, node="b"),
        Device(3, memory_total=48 * GIB, node="b"),
    ]
    assert most_mem(2, nodes) == 48 * GIB
    assert most_mem(1, nodes) == 80 * GIB
    small = Device(0, memory_total=24 * GIB)
    draining = Device(1, memory_total=80 * GIB, state=DeviceState.DRAINING)
    assert most_mem(1, [small, draining]) == 80 * GIB  # draining is for a while
    no_jobs = Device(1, memory_total=80 * GIB, max_jobs=0)
    assert most_mem(1, [small, no_jobs]) == 24 * GIB  # takes no job


@pytest.mark.parametrize(
    ("gpus", "devices", "only"),
    [
        (1, [Device(0), Device(1, memory_total=24 * GIB)], ()),  # a GPU of unknown size
        (2, MACHINE, (0,)),  # --only-gpus names too few: no --mem helps
        (4, MACHINE, ()),
        (0, MACHINE, ()),
    ],
)
def test_most_mem_is_none_where_no_size_bounds_the_job(
    gpus: int, devices: list[Device], only: tuple[int, ...]
) -> None:
    assert most_mem(gpus, devices, only=only) is None


@given(
    sizes=st.lists(st.sampled_from([None, 8, 24, 40, 80]), min_size=1, max_size=5),
    gpus=st.integers(1, 3),
    only=st.sets(st.integers(0, 4), max_size=3),
    mem=st.one_of(st.none(), st.integers(1, 90)),
    peak=st.integers(0, 120),
    keep=st.sampled_from([0.0, 0.1]),
)
def test_a_retry_that_could_run_before_can_still_run_on_gpus_no_smaller(
    sizes: list[int | None],
    gpus: int,
    only: set[int],
    mem: int | None,
    peak: int,
    keep: float,
) -> None:
    devices = [Device(i, memory_total=s and s * GIB) for i, s in enumerate(sizes)]
    policy, named = Policy(keep_free=keep), tuple(sorted(only))
    asked = mem and mem * GIB
    if cannot_fit(gpus, asked, devices, policy, False, named) is not None:
        return  # refused at submit: never ran out of memory here
    most = most_mem(gpus, devices, policy, named)
    grown, exclusive = grow_request(asked, peak * GIB, most)
    assert cannot_fit(gpus, grown, devices, policy, exclusive, named) is None
    if exclusive and (asked or peak) and most is not None:
        assert grown == most  # a GPU to itself, and as large as any it may use
    if exclusive and grown is not None and gpus == 1:
        # Only on the largest GPU it may use: none smaller than the one it ran out on.
        known = [(i, s * GIB) for i, s in enumerate(sizes) if s]
        caps = [t - margin(t, keep) for i, t in known if not named or i in named]
        assert all(grown >= c for c in caps)
