"""Placement on GPUs of several nodes (a Ray cluster): a job's GPUs are all on one node.

Properties over the machines and queues of test_placement (a third of them spread over
nodes; the in-order greedy property there checks the node rule too), then examples.
"""

from __future__ import annotations

from hypothesis import given
from test_placement import GIB, NOW, PROPS, Case, cases, job, run

from gpuherd.core.model import Assignment, Device, DeviceState, Policy, Reservation
from gpuherd.core.placement import plan
from gpuherd.core.reasons import never_fits, why_waiting


def cluster(*sizes: int, slots: int = 1) -> list[Device]:
    """Nodes n0, n1, ... with `sizes[k]` GPUs each, indexed in node order."""
    nodes = [node for node, size in enumerate(sizes) for _ in range(size)]
    return [Device(i, slots=slots, node=f"n{k}", host=f"h{k}") for i, k in enumerate(nodes)]


@PROPS
@given(cases())
def test_a_job_never_gets_gpus_of_two_nodes(case: Case) -> None:
    node = {d.index: d.node for d in case.devices}
    for a in run(case):
        assert len({node[i] for i in a.gpus}) <= 1, a


@PROPS
@given(cases())
def test_a_job_that_starts_is_never_one_that_never_fits(case: Case) -> None:
    spec = {j.id: j.spec for j in case.pending}
    for a in run(case):
        s = spec[a.job_id]
        assert never_fits(s.gpus, s.mem, case.devices, case.policy, s.exclusive) is None


@PROPS
@given(cases())
def test_never_fits_refuses_exactly_what_no_node_could_hold(case: Case) -> None:
    configured = [d for d in case.devices if d.slots > 0 and (d.max_jobs or 1) > 0]
    per_node: dict[str | None, int] = {}
    for d in configured:
        per_node[d.node] = per_node.get(d.node, 0) + 1
    largest = max(per_node.values(), default=0)
    for n in range(1, 5):
        reason = never_fits(n, None, case.devices)
        assert (reason is None) == (n <= largest), (n, reason)


def test_a_two_gpu_job_takes_the_node_that_has_both_free() -> None:
    devices = cluster(2, 2)
    busy = [Reservation(1, (0,))]
    assert plan([job(10, gpus=2)], devices, busy, Policy(), NOW) == [Assignment(10, (2, 3))]


def test_three_free_gpus_on_three_nodes_do_not_make_a_two_gpu_job_start() -> None:
    devices = cluster(2, 2, 2)
    busy = [Reservation(1, (0,)), Reservation(2, (2,)), Reservation(3, (4,))]
    two, one = job(10, gpus=2), job(11)
    assert plan([two, one], devices, busy, Policy(), NOW) == [Assignment(11, (1,))]
    assert why_waiting(two, devices, busy) == "waiting for 2 free GPUs on one node"


def test_one_gpu_jobs_fill_a_node_before_an_idle_one() -> None:
    devices = cluster(2, 2)
    busy = [Reservation(1, (0,))]  # node n0 has one GPU left, n1 is idle
    assert plan([job(10), job(11, gpus=2)], devices, busy, Policy(), NOW) == [
        Assignment(10, (1,)),
        Assignment(11, (2, 3)),
    ]


def test_among_nodes_the_emptiest_gpus_win_before_packing() -> None:
    devices = cluster(1, 1, slots=2)  # two nodes of one 2-slot GPU each
    busy = [Reservation(1, (0,))]
    assert plan([job(10)], devices, busy, Policy(), NOW) == [Assignment(10, (1,))]


def test_a_starving_job_holds_gpus_of_one_node() -> None:
    devices = cluster(2, 2)
    busy = [Reservation(1, (0,)), Reservation(2, (2,))]
    big = job(10, gpus=2, queued_at=0.0)
    # It holds node n0 (0 and 1; lowest index among equals): 1 stays free, n1's 3 is used.
    assert plan([big, job(11), job(12)], devices, busy, Policy(), NOW) == [Assignment(11, (3,))]


def test_a_job_too_big_for_every_node_holds_nothing() -> None:
    devices = cluster(2, 2)
    big = job(10, gpus=3, queued_at=0.0)
    assert plan([big, job(11)], devices, [], Policy(), NOW) == [Assignment(11, (0,))]


def test_never_fits_names_the_largest_node() -> None:
    devices = cluster(2, 2)
    assert never_fits(2, None, devices) is None
    assert never_fits(3, None, devices) == (
        "asks for 3 GPUs on one node: the largest node has 2: give fewer gpus (--gpus), at most 2"
    )
    assert never_fits(5, None, devices) == (
        "asks for 5 GPUs on one node: the largest node has 2: give fewer gpus (--gpus), at most 2"
    )
    assert never_fits(3, None, devices, exclusive=True) == (
        "asks for 3 exclusive GPUs on one node: the largest node has 2"
        ": give fewer gpus (--gpus), at most 2"
    )
    drained = [*cluster(2), Device(2, node="n1", state=DeviceState.DRAINING)]
    assert never_fits(2, None, drained) is None  # draining is temporary


def test_never_fits_with_mem_counts_big_gpus_per_node() -> None:
    sizes = [80, 16, 80, 16]
    devices = [Device(i, node=f"n{i // 2}", memory_total=sizes[i] * GIB) for i in range(len(sizes))]
    assert never_fits(2, 40 * GIB, devices) == (
        "asks for 2 GPUs with 40.0 GiB each on one node, but no node has more than 1 such GPU"
        ": give fewer gpus (--gpus), at most 1, or a smaller mem (--mem)"
    )
    assert never_fits(2, 10 * GIB, devices) is None
    assert never_fits(1, 40 * GIB, devices) is None


def test_gpus_without_a_node_are_one_machine() -> None:
    devices = [Device(0), Device(1), Device(2, node="n1"), Device(3, node="n1")]
    assert plan([job(10, gpus=2)], devices, [Reservation(1, (2,))], Policy(), NOW) == [
        Assignment(10, (0, 1))
    ]
    assert never_fits(3, None, devices) == (
        "asks for 3 GPUs on one node: the largest node has 2: give fewer gpus (--gpus), at most 2"
    )
    # One machine alone: no "on one node" wording.
    assert why_waiting(job(10, gpus=2), [Device(0), Device(1)], [Reservation(1, (0,))]) == (
        "waiting for 2 free GPUs"
    )
