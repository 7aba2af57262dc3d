"""Warnings `submit` prints for a command that is queued but will not run as meant (and
`config set on-end` for a hook command that will not run). Those an edit says too are apart
from the CLI, for the daemon: device_hints.py, program_hints.py, script_files.py."""

from __future__ import annotations

import functools
import itertools
import os
import re
import shlex
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import click

from gpuherd.cli.main import prefixed
from gpuherd.cli.param_types import AFTER_IDS, GPU_INDICES
from gpuherd.cli.sbatch_hints import sbatch_lines_hint
from gpuherd.core.when import past_begin_hint
from gpuherd.device_hints import GpusHad, command_devices_hint, visible_devices_hint
from gpuherd.errors import HerdError
from gpuherd.program_hints import (
    home_expanded,
    not_on_path_hint,
    program_word,
    quoted_home_hint,
    spaced_program_hint,
)
from gpuherd.script_files import missing_script_hints, names_a_file, on_job_path

if TYPE_CHECKING:
    from gpuherd.client import Client


def hook_path_hint(command: str, cwd: str, home: str, env: Mapping[str, str]) -> str | None:
    """What to say when the on-end command starts with a program that names a file here
    (`./notify.sh`, `notify.sh`) but will not where the hook runs: in the daemon's home, its
    shell finds nothing (`eval: ./notify.sh: not found` in hooks.log, at every job's end).
    None for anything else, and whenever unsure."""
    word = program_word(command, env)
    if word is None or os.path.isabs(word):
        return None
    here = os.path.join(cwd, word)
    if not os.path.isfile(here):
        return None
    if os.path.isfile(os.path.join(home, word)) if "/" in word else on_job_path(word, home, env):
        return None  # the hook's shell finds a file of that name too (the same one, surely)
    return (
        f"{word} is a file in {cwd}, but the hook runs in the daemon's home ({home}), where "
        f"its shell does not find it: give its full path, {os.path.abspath(here)}"
    )


_ID_LIST = r"\d[\d,-]*"
"""What an id or GPU index list looks like: 188, 0,2, 3-5."""


def stray_values(
    command: Sequence[str],
    given: Sequence[str],
    cmd: click.Command,
    cwd: str = "",
    path: str | None = None,
) -> str | None:
    """Why `command` (submit's arguments) is surely an option's extra values, or None: it
    starts with ids and holds a `--` of its own (`--after 187 188 -- echo hi` queued the
    command `188 -- echo hi`), or is a folder after `-w` (pueue's `add -w DIR` names the
    job's folder; here -w waits, and the job ran the folder). `given` is what came before
    it; `cmd` the command's options. A word after `-w` that names nothing the job could run
    (`cwd`: its folder; `path`: its PATH, None: this one's), followed by a `--`, is such a
    folder too, there or not (`-w /data/run3 -- python train.py` ran `/data/run3 --
    python train.py`)."""
    folder = os.path.isdir(command[0]) or (
        len(command) > 1 and command[1] == "--" and not names_a_file(command[0], ("", cwd), path)
    )
    if given and given[-1] in ("-w", "--wait") and folder:
        return (
            f"the command starts with the folder {command[0]}: -w is --wait here; the job's "
            f"folder is --cwd {shlex.quote(command[0])} (pueue's -w)"
        )
    if "--" not in command[1:] or not re.fullmatch(_ID_LIST, command[0]):
        return None
    stray = list(itertools.takewhile(lambda word: re.fullmatch(_ID_LIST, word), command))
    said = f"the command starts '{' '.join(command[: len(stray) + 1])}'"
    named = {flag: p for p in cmd.params if isinstance(p, click.Option) for flag in p.opts}
    flag, eq, value = given[-1].partition("=") if given else ("", "", "")
    if not (eq and flag.startswith("--")):  # `--after 187`, not `--after=187`
        flag, value = given[-2:] if len(given) > 1 else ("", "")
    option = named.get(flag)
    if option is None or option.is_flag:  # `-- 188 -- cmd`, or values after a flag
        return (
            f"{said}: --after and --only-gpus take their values comma-separated "
            "(--after 187,188 --only-gpus 0,2); the command goes after --"
        )
    long = option.opts[-1]
    if option.type is AFTER_IDS or option.type is GPU_INDICES:
        what = "GPU indices" if option.type is GPU_INDICES else "ids"
        together = ",".join([value, *stray])
        return f"{said}: {long} takes its {what} comma-separated ({long} {together})"
    return f"{said}: {long} takes one value ({long} {value}); the command goes after --"


def home_on_ray() -> bool:
    """Whether this home's daemon runs jobs on a Ray cluster (start_hint.runs_on_ray)."""
    from gpuherd.start_hint import runs_on_ray  # deferred: read for a program not found alone

    return runs_on_ray()


def gpus_had(client: Client | None = None) -> set[int] | None:
    """The GPUs the daemon has, as `gpus remove` takes them (configured, lost ones too), for
    a hint that would name some (device_hints.GpusHad); None where no daemon answers (a
    sweep's --dry-run needs none)."""
    from gpuherd.cli.gpu_cmds import configured  # deferred: asked only for such a hint
    from gpuherd.client import Client

    try:
        return configured((client or Client()).get("/gpus"))
    except HerdError:
        return None


def warn_submitted(
    commands: Sequence[str], job: Mapping[str, Any], had: GpusHad | None = None
) -> None:
    """Print the hints for a batch of `commands` submitted with the options of `job` (a
    SubmitItem's fields) on stderr, each once (1000 lines `job.sh N` warn once). `had`: the
    GPUs gpuherd has, asked only if a hint would name some."""
    overrides = job["env_overrides"]
    env = {**os.environ, **overrides}
    hints = [
        hint(command, job["cwd"], env)
        for command in commands
        for hint in (not_on_path_hint, spaced_program_hint, quoted_home_hint)
    ]
    run = [home_expanded(command, env) or command for command in commands]  # (`~/job.sh`)
    hints += missing_script_hints(run, job["cwd"], env, on_ray=home_on_ray)
    hints += [sbatch_lines_hint(command, job, env) for command in commands]
    had = functools.cache(had) if had is not None else None  # (asked once, for every hint)
    gpus, only = job["gpus"], job["only_gpus"]
    hints.append(visible_devices_hint(os.environ, overrides, gpus, only, had))
    hints += [command_devices_hint(c, gpus, only, had=had) for c in commands]
    hints.append(past_begin_hint(job.get("begin"), time.time(), len(commands)))
    for hint in dict.fromkeys(hints):
        if hint is not None:
            click.echo(prefixed("warning", hint), err=True)
