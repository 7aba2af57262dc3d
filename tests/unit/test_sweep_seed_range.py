"""A sweep spec's seed is one of the daemon's 64-bit numbers (core/sweep_spec): one past them
was taken over HTTP, where --seed, a sweep file and Python's seed= refuse it. A sweep stored
with one before still reads back (`sweep ls` and `status` read every stored spec)."""

from __future__ import annotations

import pytest

from gpuherd.core.sweep import SweepError, SweepSpec, spec_from_dict, spec_to_dict

GRID = {"name": "s", "command": "echo {x}", "grids": [{"x": [1, 2, 3]}], "shuffle": True}


@pytest.mark.parametrize(
    ("seed", "why"),
    [(2**63, "is too large (at most 2**63 - 1)"), (-(2**63) - 1, "is too small (at least -2**63)")],
)
def test_a_seed_past_64_bits_is_refused(seed: int, why: str) -> None:
    with pytest.raises(SweepError) as refused:
        spec_from_dict({**GRID, "seed": seed})
    assert str(refused.value) == f"seed: {seed} {why}"


@pytest.mark.parametrize("seed", [2**63 - 1, -(2**63), 0])
def test_a_seed_of_64_bits_is_taken(seed: int) -> None:
    assert spec_from_dict({**GRID, "seed": seed}).seed == seed


def test_a_sweep_stored_with_a_larger_seed_still_reads_back() -> None:
    data = spec_to_dict(SweepSpec(name="old", command="echo {x}", grids=({"x": (1, 2)},)))
    data.update(shuffle=True, seed=10**26)
    assert spec_from_dict(data, stored=True).seed == 10**26
