"""Whose each process on a GPU is: a run of one of gpuherd's jobs (by its process group) or
foreign; and the memory in use that no listed process holds (DeviceTable's readings)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from gpuherd.gpus.base import GpuReading

RunKey = tuple[int, int]
"""(job id, attempt number): one run of a job. Two runs of a job may run at once: a job
released while the run it was held for runs (engine_held_runs.py) starts its next attempt
beside it. What is kept per run (its memory, its GPUs) is kept by this key, never the job's
id alone, which mixed the two (a peak taken for the other's)."""


@dataclass(frozen=True)
class GpuProcessView:
    """A process on a GPU, with whose it is: a gpuherd job's (by job id) or foreign."""

    pid: int
    memory: int | None
    job_id: int | None
    user: str | None


@dataclass(frozen=True)
class RunningJob:
    """What the device table needs to know of a running job's run."""

    job_id: int
    attempt: int
    pgid: int
    gpus: tuple[int, ...]
    job_dir: str


def attribute(
    readings: Mapping[int, GpuReading], jobs: list[RunningJob]
) -> tuple[dict[int, list[GpuProcessView]], dict[RunKey, int]]:
    """Tell each GPU process's owner: one of our jobs (by process group), or foreign. Returns
    each GPU's processes, and per run the most memory its processes use on one of its GPUs."""
    by_pgid = {j.pgid: j for j in jobs}
    usage: dict[RunKey, dict[int, int]] = {}
    processes = {}
    for index, reading in readings.items():
        views = []
        for p in reading.processes:
            pgid = _pgid(p.pid)
            job = None if pgid is None else by_pgid.get(pgid)
            views.append(GpuProcessView(p.pid, p.memory, job.job_id if job else None, None))
            if job is not None:
                per_gpu = usage.setdefault((job.job_id, job.attempt), {})
                per_gpu[index] = per_gpu.get(index, 0) + (p.memory or 0)
        processes[index] = views
    return processes, {run: max(per_gpu.values()) for run, per_gpu in usage.items()}


DRIVER_SLACK = 0.05
"""The share of a GPU's memory that memory no process holds may take and still be counted as
free: the driver's own (a few MiB to a few hundred on an idle GPU). Without it a job asking
for a GPU's whole memory (`--mem 80GiB` on an 80 GiB GPU, meaning "all of it") waited for
ever for memory no one would free."""


def unlisted_memory(reading: GpuReading, listed: list[GpuProcessView]) -> int:
    """Memory in use on the GPU that no listed process holds: another container's processes
    (NVML lists no process of another PID namespace), graphics processes. It is taken as much
    as a foreign process's memory, or a job with --mem would be placed in it; up to
    DRIVER_SLACK of the GPU it is taken for the driver's own, and not counted. Unknown (0)
    when a listed process's memory is not reported: the rest of the used memory may then be
    our own jobs', already held by them."""
    used, total = reading.memory_used, reading.memory_total
    if used is None or any(p.memory is None for p in listed):
        return 0
    unlisted = max(used - sum(p.memory or 0 for p in listed), 0)
    return unlisted if total is None or unlisted > total * DRIVER_SLACK else 0


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None  # gone, or in another PID namespace (a container): not ours


def user_of(pid: int) -> str | None:
    """The user a (foreign) process runs as; None when it is gone or unknown."""
    import psutil  # deferred: ~6 ms at import, and only GPU listings ask for users

    try:
        return str(psutil.Process(pid).username())
    except (psutil.Error, KeyError):
        return None
