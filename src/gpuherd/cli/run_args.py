"""`gpuherd run`'s command line as other tools' users type it, made into ours before click
parses it: gpu-hog's option names, and simple_gpu_scheduler's `--gpus 0 1 2` wherever it
stands."""

from __future__ import annotations

import re
from pathlib import Path

GPU_HOG_SPELLINGS = {"--job_yielder": "--yielder", "--output_dir": "--output-dir"}
"""gpu-hog's option names, taken as ours; its `--job_file F` is the FILE argument."""


def run_args(args: list[str]) -> list[str]:
    """`args` in our spellings, `--gpus` with all its indices in one value."""
    return gpu_indices_together(gpu_hog_args(args))


def gpu_hog_args(args: list[str]) -> list[str]:
    """`args` with gpu-hog's spellings in ours (everything after `--` left as it is)."""
    out: list[str] = []
    rest = iter(args)
    for arg in rest:
        name, eq, value = arg.partition("=")
        if arg == "--":
            return [*out, arg, *rest]
        if name == "--job_file" and (eq or (value := next(rest, ""))):
            out.append(value)
        else:  # (without '=', name is arg and value empty)
            out.append(GPU_HOG_SPELLINGS.get(name, name) + eq + value)
    return out


def gpu_indices_together(args: list[str]) -> list[str]:
    """`--gpus 0 1 2` as `--gpus 0,1,2`. Click gives an option one value and leaves the other
    indices among the arguments, where those after a job file (`run jobs.txt --gpus 0 1`,
    `--job_file jobs.txt --gpus 0 1`) were taken for more job files. A number that names a
    file there is the job file, as before."""
    out: list[str] = []
    at = 0
    while at < len(args):
        arg = args[at]
        at += 1
        if arg == "--":
            return [*out, arg, *args[at:]]
        if arg == "--gpus" and at < len(args) and is_gpu_indices(args[at]):
            spec = args[at]
            at += 1
        elif arg.startswith("--gpus=") and is_gpu_indices(arg.removeprefix("--gpus=")):
            spec = arg.removeprefix("--gpus=")
        else:
            out.append(arg)
            continue
        while at < len(args) and is_gpu_indices(args[at]):
            spec += "," + args[at]
            at += 1
        out += ["--gpus", spec]
    return out


_GPU_INDICES = re.compile(r"[0-9][0-9,-]*")
"""Indices and ranges (`0,2-3`), or a bad one of them (`3-1`, `1-`) that the GPU spec's
parser then names: not a job file, whose name would be looked for in vain."""


def is_gpu_indices(word: str) -> bool:
    """`0`, `0,1`, `1-3`: GPU indices, unless a file of that name is there (the job file)."""
    return _GPU_INDICES.fullmatch(word) is not None and not Path(word).exists()
