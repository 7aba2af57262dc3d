"""A submission's `begin` outside what a job can start at, through the HTTP API: one before
1970 was told `must be a time (epoch seconds) before the year 9999`, which it is (real
daemon)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Herd
from gpuherd.errors import InvalidValue


@pytest.mark.parametrize("begin", [-1, 1e308])
def test_a_begin_outside_1970_to_9999_is_refused_naming_both_ends(
    daemon: Herd, tmp_path: Path, begin: float
) -> None:
    job = {"command": "true", "cwd": str(tmp_path), "gpus": 0, "begin": begin}
    with pytest.raises(InvalidValue) as refused:
        daemon.client.post("/jobs", {"jobs": [job]})
    assert str(refused.value).endswith(
        "begin (--begin) must be a time (epoch seconds) from 1970 to the year 9999"
    )
    assert daemon.client.get("/jobs")["jobs"] == []  # nothing queued
