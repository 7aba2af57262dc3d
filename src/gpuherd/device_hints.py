"""What to say when a job's submitter sets CUDA_VISIBLE_DEVICES (in `--env`, or in the
command itself): gpuherd sets it to the GPUs it places the job on. Said by `submit`, `sweep`
and `run` in the CLI, and by the daemon of an `edit` (edit_warnings.py): apart from the CLI,
as the daemon imports no click."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence

from gpuherd.core.naming import gpu_names
from gpuherd.typed_name import typed_name

VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"

GpusHad = Callable[[], Collection[int] | None]
"""The GPUs gpuherd has (configured; lost ones too, as --only-gpus takes them), asked only
when a hint would name some; None where that is not known (a sweep's --dry-run, no daemon)."""

_INDICES = re.compile(r"\d+(,\d+)*")


def _not_had(indices: str, had: GpusHad | None) -> str | None:
    """What to say in place of `--only-gpus INDICES` where gpuherd lacks GPUs it names (`GPU
    5 is not configured (configured: 0,1,2,3)`): it advised `--only-gpus 5` on four GPUs,
    which is refused. None where it has them all, or where that is not known."""
    have = had() if had is not None else None
    if have is None:
        return None
    absent = sorted({int(index) for index in indices.split(",")} - set(have))
    if not absent:
        return None
    listed = ",".join(map(str, sorted(have))) or "none"  # (as `gpus drain 9` lists them)
    return f"{gpu_names(absent, ('is', 'are'))} not configured (configured: {listed})"


def visible_devices_hint(
    environ: Mapping[str, str],
    overrides: Mapping[str, str],
    gpus: int,
    only: Sequence[int],
    had: GpusHad | None = None,
    *,
    keep_with: str = "--only-gpus",
    set_with: str = "--env",
) -> str | None:
    """What to say when the submitter set CUDA_VISIBLE_DEVICES (in the shell, or with
    --env) for a job that gets GPUs: gpuherd replaces it with the GPUs it places the job on,
    so the job would not run where they meant. None when --only-gpus is given, or no GPU.
    `keep_with`: the option that keeps jobs on given GPUs (`run`'s --gpus, which keeps all
    of the run's); `set_with`: what set the overrides (`run`: a yielded item's `env`)."""
    given = overrides.get(VISIBLE_DEVICES)
    where = f"{set_with} {VISIBLE_DEVICES}"
    if given is None:
        given, where = environ.get(VISIBLE_DEVICES), f"this shell's {VISIBLE_DEVICES}"
    if not given or not gpus or only:
        return None
    indices = given.replace(" ", "")
    jobs = "the job" if keep_with == "--only-gpus" else "the jobs"
    if not _INDICES.fullmatch(indices):
        keep = f"{keep_with} with their indices (`{typed_name()} gpus`) keeps {jobs} on them"
    else:
        keep = _not_had(indices, had) or f"{keep_with} {indices} keeps {jobs} on those GPUs"
    return f"{where}={given} is replaced: the job sees the GPUs gpuherd places it on; {keep}"


_SETS_DEVICES = re.compile(
    r"(?:^|[;&|(]|\bexport\s|\benv\s)\s*(?:[A-Za-z_]\w*=\S*\s+)*CUDA_VISIBLE_DEVICES=([^\s;&|)]*)"
)
"""An assignment where a command starts (after its other ones, `export` or `env`), not a
word of one: `echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES` sets nothing."""


def command_devices_hint(
    command: str,
    gpus: int,
    only: Sequence[int],
    keep_with: str | None = "submit",
    had: GpusHad | None = None,
) -> str | None:
    """What to say when the command sets CUDA_VISIBLE_DEVICES itself, as one did by hand
    with simple_gpu_scheduler or pueue (`CUDA_VISIBLE_DEVICES=$PUEUE_WORKER_ID CMD`): it
    takes over from the GPUs gpuherd places the job on and holds for it, so the job ran on
    GPUs another job may hold. None with --only-gpus, for no GPU, and for an empty value
    (`CUDA_VISIBLE_DEVICES= CMD` hides the GPUs: no harm). `keep_with`: the command whose
    --only-gpus keeps the job on the GPUs it names (None: `run`, which has none); not
    offered for GPUs gpuherd does not have (`had`), which are named so instead (for `run`
    too: its note was left out with the offer)."""
    found = _SETS_DEVICES.search(command)
    value = found.group(1) if found else ""
    if not value or not gpus or only:
        return None
    indices = value.strip("'\"")
    keep = ""
    if _INDICES.fullmatch(indices):
        not_had = _not_had(indices, had)
        if not_had:
            keep = f"; {not_had}"
        elif keep_with:
            keep = f", or {keep_with} with --only-gpus {indices} to keep the job on those"
    return (
        f"the command sets CUDA_VISIBLE_DEVICES={value}, so the job would not run on the GPUs "
        "gpuherd places it on and holds for it, but on ones another job may hold: leave it out "
        f"(gpuherd sets it){keep}"
    )
