"""`daemon start --gpus 0,1` where NVML cannot be used (no NVIDIA driver) takes the GPUs as
named, unchecked: said in one line after the start's, with the way to try gpuherd without
GPUs (a newcomer who pasted the Quickstart's first line got GPUs that are not there, unsaid,
and jobs that failed later inside torch)."""

from __future__ import annotations

import pytest

from conftest import Herd


def test_gpus_taken_as_named_without_nvml_are_said(herd: Herd) -> None:
    started = herd.cli("daemon", "start", "--gpus", "0,1")
    first, *notes = started.stdout.splitlines()
    if "static: 0,1" not in first:
        pytest.skip(f"NVML is there: {first}")
    assert notes == [
        "NVML could not be used (no NVIDIA driver here?): GPUs 0,1 are taken as named, "
        "unchecked, and none of their memory or use is seen; on a machine without GPUs, "
        "--fake-gpus 2 tries gpuherd as if it had them"
    ]
    fake = Herd(herd.home.parent / "fake")
    try:
        assert fake.cli("daemon", "start", "--fake-gpus", "2").stdout.count("\n") == 1
    finally:
        fake.cleanup()
