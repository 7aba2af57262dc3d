"""Counts past what the daemon stores (`limit=10**30`) are refused as too large, naming the
most there is: they were told "limit is a whole number from 1 up", which they are. And a
sweep's `samples=0` (or any value its spec refuses) is an InvalidValue, as `samples` past the
grid's points is (the daemon's refusal): it was a plain HerdError. None of these asks a
daemon: the Herd is of a home where none runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpuherd.client import Client
from gpuherd.errors import InvalidValue
from gpuherd.pyapi import Herd
from gpuherd.pyapi_sweep import Sweep


@pytest.fixture
def herd(tmp_path: Path) -> Herd:
    return Herd(Client(tmp_path / "home"))


COUNTS: dict[str, Callable[[Herd, int], Any]] = {
    "limit": lambda herd, n: herd.jobs(limit=n),
    "lines": lambda herd, n: herd.job(7).logs(lines=n),
    "attempt": lambda herd, n: herd.job(7).logs(attempt=n),
    "follow's lines": lambda herd, n: herd.job(7).follow(lines=n),
    "a sweep's limit": lambda herd, n: Sweep(herd, "naps", None).results(limit=n),
}


@pytest.mark.parametrize("call", COUNTS.values(), ids=list(COUNTS))
def test_a_count_past_the_largest_stored_is_said_too_large(
    herd: Herd, call: Callable[[Herd, int], Any]
) -> None:
    with pytest.raises(InvalidValue) as refused:
        call(herd, 10**30)
    name = str(refused.value).split()[0]
    assert str(refused.value) == f"{name} {10**30} is too large (at most 2**63 - 1)"
    with pytest.raises(InvalidValue, match=f"^{name} is a whole number from [01] up"):
        call(herd, -1)  # (under the least: as it was)


@pytest.mark.parametrize("samples", [0, -3])
def test_samples_the_spec_refuses_is_an_invalid_value(herd: Herd, samples: int) -> None:
    with pytest.raises(InvalidValue) as refused:
        herd.sweep("echo {x}", {"x": [1, 2]}, samples=samples, seed=1, gpus=0, dry_run=True)
    assert isinstance(refused.value, ValueError)  # (a WrongValue, as the API's other values)
    assert str(refused.value) == f"invalid sweep: samples: must be at least 1, got {samples}"


def test_a_template_the_spec_refuses_is_an_invalid_value(herd: Herd) -> None:
    with pytest.raises(InvalidValue, match=r"^invalid sweep: grid.x: empty list of values$"):
        herd.sweep("echo {x}", {"x": []}, gpus=0, dry_run=True)
