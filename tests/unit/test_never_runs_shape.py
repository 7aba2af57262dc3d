"""A listing judges whether a queued job can ever run here once per shape of job
(service_reasons._ByShape, core/waiting.Shape): right only while never_runs reads no field of
a job's spec that its shape leaves out."""

from __future__ import annotations

from typing import Any

import pytest

from gpuherd.core.model import Device, JobSpec, Policy
from gpuherd.core.waiting import shape_of
from gpuherd.submission import never_runs

GIB = 1 << 30


class Reading:
    """A spec that notes which of its fields are read."""

    def __init__(self, spec: JobSpec) -> None:
        self._spec = spec
        self.read: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        self.read.add(name)
        return getattr(self._spec, name)


def fields_read(judge: Any, spec: JobSpec) -> set[str]:
    reading = Reading(spec)
    judge(reading)
    return reading.read


@pytest.mark.parametrize(
    "asks",
    [
        {"gpus": 1},
        {"gpus": 3},  # more than there are: never
        {"gpus": 1, "mem": 30 * GIB},  # more than a GPU has: never
        {"gpus": 1, "exclusive": True},
        {"gpus": 1, "only_gpus": (5,)},  # no such GPU: never
        {"gpus": 0, "ram": 1 << 60},  # more host memory than there is: never
        {"gpus": 0},
    ],
)
def test_never_runs_reads_only_what_a_shape_holds(asks: dict[str, Any]) -> None:
    spec = JobSpec(command="true", cwd="/", **asks)
    devices = [Device(0, memory_total=24 * GIB), Device(1, memory_total=24 * GIB)]
    read = fields_read(lambda s: never_runs(s, devices, Policy(), ()), spec)
    assert read <= fields_read(shape_of, spec), "never_runs reads what Shape leaves out"
