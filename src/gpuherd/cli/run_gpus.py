"""`gpuherd run`'s GPUs: --gpus (and indices typed after it), --fake-gpus or --gpu-file, made
into the probe and the slots the run configures; every mistake refused before a job runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuherd.cli.options import gpu_choice
from gpuherd.cli.run_args import is_gpu_indices, reads_as_gpu_indices
from gpuherd.core.units import plural
from gpuherd.errors import HerdError

if TYPE_CHECKING:
    from gpuherd.gpus.base import GpuProbe

GPU_FILE_WITHOUT_DRIVER = (
    "--gpu-file names GPUs the driver finds; add --fake-gpus 4 to try it without a GPU "
    "(the file then names fake GPUs 0-3)"
)
"""No driver: what to do instead of make_probe's `--gpus 0,1`, which run refuses with
--gpu-file. (Nor `--gpus-per-job 0`: the GPUs the file names would be refused as absent.)"""


def split_gpus_and_file(gpus: str | None, args: tuple[str, ...]) -> tuple[str | None, str | None]:
    """--gpus and the job file; indices among the arguments (run_args joins those that follow
    --gpus) are a mistake, or a --gpus value click would not split. One that names a file is
    the job file, but where another follows it: then only an index makes the line valid."""
    extra = list(args)
    indices = []
    while extra and (
        is_gpu_indices(extra[0])
        or (gpus is not None and len(extra) > 1 and reads_as_gpu_indices(extra[0]))
    ):
        indices.append(extra.pop(0))
    if indices and gpus is None:
        raise click.UsageError(f"unexpected argument {indices[0]}: did you mean --gpus?")
    if len(extra) > 1:
        raise click.UsageError(f"give one job file (got {', '.join(extra)}), or none for stdin")
    spec = ",".join([gpus, *indices]) if gpus is not None else None
    return spec, (extra[0] if extra else None)


def probe_and_slots(
    spec: str | None, fake_gpus: str | None, gpus_per_job: int, gpu_file: Path | None
) -> tuple[GpuProbe, dict[int, int]]:
    """The probe and the GPUs to configure (index -> slots). With --gpu-file: every GPU of
    the machine (the runner drains those the file does not name), once the file is checked."""
    from gpuherd.gpus import ProbeError, StaticProbe, make_probe

    if gpu_file is not None and spec is not None:
        raise click.UsageError("give --gpus or --gpu-file, not both")
    choice = gpu_choice(spec, fake_gpus)  # GPUHERD_FAKE_GPUS without --gpus or --fake-gpus
    try:
        advice = GPU_FILE_WITHOUT_DRIVER if gpu_file is not None else None
        probe, slots = make_probe(choice.gpus, choice.fake_gpus, choice.origin, advice)
    except ProbeError as exc:
        if gpus_per_job and gpu_file is not None:
            raise HerdError(str(exc)) from None
        if gpus_per_job or spec is not None:
            raise HerdError(f"{exc}; or --gpus-per-job 0 for jobs that need no GPU") from None
        probe, slots = StaticProbe(()), {}  # CPU-only jobs need no GPU, nor a driver
    except ValueError as exc:
        raise HerdError(str(exc)) from None
    if gpu_file is not None:
        from gpuherd.runner_gpu_file import check_gpu_file  # (only then: start-up time)

        try:
            check_gpu_file(gpu_file, slots)
        except HerdError as exc:  # a bad option's value, as a folder given there is: exit 2
            raise click.UsageError(str(exc)) from None
    if gpus_per_job > len(slots):
        raise click.UsageError(
            f"--gpus-per-job {gpus_per_job}, but only {plural(len(slots), 'GPU')} "
            f"{'is' if len(slots) == 1 else 'are'} given: give more, or fewer per job"
        )
    return probe, slots
