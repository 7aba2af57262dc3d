"""`gpuherd run`'s run-wide --mem and --ram, checked against the machine before any job: one
that no GPU or no host memory here could ever give was refused once per job, a line each
(2,000 lines for a job file of 2,000), and the run exited 1 as if its jobs had failed.

Only the run-wide options: a job's own (a yielder's dict) may ask for more than the machine
has, and is refused alone, with a line of its own, as before."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from gpuherd.core.model import Device, JobSpec, Policy
from gpuherd.core.reasons_never import Refusal
from gpuherd.gpus.base import ProbeError

if TYPE_CHECKING:
    from gpuherd.gpus.base import GpuProbe

GPUS_PER_JOB = "--gpus-per-job"


def refuse_impossible_run_wide(
    probe: GpuProbe,
    slots: dict[int, int],
    gpus_per_job: int,
    mem: int | None,
    ram: int | None,
    exclusive: bool,
) -> None:
    """A usage error (exit 2, as `--gpus-per-job 2` with one GPU) when every job, asking what
    the run-wide options ask, could never run on the run's GPUs (`slots`; those the probe
    does not see now count as large enough) or in this machine's memory."""
    if mem is None and ram is None:
        return
    from gpuherd.submission import never_runs  # (only then: start-up time)

    spec = JobSpec(command="", cwd="", gpus=gpus_per_job, mem=mem, ram=ram, exclusive=exclusive)
    devices = _devices(probe if mem is not None else None, slots)
    refusal = never_runs(spec, devices, Policy(), gpus_flag=GPUS_PER_JOB)
    if refusal is not None:
        raise click.UsageError(f"no job of this run could ever start: each {_worded(refusal)}")


def _devices(probe: GpuProbe | None, slots: dict[int, int]) -> list[Device]:
    """The run's GPUs, with their memory as `probe` reads it (None: not asked; unknown
    where it cannot say)."""
    seen: dict[int, int | None] = {}
    if probe is not None:
        try:
            seen = {reading.index: reading.memory_total for reading in probe.read()}
        except ProbeError:  # (the engine's first reading says why; each job is checked then)
            pass
    return [
        Device(index=index, slots=n, memory_total=seen.get(index)) for index, n in slots.items()
    ]


def _worded(refusal: Refusal) -> str:
    """The refusal with the run's own option names (`a smaller mem (--mem)`: as a field of
    the daemon's jobs says it)."""
    said = str(refusal).replace("ram (--ram)", "--ram").replace("mem (--mem)", "--mem")
    return said.replace("gpus (--gpus-per-job)", "--gpus-per-job")
