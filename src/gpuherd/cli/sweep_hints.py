"""The warnings `gpuherd sweep` gives itself, before the daemon's, once for the whole sweep,
as `submit` gives them for a job (cli/submit_hints.py): a `-p` value that reads as several,
a template that sets CUDA_VISIBLE_DEVICES or runs a Slurm script, and a CUDA_VISIBLE_DEVICES
set in the shell, with --env or in the sweep file's `env`, which gpuherd replaces with the
GPUs it places each point on. That last one was never said of a sweep: its points ran on
other GPUs than the user meant, without a word."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from gpuherd.cli.sbatch_hints import sweep_sbatch_hint
from gpuherd.cli.submit_hints import gpus_had
from gpuherd.cli.sweep_args import lone_value_warnings
from gpuherd.core.sweep import SweepSpec
from gpuherd.device_hints import VISIBLE_DEVICES, command_devices_hint, visible_devices_hint
from gpuherd.wire_requests import SweepOptions


def sweep_warnings(
    spec: SweepSpec,
    options: SweepOptions,
    cwd: str,
    params: list[tuple[str, list[Any]]],
    file: str,
    file_env: Mapping[str, str],
    seed_flag: bool,
) -> list[str]:
    """The sweep's own warnings; `file`: the sweep file (or ""), whose `env` gave `file_env`
    (the entries no --env replaced), named as where a CUDA_VISIBLE_DEVICES was set;
    `seed_flag`: whether --seed gave the seed (else the file did, if any)."""
    command, gpus, only = spec.command or "", options.gpus, options.only_gpus
    devices = command_devices_hint(command, gpus, only, "submit the sweep", gpus_had)
    env = options.env_overrides or {}
    set_with = f"{file}'s env" if VISIBLE_DEVICES in file_env else "--env"
    visible = visible_devices_hint(os.environ, env, gpus, only, gpus_had, set_with=set_with)
    sbatch = sweep_sbatch_hint(command, asdict(options), cwd, {**os.environ, **env})
    seed = _unused_seed(spec, file, seed_flag)
    return [*lone_value_warnings(params), *filter(None, (devices, visible, sbatch, seed))]


def _unused_seed(spec: SweepSpec, file: str, seed_flag: bool) -> str | None:
    """A seed given for a sweep that draws nothing with it (no samples, no shuffle): taken
    without a word, as if it chose something (`--seed 1` to vary a run's own seed is a
    parameter, `-p seed 1`)."""
    if spec.seed is None or spec.needs_seed:
        return None
    if seed_flag or not file:
        given, keys, parameter = f"--seed {spec.seed}", ("--samples", "--shuffle"), "-p seed 1 2"
    else:
        given, keys = f"seed: {spec.seed} in {file}", ("samples", "shuffle")
        parameter = "grid: {seed: [1, 2]}"
    return (
        f"{given} does nothing: it draws the points of {keys[0]} and the order of {keys[1]},"
        f" and neither is given (for a seed of each point's own, use a parameter: {parameter})"
    )
