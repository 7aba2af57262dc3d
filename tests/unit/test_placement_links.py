"""A multi-GPU job takes the set of GPUs with the best links, wherever it is: not the
best-ranked GPU and its best partner (docs/gpus.md, "Topology")."""

from __future__ import annotations

import time

from test_placement import NOW, job

from gpuherd.core.model import Assignment, Device, Policy, Reservation
from gpuherd.core.placement import plan

# NVLink 0-1 and 2-3, the host bridge otherwise (the QA report's machine).
PAIRS = {
    0: {1: 3, 2: 1, 3: 1},
    1: {0: 3, 2: 1, 3: 1},
    2: {3: 3, 0: 1, 1: 1},
    3: {2: 3, 0: 1, 1: 1},
}


def machine(links: dict[int, dict[int, int]]) -> list[Device]:
    return [Device(i, links=links.get(i, {})) for i in range(4)]


def test_a_free_nvlinked_pair_wins_when_the_first_gpu_has_no_free_partner() -> None:
    busy = [Reservation(1, (1,))]  # GPU 0's partner is taken
    assert plan([job(10, gpus=2)], machine(PAIRS), busy, Policy(), NOW) == [Assignment(10, (2, 3))]


def test_the_only_linked_pair_wins_over_the_best_ranked_gpus() -> None:
    only_1_3 = {1: {3: 3}, 3: {1: 3}}
    assert plan([job(10, gpus=2)], machine(only_1_3), [], Policy(), NOW) == [Assignment(10, (1, 3))]


def test_among_equal_links_the_emptiest_gpus_win() -> None:
    # Both pairs NVLinked; GPU 0 has a job (two slots): the idle pair 2-3 comes first.
    devices = [Device(i, slots=2, links=PAIRS[i]) for i in range(4)]
    busy = [Reservation(1, (0,))]
    assert plan([job(10, gpus=2)], devices, busy, Policy(), NOW) == [Assignment(10, (2, 3))]
    # All idle: the lowest indices, as without links.
    assert plan([job(10, gpus=2)], devices, [], Policy(), NOW) == [Assignment(10, (0, 1))]


def test_the_slowest_link_counts_before_the_sum() -> None:
    # {0, 1, 2}: links 3, 3, 0 (sum 6); {1, 2, 3}: links 2, 2, 2 (sum 6, slowest 2).
    mesh = {0: {1: 3, 2: 0, 3: 0}, 1: {2: 3, 3: 2}, 2: {3: 2}}
    assert plan([job(10, gpus=3)], machine(mesh), [], Policy(), NOW) == [Assignment(10, (1, 2, 3))]


def test_a_large_node_finds_its_nvlinked_half_quickly() -> None:
    # 24 GPUs in three NVLinked groups of 8 (too many sets to compare them all: each GPU
    # seeds a set instead); the first group is partly busy, the second is whole.
    group = {i: i // 8 for i in range(24)}
    devices = [
        Device(i, links={j: 3 if group[j] == group[i] else 0 for j in range(24) if j != i})
        for i in range(24)
    ]
    busy = [Reservation(1, (0,)), Reservation(2, (5,))]
    start = time.perf_counter()
    assert plan([job(10, gpus=8)], devices, busy, Policy(), NOW) == [
        Assignment(10, tuple(range(8, 16)))
    ]
    assert time.perf_counter() - start < 0.05  # a pass of the engine stays cheap
