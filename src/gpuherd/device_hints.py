"""What to say when a job's submitter sets CUDA_VISIBLE_DEVICES (in `--env`, or in the
command itself): gpuherd sets it to the GPUs it places the job on. Said by `submit`, `sweep`
and `run` in the CLI, and by the daemon of an `edit` (edit_warnings.py): apart from the CLI,
as the daemon imports no click."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from gpuherd.typed_name import typed_name


def visible_devices_hint(
    environ: Mapping[str, str], overrides: Mapping[str, str], gpus: int, only: Sequence[int]
) -> str | None:
    """What to say when the submitter set CUDA_VISIBLE_DEVICES (in the shell, or with
    --env) for a job that gets GPUs: gpuherd replaces it with the GPUs it places the job on,
    so the job would not run where they meant. None when --only-gpus is given, or no GPU."""
    given = overrides.get("CUDA_VISIBLE_DEVICES")
    where = "--env CUDA_VISIBLE_DEVICES"
    if given is None:
        given, where = environ.get("CUDA_VISIBLE_DEVICES"), "this shell's CUDA_VISIBLE_DEVICES"
    if not given or not gpus or only:
        return None
    indices = given.replace(" ", "")
    keep = (
        f"--only-gpus {indices} keeps the job on those GPUs"
        if re.fullmatch(r"\d+(,\d+)*", indices)
        else f"--only-gpus with their indices (`{typed_name()} gpus`) keeps the job on them"
    )
    return f"{where}={given} is replaced: the job sees the GPUs gpuherd places it on; {keep}"


_SETS_DEVICES = re.compile(
    r"(?:^|[;&|(]|\bexport\s|\benv\s)\s*(?:[A-Za-z_]\w*=\S*\s+)*CUDA_VISIBLE_DEVICES=([^\s;&|)]*)"
)
"""An assignment where a command starts (after its other ones, `export` or `env`), not a
word of one: `echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES` sets nothing."""


def command_devices_hint(
    command: str, gpus: int, only: Sequence[int], keep_with: str | None = "submit"
) -> str | None:
    """What to say when the command sets CUDA_VISIBLE_DEVICES itself, as one did by hand
    with simple_gpu_scheduler or pueue (`CUDA_VISIBLE_DEVICES=$PUEUE_WORKER_ID CMD`): it
    takes over from the GPUs gpuherd places the job on and holds for it, so the job ran on
    GPUs another job may hold. None with --only-gpus, for no GPU, and for an empty value
    (`CUDA_VISIBLE_DEVICES= CMD` hides the GPUs: no harm). `keep_with`: the command whose
    --only-gpus keeps the job on the GPUs it names (None: `run`, which has none)."""
    found = _SETS_DEVICES.search(command)
    value = found.group(1) if found else ""
    if not value or not gpus or only:
        return None
    indices = value.strip("'\"")
    keep = (
        f", or {keep_with} with --only-gpus {indices} to keep the job on those"
        if keep_with and re.fullmatch(r"\d+(,\d+)*", indices)
        else ""
    )
    return (
        f"the command sets CUDA_VISIBLE_DEVICES={value}, so the job would not run on the GPUs "
        "gpuherd places it on and holds for it, but on ones another job may hold: leave it out "
        f"(gpuherd sets it){keep}"
    )
