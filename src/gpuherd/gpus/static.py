"""GPUs named by the user (`--gpus 0,1`) when NVML cannot tell us anything about them."""

from __future__ import annotations

from collections.abc import Sequence

from gpuherd.core.idspec import listed_ids
from gpuherd.gpus.base import GpuReading


class StaticProbe:
    """Reports exactly the named indices, always present, with no identity or telemetry."""

    def __init__(self, indices: Sequence[int]) -> None:
        self.indices = tuple(sorted(set(indices)))
        self._readings = [
            GpuReading(
                index=i,
                uuid=None,
                name=f"GPU {i}",
                memory_total=None,
                memory_used=None,
                utilization=None,
                processes=(),
            )
            for i in self.indices
        ]

    def read(self) -> list[GpuReading]:
        return list(self._readings)

    def describe(self) -> str:
        return "static: " + listed_ids(self.indices)
