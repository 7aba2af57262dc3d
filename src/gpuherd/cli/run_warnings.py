"""What `gpuherd run` warns of in its jobs before they run, each once a run (not once for each
of 1000 lines), on stderr, as the jobs are read (a pipe's line as it arrives):

- a CUDA_VISIBLE_DEVICES it replaces, as `submit` says it (device_hints.py): the shell's, a
  yielded item's `env`, or one a command line sets itself. `run` said only the last, so
  `CUDA_VISIBLE_DEVICES=1 gpuherd run jobs.txt` ran jobs on every GPU without a word;
- a job line that uses a word of bash's that /bin/sh lacks (`source venv/bin/activate`): each
  such job failed with `source: not found`, and nothing said that GPUHERD_SHELL=bash runs it.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable, Iterator, Mapping

import click

from gpuherd.device_hints import (
    VISIBLE_DEVICES,
    GpusHad,
    command_devices_hint,
    visible_devices_hint,
)
from gpuherd.executors.base import DEFAULT_SHELL, SHELL_VARIABLE
from gpuherd.typed_name import prefixed, typed_name
from gpuherd.wire import SubmitItem

_QUOTED = re.compile(r"""'[^']*'|"(?:[^"\\]|\\.)*\"""", re.DOTALL)
"""Quoted text, where a word is no command (`echo "then source it"`)."""
_BASH_ONLY = re.compile(
    r"(?:^|[;&|(\n]|\b(?:then|do|else|if|while|until)\s)\s*(?:!\s*)?"
    r"(source|\[\[|pushd|popd|shopt|declare)(?=[\s;]|$)"
)
"""A command word of bash's that dash, Debian's and Ubuntu's /bin/sh, has not (the job fails:
`source: not found`), where a command starts: `python -c "source"` uses none."""


def bash_word(command: str) -> str | None:
    """The first word of bash's that /bin/sh lacks, used as a command in `command`; None if
    it uses none (or only in quotes)."""
    found = _BASH_ONLY.search(_QUOTED.sub("''", command))
    return found.group(1) if found else None


def _sh_is_bash() -> bool:
    """Whether /bin/sh is bash (as on Fedora, Arch, macOS), which runs `source` and `[[`."""
    return os.path.basename(os.path.realpath(DEFAULT_SHELL)).startswith("bash")


def _bash_hint(word: str) -> str:
    sh = os.path.basename(os.path.realpath(DEFAULT_SHELL))
    instead = "; or write `. FILE` for `source FILE`" if word == "source" else ""
    return (
        f"`{word}` is bash's: jobs run in {DEFAULT_SHELL} ({sh} here), which fails with "
        f"`{word}: not found`; run them in bash: GPUHERD_SHELL=bash {typed_name()} run ..."
        f"{instead}"
    )


_ONCE = {
    "env": "said once, of the first job that sets it",
    "command": "said once, of the first line that sets it",
    "bash": "said once, of the first line that uses one",
}
"""What each kind of warning about a job adds: said of the first job alone. (The shell's
CUDA_VISIBLE_DEVICES is the run's, said of no job.)"""


def warned(
    items: Iterable[SubmitItem], environ: Mapping[str, str], had: GpusHad, gpus_named: bool
) -> Iterator[SubmitItem]:
    """`items` passed on as they come, each warning said before the first job it is about
    (named by its number, as the run's lines name it). `environ`: the run's; `had`: the
    GPUs the run has; `gpus_named`: --gpus or --gpu-file chose them, which the shell's
    CUDA_VISIBLE_DEVICES is not said against (as `submit --only-gpus`). A yielded item's
    CUDA_VISIBLE_DEVICES leaves its `env` here: the job never sees it, and its job.json
    recorded it as if it had."""
    said: set[str] = set()
    if gpus_named or not environ.get(VISIBLE_DEVICES):
        said.add("shell")
    if environ.get(SHELL_VARIABLE) or _sh_is_bash():
        said.add("bash")
    for number, item in enumerate(items):
        for kind, hint in _hints(item, environ, had, said):
            said.add(kind)
            about = f"[{number}] {hint} ({_ONCE[kind]})" if kind in _ONCE else hint
            click.echo(prefixed("warning", about), err=True)
        if VISIBLE_DEVICES in item.env_overrides:
            kept = {k: v for k, v in item.env_overrides.items() if k != VISIBLE_DEVICES}
            item = dataclasses.replace(item, env_overrides=kept)
        yield item


def _hints(
    item: SubmitItem, environ: Mapping[str, str], had: GpusHad, said: set[str]
) -> Iterator[tuple[str, str]]:
    """The warnings of kinds not said yet that `item` calls for (looked for only then: a
    run of 100,000 lines that calls for none checks each line once)."""
    overrides = item.env_overrides
    found: dict[str, str | None] = {}
    if "shell" not in said and VISIBLE_DEVICES not in overrides:  # (its own env's instead)
        found["shell"] = visible_devices_hint(environ, {}, item.gpus, (), had, keep_with="--gpus")
    if "env" not in said:
        found["env"] = visible_devices_hint(
            {}, overrides, item.gpus, (), had, keep_with="--gpus", set_with="its yielded env"
        )
    if "command" not in said:
        found["command"] = command_devices_hint(item.command, item.gpus, (), None, had)
    if "bash" not in said and not overrides.get(SHELL_VARIABLE):
        word = bash_word(item.command)
        found["bash"] = _bash_hint(word) if word is not None else None
    for kind, hint in found.items():
        if hint is not None:
            yield kind, hint
