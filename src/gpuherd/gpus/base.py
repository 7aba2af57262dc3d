"""The GPU probe port: what the engine learns about the GPUs each time it looks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol


class ProbeError(Exception):
    """The GPUs could not be read; the message says why and what to do next.

    When `read()` raises it, the caller keeps its last good reading and tries again later.
    """


@dataclass(frozen=True)
class GpuProcess:
    """A compute process on a GPU. `memory` None = the driver does not report it."""

    pid: int
    memory: int | None


@dataclass(frozen=True)
class GpuReading:
    """One GPU at one moment. Every None means "not available on this GPU", never zero."""

    index: int
    """nvidia-smi's index (PCI bus order), the number users type and CUDA_VISIBLE_DEVICES holds."""
    uuid: str | None
    name: str
    memory_total: int | None
    memory_used: int | None
    utilization: int | None
    """Percent of time a kernel was running over the driver's last sample period."""
    processes: tuple[GpuProcess, ...]
    links: Mapping[int, int] = field(default_factory=dict)
    """Link quality to other GPUs by index: 3 NVLink, 2 same PCIe switch, 1 same host
    bridge, 0 across CPUs; missing = unknown."""
    node: str | None = None
    """The machine the GPU is on (a Ray node id); None = the daemon's own machine."""
    host: str | None = None
    """The node as people know it (a host name)."""


@dataclass(frozen=True)
class JobOnGpus:
    """A job gpuherd runs now, as the fake probe needs to see it."""

    pid: int
    gpus: tuple[int, ...]
    job_dir: str


class GpuProbe(Protocol):
    def read(self) -> list[GpuReading]:
        """The GPUs present now, by index; a GPU that vanished is left out. Raises ProbeError."""
        ...

    def describe(self) -> str:
        """One line for logs and `gpuherd gpus`: "nvml: 2 GPUs", "fake: 4 GPUs", "static: 0,1"."""
        ...
